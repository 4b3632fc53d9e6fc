// The Partida web client: lobby, rooms, boards. It speaks only the documented protocol
// (docs/protocol.md) and renders only the views the server sends.

import { Connection, ProtocolError, seedHash } from "./proto.js";
import { clear, h } from "./dom.js";
import { promptWidget } from "./prompts.js";
import { generic, othello, tictactoe } from "./board_basic.js";
import { recycle } from "./board_recycle.js";
import { duel } from "./board_duel.js";
import { clockBar, clockField, endingControls, readClock } from "./room_controls.js";
import { showReplay, storedGamesList } from "./replay.js";
import { laddersList, showLadder } from "./ladder.js";
import { showTournament, tournamentForm, tournamentsList } from "./tournament.js";
import { ratedBadge, ratingsCard, ratingWords, seatRating, showPlayer, withRating } from "./ratings.js";
import { headline, scoresText } from "./results.js";
import { seekPaired, seeksCard } from "./seeks.js";
import { isTakeback, takebackControls, takebackWords, takenBackIndexes } from "./takeback.js";
import { accountsOnly, invitationCard, onChallengePush, peek, playerExtras, playerLinks, showAccount, signUpCard } from "./accounts.js";
import { ChatPanel, roomChatNote } from "./chat.js";
import { showHostedBots } from "./hosted_bots.js";

const BOARDS = { tictactoe, othello, duel };
const DEFAULT_GAME = "tictactoe"; // the new-room form's first choice: two seats, a minute's game
const SEATS_KEY = "partida.seats"; // room code -> {seat, token}: a reload returns to the seat
const NAME_KEY = "partida.name";
const PASSWORD_KEY = "partida.password"; // sessionStorage only: survives a reload, not the tab
const RESUME_KEY = "partida.resume"; // a person's session token (`welcome`'s `resume`): logged in across reloads and tabs
const TOURNAMENT_ROOMS_KEY = "partida.tournamentRooms"; // sessionStorage: [[room code, tournament], ...]

function storedTournamentRooms() {
  try {
    return new Map(JSON.parse(sessionStorage.getItem(TOURNAMENT_ROOMS_KEY) || "[]"));
  } catch {
    return new Map();
  }
}

const app = {
  conn: null,
  you: null,
  games: new Map(),
  room: null, // {code, summary, update, prev, seat, log: [], result}
  lobbyTimer: null,
  lobby: null, // the public rooms shown, while the lobby is: { container, rooms: code -> summary }
  tournament: null, // the tournament page shown: { name, refresh }
  tournamentRooms: storedTournamentRooms(), // room code -> the tournament whose game it is
  seeks: null, // the lobby's seeks card, while the lobby is shown (seeks.js)
  chat: null, // the chat box of the room or tournament shown (chat.js)
  retry: 0,
  pendingSignUp: null, // {sign_up, invite?}: the next hello makes the account
  sentChallenges: new Map(), // challenge id -> the challenge this page sent, until answered
};

const main = document.getElementById("main");
const status = document.getElementById("status");

function wsUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
}

function savedSeats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS_KEY) || "{}");
  } catch {
    return {};
  }
}

function saveSeat(code, seat, token) {
  const seats = savedSeats();
  if (seat === null || seat === undefined) delete seats[code];
  else seats[code] = { seat, token };
  localStorage.setItem(SEATS_KEY, JSON.stringify(seats));
}

function say(text, kind = "info") {
  status.textContent = text;
  status.dataset.kind = kind;
}

function codeFromPath() {
  const match = location.pathname.match(/^\/r\/([A-Za-z0-9]+)\/?$/);
  return match ? match[1].toUpperCase() : null;
}

// Connecting and logging in.

function showLogin(message, focus = "name", signUpError = null) {
  stopLobbyPolling();
  document.getElementById("logout").hidden = true; // nothing to change before a name is chosen
  document.getElementById("account-link").hidden = true;
  const name = h("input", { id: "name", name: "name", value: localStorage.getItem(NAME_KEY) || "", maxlength: 32, autocomplete: "username", required: true });
  const password = h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", placeholder: "only for an account" });
  const form = h(
    "form.card.login",
    {
      onsubmit: (event) => {
        event.preventDefault();
        login(name.value.trim(), password.value);
      },
    },
    h("h2", {}, "Play"),
    message ? h("p.error", {}, message) : null,
    h("label", { for: "name" }, "Your name"),
    name,
    h("label", { for: "password" }, "Password"),
    password,
    h("button.primary", { type: "submit", id: "enter" }, "Enter"),
    h("p.muted", {}, "Without a password you play as a guest under that name."),
  );
  // Whether this server takes sign-ups, and where an invite link leads, come from a short
  // connection of their own; the forms do not wait for it.
  const invitation = h("div", { id: "invitation-slot" });
  const signUp = h("div", { id: "signup-slot" });
  clear(main, invitation, h("div.entry", {}, form, signUp));
  peek(wsUrl(), codeFromPath()).then(
    (seen) => {
      if (!form.isConnected) return;
      clear(signUp, signUpCard(seen.signUp, signUpAs, { error: signUpError, name: focus === "signup" ? localStorage.getItem(NAME_KEY) : "" }));
      if (seen.invitation) clear(invitation, invitationCard(seen.invitation, { titleOf: (game) => seen.titles.get(game) || game, seatLabel: (game, seat) => (BOARDS[game] && BOARDS[game].seatLabel ? BOARDS[game].seatLabel(seat) : null) }));
      if (focus === "signup") document.getElementById("signup-name")?.focus();
    },
    () => {},
  );
  if (focus !== "signup") name.focus();
}

// A new account: the next hello carries `sign_up` (and the invite code), and logs in to it.
async function signUpAs(name, password, invite) {
  if (!name) return;
  localStorage.setItem(NAME_KEY, name);
  localStorage.removeItem(RESUME_KEY);
  sessionStorage.setItem(PASSWORD_KEY, password);
  app.pendingSignUp = invite ? { sign_up: true, invite } : { sign_up: true };
  try {
    await connect();
  } catch (error) {
    app.pendingSignUp = null;
    sessionStorage.removeItem(PASSWORD_KEY);
    return showLogin(null, "signup", error.message);
  }
  await route();
}

async function login(name, password) {
  if (!name) return showLogin("Choose a name.");
  localStorage.setItem(NAME_KEY, name);
  localStorage.removeItem(RESUME_KEY); // another name, or a password typed: this login, not a kept session
  if (password) sessionStorage.setItem(PASSWORD_KEY, password);
  else sessionStorage.removeItem(PASSWORD_KEY);
  try {
    await connect();
  } catch (error) {
    sessionStorage.removeItem(PASSWORD_KEY);
    return showLogin(error.message);
  }
  await route();
}

async function connect() {
  if (app.conn) app.conn.close();
  const conn = new Connection(wsUrl());
  conn.onPush = onPush;
  conn.onState = (state) => {
    if (state === "closed" && app.conn === conn) reconnectSoon();
  };
  say("connecting…");
  await conn.open();
  const hello = { version: 2, name: localStorage.getItem(NAME_KEY) };
  const password = sessionStorage.getItem(PASSWORD_KEY);
  if (password) hello.password = password;
  const resume = localStorage.getItem(RESUME_KEY);
  if (resume) hello.resume = resume;
  if (app.pendingSignUp) {
    Object.assign(hello, app.pendingSignUp);
    delete hello.resume;
  }
  let welcome;
  try {
    welcome = await conn.request("hello", hello);
  } catch (error) {
    conn.close(); // a refused sign-up or name leaves the server's end open for another hello
    throw error;
  }
  app.pendingSignUp = null;
  if (welcome.resume) localStorage.setItem(RESUME_KEY, welcome.resume);
  else localStorage.removeItem(RESUME_KEY);
  app.conn = conn;
  app.you = welcome.you;
  app.retry = 0;
  document.getElementById("you").textContent = `${welcome.you.name} (${welcome.you.kind})`;
  document.getElementById("logout").hidden = false;
  document.getElementById("logout").textContent = welcome.you.kind === "user" ? "log out" : "change name";
  document.getElementById("account-link").hidden = welcome.you.kind !== "user";
  const games = await conn.request("list_games");
  app.games = new Map(games.games.map((g) => [g.name, g]));
  app.botClock = games.bot_clock || null; // what a game with a bot and no clock gets
  say("");
}

// The connection dropped: come back (same name, same seat tokens) with a growing pause, and
// never sooner than the server's `retry_after` when it refused the last try.
function reconnectSoon(told = 0) {
  const delay = Math.max(Math.min(500 * 2 ** app.retry, 8000), told * 1000);
  app.retry += 1;
  say(told ? `reconnecting: try again in ${Math.ceil(told)} s…` : "connection lost; reconnecting…", "error");
  setTimeout(async () => {
    try {
      await connect();
      await route();
    } catch (error) {
      if (error instanceof ProtocolError && error.code === "auth_failed") {
        // The session ended (a log-out elsewhere, a new password, a restart) with no password kept.
        localStorage.removeItem(RESUME_KEY);
        sessionStorage.removeItem(PASSWORD_KEY);
        return showLogin(error.message);
      }
      reconnectSoon(error instanceof ProtocolError && error.retryAfter !== null ? error.retryAfter : 0);
    }
  }, delay);
}

// Addresses: a room is /r/CODE (the server answers it with this page), a replay /#/replay/ID,
// a ladder /#/ladder/NAME, a tournament /#/tournament/NAME and a player /#/player/NAME
// (fragments: the server serves / for them), so reload and share keep you there.
function pageFromHash() {
  const match = location.pathname === "/" && location.hash.match(/^#\/(replay|ladder|tournament|player)\/([^/]+)$/);
  if (!match) return null;
  return { kind: match[1], key: decodeURIComponent(match[2]) };
}

async function route(watch = false) {
  const code = codeFromPath();
  const page = pageFromHash();
  if (code) await enterRoom(code, { watch });
  else if (page && page.kind === "replay" && /^\d+$/.test(page.key)) openReplay(Number(page.key));
  else if (page && page.kind === "ladder") await openLadder(page.key);
  else if (page && page.kind === "tournament") await openTournament(page.key);
  else if (page && page.kind === "player") await openPlayer(page.key);
  else if (location.pathname === "/" && location.hash === "#/account") await openAccount();
  else if (location.pathname === "/" && location.hash === "#/bots") await openHostedBots();
  else await showLobby();
}

function goTo(address) {
  if (location.pathname + location.hash !== address) history.pushState({}, "", address);
}

// The lobby.

function stopLobbyPolling() {
  if (app.lobbyTimer) clearInterval(app.lobbyTimer);
  app.lobbyTimer = null;
  app.tournament = null;
  if (app.lobby) {
    app.lobby = null; // the server stops pushing lobby changes to this connection
    app.conn.request("list_rooms", { limit: 1, watch: false }).catch(() => {});
  }
  if (app.seeks) {
    app.seeks.stop();
    app.seeks = null;
  }
}

async function showLobby() {
  app.room = null;
  app.chat = null;
  const rooms = h("div", { id: "rooms" });
  const stored = h("div", { id: "stored-games" });
  const ladders = h("section.card", { id: "ladders-card", hidden: true }, h("h2", {}, "Bot ladders"));
  const tournaments = h("div", {}, h("p.muted", {}, "…"));
  const joinCode = h("input", { id: "join-code", placeholder: "room code", maxlength: 12, size: 12 });
  const joinForm = h(
    "form.inline",
    {
      onsubmit: (event) => {
        event.preventDefault();
        const code = joinCode.value.trim().toUpperCase();
        if (code) goToRoom(code);
      },
    },
    joinCode,
    h("button", { type: "submit" }, "Join"),
  );
  const seeks = seeksCard(app.conn, { games: app.games, onRoom: openSeekRoom, say, signUp: app.you && app.you.kind !== "user" ? toEntry : null });
  clear(
    main,
    seeks.card,
    h("section.card", {}, h("h2", {}, "Public rooms"), rooms, h("h3", {}, "A room by its code"), joinForm),
    h("section.card", {}, h("h2", {}, "New room"), createForm()),
    h("section.card", { id: "tournaments-card" }, h("h2", {}, "Tournaments"), tournaments, tournamentCreate()),
    ladders,
    ratingsCard(app.conn, [...app.games.values()], openPlayer, DEFAULT_GAME),
    h("section.card", {}, h("h2", {}, "Finished games"), stored),
  );
  laddersList(app.conn, openLadder, gameTitle).then(
    (list) => {
      if (!list) return;
      ladders.append(list);
      ladders.hidden = false;
    },
    () => {}, // a server without ladders: the section stays hidden
  );
  const listTournaments = (first) =>
    tournamentsList(app.conn, app.games, openTournament).then(
      (list) => clear(tournaments, list),
      () => first && clear(tournaments, h("p.muted", {}, "This server runs no tournaments.")), // later: keep what is shown
    );
  listTournaments(true);
  storedGamesList(app.conn, openReplay, gameTitle).then(
    (list) => clear(stored, list),
    () => clear(stored, h("p.muted", {}, "This server does not list stored games.")),
  );
  stopLobbyPolling();
  app.seeks = seeks;
  app.lobbyTimer = setInterval(() => listTournaments(false), 60000); // a safety net: changes are pushed (`lobby_tournaments`)
  app.onTournamentsChanged = () => listTournaments(false);
  try {
    await Promise.all([watchRooms(rooms), seeks.start()]);
  } catch {
    /* the reconnect path redraws */
  }
}

// A seek paired (`seek_paired`) or taken (the `seek_taken` reply): its room, this browser seated.
function openSeekRoom(message) {
  const code = codeOf(message);
  // Paired by another node of the deployment: the seat waits on that node's page.
  if (message.url) return moveTo(message.url, code, { seat: message.seat, token: message.token }, false);
  stopLobbyPolling();
  saveSeat(code, message.seat, message.token);
  history.pushState({}, "", `/r/${code}`);
  openRoom(code, summaryOf(message), message.seat);
  if (message.opponent) {
    addLog(app.room, `Paired with ${message.opponent}.`);
    drawRoom();
  }
}

// The lobby's one source of rooms: the first page of public rooms, then the changes the server
// pushes (`lobby`), applied here rather than polling the list again.
async function watchRooms(container) {
  const reply = await app.conn.request("list_rooms", { watch: true });
  app.lobby = { container, rooms: new Map(reply.rooms.map((room) => [room.code, room])) };
  drawLobbyRooms();
}

function onLobbyChange(message) {
  const lobby = app.lobby;
  if (!lobby) return;
  if (message.resync) {
    watchRooms(lobby.container).catch(() => {});
    return;
  }
  for (const code of message.removed || []) lobby.rooms.delete(code);
  for (const room of message.rooms || []) lobby.rooms.set(room.code, room);
  drawLobbyRooms();
}

function drawLobbyRooms() {
  const { container, rooms } = app.lobby;
  drawRooms(container, [...rooms.values()]);
}

function openReplay(gameId) {
  goTo(`/#/replay/${gameId}`);
  stopLobbyPolling();
  app.room = null;
  app.chat = null;
  const boardFor = (game, view) => BOARDS[game] || (view && Array.isArray(view.locations) ? recycle : generic);
  showReplay(main, app.conn, gameId, boardFor, (game) => app.games.get(game)).catch((error) => say(error.message, "error"));
}

function gameTitle(game) {
  return app.games.get(game)?.title || game;
}

// A ladder's standings and rating plot, asked again every few seconds while shown.
async function openLadder(name) {
  goTo(`/#/ladder/${encodeURIComponent(name)}`);
  stopLobbyPolling();
  try {
    const refresh = await showLadder(main, app.conn, name, gameTitle);
    app.lobbyTimer = setInterval(() => refresh().catch(() => {}), 5000);
  } catch (error) {
    say(error.message, "error");
  }
}

// A tournament's page: drawn again on every tournament push (to entrants) and, since a game's end
// within a round is not pushed, asked again every few seconds until the tournament is over.
async function openTournament(name) {
  goTo(`/#/tournament/${encodeURIComponent(name)}`);
  stopLobbyPolling();
  app.room = null;
  const ctx = {
    conn: app.conn,
    you: app.you,
    games: app.games,
    name,
    watch: (code, mine) => {
      noteTournamentRoom(code, name);
      goToRoom(code, { watch: !mine });
    },
    replay: openReplay,
    say,
    toEntry, // a guest's way to an account, instead of a dead end
  };
  try {
    const refresh = await showTournament(main, ctx);
    app.chat = new ChatPanel({ conn: app.conn, place: { tournament: name }, you: app.you.name, say, note: "Everyone on this page reads it: entrants and watchers." });
    app.chat.mount(main.querySelector("#tournament"));
    app.conn.request("chat_history", { tournament: name }).then((reply) => app.chat && app.chat.add(reply.messages), () => {});
    const shown = { name, refresh };
    app.tournament = shown;
    const again = async () => {
      const summary = await refresh();
      if (summary.status === "finished" && app.tournament === shown) {
        clearInterval(app.lobbyTimer); // nothing changes any more
        app.lobbyTimer = null;
      }
    };
    app.lobbyTimer = setInterval(() => again().catch(() => {}), 4000);
  } catch (error) {
    say(error.message, "error");
  }
}

// Which tournament a room's game belongs to (its result offers the way back), kept for the tab.
function noteTournamentRoom(code, name) {
  app.tournamentRooms.set(code, name);
  sessionStorage.setItem(TOURNAMENT_ROOMS_KEY, JSON.stringify([...app.tournamentRooms].slice(-50)));
}

// Your hosted bots (/#/bots): hosted_bots.js.
async function openHostedBots() {
  goTo("/#/bots");
  stopLobbyPolling();
  app.room = null;
  try {
    await showHostedBots(main, app.conn, app.you, app.games, say);
  } catch (error) {
    say(error.message, "error");
  }
}

// A player's ratings and the history of one of them (/#/player/NAME).
async function openPlayer(name) {
  goTo(`/#/player/${encodeURIComponent(name)}`);
  stopLobbyPolling();
  app.room = null;
  app.chat = null;
  try {
    await showPlayer(main, app.conn, name);
    main.append(playerExtras(accountCtx(), name));
  } catch (error) {
    say(error.message, "error");
  }
}

// The account page (/#/account).
async function openAccount() {
  goTo("/#/account");
  stopLobbyPolling();
  app.room = null;
  await showAccount(main, accountCtx());
}

// What accounts.js is handed: the connection, who this is, and the ways to the app's pages.
function accountCtx() {
  return {
    conn: app.conn,
    you: app.you,
    games: app.games,
    titleOf: (game) => (app.games.get(game) || {}).title || game,
    openReplay,
    openPlayer,
    toEntry,
    sent: app.sentChallenges,
    challengeSent: (challenge) => app.sentChallenges.set(challenge.id, challenge),
    onRoom: openChallengeRoom,
    onPasswordChanged: (password, resume) => {
      if (sessionStorage.getItem(PASSWORD_KEY)) sessionStorage.setItem(PASSWORD_KEY, password);
      localStorage.setItem(RESUME_KEY, resume);
    },
  };
}

// An accepted challenge (the `accept` reply, or the challenger's `challenge_accepted` push): its room, this browser seated.
function openChallengeRoom(message) {
  const code = codeOf(message);
  stopLobbyPolling();
  saveSeat(code, message.seat, message.token);
  history.pushState({}, "", `/r/${code}`);
  openRoom(code, summaryOf(message), message.seat);
}

// A guest at something for accounts only: to the entry page's sign-up (a guest has nothing to keep).
function toEntry() {
  stopLobbyPolling(); // while the connection is there to say so
  const conn = app.conn;
  app.conn = null; // so that its closing does not start a reconnection
  if (conn) conn.close();
  document.getElementById("you").textContent = "";
  history.pushState({}, "", "/");
  showLogin(null, "signup");
}

function tournamentCreate() {
  if (!app.you || app.you.kind !== "user") return accountsOnly("to create a tournament or join one", toEntry, "tournament-sign-up");
  return h("details", { id: "tournament-new" }, h("summary", {}, "Create a tournament"), tournamentForm(app.conn, app.games, openTournament, say));
}

// A tournament's push. `tournament_game` takes this person to their seat (its token comes with
// it), unless they are in the middle of another game; the others redraw the page showing it.
function onTournamentPush(message) {
  if (message.type === "tournament_game") {
    noteTournamentRoom(message.room, message.tournament);
    if (message.token) saveSeat(message.room, message.seat, message.token);
    const room = app.room;
    const busy = room && room.seat !== null && room.seat !== undefined && room.code !== message.room && room.update && room.update.status !== "finished";
    if (busy) return say(`Your game in ${message.tournament} is ready: /r/${message.room}`);
    say(`${message.tournament}, round ${message.round}: your game.`);
    goToRoom(message.room);
    return;
  }
  if (message.type === "tournament_over") say(`${message.tournament} is over.`);
  else if (message.type === "tournament_started") say(`${message.tournament} has started.`);
  const shown = app.tournament;
  if (shown && shown.name === message.tournament) shown.refresh().catch(() => {});
}

function drawRooms(container, rooms) {
  if (!rooms.length) return clear(container, h("p.muted", {}, "No public rooms yet: create one."));
  clear(
    container,
    h(
      "ul.rooms",
      {},
      rooms.map((room) => {
        const free = room.seats.some((s) => s.name === null);
        const title = app.games.get(room.game)?.title || room.game;
        const players = room.seats.map((s) => (s.name ? withRating(s) : "(free)")).join(", ");
        return h(
          "li",
          { dataset: { room: room.code } },
          h("b", {}, title),
          ` ${room.code} · ${room.status} · ${players} `,
          ratedBadge(room),
          free && room.status === "waiting" ? h("button", { type: "button", onclick: () => goToRoom(room.code) }, "Join") : null,
          h("button", { type: "button", onclick: () => goToRoom(room.code, { watch: true }) }, "Watch"),
        );
      }),
    ),
  );
}

function createForm() {
  const gameSelect = h(
    "select",
    { id: "game", name: "game" },
    [...app.games.values()].map((g) => h("option", { value: g.name, selected: g.name === DEFAULT_GAME }, g.title)),
  );
  const details = h("div");
  const form = h("form.create", { id: "create" }, h("label", { for: "game" }, "Game"), gameSelect, details);
  const draw = () => drawGameFields(details, app.games.get(gameSelect.value));
  gameSelect.addEventListener("change", draw);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    createRoom(form, app.games.get(gameSelect.value));
  });
  draw();
  return form;
}

function drawGameFields(container, game) {
  if (!game) return; // the games' list has not come yet (home drawn right after the hello)
  const seatCount = h("input", { id: "seats", name: "seats", type: "number", min: game.min_seats, max: game.max_seats, value: game.min_seats });
  const seatRows = h("div.seat-rows");
  const drawSeats = () => {
    const n = Math.max(game.min_seats, Math.min(game.max_seats, Number(seatCount.value) || game.min_seats));
    const rows = [];
    for (let seat = 0; seat < n; seat++) {
      const choice = h(
        "select",
        { name: `seat${seat}`, id: `seat${seat}` },
        h("option", { value: "me", selected: seat === 0 }, "me"),
        h("option", { value: "open", selected: seat !== 0 }, "a friend (open seat)"),
        game.bots.map((agent) => h("option", { value: `bot:${agent}` }, `bot: ${agent}`)),
      );
      rows.push(h("label.seat-row", { for: `seat${seat}` }, `Seat ${seat + 1}`, choice));
    }
    clear(seatRows, rows);
  };
  seatCount.addEventListener("change", drawSeats);
  drawSeats();
  const options = game.options.map((opt) => optionField(opt));
  const clockRow = clockField("clock");
  const botNote = h("p.muted", { id: "bot-clock-note", hidden: true }, botClockNote(app.botClock));
  // "no clock" with a bot still has the server's clock per move: said before the room opens
  const noteBotClock = () => {
    const bot = [...seatRows.querySelectorAll("select")].some((select) => select.value.startsWith("bot:"));
    botNote.hidden = !(app.botClock && bot && clockRow.querySelector("select").value === "");
  };
  container.onchange = noteBotClock;
  clear(
    container,
    h("p.muted", {}, game.description),
    game.min_seats !== game.max_seats ? [h("label", { for: "seats" }, "Seats"), seatCount] : null,
    seatRows,
    options.length ? h("details", {}, h("summary", {}, "Options"), options) : null,
    h("label", { for: "clock" }, "Clock"),
    clockRow,
    botNote,
    h("label.check", {}, h("input", { type: "checkbox", name: "public", id: "public", checked: true }), " public (listed in the lobby)"),
    h("label.check", {}, h("input", { type: "checkbox", name: "rated", id: "rated" }), " rated (accounts only, with a clock)"),
    app.you && app.you.kind !== "user" ? h("button", { type: "button", id: "rated-sign-up", onclick: toEntry }, "Sign up to play rated") : null,
    h("button.primary", { type: "submit", id: "create-room" }, "Create room"),
  );
}

function botClockNote(clock) {
  if (!clock || !clock.per_move) return null;
  const s = clock.per_move;
  const time = s % 60 === 0 ? `${s / 60} minute${s === 60 ? "" : "s"}` : `${s} seconds`;
  return `With a bot, "no clock" still gives each move ${time} (this server's limit), so a game left alone ends.`;
}

function optionField(opt) {
  const id = `opt-${opt.name}`;
  let input;
  if (opt.choices) {
    input = h("select", { id, name: id }, opt.choices.map((c) => h("option", { value: JSON.stringify(c), selected: c === opt.default }, String(c))));
  } else if (typeof opt.default === "boolean") {
    input = h("input", { id, name: id, type: "checkbox", checked: opt.default });
  } else if (typeof opt.default === "number") {
    input = h("input", { id, name: id, type: "number", value: opt.default, min: opt.min, max: opt.max });
  } else {
    input = h("input", { id, name: id, value: opt.default ?? "" });
  }
  input.dataset.option = opt.name;
  return h("label.option", { for: id, title: opt.help || "" }, opt.name, input, opt.help ? h("small.muted", {}, opt.help) : null);
}

function readOptions(form, game) {
  const options = {};
  for (const opt of game.options) {
    const input = form.querySelector(`[data-option="${opt.name}"]`);
    let value;
    if (opt.choices) value = JSON.parse(input.value);
    else if (typeof opt.default === "boolean") value = input.checked;
    else if (typeof opt.default === "number") value = Number(input.value);
    else value = input.value;
    if (value !== opt.default) options[opt.name] = value;
  }
  return options;
}

async function createRoom(form, game) {
  const seatSelects = [...form.querySelectorAll(".seat-rows select")];
  const request = { game: game.name, options: readOptions(form, game), seats: seatSelects.length, public: form.querySelector("#public").checked };
  const bots = {};
  seatSelects.forEach((select, seat) => {
    if (select.value === "me" && request.seat === undefined) request.seat = seat;
    else if (select.value.startsWith("bot:")) bots[seat] = select.value.slice(4);
  });
  if (Object.keys(bots).length) request.bots = bots;
  if (form.querySelector("#rated").checked) request.rated = true;
  try {
    const clock = readClock(form.querySelector("#clock"));
    if (clock) request.clock = clock;
    const reply = await app.conn.request("create_room", request);
    const code = codeOf(reply);
    saveSeat(code, reply.seat, reply.token);
    history.pushState({}, "", `/r/${code}`);
    openRoom(code, summaryOf(reply), reply.seat);
  } catch (error) {
    say(error.message, "error");
  }
}

// Rooms.

function goToRoom(code, { watch = false } = {}) {
  history.pushState({}, "", `/r/${code}`);
  enterRoom(code, { watch });
}

// Take the seat this browser holds (its token), else a free seat, else watch.
async function enterRoom(code, { watch = false } = {}) {
  stopLobbyPolling();
  const saved = savedSeats()[code];
  const attempts = [];
  if (!watch && saved) attempts.push({ room: code, seat: saved.seat, token: saved.token });
  if (!watch) attempts.push({ room: code });
  for (const attempt of attempts) {
    try {
      const reply = await app.conn.request("join", attempt);
      saveSeat(codeOf(reply), reply.seat, reply.token);
      return openRoom(codeOf(reply), summaryOf(reply), reply.seat, true);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      if (error.code === "no_such_room") return roomGone(code);
      if (error.code === "moved" && error.url) return moveTo(error.url, code, saved, watch);
      if (error.code === "closed") return;
    }
  }
  try {
    const reply = await app.conn.request("watch", { room: code });
    openRoom(codeOf(reply), summaryOf(reply), null, true);
  } catch (error) {
    if (error.code === "no_such_room") roomGone(code);
    if (error.code === "moved" && error.url) moveTo(error.url, code, saved, true);
  }
}

// The room lives on another node of the deployment: open this page there. A page of another
// address has its own storage, so the name and this room's seat token travel in the fragment
// (never sent to a server), and `boot` keeps them.
function moveTo(url, code, saved, watch) {
  const carried = new URLSearchParams({ name: localStorage.getItem(NAME_KEY) || "" });
  if (saved) carried.set("seat", `${saved.seat}:${saved.token}`);
  if (watch) carried.set("watch", "1");
  const base = url.replace(/^ws/, "http").replace(/\/+$/, "");
  location.assign(`${base}/r/${code}#${carried}`);
}

// A link that carries a seat token could come from anyone: it seats this browser (under the
// link's name) only if the person says yes. A carried name alone never replaces a stored one.
function keepCarried() {
  const code = codeFromPath();
  if (!code || !location.hash.startsWith("#")) return false;
  const carried = new URLSearchParams(location.hash.slice(1));
  history.replaceState({}, "", location.pathname);
  const name = carried.get("name");
  const seat = carried.get("seat");
  if (seat) {
    const [number, token] = seat.split(":");
    const as = name || localStorage.getItem(NAME_KEY) || "a guest";
    const question = `This link seats you in room ${code} (seat ${Number(number) + 1}) as ${as}. Take that seat?`;
    if (!/^\d+$/.test(number) || !token || !window.confirm(question)) return carried.get("watch") === "1";
    if (name) localStorage.setItem(NAME_KEY, name);
    saveSeat(code, Number(number), token);
  } else if (name && !localStorage.getItem(NAME_KEY)) {
    localStorage.setItem(NAME_KEY, name);
  }
  return carried.get("watch") === "1";
}

function roomGone(code) {
  saveSeat(code, null);
  history.replaceState({}, "", "/");
  showLobby().then(() => say(`There is no room ${code} (it may have finished a while ago).`, "error"));
}

function openRoom(code, summary, seat, keepUpdate = false) {
  const previous = app.room && app.room.code === code ? app.room : null;
  app.room = {
    code,
    summary,
    seat,
    update: keepUpdate && previous ? previous.update : null,
    prev: null,
    log: previous ? previous.log : [],
    lastMove: previous ? previous.lastMove : 0,
    recordAsked: previous ? previous.recordAsked : false,
    checked: previous ? previous.checked : null,
    pendingUpdate: null,
  };
  if (!app.chat || app.chat.place.room !== code) {
    app.chat = new ChatPanel({ conn: app.conn, place: { room: code }, you: app.you.name, say });
  }
  // An update may arrive before the reply that seats us: keep it.
  if (app.pendingUpdates && app.pendingUpdates[code]) {
    app.room.update = app.pendingUpdates[code];
    delete app.pendingUpdates[code];
  }
  drawRoom();
  // a room opens at its top (its board), not where the lobby's form was scrolled to (a phone)
  if (!previous) window.scrollTo(0, 0);
  fetchRecord(app.room);
}

// Before the start, leaving frees the seat (and its token stops working).
async function leaveRoom(room) {
  try {
    await app.conn.request("leave", { room: room.code });
  } catch (error) {
    say(error.message, "error");
  }
  saveSeat(room.code, null);
  history.pushState({}, "", "/");
  showLobby();
}

// Protocol version 2: `room` is always a room's code; a room's summary travels as `summary`.
function codeOf(message) {
  return typeof message.room === "string" ? message.room : message.summary ? message.summary.code : message.code;
}

function summaryOf(message) {
  return message.summary && typeof message.summary === "object" ? message.summary : null;
}

function onPush(message) {
  const room = app.room;
  if (message.type.startsWith("challenge") && onChallengePush(message, accountCtx())) return;
  if (message.type === "chat" || message.type === "chat_history" || message.type === "chat_removed") {
    if (app.chat) app.chat.onPush(message);
  } else if (message.type === "lobby") {
    onLobbyChange(message);
  } else if (message.type.startsWith("tournament_")) {
    onTournamentPush(message);
  } else if (message.type === "lobby_tournaments") {
    if (app.onTournamentsChanged && document.getElementById("tournaments-card")) app.onTournamentsChanged();
  } else if (message.type === "lobby_seeks") {
    if (app.seeks) app.seeks.onPush(message);
  } else if (message.type === "seek_paired") {
    seekPaired(message);
    openSeekRoom(message);
  } else if (message.type === "update") {
    if (!room || room.code !== codeOf(message)) {
      app.pendingUpdates = { ...(app.pendingUpdates || {}), [codeOf(message)]: message };
      return;
    }
    if (room.update && message.seq < room.update.seq) return;
    if (room.update && message.seq > room.update.seq) noteLast(room, message);
    noteEnding(room, room.update, message);
    room.prev = room.update;
    room.update = message;
    if (message.seat !== undefined && message.seat !== null) room.seat = message.seat;
    drawRoom();
    fetchRecord(room);
  } else if (message.type === "room" && room && codeOf(message) === room.code && summaryOf(message)) {
    noteSeats(room, room.summary, summaryOf(message));
    room.summary = summaryOf(message);
    drawRoom();
  } else if (message.type === "game_over" && room && codeOf(message) === room.code) {
    drawRoom();
  } else if (message.type === "rematch" && message.new_room) {
    // Everyone asked: the new room, one seat on, with this browser's new seat and token.
    const code = message.new_room.code;
    saveSeat(code, message.seat, message.token);
    history.pushState({}, "", `/r/${code}`);
    openRoom(code, message.new_room, message.seat);
    addLog(app.room, "Rematch: a new game in a new room.");
    drawRoom();
  } else if ((message.type === "rating_verdict" || message.type === "rating_changed") && room && codeOf(message) === room.code) {
    addLog(room, ratingWords(message));
    drawRoom();
  } else if (message.type === "seat_lost" && room && codeOf(message) === room.code) {
    room.seat = null;
    addLog(room, "Your seat was taken over by another window.");
    drawRoom();
  }
}

// A seat's name; seats that share one (three bots of one agent) are told apart by their number.
function seatName(room, seat) {
  const seats = room.summary ? room.summary.seats : [];
  const s = seats[seat];
  let name = s && s.name ? s.name : `seat ${seat + 1}`;
  if (s && s.name && seats.filter((other) => other.name === s.name).length > 1) name = `${s.name} #${seat + 1}`;
  return seat === room.seat ? `${name} (you)` : name;
}

// The room's record: moves keyed by their number (`seq` after the move), and notes (joins,
// passes, offers) that belong after a move number. Drawn in order of move, then arrival.
function addLog(room, text, move = null, by = {}) {
  const after = move ?? room.lastMove ?? 0;
  if (move !== null) {
    if (room.log.some((entry) => entry.move === move)) return;
    room.lastMove = Math.max(room.lastMove ?? 0, move);
  }
  room.log.push({ move, after, text, order: room.log.length, seat: by.seat, action: by.action, words: by.words, taken: !!by.taken_back });
}

// Who played a card, from the moves seen (a trick's cards are told apart by their players).
function playedBy(room, card) {
  let seat;
  for (const entry of logEntries(room)) {
    const said = typeof entry.action === "string" ? entry.action : entry.words || "";
    if (said === card || said.startsWith(`${card}:`) || said.endsWith(` ${card}`) || said.includes(` ${card}:`)) seat = entry.seat;
  }
  return seat;
}

function logEntries(room) {
  return [...room.log].sort((a, b) => a.after - b.after || (a.move === null) - (b.move === null) || a.order - b.order);
}

// The moves made before this page saw the room (a reload, a late spectator, a finished game):
// the stored game's `log` (every move in words once the game is over; the actions of a live
// perfect-information game). Asked once per room; a hidden-information game in play has none.
async function fetchRecord(room) {
  const update = room.update;
  if (room.recordAsked || !update || !update.game_id || !update.seq) return;
  const known = new Set(room.log.filter((e) => e.move !== null).map((e) => e.move));
  let missing = false;
  for (let move = 1; move <= update.seq; move++) if (!known.has(move)) missing = true;
  if (!missing) return;
  room.recordAsked = true;
  let reply;
  try {
    reply = await app.conn.request("game", { game_id: update.game_id });
  } catch {
    return; // a private game of others, or a server without stored games: what was seen stays
  }
  if (app.room !== room) return;
  const board = boardOf(room);
  const log = reply.game.log || [];
  const undone = takenBackIndexes(log);
  log.forEach((entry, i) => {
    const takeback = isTakeback(entry);
    const asker = takeback ? (entry.by ?? (entry.action || {}).by) : entry.seat;
    const who = asker === null || asker === undefined ? "" : `${seatName(room, asker)} `;
    const what = takeback ? takebackWords(entry) : entry.text ?? (entry.action !== null && entry.action !== undefined ? board.actionText(entry.action, room.update) : "acts");
    addLog(room, `${who}${what}`, i + 1, { ...entry, words: what, taken_back: undone.has(i) });
  });
  drawRoom();
}

function boardOf(room) {
  const game = room.summary.game;
  if (BOARDS[game]) return BOARDS[game];
  if (room.update && room.update.view && Array.isArray(room.update.view.locations)) return recycle;
  return generic;
}

function noteLast(room, update) {
  const last = update.last;
  if (!last) return;
  const board = boardOf(room);
  const who = last.seat === null || last.seat === undefined ? "" : `${seatName(room, last.seat)} `;
  const what = last.text ?? (last.action !== null && last.action !== undefined ? board.actionText(last.action, update) : "acts");
  if (isTakeback(last)) for (const entry of room.log) if ((last.undone || []).includes(entry.move)) entry.taken = true;
  addLog(room, `${who}${what}`, update.seq, { ...last, words: what });
  if (board.passNote) {
    const note = board.passNote(update);
    if (note) addLog(room, note);
  }
}

function noteEnding(room, before, after) {
  const offer = after.draw_offer;
  if (offer !== null && offer !== undefined && (!before || before.draw_offer !== offer)) addLog(room, `${seatName(room, offer)} offers a draw`);
  const asked = after.takeback_offer;
  if (asked !== null && asked !== undefined && (!before || before.takeback_offer !== asked)) addLog(room, `${seatName(room, asked)} asks to take back a move`);
  else if (before && before.takeback_offer !== null && before.takeback_offer !== undefined && (asked === null || asked === undefined) && after.seq === before.seq) addLog(room, "The takeback was declined");
  for (const seat of after.resigned || []) if (!before || !(before.resigned || []).includes(seat)) addLog(room, `${seatName(room, seat)} resigns`);
}

function noteSeats(room, before, after) {
  for (const seat of after.rematch || []) if (!(before.rematch || []).includes(seat)) addLog(room, `${seatName(room, seat)} asks for a rematch`);
  if (!before) return;
  after.seats.forEach((s, i) => {
    const old = before.seats[i] || {};
    if (s.name && !old.name) addLog(room, `${s.name} joined seat ${i + 1}`);
    else if (!s.name && old.name) addLog(room, `${old.name} left seat ${i + 1}`);
    else if (s.name && old.connected && !s.connected) addLog(room, `${s.name} disconnected`);
    else if (s.name && !old.connected && s.connected && old.name) addLog(room, `${s.name} is back`);
  });
  if (after.spectators > before.spectators) addLog(room, "a spectator arrived");
}

function act(action) {
  const room = app.room;
  if (!room || !room.update) return;
  const fields = { room: room.code, action, seq: room.update.seq };
  app.conn.request("act", fields).catch((error) => {
    say(error.message, "error");
  });
  say("");
}

// A request about the room (resign, offer_draw, rematch, ...); its error is shown, nothing else.
function request(room, type) {
  app.conn.request(type, { room: room.code }).then(
    () => say(""),
    (error) => say(error.message, "error"),
  );
}

function drawRoom() {
  const room = app.room;
  if (!room) return;
  const summary = room.summary;
  const game = app.games.get(summary.game) || { title: summary.game };
  const invite = `${location.origin}/r/${room.code}`;
  const update = room.update;
  const finished = update ? update.status === "finished" : summary.status === "finished";
  const header = h(
    "div.room-head",
    {},
    h("h2", {}, game.title, " ", h("span.code", { id: "room-code" }, room.code)),
    h("span.badge", { id: "room-status" }, finished ? "finished" : summary.status),
    summary.public ? null : h("span.badge", {}, "private"),
    ratedBadge(summary, "room-rated"),
    room.seat === null || room.seat === undefined ? h("span.badge", { id: "watching" }, "watching") : null,
    h(
      "div.invite",
      {},
      h("label", { for: "invite" }, "Invite link "),
      h("input", { id: "invite", readonly: true, value: invite, onfocus: (e) => e.target.select() }),
      h("button", { type: "button", onclick: () => navigator.clipboard?.writeText(invite).then(() => say("Invite link copied."), () => {}) }, "Copy"),
    ),
  );
  const toAct = new Set(update ? update.to_act : []);
  const seats = h(
    "ul.seats",
    { id: "seats" },
    summary.seats.map((s, i) =>
      h(
        "li",
        { class: [toAct.has(i) ? "to-act" : "", i === room.seat ? "me" : ""].join(" "), dataset: { seat: i } },
        boardOf(room).seatLabel ? h("b", {}, boardOf(room).seatLabel(i), " ") : null,
        s.name ? seatName({ summary, seat: null }, i) : h("span.muted", {}, "free seat"),
        s.name ? seatRating(s) : null,
        s.name ? h("small.muted", {}, ` ${s.agent ? `bot ${s.agent}` : s.kind}${s.connected === false ? ", away" : ""}`) : null,
        i === room.seat ? h("small", {}, " · you") : null,
      ),
    ),
    summary.spectators ? h("li.muted", {}, `${summary.spectators} watching`) : null,
  );
  const body = [];
  let side = [];
  if (!update) {
    const free = summary.seats.filter((s) => !s.name).length;
    body.push(h("p.waiting", { id: "waiting" }, free ? `Waiting for ${free} more player${free > 1 ? "s" : ""}: send them the invite link.` : "Starting…"));
    if (room.seat !== null && room.seat !== undefined) body.push(h("button", { type: "button", id: "leave", onclick: () => leaveRoom(room) }, "Leave the room"));
  } else {
    const board = boardOf(room);
    const ctx = {
      update,
      prev: room.prev,
      summary,
      game,
      seat: room.seat,
      act,
      redraw: drawRoom,
      seatName: (seat) => seatName(room, seat),
      playedBy: (card) => playedBy(room, card),
    };
    const drawn = board.render(ctx);
    body.push(h("div.board", { id: "board", dataset: { game: summary.game, seq: update.seq } }, drawn.element));
    side = sidePanel(room, update, board, drawn, ctx);
    body.unshift(clockBar(update, (seat) => seatName(room, seat)));
    side.push(endingControls(room, update, (type) => request(room, type), (seat) => seatName(room, seat), app.tournamentRooms.has(room.code)));
    side.push(takebackControls(room, update, (type) => request(room, type), (seat) => seatName(room, seat)));
  }
  const log = h(
    "ol.log",
    { id: "log" },
    logEntries(room).map((entry) =>
      h("li", { class: [entry.move === null ? "note" : "", entry.taken ? "taken-back" : ""].join(" ").trim(), dataset: entry.move === null ? {} : { move: entry.move } }, entry.move === null ? "" : h("span.n", {}, `${entry.move}.`), entry.text),
    ),
  );
  clear(
    main,
    h("section.room", {}, header, seats, h("div.play", {}, h("div.board-col", {}, body), h("aside.side", {}, side, h("div", { id: "chat-slot" }), h("h3", {}, "Moves"), log))),
  );
  log.scrollTop = log.scrollHeight;
  if (app.chat && app.chat.place.room === room.code) {
    const player = room.seat !== null && room.seat !== undefined;
    app.chat.setNote(roomChatNote(player, finished || summary.status === "aborted"));
    app.chat.mount(document.getElementById("chat-slot"));
  }
}

function sidePanel(room, update, board, drawn, ctx) {
  const out = [];
  if (update.status === "finished") {
    out.push(resultPanel(room, update));
  } else if (update.decision) {
    const decision = update.decision;
    out.push(
      h(
        "div.prompt",
        { id: "prompt", dataset: { kind: decision.kind, name: decision.name } },
        h("p.prompt-text", {}, yourMove(promptText(decision, board, update))),
        drawn.handles ? null : promptWidget(decision, act, (v) => (board.nameOf ? board.nameOf(v, ctx) : String(v))),
        drawn.extra || null,
      ),
    );
  } else if (update.to_act && update.to_act.length) {
    out.push(h("p.turn", { id: "turn" }, "Waiting for ", update.to_act.map((s) => seatName(room, s)).join(", "), "…"));
  }
  return out;
}

// "Your move" once: a game's text "X to move: choose a square" becomes "Your move (X): choose a square".
function yourMove(text) {
  const side = /^(.+?) to move: (.+)$/.exec(text);
  return side ? `Your move (${side[1]}): ${side[2]}` : `Your move: ${text}`;
}

// What the open decision asks, in words: the game's own text, else the board's, else by its kind.
function promptText(decision, board, update) {
  const own = decision.text && !/^choose (one|some)$/i.test(decision.text.trim()) ? decision.text : null;
  if (own) return own;
  if (board.promptText) return board.promptText(decision, update);
  return { choose_one: "pick one option below", choose_subset: "tick the options you want, then confirm", assign: "assign each item below, then confirm", order: "put these in order, then confirm" }[decision.kind] || decision.name;
}

function resultPanel(room, update) {
  const result = update.result || {};
  const names = (seat) => seatName(room, seat);
  const scoreLine = scoresText(room.summary.game, result, names);
  const scores = scoreLine ? h("p", { id: "scores" }, scoreLine) : null;
  const check = h("p.fair", { id: "fair", dataset: { chance: String(!app.games.has(room.summary.game) || app.games.get(room.summary.game).chance !== false) } }, "checking the seed…");
  const seed = update.seed === undefined || update.seed === null ? null : String(update.seed);
  if (seed !== null) verifySeed(room, seed, check);
  else check.textContent = "";
  return h(
    "div.result",
    { id: "result" },
    h("p.headline", {}, "Game over. ", headline(result, room.summary.seats.length, names)),
    scores,
    playerLinks(room.summary.seats, openPlayer),
    seed !== null ? h("p.seed", {}, "Seed: ", h("code", { id: "seed" }, seed)) : null,
    h("p.hash", {}, "Hash published at the start: ", h("code", {}, room.summary.seed_hash)),
    check,
    h("button", { type: "button", id: "to-lobby", onclick: () => { history.pushState({}, "", "/"); showLobby(); } }, "Back to the lobby"),
    app.tournamentRooms.has(room.code) ? h("button", { type: "button", id: "to-tournament", onclick: () => openTournament(app.tournamentRooms.get(room.code)) }, `Back to ${app.tournamentRooms.get(room.code)}`) : null,
    update.game_id && room.summary.public ? h("button", { type: "button", id: "replay-this", onclick: () => openReplay(update.game_id) }, "Replay this game") : null,
  );
}

// The fairness check, done here in the browser: sha256("partida-seed:" + seed) = the published hash.
async function verifySeed(room, seed, element) {
  if (!room.checked || room.checked.seed !== seed) {
    let hash = null;
    try {
      hash = await seedHash(seed);
    } catch {
      hash = null;
    }
    room.checked = { seed, ok: hash !== null && hash === room.summary.seed_hash, hash };
  }
  const { ok, hash } = room.checked;
  // only a game with chance (a deal, dice) has anything the seed fixed in advance
  const fixed = element.dataset.chance === "false" ? " (nothing in this game is left to chance)." : ": the deal and every roll were fixed in advance.";
  element.textContent = hash === null ? "The seed could not be checked here." : ok ? `✓ The seed matches the hash published before the game${fixed}` : "✗ The seed does NOT match the published hash!";
  element.dataset.ok = ok ? "yes" : "no";
}

window.addEventListener("popstate", () => {
  if (app.conn) route();
});

document.getElementById("home").addEventListener("click", (event) => {
  event.preventDefault();
  if (!app.conn) return;
  history.pushState({}, "", "/");
  showLobby();
});

document.getElementById("account-link").addEventListener("click", (event) => {
  event.preventDefault();
  if (app.conn) openAccount();
});

document.getElementById("logout").addEventListener("click", async (event) => {
  event.preventDefault();
  stopLobbyPolling(); // while the connection is there to say so
  const conn = app.conn;
  app.conn = null; // so that its closing does not start a reconnection
  // A person logs out: the server forgets their session tokens (here and on other computers).
  if (conn && app.you && app.you.kind === "user") await conn.request("log_out").catch(() => {});
  if (conn) conn.close();
  sessionStorage.removeItem(PASSWORD_KEY);
  localStorage.removeItem(RESUME_KEY);
  document.getElementById("account-link").hidden = true;
  const wasUser = app.you && app.you.kind === "user";
  document.getElementById("you").textContent = "";
  history.pushState({}, "", "/");
  showLogin();
  // Logged out of an account: a reload asks again rather than entering as a guest of that name.
  if (wasUser) localStorage.removeItem(NAME_KEY);
});

(async function boot() {
  const watch = keepCarried(); // sent here by another node (`moved`)
  const name = localStorage.getItem(NAME_KEY);
  if (!name) return showLogin();
  try {
    await connect();
  } catch (error) {
    if (error instanceof ProtocolError && error.code === "auth_failed") localStorage.removeItem(RESUME_KEY); // the session ended
    return showLogin(error.message);
  }
  await route(watch);
})();
