// A complete Partida bot in JavaScript (Node), over stdin/stdout: any game whose decisions are
// "choose one" (tic-tac-toe, Othello...). It takes a corner when one is open (a1, h1, a8, h8 in
// Othello; squares 0, 2, 6, 8 in tic-tac-toe), else a random legal answer.
// Run it with: partida bot --cmd "node examples/bots/corners.js" --game tictactoe --game othello
const readline = require("node:readline");

const CORNERS = ["a1", "h1", "a8", "h8", 0, 2, 6, 8];

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const turn = JSON.parse(line); // {game, seat, view, decision, clock, time_left}
  const options = turn.decision.options;
  const corners = options.filter((option) => CORNERS.includes(option));
  const pool = corners.length > 0 ? corners : options;
  const action = pool[Math.floor(Math.random() * pool.length)];
  process.stdout.write(JSON.stringify({ action }) + "\n");
});
