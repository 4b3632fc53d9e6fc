// People's accounts in the browser: the entry page (play as a guest, log in, sign up), what an
// invite link leads to, the account page (/#/account), a player's games and the challenge form
// on their page, and the notices of challenges that reach a person wherever they are in the app.
// Only documented requests (docs/protocol.md *Accounts*, *Challenges*); every name is text.

import { Connection } from "./proto.js";
import { clear, h } from "./dom.js";
import { clockField, readClock } from "./room_controls.js";

// What the entry page needs before anyone is logged in: whether this server takes sign-ups, and
// for an invite link, the room it leads to. A short guest connection of its own, closed at once.
export async function peek(url, code) {
  const conn = new Connection(url);
  try {
    await conn.open();
    const welcome = await conn.request("hello", { version: 2 });
    let invitation = null;
    let titles = new Map();
    if (code) invitation = await conn.request("invitation", { room: code }).catch(() => null);
    if (invitation) titles = new Map((await conn.request("list_games")).games.map((g) => [g.name, g.title]));
    return { signUp: welcome.sign_up || "closed", invitation, titles };
  } finally {
    conn.close();
  }
}

function clockWords(clock) {
  if (!clock) return "no clock";
  if (clock.per_move) return `${clock.per_move} s per move`;
  const minutes = clock.initial / 60;
  const initial = Number.isInteger(minutes) ? `${minutes} min` : `${clock.initial} s`;
  return clock.increment ? `${initial} + ${clock.increment} s` : initial;
}

// The card above the entry forms on an invite link: who opened the room, the game and its terms,
// and the seat that waits (or that the seats are taken and the link lets one watch).
export function invitationCard(invitation, { titleOf, seatLabel }) {
  const summary = invitation.summary;
  const title = titleOf(summary.game);
  const host = invitation.host ? invitation.host.name : null;
  const free = invitation.free || [];
  const seats = summary.seats.filter((s) => s.name).map((s) => s.name);
  const seatWords = (seat) => {
    const label = seatLabel(summary.game, seat);
    return `Seat ${seat + 1}${label ? ` (${label})` : ""}`;
  };
  const terms = [clockWords(summary.clock), summary.rated ? "rated" : "casual", summary.public ? "public" : "private"].join(", ");
  return h(
    "section.card.invitation",
    { id: "invitation", dataset: { room: invitation.room } },
    h("h2", {}, host ? [h("span.who", {}, host), " invites you to play ", title] : ["An invitation to play ", title]),
    h("p", {}, h("b", {}, title), ` · ${terms}`),
    seats.length ? h("p", { id: "invitation-seated" }, "At the table: ", seats.join(", ")) : null,
    free.length
      ? h("p.waiting", { id: "invitation-seat" }, `${seatWords(free[0])} is waiting for you.`, free.length > 1 ? ` (${free.length} seats free)` : "")
      : h("p.muted", { id: "invitation-seat" }, summary.status === "waiting" ? "Its seats are kept for others: you can watch." : "The game has started: you can watch it."),
    summary.rated && free.length ? h("p.muted", {}, "A rated game: log in, or sign up below, to take the seat.") : h("p.muted", {}, "Pick a name below to take the seat."),
  );
}

// The sign-up form, as the server allows it (`open`, `invite`, `closed`).
export function signUpCard(mode, onSignUp, { error = null, name: typed = "" } = {}) {
  const name = h("input", { id: "signup-name", name: "signup-name", value: typed || "", maxlength: 32, autocomplete: "username", required: true });
  const password = h("input", { id: "signup-password", type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const again = h("input", { id: "signup-password2", type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const invite = h("input", { id: "signup-invite", autocomplete: "off", placeholder: "from the server's operator" });
  const problem = h("p.error", { id: "signup-error", hidden: !error }, error || "");
  const form = h(
    "form.card.login",
    {
      id: "signup-form",
      onsubmit: (event) => {
        event.preventDefault();
        const wrong = password.value !== again.value ? "The two passwords differ." : password.value.length < 8 ? "A password has at least 8 characters." : null;
        problem.hidden = !wrong;
        problem.textContent = wrong || "";
        if (!wrong) onSignUp(name.value.trim(), password.value, mode === "invite" ? invite.value.trim() : null);
      },
    },
    h("h2", {}, "New here? Create an account"),
    mode === "closed"
      ? h("p.muted", { id: "signup-closed" }, "This server takes no sign-ups: ask its operator for an account, or play as a guest.")
      : [
          h("p.muted", {}, "An account keeps your name for you, your ratings and your games; it can play rated games and tournaments."),
          h("label", { for: "signup-name" }, "Account name"),
          name,
          h("label", { for: "signup-password" }, "Password (8 characters or more)"),
          password,
          h("label", { for: "signup-password2" }, "The password again"),
          again,
          mode === "invite" ? [h("label", { for: "signup-invite" }, "Invite code (this server signs up by invitation)"), invite] : null,
          problem,
          h("button.primary", { type: "submit", id: "signup" }, "Sign up"),
        ],
  );
  form.dataset.mode = mode;
  return form;
}

// The account page (/#/account): ratings as the server reports them, recent games with their
// replays, bots owned (on the bots page), and a new password.
export async function showAccount(main, ctx) {
  const you = ctx.you;
  if (!you || you.kind !== "user") {
    clear(
      main,
      h(
        "section.card",
        { id: "account" },
        h("h2", {}, "Your account"),
        h("p", {}, "You play as a guest. An account keeps your name, your ratings and your games."),
        h("button.primary", { type: "button", id: "account-sign-up", onclick: () => ctx.toEntry() }, "Sign up or log in"),
      ),
    );
    return;
  }
  const ratings = h("div", { id: "account-ratings" }, h("p.muted", {}, "…"));
  const games = h("div", { id: "account-games" }, h("p.muted", {}, "…"));
  clear(
    main,
    h(
      "section.room",
      { id: "account", dataset: { account: you.name } },
      h("h2", {}, h("span.who", {}, you.name), " · your account"),
      h("section.card", {}, h("h3", {}, "Ratings"), ratings, h("p", {}, h("a", { href: `/#/player/${encodeURIComponent(you.name)}`, id: "account-player" }, "Your player page"), " (the history of each rating)")),
      h("section.card", {}, h("h3", {}, "Recent games"), games),
      h(
        "section.card",
        { id: "account-bots" },
        h("h3", {}, "Your bots"),
        h("p", {}, "Bots you submit to this server, and the versions of each, are on ", h("a", { href: "/#/bots", id: "account-bots-link" }, "the bots page"), "."),
      ),
      passwordCard(ctx),
    ),
  );
  ctx.conn.request("ratings", {}).then(
    (reply) => clear(ratings, ratingsTable(reply.ratings)),
    (error) => clear(ratings, h("p.muted", {}, error.message)),
  );
  gamesList(ctx, you.name).then(
    (list) => clear(games, list),
    (error) => clear(games, h("p.muted", {}, error.message)),
  );
}

function ratingsTable(lines) {
  if (!lines.length) return h("p.muted", {}, "No rated games yet.");
  return h(
    "table.standings",
    {},
    h("thead", {}, h("tr", {}, ["game", "class", "rating", "games"].map((t) => h("th", {}, t)))),
    h("tbody", {}, lines.map((l) => h("tr", { dataset: { game: l.game, clockClass: l.clock_class } }, [l.game, l.clock_class, l.shown, String(l.games)].map((v) => h("td", {}, v))))),
  );
}

// A player's recent games, newest first, each with its replay (finished, public or theirs).
export async function gamesList(ctx, name) {
  const reply = await ctx.conn.request("games", { player: name, limit: 20 });
  if (!reply.games.length) return h("p.muted", {}, "No games yet.");
  return h(
    "ul.rooms.player-games",
    {},
    reply.games.map((g) => {
      const names = g.seats.map((s) => s.name);
      const winners = (g.result && g.result.winners) || [];
      const outcome = g.status !== "finished" ? g.status : !winners.length || winners.length === names.length ? "a draw" : `${winners.map((w) => names[w]).join(" and ")} won`;
      return h(
        "li",
        { dataset: { gameId: g.game_id, game: g.game } },
        h("b", {}, ctx.titleOf(g.game)),
        ` ${names.join(" vs ")} · ${outcome} · ${g.moves} moves `,
        g.status === "finished" ? h("a.replay-link", { href: `/#/replay/${g.game_id}`, onclick: (event) => { event.preventDefault(); ctx.openReplay(g.game_id); } }, "Replay") : null,
      );
    }),
  );
}

function passwordCard(ctx) {
  const old = h("input", { id: "old-password", type: "password", autocomplete: "current-password", required: true });
  const fresh = h("input", { id: "new-password", type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const again = h("input", { id: "new-password2", type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const said = h("p", { id: "password-status", role: "status" });
  const tell = (text, kind) => {
    said.textContent = text;
    said.className = kind;
  };
  return h(
    "form.card.login",
    {
      id: "password-form",
      onsubmit: async (event) => {
        event.preventDefault();
        if (fresh.value !== again.value) return tell("The two new passwords differ.", "error");
        try {
          const reply = await ctx.conn.request("change_password", { old: old.value, new: fresh.value });
          ctx.onPasswordChanged(fresh.value, reply.resume);
          old.value = fresh.value = again.value = "";
          tell("Password changed. Other computers logged in to this account must log in again.", "ok");
        } catch (error) {
          tell(error.message, "error");
        }
      },
    },
    h("h3", {}, "Change your password"),
    h("label", { for: "old-password" }, "Current password"),
    old,
    h("label", { for: "new-password" }, "New password (8 characters or more)"),
    fresh,
    h("label", { for: "new-password2" }, "The new password again"),
    again,
    h("button", { type: "submit", id: "change-password" }, "Change password"),
    said,
  );
}

// Below a player's ratings: their recent games, and a challenge to them (a person or a bot).
export function playerExtras(ctx, name) {
  const games = h("div", { id: "player-games" }, h("p.muted", {}, "…"));
  gamesList(ctx, name).then(
    (list) => clear(games, list),
    () => clear(games, h("p.muted", {}, "No games to show.")),
  );
  const mine = ctx.you && ctx.you.name.toLowerCase() === name.toLowerCase();
  return h(
    "section.card",
    { id: "player-extras" },
    mine ? null : challengeForm(ctx, name),
    h("h3", {}, "Recent games"),
    games,
  );
}

function challengeForm(ctx, name) {
  const games = [...ctx.games.values()];
  const game = h("select", { id: "challenge-game" }, games.map((g) => h("option", { value: g.name, selected: g.name === "othello" }, g.title || g.name)));
  const clockRow = clockField("challenge-clock", { selected: "3+2" });
  const clock = clockRow.querySelector("select");
  const user = ctx.you && ctx.you.kind === "user";
  const rated = h("input", { type: "checkbox", id: "challenge-rated", disabled: !user });
  const status = h("p", { id: "challenge-status", role: "status" });
  const form = h(
    "form.create",
    {
      id: "challenge-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const request = { to: name, game: game.value };
        if (rated.checked) request.rated = true;
        try {
          const chosen = readClock(clock); // a typed clock that does not read says the forms it takes
          if (chosen) request.clock = chosen;
          const reply = await ctx.conn.request("challenge", request);
          ctx.challengeSent(reply.challenge);
          status.className = "";
          status.textContent = `Challenge sent to ${name}: waiting for their answer…`;
        } catch (error) {
          status.className = "error";
          status.textContent = error.message;
        }
      },
    },
    h("h3", {}, "Challenge ", h("span.who", {}, name)),
    h("label", { for: "challenge-game" }, "Game"),
    game,
    h("label", { for: "challenge-clock" }, "Clock"),
    clockRow,
    h("label.check", {}, rated, user ? " rated (both ratings change; needs a clock)" : " rated (accounts only: sign up to play rated)"),
    h("button.primary", { type: "submit", id: "challenge-send" }, "Challenge"),
    status,
  );
  return form;
}

// The names of a finished game's accounts, each a way to their page (and its Challenge button).
export function playerLinks(seats, openPlayer) {
  const accounts = seats.filter((s) => s.name && s.kind !== "guest");
  if (!accounts.length) return null;
  return h(
    "p",
    { id: "players" },
    "Players: ",
    accounts.map((s, i) => [i ? ", " : "", h("a.player-link", { href: `/#/player/${encodeURIComponent(s.name)}`, dataset: { player: s.name }, onclick: (event) => { event.preventDefault(); openPlayer(s.name); } }, s.name)]),
  );
}

// Notices: challenges to this person (accept / decline), and the answers to theirs. They float
// over whatever page is shown, so a challenge reaches a person wherever they are in the app.
function noticeBox() {
  let box = document.getElementById("notices");
  if (!box) {
    box = h("div.notices", { id: "notices", "aria-live": "polite" });
    document.body.append(box);
  }
  return box;
}

export function notice(text, kind = "info", { key = null, buttons = [], lasts = 8000 } = {}) {
  const box = noticeBox();
  if (key) for (const old of box.querySelectorAll(`[data-key="${CSS.escape(key)}"]`)) old.remove();
  const el = h("div.notice", { dataset: { kind, key: key || "" } }, h("p", {}, text), buttons.length ? h("div.row", {}, buttons) : null);
  box.append(el);
  if (lasts) setTimeout(() => el.remove(), lasts);
  return el;
}

function challengeTerms(c, titleOf) {
  return `${titleOf(c.game)}, ${clockWords(c.clock)}${c.rated ? ", rated" : ""}`;
}

// A challenge push, or the answer to one this page sent. `ctx.onRoom(message)` takes this
// browser to the room of an accepted challenge with its seat and token.
export function onChallengePush(message, ctx) {
  if (message.type === "challenge") {
    const c = message.challenge;
    const el = notice(`${c.from.name} challenges you: ${challengeTerms(c, ctx.titleOf)}.`, "challenge", {
      key: `challenge-${c.id}`,
      lasts: 5 * 60 * 1000, // a challenge stands 5 minutes
      buttons: [
        h("button.primary.accept-challenge", {
          type: "button",
          onclick: async () => {
            el.remove();
            try {
              const reply = await ctx.conn.request("accept", { challenge: c.id });
              notice(`You accepted ${c.from.name}'s challenge.`, "ok", { key: `challenge-${c.id}` });
              ctx.onRoom(reply);
            } catch (error) {
              notice(error.code === "no_such_challenge" ? `${c.from.name}'s challenge is no longer open.` : error.message, "error", { key: `challenge-${c.id}` });
            }
          },
        }, "Accept"),
        h("button.decline-challenge", {
          type: "button",
          onclick: async () => {
            el.remove();
            try {
              await ctx.conn.request("decline", { challenge: c.id });
              notice(`You declined ${c.from.name}'s challenge.`, "info", { key: `challenge-${c.id}` });
            } catch (error) {
              notice(error.code === "no_such_challenge" ? `${c.from.name}'s challenge is no longer open.` : error.message, "error", { key: `challenge-${c.id}` });
            }
          },
        }, "Decline"),
      ],
    });
    el.dataset.challenge = c.id;
    return true;
  }
  const sent = ctx.sent.get(message.challenge);
  if (message.type === "challenge_accepted") {
    const to = sent ? sent.to : "Your opponent";
    ctx.sent.delete(message.challenge);
    notice(`${to} accepted your challenge.`, "ok", { key: `challenge-${message.challenge}` });
    ctx.onRoom(message);
    return true;
  }
  if (message.type === "challenge_declined") {
    const by = message.by || (sent ? sent.to : "They");
    ctx.sent.delete(message.challenge);
    const words = { expired: `Your challenge to ${by} expired unanswered.`, left: `${by} left before answering your challenge.` }[message.reason] || `${by} declined your challenge${message.reason && message.reason !== "declined" ? `: ${message.reason}` : ""}.`;
    notice(words, "declined", { key: `challenge-${message.challenge}`, lasts: 20000 });
    const status = document.getElementById("challenge-status");
    if (status) {
      status.textContent = words;
      status.className = "error";
    }
    return true;
  }
  return false;
}

// A guest meets something for accounts only: the way to sign up (or log in) instead of a dead end.
export function accountsOnly(words, toEntry, id) {
  return h("p.muted", {}, `Enter with an account ${words}. `, h("button", { type: "button", id, onclick: () => toEntry() }, "Sign up or log in"));
}
