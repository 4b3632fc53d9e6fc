// Stored games over the wire (`games`, `game`): a list in the lobby and a replay that steps
// through the moves in words. Tic-tac-toe boards are rebuilt move by move from the log; other
// games show the final view beside the list of moves.

import { clear, h } from "./dom.js";
import { tictactoe } from "./board_basic.js";

export async function storedGamesList(conn, open) {
  const reply = await conn.request("games", { status: "finished", limit: 20 });
  if (!reply.games.length) return h("p.muted", {}, "No finished games yet.");
  return h(
    "ul.rooms",
    { id: "stored" },
    reply.games.map((g) =>
      h(
        "li",
        { dataset: { gameId: g.game_id } },
        h("b", {}, g.game),
        ` #${g.game_id} · ${g.seats.map((s) => s.name).join(" vs ")} · ${g.moves} moves `,
        h("button", { type: "button", onclick: () => open(g.game_id) }, "Replay"),
      ),
    ),
  );
}

export async function showReplay(main, conn, gameId, boards) {
  const reply = await conn.request("game", { game_id: gameId });
  const game = reply.game;
  const log = game.log || [];
  let step = log.length;
  const name = (seat) => (game.seats[seat] ? game.seats[seat].name : `seat ${seat + 1}`);
  const boardBox = h("div.board", { id: "replay-board" });
  const counter = h("span", { id: "replay-step" });
  const list = h("ol.log.replay-log", { id: "replay-log" });
  const draw = () => {
    counter.textContent = `move ${step} of ${log.length}`;
    clear(
      list,
      log.map((move, i) =>
        h("li", { class: i < step ? "done" : "ahead" }, `${name(move.seat)} ${move.text || (move.action !== undefined ? JSON.stringify(move.action) : "")}`),
      ),
    );
    let view = null;
    if (game.game === "tictactoe") {
      const board = Array(9).fill(-1);
      log.slice(0, step).forEach((move) => (board[move.action] = move.seat));
      view = { board, to_move: step % 2 };
    } else if (step === log.length) view = game.view;
    const update = { view, decision: null, last: step ? log[step - 1] : null, seq: step, to_act: [] };
    const board = game.game === "tictactoe" ? tictactoe : boards(game.game, view);
    clear(
      boardBox,
      view
        ? board.render({ update, seat: null, game: {}, act: () => {}, redraw: draw, seatName: name, summary: { seats: game.seats } }).element
        : h("p.muted", {}, "The board of this game is shown at its end; step to the last move."),
    );
  };
  const go = (n) => () => {
    step = Math.max(0, Math.min(log.length, n()));
    draw();
  };
  draw();
  const result = game.result && game.result.winners ? game.result.winners.map(name).join(", ") : "";
  clear(
    main,
    h(
      "section.room",
      { id: "replay" },
      h("h2", {}, `Replay: ${game.game} #${game.game_id}`),
      h("p", {}, game.seats.map((s) => s.name).join(" vs "), result ? ` · won by ${result}` : " · a draw"),
      game.seed ? h("p.muted", {}, "Seed ", h("code", {}, String(game.seed)), " · hash ", h("code", {}, game.seed_hash)) : null,
      h(
        "div.controls",
        {},
        h("button", { type: "button", id: "replay-first", onclick: go(() => 0) }, "⏮"),
        h("button", { type: "button", id: "replay-prev", onclick: go(() => step - 1) }, "◀"),
        counter,
        h("button", { type: "button", id: "replay-next", onclick: go(() => step + 1) }, "▶"),
        h("button", { type: "button", id: "replay-last", onclick: go(() => log.length) }, "⏭"),
      ),
      h("div.play", {}, h("div.board-col", {}, boardBox), h("aside.side", {}, h("h3", {}, "Moves"), list)),
    ),
  );
}
