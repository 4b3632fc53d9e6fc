// Clocks and the requests that end a game early (resign, draw, abort) or start the next one
// (rematch), as docs/protocol.md documents them. The server is the only clock: the page
// counts down from the `remaining` of the last update, with its own clock, for the seats to act.

import { h } from "./dom.js";
import { parseClock } from "./clock_notation.js";

// The forms' presets, in the notation every clock is written in (clock_notation.js); "other"
// opens a field for any clock in it (2s+0.05).
export const CLOCKS = [
  ["", "no clock"],
  ["1+0", "1+0 (1 minute)"],
  ["3+2", "3+2 (3 minutes, 2 s a move)"],
  ["5+3", "5+3 (5 minutes, 3 s a move)"],
  ["10+5", "10+5 (10 minutes, 5 s a move)"],
  ["move:30", "move:30 (30 s every move)"],
  ["other", "other..."],
];

// A clock's select (id `id`) and, for "other", a text field (`id`-other) in the notation.
export function clockField(id, { none = true, selected = "" } = {}) {
  const other = h("input", { id: `${id}-other`, name: `${id}-other`, placeholder: "5+3, 2s+0.05 or move:30", hidden: true, size: 14 });
  const choices = CLOCKS.filter(([value]) => none || value);
  const select = h("select", { id, name: id }, choices.map(([value, label]) => h("option", { value, selected: value === selected }, label)));
  select.addEventListener("change", () => {
    other.hidden = select.value !== "other";
    if (!other.hidden) other.focus();
  });
  return h("span.clock-field", {}, select, other);
}

// The protocol's clock the field beside `select` says (null: none); BadClockText says the forms.
export function readClock(select) {
  if (select.value === "other") return parseClock(select.parentElement.querySelector(`#${select.id}-other`).value);
  return select.value ? parseClock(select.value) : null;
}

let ticking = null; // {base, received, running: Set}

function format(seconds) {
  const s = Math.max(0, seconds);
  if (s < 10) return s.toFixed(1);
  const whole = Math.ceil(s);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

function tick() {
  if (!ticking) return;
  const elapsed = (performance.now() - ticking.received) / 1000;
  for (const el of document.querySelectorAll("[data-clock]")) {
    const seat = Number(el.dataset.clock);
    const left = ticking.base[seat] - (ticking.running.has(seat) ? elapsed : 0);
    el.textContent = format(left);
    el.classList.toggle("low", left < 10);
  }
}

setInterval(tick, 200);

// The seats' clocks, when the room has one; call on every draw of the room.
export function clockBar(update, seatName) {
  const clock = update && update.clock;
  if (!clock || !clock.remaining) {
    ticking = null;
    return null;
  }
  const running = new Set(
    update.status === "finished" ? [] : (clock.deadline || []).map((d, seat) => (d === null || d === undefined ? -1 : seat)).filter((s) => s >= 0),
  );
  if (!ticking || ticking.seq !== update.seq) ticking = { seq: update.seq, base: clock.remaining, received: performance.now(), running };
  const bar = h(
    "div.clocks",
    { id: "clocks" },
    clock.remaining.map((_, seat) =>
      h("span.clock", { class: running.has(seat) ? "running" : "" }, `${seatName(seat)} `, h("b", { dataset: { clock: seat } }, format(clock.remaining[seat]))),
    ),
  );
  queueMicrotask(tick);
  return bar;
}

// A button that asks once more before doing something that cannot be undone.
function twoStep(label, again, id, run) {
  const button = h("button", { type: "button", id });
  let armed = false;
  button.textContent = label;
  button.addEventListener("click", () => {
    if (!armed) {
      armed = true;
      button.textContent = again;
      button.classList.add("armed");
      return;
    }
    run();
  });
  return button;
}

// Resign, draw, abort while the game goes on; rematch after it. `send(type)` sends a request
// about this room. `tournament`: a tournament's game, whose next game is the next round's.
export function endingControls(room, update, send, seatName, tournament = false) {
  const seated = room.seat !== null && room.seat !== undefined;
  if (!seated || !update) return null;
  const seats = room.summary.seats.length;
  if (update.status === "finished") {
    // an aborted game was never played, and a tournament pairs its own next game: no rematch
    if (tournament || (update.result && update.result.reason === "aborted")) return null;
    const asked = room.summary.rematch || [];
    const mine = asked.includes(room.seat);
    return h(
      "div.controls",
      { id: "controls" },
      h("button.primary", { type: "button", id: "rematch", disabled: mine, onclick: () => send("rematch") }, mine ? "Rematch asked" : "Rematch"),
      asked.length ? h("p.muted", {}, `Rematch asked by ${asked.map(seatName).join(", ")}.`) : null,
    );
  }
  if (update.status !== "playing") return null;
  const resigned = update.resigned || [];
  if (resigned.includes(room.seat)) return null;
  const offer = update.draw_offer;
  const buttons = [twoStep("Resign", "Really resign?", "resign", () => send("resign"))];
  if (seats === 2) {
    if (offer !== null && offer !== undefined && offer !== room.seat) {
      buttons.push(
        h("span.offer", {}, `${seatName(offer)} offers a draw: `),
        h("button.primary", { type: "button", id: "accept-draw", onclick: () => send("accept_draw") }, "Accept"),
        h("button", { type: "button", id: "decline-draw", onclick: () => send("decline_draw") }, "Decline"),
      );
    } else if (offer === room.seat) {
      buttons.push(h("span.muted", { id: "draw-offered" }, "You offered a draw."));
    } else {
      buttons.push(h("button", { type: "button", id: "offer-draw", onclick: () => send("offer_draw") }, "Offer a draw"));
    }
  }
  if (update.seq < seats) buttons.push(h("button", { type: "button", id: "abort", onclick: () => send("abort") }, "Abort"));
  return h("div.controls", { id: "controls" }, buttons);
}
