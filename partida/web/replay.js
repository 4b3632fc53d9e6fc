// Stored games over the wire (`games`, `game`): a list in the lobby and a replay that steps
// through any game board by board. The server sends what a spectator saw after every move (`game`
// with `steps: true`), so the page draws each step with the game's own board and never needs the
// rules, nor sees a hand or a library the table did not see at that moment.

import { clear, h } from "./dom.js";
import { downloadButtons, isTakeback, takenBackIndexes } from "./takeback.js";
import { replayChat } from "./chat.js";

export async function storedGamesList(conn, open, titleOf = (game) => game) {
  const reply = await conn.request("games", { status: "finished", limit: 20 });
  if (!reply.games.length) return h("p.muted", {}, "No finished games yet.");
  const item = (g) => {
    const winners = (g.result && g.result.winners) || [];
    const names = g.seats.map((s) => s.name);
    const outcome = !g.result ? "" : winners.length === 0 || winners.length === names.length ? " · a draw" : ` · ${winners.map((w) => names[w]).join(" and ")} won`;
    return h(
      "li",
      { dataset: { gameId: g.game_id, game: g.game } },
      h("b", {}, titleOf(g.game)),
      ` · ${names.join(" vs ")}${outcome} · ${g.moves} moves `,
      h("button", { type: "button", onclick: () => open(g.game_id) }, "Replay"),
    );
  };
  // Games between bots only (ladders, mostly) are folded away so that people's games stay in sight.
  const people = reply.games.filter((g) => g.seats.some((s) => s.kind !== "bot"));
  const bots = reply.games.filter((g) => !g.seats.some((s) => s.kind !== "bot"));
  return h(
    "div",
    { id: "stored" },
    people.length ? h("ul.rooms", {}, people.map(item)) : h("p.muted", {}, "No finished games between people yet."),
    bots.length ? h("details", { id: "bot-games" }, h("summary", {}, `${bots.length} recent games between bots`), h("ul.rooms", {}, bots.map(item))) : null,
  );
}

// `boards(game, view)` picks the renderer; `infoOf(game)` is the game's `list_games` entry (Duel's
// card texts).
export async function showReplay(main, conn, gameId, boards, infoOf = () => ({})) {
  clear(main, h("section.room", { id: "replay-loading" }, h("p.muted", {}, `Loading game ${gameId}…`)));
  let reply;
  try {
    reply = await conn.request("game", { game_id: gameId, steps: true });
  } catch (error) {
    // a dead address says so, rather than leaving the page it came from (or "Loading…")
    clear(main, h("section.room", { id: "replay-missing" }, h("h2", {}, `No game ${gameId}`), h("p", {}, error.message), h("p", {}, h("a", { href: "/" }, "Back to the lobby"))));
    return;
  }
  const game = reply.game;
  const info = infoOf(game.game) || {};
  const steps = game.steps || [];
  const last = steps.length - 1;
  const moveBoard = steps.length ? boards(game.game, steps[0].view) : null;
  // The words of each move, as the live list writes them (the board's `actionText`: "plays D3"),
  // unless the record has a sentence of its own (a finished hidden game names what was hidden).
  const words = (i) => {
    const move = (game.log || [])[i];
    const told = steps[i + 1] && steps[i + 1].last;
    const action = move && move.action !== null && move.action !== undefined ? move.action : told && told.action;
    const text = (move && move.text) || (told && told.text) || null;
    const bare = text === null || (action !== null && action !== undefined && text.toLowerCase() === String(action).toLowerCase());
    if (bare && action !== null && action !== undefined && moveBoard) return moveBoard.actionText(action);
    return text ?? (action === null || action === undefined ? "moves" : JSON.stringify(action));
  };
  // a pass is no move of the record: the board tells it from the step, as in the live list
  const passAfter = (i) => (moveBoard && moveBoard.passNote && steps[i + 1] ? moveBoard.passNote({ last: steps[i + 1].last, view: steps[i + 1].view }) : null);
  // A takeback's entry (seat -1 in the log) is told after the name of the seat that asked.
  const seatOf = (i) => {
    const entry = (game.log || [])[i] || (steps[i + 1] && steps[i + 1].last) || {};
    return isTakeback(entry) && entry.seat === -1 ? (entry.by ?? (entry.action || {}).by) : entry.seat;
  };
  const takenBack = takenBackIndexes(game.log || []);
  for (const step of steps) if (step.last && step.last.undone) for (const move of step.last.undone) takenBack.add(move - 1);
  const name = (seat) => (game.seats[seat] ? game.seats[seat].name : `seat ${seat + 1}`);
  let step = last;
  const boardBox = h("div.board", { id: "replay-board", dataset: { game: game.game } });
  const counter = h("span", { id: "replay-step" });
  const slider = h("input", { type: "range", id: "replay-slider", min: 0, max: last, value: last, "aria-label": "move" });
  const list = h("ol.log.replay-log", { id: "replay-log" });
  const items = steps.slice(1).map((_, i) =>
    h("li", { dataset: { step: i + 1 }, onclick: () => go(i + 1) }, `${name(seatOf(i))} ${words(i)}`),
  );
  clear(
    list,
    items.map((item, i) => {
      const pass = passAfter(i);
      return pass ? [item, h("li.note", { dataset: { passAfter: i + 1 } }, pass)] : item;
    }),
  );
  const draw = () => {
    counter.textContent = `move ${step} of ${last}`;
    slider.value = String(step);
    boardBox.dataset.step = String(step);
    items.forEach((item, i) => (item.className = (i < step ? (i === step - 1 ? "done current" : "done") : "ahead") + (takenBack.has(i) ? " taken-back" : "")));
    const current = items[step - 1];
    if (current && list.isConnected) {
      // keep the current move in sight inside the list (never scrolling the page itself)
      const box = list.getBoundingClientRect();
      const at = current.getBoundingClientRect();
      list.scrollTop += at.top - box.top - (box.height - at.height) / 2;
    }
    const shown = steps[step];
    if (!shown || !shown.view) return clear(boardBox, h("p.muted", {}, "This game has no board to show."));
    const update = { view: shown.view, decision: null, last: shown.last, seq: step, to_act: [], status: "replay" };
    const board = boards(game.game, shown.view);
    const ctx = { update, seat: null, game: info, act: () => {}, redraw: draw, seatName: name, summary: { seats: game.seats } };
    clear(boardBox, board.render(ctx).element);
  };
  const go = (n) => {
    step = Math.max(0, Math.min(last, n));
    draw();
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  // the arrow keys step through the game while this replay is on the page (not while typing)
  const keys = (event) => {
    if (!boardBox.isConnected) return document.removeEventListener("keydown", keys);
    if (event.target.closest && event.target.closest("input:not([type=range]), textarea, select")) return;
    const to = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: last }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    go(to);
  };
  document.addEventListener("keydown", keys);
  const result = game.result && game.result.winners && game.result.winners.length ? game.result.winners.map(name).join(", ") : "";
  clear(
    main,
    h(
      "section.room",
      { id: "replay" },
      h("h2", {}, `Replay: ${info.title || game.game}`),
      h("p", {}, game.seats.map((s) => s.name).join(" vs "), game.status === "finished" ? (result ? ` · won by ${result}` : " · a draw") : ` · ${game.status}`),
      game.seed ? h("p.muted.wrap", {}, "Seed ", h("code", {}, String(game.seed)), " · hash ", h("code", {}, game.seed_hash)) : null,
      h(
        "div.controls.replay-controls",
        {},
        h("button", { type: "button", id: "replay-first", "aria-label": "first", onclick: () => go(0) }, "«"),
        h("button", { type: "button", id: "replay-prev", "aria-label": "back", onclick: () => go(step - 1) }, "◀"),
        slider,
        h("button", { type: "button", id: "replay-next", "aria-label": "forward", onclick: () => go(step + 1) }, "▶"),
        h("button", { type: "button", id: "replay-last", "aria-label": "last", onclick: () => go(last) }, "»"),
        counter,
        downloadButtons(conn, game.game_id, (text) => clear(counter, text)),
      ),
      h("div.play", {}, h("div.board-col", {}, boardBox), h("aside.side", {}, h("h3", {}, "Moves"), list, game.chat && game.chat.length ? replayChat(game.chat).element : null)),
    ),
  );
  draw();
}
