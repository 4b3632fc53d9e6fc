// Boards for the perfect-information games (tic-tac-toe, Othello) and a plain fallback that shows
// any game's view as data. A board draws the view it is given and, when the open decision is a
// square to pick, lets the player click it; it never knows more than the view.

import { h } from "./dom.js";

const TTT_MARKS = ["X", "O"];
const TTT_NAMES = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"];

export const tictactoe = {
  render(ctx) {
    const { view, decision } = ctx.update;
    const open = new Set(decision && decision.kind === "choose_one" ? decision.options : []);
    const last = ctx.update.last ? ctx.update.last.action : null;
    const cells = view.board.map((cell, square) => {
      const playable = open.has(square);
      return h(
        "button.cell",
        {
          type: "button",
          dataset: { square },
          class: [playable ? "playable" : "", square === last ? "last" : "", cell >= 0 ? `mark${cell}` : ""].join(" "),
          disabled: !playable,
          "aria-label": `${TTT_NAMES[square]} ${cell >= 0 ? TTT_MARKS[cell] : "empty"}`,
          onclick: playable ? () => ctx.act(square) : null,
        },
        cell >= 0 ? TTT_MARKS[cell] : "",
      );
    });
    return { element: h("div.ttt", {}, cells), handles: true };
  },
  actionText: (action) => `plays ${TTT_NAMES[action] ?? action}`,
  seatLabel: (seat) => TTT_MARKS[seat],
};

const FILES = "abcdefgh";
const OTHELLO_COLORS = ["black", "white"];

export const othello = {
  render(ctx) {
    const { view, decision, last } = ctx.update;
    const legal = new Set(decision && decision.kind === "choose_one" ? decision.options : []);
    const shown = new Set(view.legal || []);
    const lastSquare = last && typeof last.action === "string" ? last.action : lastOfTranscript(view.moves);
    const squares = [];
    for (let i = 0; i < 64; i++) {
      const name = FILES[i % 8] + String(Math.floor(i / 8) + 1);
      const c = view.board[i];
      const disc = c === "X" ? h("span.disc.black") : c === "O" ? h("span.disc.white") : null;
      const playable = legal.has(name);
      squares.push(
        h(
          "button.sq",
          {
            type: "button",
            dataset: { square: name },
            class: [playable ? "playable" : shown.has(name) ? "legal" : "", name === lastSquare ? "last" : ""].join(" "),
            disabled: !playable,
            "aria-label": `${name} ${c === "X" ? "black" : c === "O" ? "white" : "empty"}`,
            onclick: playable ? () => ctx.act(name) : null,
          },
          disc,
        ),
      );
    }
    const [black, white] = view.counts;
    const info = h(
      "div.counts",
      {},
      h("span", { dataset: { count: "black" } }, h("span.disc.black.small"), `${ctx.seatName(0)}: ${black}`),
      h("span", { dataset: { count: "white" } }, h("span.disc.white.small"), `${ctx.seatName(1)}: ${white}`),
      view.over ? null : h("span.muted", {}, `${OTHELLO_COLORS[view.to_move]} to move`),
    );
    const notes = [];
    const pass = othello.passNote(ctx.update);
    if (pass) notes.push(h("p.pass", {}, pass));
    const files = h("div.files", { "aria-hidden": "true" }, [...FILES].map((f) => h("span", {}, f)));
    const ranks = h("div.ranks", { "aria-hidden": "true" }, [1, 2, 3, 4, 5, 6, 7, 8].map((r) => h("span", {}, String(r))));
    const frame = h("div.othello-frame", {}, h("span"), files, ranks, h("div.othello", {}, squares));
    return { element: h("div.othello-wrap", {}, info, frame, notes), handles: true };
  },
  // Passes are automatic: the same side moving twice in a row means the other had no move.
  passNote(update) {
    const { last, view } = update;
    if (!last || view.over || last.seat !== view.to_move) return null;
    return `${OTHELLO_COLORS[1 - last.seat]} has no legal move and passes`;
  },
  actionText: (action) => `plays ${String(action).toUpperCase()}`,
  seatLabel: (seat) => OTHELLO_COLORS[seat],
};

function lastOfTranscript(moves) {
  return moves && moves.length >= 2 ? moves.slice(-2) : null;
}

export const generic = {
  render(ctx) {
    return { element: h("pre.view", {}, JSON.stringify(ctx.update.view, null, 2)), handles: false };
  },
  actionText: (action) => `plays ${JSON.stringify(action)}`,
};
