// A result in words: who won, and what the scores count. A game's scores mean different things
// (Othello's discs, Duel's life, tic-tac-toe's 1 for a win), and a game that ended by a
// resignation, on time or by agreement is scored 1 / ½ / 0 whatever the game.

const WHY = { time: "on time", resign: "by resignation", draw_agreed: "by agreement", abandoned: "(a player left)" };
const UNITS = { othello: "discs", duel: "life" };

import { clockText as notation } from "./clock_notation.js";

// A clock in a sentence: the notation people type (5+3, 2s+0.05), a clock per move in words.
export function clockText(clock) {
  return clock && clock.per_move ? `${clock.per_move} s per move` : notation(clock);
}

const half = (x) => (x === 0.5 ? "½" : String(x));

// `names(seat)` gives a seat's name as this page shows it.
export function headline(result, seats, names) {
  const winners = result.winners || [];
  const why = WHY[result.reason] ? ` ${WHY[result.reason]}` : "";
  if (result.reason === "aborted") return "Aborted: no result.";
  if (winners.length === 0 || winners.length === seats) return `Draw${why}.`;
  return `${winners.map(names).join(" and ")} ${winners.length > 1 ? "win" : "wins"}${why}.`;
}

export function scoresText(game, result, names) {
  if (!result.scores || !result.scores.length || result.reason === "aborted") return null;
  const byRules = !WHY[result.reason];
  const unit = byRules ? UNITS[game] : null;
  const list = result.scores.map((s, i) => `${names(i)} ${unit ? s : half(s)}`).join(", ");
  if (unit) return `${unit[0].toUpperCase()}${unit.slice(1)} at the end: ${list}`;
  return `Scores (1 a win, ½ a draw, 0 a loss): ${list}`;
}
