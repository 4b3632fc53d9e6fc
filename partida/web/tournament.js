// Tournaments: the list (`tournament_list`), a tournament's page (`tournament_standings` and
// `tournament_pairings`: standings, the games in play to watch, every round's tables), joining
// and withdrawing, and a form to create one. The server pushes `tournament_started`,
// `tournament_round`, `tournament_game` and `tournament_over` to connected entrants only, and
// nothing when a game of a round ends, so the page redraws on each push and also asks again
// every few seconds while the tournament is not over (app.js holds the timer).

import { clear, h } from "./dom.js";
import { clockField, readClock } from "./room_controls.js";
import { clockText } from "./results.js";

export const ENTRY = { people: "people only", bots: "bots only", both: "people and bots" };
const FORMAT = { "round-robin": "round robin", swiss: "Swiss", arena: "arena" };
const STATUS = { registering: "registration open", running: "running", finished: "finished" };
// The columns after the record, in the order the format breaks ties, each shown when the
// standings carry it (an arena's current win streak first).
const COLUMNS = {
  streak: ["streak", "wins in a row: from the second on, a win counts double"],
  buchholz_cut1: ["Bh-1", "Buchholz less the lowest opponent"],
  buchholz: ["Bh", "Buchholz: the sum of the opponents' points"],
  sonneborn_berger: ["SB", "Sonneborn-Berger"],
  direct_encounter: ["DE", "direct encounter"],
};
const SWISS_ORDER = ["streak", "buchholz_cut1", "buchholz", "sonneborn_berger", "direct_encounter"];
const ROUND_ROBIN_ORDER = ["direct_encounter", "sonneborn_berger"];

const num = (x) => (x === 0.5 ? "½" : Number.isInteger(x) ? String(x) : x % 1 === 0.5 ? `${Math.floor(x)}½` : x.toFixed(2));

function formatText(t) {
  if (t.format === "arena") return `arena, ${Math.round((t.duration || 0) / 60)} min`;
  if (t.format === "round-robin") return t.rounds === 2 ? "double round robin" : "round robin";
  return `Swiss, ${t.rounds} rounds`;
}

function startText(t, now = Date.now()) {
  const at = new Date(t.starts_at * 1000);
  const when = at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  if (t.status !== "registering") return `started ${when}`;
  const minutes = Math.max(0, Math.round((t.starts_at * 1000 - now) / 60000));
  return `starts ${when} (${minutes < 1 ? "in under a minute" : `in ${minutes} min`})`;
}

function gameTitle(games, name) {
  return games.get(name)?.title || name;
}

function entryBadge(t) {
  return h("span.badge.entry", { dataset: { entry: t.entry }, title: "who may enter" }, ENTRY[t.entry] || t.entry);
}

const botMark = () => h("span.badge.bot", { title: "a bot account" }, "bot");

// The public tournaments, soonest first (every tournament is public: the protocol has no
// private ones yet), a page at a time: the server answers `tournament_list` in pages without
// options, and *More tournaments* asks for the page after the last one shown (its `next`).
// Always an element: the lobby shows it with the create form.
export const TOURNAMENTS_PAGE = 20;

export async function tournamentsList(conn, games, open) {
  const first = await conn.request("tournament_list", { limit: TOURNAMENTS_PAGE, watch: true }); // `lobby_tournaments` says when to list again
  if (!first.tournaments.length) return h("p.muted", { id: "tournaments" }, "No tournaments yet.");
  const list = h("ul.rooms", { id: "tournaments" });
  const more = h("button", { type: "button", id: "tournaments-more" }, "More tournaments");
  let next = null;
  const show = (reply) => {
    list.append(...reply.tournaments.map((t) => tournamentLine(t, games, open)));
    next = reply.next ?? null;
    more.hidden = next === null;
  };
  more.onclick = async () => {
    if (next === null) return;
    more.disabled = true;
    try {
      show(await conn.request("tournament_list", { limit: TOURNAMENTS_PAGE, cursor: next }));
    } finally {
      more.disabled = false;
    }
  };
  show(first);
  return h("div", {}, list, more);
}

function tournamentLine(t, games, open) {
  return h(
    "li",
    { class: "tournament-line", dataset: { tournament: t.name, status: t.status } },
    h("div", {}, h("b", {}, t.name), " ", entryBadge(t), " ", h("span.badge", {}, STATUS[t.status] || t.status)),
    h("div.muted", {}, `${gameTitle(games, t.game)} · ${formatText(t)} · ${clockText(t.clock)} · ${startText(t)}${t.status === "running" ? ` · round ${t.round}` : ""} · ${t.entrants} entrant${t.entrants === 1 ? "" : "s"}`),
    h("button", { type: "button", onclick: () => open(t.name) }, "Open"),
  );
}

// A tournament's page, drawn into `main`. `ctx`: {conn, you, games, name, watch(code),
// replay(gameId), say(text, kind)}. Returns a function that asks the server again and redraws,
// resolving to the tournament's summary.
export async function showTournament(main, ctx) {
  const { conn, name } = ctx;
  const head = h("div.room-head", {}, h("h2", {}, "Tournament ", name));
  const info = h("p.muted", { id: "tournament-info" });
  const actions = h("div.controls", { id: "tournament-actions" });
  const standings = h("div", { id: "t-standings" });
  const live = h("div", { id: "t-live" });
  const pairings = h("div", { id: "t-pairings" });
  const page = h(
    "section.room",
    { id: "tournament", dataset: { tournament: name } },
    head,
    info,
    actions,
    h("h3", {}, "Standings"),
    standings,
    h("h3", {}, "Games in play"),
    live,
    h("h3", {}, "Pairings"),
    pairings,
  );
  clear(main, page);
  const refresh = async () => {
    const [table, paired] = await Promise.all([
      conn.request("tournament_standings", { tournament: name }),
      conn.request("tournament_pairings", { tournament: name }),
    ]);
    const t = table.tournament;
    const rows = table.standings;
    const bots = new Set(rows.filter((r) => r.bot).map((r) => r.name));
    const mine = rows.find((r) => r.name === ctx.you.name);
    page.dataset.status = t.status;
    page.dataset.round = String(t.round);
    clear(
      head,
      h("h2", {}, "Tournament ", name),
      h("span.badge", { id: "tournament-status" }, STATUS[t.status] || t.status),
      entryBadge(t),
    );
    info.textContent = `${gameTitle(ctx.games, t.game)}${t.seats > 2 ? `, ${t.seats} seats` : ""} · ${formatText(t)} · clock ${clockText(t.clock)} · ${startText(t)} · ${t.entrants} entrant${t.entrants === 1 ? "" : "s"}${t.round ? ` · round ${t.round}` : ""}`;
    const waiting = paired.tables.find((row) => isLive(row) && row.players.includes(ctx.you.name));
    clear(
      actions,
      waiting && ctx.you.kind !== "guest" ? h("button.primary", { type: "button", id: "your-game", onclick: () => ctx.watch(waiting.room, true) }, `Your game, round ${waiting.round}: play`) : null,
      entryControls(ctx, t, mine, refresh),
    );
    clear(standings, standingsTable(rows, ctx.you.name, t.format === "round-robin" ? ROUND_ROBIN_ORDER : SWISS_ORDER));
    const tables = paired.tables;
    const playing = tables.filter(isLive);
    clear(live, playing.length ? tableList(playing, bots, ctx) : h("p.muted", {}, t.status === "finished" ? "None: the tournament is over." : "None right now."));
    clear(pairings, roundsOf(tables, bots, ctx));
    return t;
  };
  await refresh();
  return refresh;
}

// Join and withdraw, where the entry rule and the format allow; otherwise why not, in words.
function entryControls(ctx, t, mine, refresh) {
  const entered = mine && !mine.withdrawn;
  const request = (type) => async () => {
    try {
      await ctx.conn.request(type, { tournament: t.name });
      ctx.say(type === "tournament_join" ? `You are entered in ${t.name}.` : `You withdrew from ${t.name}.`);
    } catch (error) {
      ctx.say(error.message, "error");
    }
    await refresh().catch(() => {});
  };
  if (t.status === "finished") return h("p.muted", {}, entered ? "You played in this tournament." : "This tournament is over.");
  const open = t.status === "registering" || t.format !== "round-robin"; // a Swiss or an arena takes late entrants
  const out = [];
  if (entered) {
    out.push(h("span.badge.me", { id: "entered" }, "you are entered"));
    out.push(h("button", { type: "button", id: "withdraw", onclick: request("tournament_withdraw") }, "Withdraw"));
    if (t.status === "registering") out.push(h("span.muted", {}, "Stay on this site: when a round is paired you are taken to your game."));
  } else if (ctx.you.kind === "guest") {
    out.push(h("span.muted", { id: "why-not" }, "Tournaments are for accounts: enter with your account's name and password to join."));
    if (ctx.toEntry) out.push(h("button", { type: "button", id: "tournament-page-sign-up", onclick: () => ctx.toEntry() }, "Sign up or log in"));
  } else if (t.entry === "bots" && ctx.you.kind !== "bot") {
    out.push(h("span.muted", { id: "why-not" }, "Bots only: people cannot enter this one."));
  } else if (t.entry === "people" && ctx.you.kind === "bot") {
    out.push(h("span.muted", { id: "why-not" }, "People only."));
  } else if (!open) {
    out.push(h("span.muted", { id: "why-not" }, "A round robin takes no entrants once it has started."));
  } else {
    out.push(h("button.primary", { type: "button", id: "join", onclick: request("tournament_join") }, mine ? "Join again" : "Join"));
    if (t.entry === "both") out.push(h("span.muted", {}, "People and bots play here: you may be paired with a bot."));
  }
  return out;
}

function standingsTable(rows, you, order) {
  if (!rows.length) return h("p.muted", {}, "No entrants yet.");
  const breaks = order.filter((key) => rows.some((r) => r[key] !== undefined)).map((key) => [key, ...COLUMNS[key]]);
  const heads = ["#", "entrant", "points", "games", "won", "drawn", "lost", "byes", ...breaks.map(([, short]) => short)];
  return h(
    "table.standings",
    {},
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        heads.map((text, i) => h("th", { title: i >= 8 ? breaks[i - 8][2] : null, class: i >= 7 ? "wide" : null }, text)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((r) =>
        h(
          "tr",
          { dataset: { entrant: r.name, bot: String(r.bot), points: String(r.points) }, class: [r.withdrawn ? "away" : "", r.name === you ? "me" : ""].join(" ").trim() || null },
          h("td", {}, String(r.rank)),
          h("td", {}, r.name, r.bot ? [" ", botMark()] : null, r.withdrawn ? h("small.muted", {}, " withdrawn") : null),
          [num(r.points), r.games, r.wins, r.draws, r.losses].map((v) => h("td", {}, String(v))),
          h("td.wide", {}, String(r.byes)),
          breaks.map(([key]) => h("td.wide", {}, r[key] === undefined ? "" : num(r[key]))),
        ),
      ),
    ),
  );
}

// Each round's tables, the latest round first.
function roundsOf(tables, bots, ctx) {
  if (!tables.length) return h("p.muted", {}, "No round has been paired yet.");
  const rounds = [...new Set(tables.map((row) => row.round))].sort((a, b) => b - a);
  return rounds.map((round) =>
    h(
      "div.round",
      { dataset: { round } },
      h("h4", {}, `Round ${round}`),
      tableList(
        tables.filter((row) => row.round === round),
        bots,
        ctx,
      ),
    ),
  );
}

function tableList(rows, bots, ctx) {
  return h(
    "ul.rooms.pairings",
    {},
    rows.map((row) => {
      const points = pointsOf(row);
      const players = row.players.map((player, seat) =>
        h(
          "span.player",
          { dataset: { player } },
          player,
          bots.has(player) ? [" ", botMark()] : null,
          points ? h("b.pts", {}, ` ${num(points[seat])}`) : null,
        ),
      );
      const sat = ctx.you.kind !== "guest" && row.players.includes(ctx.you.name);
      const live = isLive(row);
      return h(
        "li",
        { dataset: { round: row.round, table: row.table, status: row.status, room: row.room || "" } },
        h("span.muted", {}, `${row.table}.`),
        players.flatMap((p, i) => (i ? [h("span.muted", {}, " vs "), p] : [p])),
        outcomeText(row) ? h("span.muted.outcome", {}, ` · ${outcomeText(row)}`) : null,
        live ? h("button", { type: "button", class: "watch", onclick: () => ctx.watch(row.room, sat) }, sat ? "Play" : "Watch") : null,
        // A tournament's rooms are private: their records are shown to those who sat in them.
        !live && row.game_id && sat && row.status === "finished" ? h("button", { type: "button", class: "replay", onclick: () => ctx.replay(row.game_id) }, "Replay") : null,
      );
    }),
  );
}

// A table whose game is being played or waits for its players: it can be watched (or taken).
function isLive(row) {
  return Boolean(row.room) && !row.result && (row.status === "playing" || row.status === "waiting");
}

// The points each seat took from a decided table (`competition/points.py`'s rule, before an
// arena doubles them): one per seat ranked below, half per seat level, over the other seats.
function pointsOf(row) {
  const r = row.result;
  if (!r) return null;
  if (r.bye) return r.points ? [r.points] : null; // a round robin's rest scores nothing
  const ranks = r.ranks || [];
  if (ranks.length < 2 || r.void) return null;
  return ranks.map((mine, seat) => ranks.reduce((sum, other, i) => sum + (i === seat ? 0 : other > mine ? 1 : other === mine ? 0.5 : 0), 0) / (ranks.length - 1));
}

const REASONS = { no_show: "no show", time: "on time", resign: "resigned", draw_agreed: "draw agreed", abandoned: "abandoned" };

function outcomeText(row) {
  const r = row.result;
  if (row.status === "bye") return "bye"; // one word, as `partida tournament pairings` says it
  if (!r) return row.status === "playing" ? "playing" : row.status === "waiting" ? "waiting for its players" : row.status || "";
  if (r.void) return "void: nobody came";
  if (!(r.ranks || []).length) return "aborted";
  return REASONS[r.reason] || "";
}

// The create form (accounts only; `partida tournament create` does the same).
export function tournamentForm(conn, games, created, say) {
  const field = (label, input) => h("label.option", { for: input.id }, label, input);
  const nameInput = h("input", { id: "t-name", required: true, maxlength: 40, placeholder: "spring-cup" });
  const game = h(
    "select",
    { id: "t-game" },
    [...games.values()].map((g) => h("option", { value: g.name, selected: g.name === "tictactoe" }, g.title)),
  );
  const format = h("select", { id: "t-format" }, Object.entries(FORMAT).map(([value, text]) => h("option", { value, selected: value === "swiss" }, text)));
  const rounds = h("input", { id: "t-rounds", type: "number", min: 1, max: 100, value: 4 });
  const minutes = h("input", { id: "t-minutes", type: "number", min: 1, max: 10080, value: 30 });
  const clockRow = clockField("t-clock", { none: false, selected: "1+0" });
  const clock = clockRow.querySelector("select");
  const entry = h("select", { id: "t-entry" }, Object.entries(ENTRY).map(([value, text]) => h("option", { value, selected: value === "both" }, text)));
  const startsIn = h("input", { id: "t-starts", type: "number", min: 0, max: 43200, value: 10 });
  const roundsRow = field("Rounds", rounds);
  const minutesRow = field("Minutes", minutes);
  const shape = () => {
    const arena = format.value === "arena";
    roundsRow.hidden = arena;
    minutesRow.hidden = !arena;
    if (format.value === "round-robin") Object.assign(rounds, { max: 2, title: "1 single, 2 double" });
    else Object.assign(rounds, { max: 100, title: "" });
  };
  format.addEventListener("change", shape);
  shape();
  return h(
    "form.create",
    {
      id: "tournament-create",
      onsubmit: async (event) => {
        event.preventDefault();
        const request = { name: nameInput.value.trim(), game: game.value, format: format.value, entry: entry.value, starts_in: Math.max(0, Number(startsIn.value) || 0) * 60 };
        if (format.value === "arena") request.duration = Number(minutes.value) * 60;
        else request.rounds = Number(rounds.value);
        try {
          request.clock = readClock(clock);
          const reply = await conn.request("tournament_create", request);
          created(reply.tournament.name);
        } catch (error) {
          say(error.message, "error");
        }
      },
    },
    field("Name", nameInput),
    field("Game", game),
    field("Format", format),
    roundsRow,
    minutesRow,
    h("label.option", { for: "t-clock" }, "Clock", clockRow),
    field("Who may enter", entry),
    field("Starts in (minutes)", startsIn),
    h("button.primary", { type: "submit", id: "create-tournament" }, "Create tournament"),
  );
}
