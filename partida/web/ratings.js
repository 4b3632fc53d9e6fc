// People's ratings: a game's leaderboard per clock class (`leaderboard`), a player's ratings
// (`ratings`) and their history drawn as hand-written SVG (`rating_history`), and the words a
// room's log shows when a rated game is judged or rated (`rating_verdict`, `rating_changed`).

import { clear, h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
export const CLASSES = ["bullet", "blitz", "rapid", "classical", "correspondence"];
const PROVISIONAL_HINT = "provisional: its deviation is above 110 (a newcomer's first games)";

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined && value !== null) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

// The lobby's card: pick a game and a class for its leaderboard, or look a player up.
export function ratingsCard(conn, games, openPlayer, chosen) {
  const gameSelect = h("select", { id: "board-game" }, games.map((g) => h("option", { value: g.name, selected: g.name === chosen }, g.title || g.name)));
  const classSelect = h("select", { id: "board-class" }, CLASSES.map((c) => h("option", { value: c, selected: c === "blitz" }, c)));
  const board = h("div", { id: "leaderboard" });
  const draw = () => showLeaderboard(board, conn, gameSelect.value, classSelect.value).catch(() => clear(board, h("p.muted", {}, "No leaderboard here.")));
  gameSelect.addEventListener("change", draw);
  classSelect.addEventListener("change", draw);
  const who = h("input", { id: "player-name", placeholder: "an account's name", maxlength: 32, size: 16 });
  const lookUp = h(
    "form.inline",
    {
      onsubmit: (event) => {
        event.preventDefault();
        if (who.value.trim()) openPlayer(who.value.trim());
      },
    },
    who,
    h("button", { type: "submit", id: "player-go" }, "Ratings"),
  );
  draw();
  return h("section.card", { id: "ratings-card" }, h("h2", {}, "Ratings"), h("div.inline", {}, gameSelect, classSelect), board, h("h3", {}, "A player"), lookUp);
}

async function showLeaderboard(container, conn, game, kind) {
  const reply = await conn.request("leaderboard", { game, clock_class: kind });
  const rows = reply.boards[kind] || [];
  if (!rows.length) return clear(container, h("p.muted", {}, `No rated ${kind} games yet.`));
  // Provisional ratings come after the established ones, marked `?` (the server orders them).
  const row = (r) =>
    h(
      "tr",
      { dataset: { player: r.name, provisional: String(r.provisional) }, class: r.provisional ? "provisional" : null },
      h("td", {}, String(r.place)),
      h("td", {}, r.name),
      h("td", { title: r.provisional ? PROVISIONAL_HINT : "" }, r.shown),
      h("td", {}, String(r.games)),
    );
  const provisional = rows.some((r) => r.provisional);
  clear(
    container,
    h(
      "table.standings",
      { dataset: { game, clockClass: kind } },
      h("thead", {}, h("tr", {}, ["#", "player", "rating", "games"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows.map(row)),
    ),
    provisional ? h("p.muted", {}, "? provisional: a newcomer's rating, still unsure.") : null,
  );
}

// A player's page: every rating they have, and the history of one (the first, or the one clicked).
export async function showPlayer(main, conn, name) {
  const reply = await conn.request("ratings", { name });
  const plot = h("div.plot", { id: "rating-history" });
  const pick = (line) => drawHistory(plot, conn, reply.name, line.game, line.clock_class);
  clear(
    main,
    h(
      "section.room",
      { id: "player", dataset: { player: reply.name } },
      h("h2", {}, `${reply.name}'s ratings`),
      reply.ratings.length
        ? h(
            "table.standings",
            { id: "player-ratings" },
            h("thead", {}, h("tr", {}, ["game", "class", "rating", "games", ""].map((t) => h("th", {}, t)))),
            h(
              "tbody",
              {},
              reply.ratings.map((line) =>
                h(
                  "tr",
                  { dataset: { game: line.game, clockClass: line.clock_class, provisional: String(line.provisional) } },
                  h("td", {}, line.game),
                  h("td", {}, line.clock_class),
                  h("td", { title: line.provisional ? PROVISIONAL_HINT : "" }, line.shown),
                  h("td", {}, String(line.games)),
                  h("td", {}, h("button", { type: "button", onclick: () => pick(line) }, "History")),
                ),
              ),
            ),
          )
        : h("p.muted", {}, "No rated games yet."),
      plot,
    ),
  );
  if (reply.ratings.length) await pick(reply.ratings[0]);
}

async function drawHistory(container, conn, name, game, kind) {
  const reply = await conn.request("rating_history", { name, game, clock_class: kind });
  clear(container, h("h3", {}, `${game}, ${kind}: rating after each rated game`), historyPlot(reply.history));
}

// The rating after each rated game, from the newcomer's 1500 before the first.
export function historyPlot(history) {
  if (!history.length) return h("p.muted", {}, "No rated games yet.");
  const points = [history[0].before, ...history.map((p) => p.after)].map((r, i) => ({ games: i, rating: r.rating, provisional: r.provisional }));
  const W = 640;
  const H = 260;
  const pad = { left: 44, right: 12, top: 12, bottom: 32 };
  const ratings = points.map((p) => p.rating);
  let lo = Math.floor(Math.min(...ratings) - 10);
  let hi = Math.ceil(Math.max(...ratings) + 10);
  const last = points.length - 1;
  const x = (g) => pad.left + ((W - pad.left - pad.right) * g) / Math.max(1, last);
  const y = (r) => pad.top + ((H - pad.top - pad.bottom) * (hi - r)) / (hi - lo);
  const axis = [
    s("line", { x1: pad.left, x2: pad.left, y1: pad.top, y2: H - pad.bottom, stroke: "#6b6a66" }),
    s("line", { x1: pad.left, x2: W - pad.right, y1: H - pad.bottom, y2: H - pad.bottom, stroke: "#6b6a66" }),
    s("text", { x: pad.left - 6, y: y(hi) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b6a66" }, String(hi)),
    s("text", { x: pad.left - 6, y: y(lo) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b6a66" }, String(lo)),
    s("text", { x: (W + pad.left) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11, fill: "#6b6a66" }, `rated games (${last})`),
  ];
  const line = s("polyline", { points: points.map((p) => `${x(p.games).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" "), fill: "none", stroke: "#1f6f4a", "stroke-width": 2, "data-points": points.length });
  const dots = points.map((p) =>
    s("circle", { cx: x(p.games), cy: y(p.rating), r: 3, fill: p.provisional ? "#fff" : "#1f6f4a", stroke: "#1f6f4a" }, s("title", {}, `after ${p.games} games: ${p.rating}${p.provisional ? "?" : ""}`)),
  );
  return s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "rating after each rated game", class: "rating-plot" }, axis, line, dots);
}

// A seat's name with its rating in the room's game and class, as lichess lists players
// (`ada (1500?)`); the server sends no rating for guests, bots without an account or rooms
// without a clock.
export function withRating(seat) {
  return seat.rating ? `${seat.name} (${seat.rating})` : seat.name;
}

// The rating shown beside a seat's name in a room.
export function seatRating(seat) {
  if (!seat.rating) return null;
  const provisional = seat.rating.endsWith("?");
  return h("span.rating", { dataset: { rating: seat.rating }, title: provisional ? PROVISIONAL_HINT : "rating in this game and clock class" }, ` ${seat.rating}`);
}

// The badge of a rated room (in its header and in the lobby's list).
export function ratedBadge(summary, id) {
  return summary.rated ? h("span.badge.rated", { id, title: "rated: the result changes both players' ratings" }, "rated") : null;
}

// A room's log line for a rated game's verdict or rating.
export function ratingWords(message) {
  // a rated verdict's message says "rated, and flagged" itself: said once
  if (message.type === "rating_verdict") return message.rated ? `${message.message[0].toUpperCase()}${message.message.slice(1)}.` : `Not rated: ${message.message}.`;
  const changes = message.changes.map((c) => `${c.name} ${c.before.shown} → ${c.after.shown}`).join(", ");
  return `Ratings (${message.game}, ${message.clock_class}): ${changes}.`;
}
