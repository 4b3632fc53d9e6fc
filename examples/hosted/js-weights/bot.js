// A hosted Othello bot in JavaScript for Node (submit it with `partida bots submit`,
// docs/hosted-bots.md): one JSON line per decision on stdin, one answer line on stdout. It plays
// the square of most worth on a classic table of square weights (corners best, the squares
// beside them worst).
const readline = require("node:readline");

const WEIGHTS = [
  [100, -20, 10, 5, 5, 10, -20, 100],
  [-20, -50, -2, -2, -2, -2, -50, -20],
  [10, -2, 1, 1, 1, 1, -2, 10],
  [5, -2, 1, 0, 0, 1, -2, 5],
  [5, -2, 1, 0, 0, 1, -2, 5],
  [10, -2, 1, 1, 1, 1, -2, 10],
  [-20, -50, -2, -2, -2, -2, -50, -20],
  [100, -20, 10, 5, 5, 10, -20, 100],
];

function worth(option) {
  if (typeof option !== "string" || !/^[a-h][1-8]$/.test(option)) return 0; // a pass
  return WEIGHTS[Number(option[1]) - 1]["abcdefgh".indexOf(option[0])];
}

let told = false;
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const turn = JSON.parse(line); // {game, seat, view, decision, clock, time_left}
  if (!told) {
    process.stderr.write(`weights: playing ${turn.game} as seat ${turn.seat}\n`);
    told = true;
  }
  const options = turn.decision.options;
  let best = options[0];
  for (const option of options) if (worth(option) > worth(best)) best = option;
  process.stdout.write(JSON.stringify({ action: best }) + "\n");
});
