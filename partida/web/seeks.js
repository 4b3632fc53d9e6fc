// Quick pairing in the lobby: the server's open seeks, live (the first page of `list_seeks` with
// `watch`, the next pages on "More seeks", then the `lobby_seeks` pushes), a form to post one
// ("play a 5+3 Othello with anyone"), and a click to take one. The room a pairing opens comes as
// a pushed `seek_paired` (to whoever posted) or in the `seek_taken` reply (to whoever clicked):
// both go to `onRoom(message)`.

import { ProtocolError } from "./proto.js";
import { clear, h } from "./dom.js";
import { clockField, readClock } from "./room_controls.js";
import { clockText } from "./clock_notation.js";

const SEEK_CLOCK = "5+3"; // the form's first choice

const mine = new Map(); // this page's open seeks, id -> seek: they outlive a redrawn lobby

export function clockWords(clock) {
  return clock && clock.per_move ? `${clock.per_move} s a move` : clockText(clock);
}

// The lobby's seeks card; `start()` lists and watches, `stop()` stops watching, `onPush(message)`
// takes `lobby_seeks` and `seek_paired`.
export function seeksCard(conn, { games, onRoom, say, signUp = null }) {
  const seeks = new Map();
  let next = null; // the cursor of the page after those shown; null: the last page is shown
  const list = h("div", { id: "seeks" });
  const more = h("button", { type: "button", id: "more-seeks", hidden: true, onclick: () => listMore() }, "More seeks");
  const waiting = h("p.muted", { id: "seeking", hidden: true });
  const form = seekForm(games, post, say, signUp);
  const card = h("section.card", { id: "seeks-card" }, h("h2", {}, "Quick pairing"), list, more, h("h3", {}, "Play anyone"), form, waiting);

  function draw() {
    const open = [...seeks.values()].sort((a, b) => a.posted - b.posted || a.id - b.id);
    if (!open.length) clear(list, h("p.muted", {}, "Nobody is seeking a game: post a seek below, or wait for one."));
    else clear(list, h("ul.rooms", {}, open.map(seekLine)));
    more.hidden = next === null;
    const own = [...mine.values()];
    waiting.hidden = !own.length;
    clear(waiting, own.length ? `Seeking ${own.map(describe).join("; ")}: waiting for an opponent… ` : null,
      own.map((seek) => h("button", { type: "button", class: "cancel-seek", onclick: () => cancel(seek.id) }, "Cancel")));
  }

  function describe(seek) {
    const title = games.get(seek.game)?.title || seek.game;
    const parts = [`${seek.rated ? "rated" : "casual"} ${clockWords(seek.clock)}${seek.class ? ` (${seek.class})` : ""}`];
    if (seek.range) parts.push(`ratings ${seek.range[0]}-${seek.range[1]}`);
    if (seek.allow_bots) parts.push("bots welcome");
    return `${title}, ${parts.join(", ")}`;
  }

  function seekLine(seek) {
    const by = seek.by.name + (seek.by.kind === "bot" ? " (bot)" : seek.by.kind === "guest" ? " (guest)" : "");
    const rating = seek.rating === null || seek.rating === undefined ? "" : ` ${Math.round(seek.rating)}${seek.provisional ? "?" : ""}`;
    const action = mine.has(seek.id)
      ? h("button", { type: "button", onclick: () => cancel(seek.id) }, "Cancel")
      : h("button", { type: "button", class: "take-seek", onclick: () => take(seek.id) }, "Play");
    return h("li", { dataset: { seek: seek.id } }, h("span", {}, h("b", {}, by), rating, ` · ${describe(seek)}`), action);
  }

  async function post(request) {
    try {
      const reply = await conn.request("seek", request);
      if (!reply.paired) mine.set(reply.seek.id, reply.seek);
      draw();
    } catch (error) {
      say(error.message, "error");
    }
  }

  async function take(id) {
    try {
      onRoom(await conn.request("seek_take", { seek: id }));
    } catch (error) {
      if (error instanceof ProtocolError) say(error.message, "error");
    }
  }

  async function cancel(id) {
    mine.delete(id);
    draw();
    try {
      await conn.request("seek_cancel", { seek: id });
    } catch {
      /* already paired or gone: `seek_paired` says which */
    }
  }

  // The first page, watched: what the server pushes next applies to it.
  async function start() {
    const reply = await conn.request("list_seeks", { watch: true });
    seeks.clear();
    for (const seek of reply.seeks) seeks.set(seek.id, seek);
    next = reply.next ?? null;
    if (next === null) for (const id of mine.keys()) if (!seeks.has(id)) mine.delete(id); // gone with an old connection
    draw();
  }

  async function listMore() {
    if (next === null) return;
    try {
      const reply = await conn.request("list_seeks", { cursor: next });
      for (const seek of reply.seeks) seeks.set(seek.id, seek);
      next = reply.next ?? null;
      draw();
    } catch (error) {
      say(error.message, "error");
    }
  }

  return {
    card,
    start,
    stop() {
      conn.request("list_seeks", { watch: false, limit: 1 }).catch(() => {});
    },
    onPush(message) {
      if (message.type !== "lobby_seeks") return;
      if (message.resync) {
        start().catch(() => {}); // more changed than one push says: the first page again
        return;
      }
      for (const id of message.removed || []) seeks.delete(id);
      // A new seek is the newest: it belongs after the last page, shown only once that page is.
      if (next === null) for (const seek of message.added || []) seeks.set(seek.id, seek);
      if (card.isConnected) draw();
    },
  };
}

// A seek of one's own is paired (or taken): it is no longer waiting.
export function seekPaired(message) {
  mine.delete(message.seek);
}

function seekForm(games, post, say, signUp = null) {
  const twoSeats = [...games.values()].filter((g) => g.min_seats <= 2 && g.max_seats >= 2);
  const game = h("select", { id: "seek-game", name: "game" }, twoSeats.map((g) => h("option", { value: g.name, selected: g.name === "othello" }, g.title)));
  const clockRow = clockField("seek-clock", { selected: SEEK_CLOCK });
  const clock = clockRow.querySelector("select");
  const rated = h("input", { type: "checkbox", id: "seek-rated", name: "rated" });
  const bots = h("input", { type: "checkbox", id: "seek-bots", name: "bots" });
  const low = h("input", { type: "number", id: "seek-low", name: "low", placeholder: "from", size: 6 });
  const high = h("input", { type: "number", id: "seek-high", name: "high", placeholder: "to", size: 6 });
  const form = h(
    "form.create",
    {
      id: "seek-form",
      onsubmit: (event) => {
        event.preventDefault();
        const request = { game: game.value, rated: rated.checked, allow_bots: bots.checked };
        try {
          const chosen = readClock(clock);
          if (chosen) request.clock = chosen;
        } catch (error) {
          say(error.message, "error");
          return;
        }
        if (low.value !== "" || high.value !== "") request.range = [Number(low.value || 0), Number(high.value || 1e9)];
        post(request);
      },
    },
    h("label", { for: "seek-game" }, "Game"), game,
    h("label", { for: "seek-clock" }, "Clock"), clockRow,
    h("label.check", {}, rated, " rated (accounts only)"),
    signUp ? h("button", { type: "button", id: "seek-sign-up", onclick: () => signUp() }, "Sign up to play rated") : null,
    h("label.check", {}, bots, " bots may answer"),
    h("label", { for: "seek-low" }, "Opponent's rating (optional)"), h("span.range", {}, low, " to ", high),
    h("button.primary", { type: "submit", id: "seek" }, "Seek a game"),
  );
  return form;
}
