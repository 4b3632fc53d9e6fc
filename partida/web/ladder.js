// Bot ladders: the list (`ladder_list`), a ladder's standings (`ladder_standings`) and a plot of
// each bot's mu over its rated games (`ladder_history`), drawn as hand-written SVG. Ladders keep
// playing while one looks, so the page asks again every few seconds.

import { clear, h } from "./dom.js";
import { clockText } from "./results.js";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#1f6f4a", "#b3261e", "#2456a6", "#c77d00", "#7b3fa0", "#00838f", "#6d4c41", "#c2185b", "#558b2f", "#37474f"];

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined && value !== null) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

// `titleOf(game)`: a game's title for people ("Tic-tac-toe", not "tictactoe").
export async function laddersList(conn, open, titleOf = (game) => game) {
  const reply = await conn.request("ladder_list");
  if (!reply.ladders.length) return null;
  return h(
    "ul.rooms",
    { id: "ladders" },
    reply.ladders.map((l) =>
      h(
        "li",
        { dataset: { ladder: l.name } },
        h("b", {}, l.name),
        ` · ${titleOf(l.game)} · ${l.members} bots (${l.connected} connected) · ${l.rated_games} rated games `,
        h("button", { type: "button", onclick: () => open(l.name) }, "Standings"),
      ),
    ),
  );
}

// Draw the ladder page into `main`; returns a function that fetches and redraws it (the caller
// repeats it while the page is shown).
export async function showLadder(main, conn, name, titleOf = (game) => game) {
  const head = h("p.muted", { id: "ladder-info" });
  const table = h("div", { id: "standings" });
  const plot = h("div.plot", { id: "rating-plot" });
  clear(
    main,
    h(
      "section.room",
      { id: "ladder", dataset: { ladder: name } },
      h("h2", {}, `Ladder ${name}`),
      head,
      h("h3", {}, "Standings"),
      table,
      h("h3", {}, "Ratings over games (mu)"),
      plot,
    ),
  );
  const refresh = async () => {
    const [list, standings, history] = await Promise.all([
      conn.request("ladder_list"),
      conn.request("ladder_standings", { ladder: name }),
      conn.request("ladder_history", { ladder: name }),
    ]);
    const info = list.ladders.find((l) => l.name === name);
    if (info) {
      const clock = info.clock ? ` · clock ${clockText(info.clock)}` : "";
      head.textContent = `${titleOf(info.game)}, ${info.seats} seats${clock} · ${info.rated_games} rated games · ${info.connected} bots connected, ${info.playing} games in play`;
      main.querySelector("#ladder").dataset.rated = String(info.rated_games);
    }
    clear(table, standingsTable(standings.standings));
    clear(plot, ratingPlot(history.series));
  };
  await refresh();
  return refresh;
}

const WIDE = new Set([3, 4]); // mu and sigma: left out on a phone (the rating is mu - 3 sigma)

function standingsTable(rows) {
  if (!rows.length) return h("p.muted", {}, "No members yet.");
  const num = (x) => x.toFixed(2);
  return h(
    "table.standings",
    {},
    h("thead", {}, h("tr", {}, ["#", "bot", "rating", "mu", "sigma", "games", "won", "drawn", "lost"].map((t, i) => h("th", { class: WIDE.has(i) ? "wide" : null }, t)))),
    h(
      "tbody",
      {},
      rows.map((r) =>
        h(
          "tr",
          { dataset: { bot: r.name }, class: r.connected ? "" : "away" },
          [r.rank, r.name, num(r.rating), num(r.mu), num(r.sigma), r.games, r.wins, r.draws, r.losses].map((v, i) => h("td", { class: WIDE.has(i) ? "wide" : null }, String(v))),
        ),
      ),
    ),
  );
}

// mu over each bot's own games, one line per bot, a band of ±sigma around the last point.
export function ratingPlot(series) {
  if (!series.length) return h("p.muted", {}, "No rated games yet.");
  const W = 640;
  const H = 300;
  const pad = { left: 44, right: 12, top: 12, bottom: 32 };
  const maxGames = Math.max(1, ...series.map((b) => b.points[b.points.length - 1].games));
  const mus = series.flatMap((b) => b.points.map((p) => p.mu));
  let lo = Math.floor(Math.min(...mus) - 1);
  let hi = Math.ceil(Math.max(...mus) + 1);
  if (hi - lo < 4) [lo, hi] = [lo - 1, hi + 1];
  const x = (g) => pad.left + ((W - pad.left - pad.right) * g) / maxGames;
  const y = (mu) => pad.top + ((H - pad.top - pad.bottom) * (hi - mu)) / (hi - lo);
  const ticks = (from, to, count) => {
    // a round step (1, 2, 5, 10, 20, ...) giving at most about `count` ticks
    const raw = Math.max(1, (to - from) / count);
    const unit = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((k) => k * unit).find((k) => k >= raw);
    const out = [];
    for (let v = Math.ceil(from / step) * step; v <= to; v += step) out.push(v);
    return out;
  };
  const grid = [
    ...ticks(lo, hi, 6).map((v) => [
      s("line", { x1: pad.left, x2: W - pad.right, y1: y(v), y2: y(v), stroke: "#d8d4ca" }),
      s("text", { x: pad.left - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b6a66" }, String(v)),
    ]),
    ...ticks(0, maxGames, 8).map((g) => s("text", { x: x(g), y: H - pad.bottom + 16, "text-anchor": "middle", "font-size": 11, fill: "#6b6a66" }, String(g))),
    s("text", { x: (W + pad.left) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11, fill: "#6b6a66" }, "rated games played"),
    s("line", { x1: pad.left, x2: pad.left, y1: pad.top, y2: H - pad.bottom, stroke: "#6b6a66" }),
    s("line", { x1: pad.left, x2: W - pad.right, y1: H - pad.bottom, y2: H - pad.bottom, stroke: "#6b6a66" }),
  ];
  const lines = series.map((bot, i) => {
    const color = COLORS[i % COLORS.length];
    const end = bot.points[bot.points.length - 1];
    return s(
      "g",
      { "data-bot": bot.name },
      s("polyline", { points: bot.points.map((p) => `${x(p.games).toFixed(1)},${y(p.mu).toFixed(1)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2, "data-points": bot.points.length }),
      s("line", { x1: x(end.games), x2: x(end.games), y1: y(Math.min(hi, end.mu + end.sigma)), y2: y(Math.max(lo, end.mu - end.sigma)), stroke: color, "stroke-opacity": 0.4, "stroke-width": 6 }),
      s("circle", { cx: x(end.games), cy: y(end.mu), r: 3.5, fill: color, "data-mu": end.mu.toFixed(3) }, s("title", {}, `${bot.name}: mu ${end.mu.toFixed(2)} ± ${end.sigma.toFixed(2)} after ${end.games} games`)),
    );
  });
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "each bot's mu over its rated games", class: "rating-plot" }, grid, lines);
  const legend = h(
    "ul.legend",
    {},
    series.map((bot, i) => h("li", { dataset: { bot: bot.name } }, h("span.swatch", { class: `c${i % COLORS.length}` }), bot.name)),
  );
  return h("div", {}, svg, legend);
}
