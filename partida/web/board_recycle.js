// Every RECYCLE game (card and dice games written as descriptions) through one renderer driven by
// the view alone: the table's zones, each seat's zones, hands as cards, dice, stored values,
// scores per round. A hidden zone arrives as a count only, and is drawn as face-down cards.

import { h } from "./dom.js";

const SUITS = { HEARTS: "♥", DIAMONDS: "♦", CLUBS: "♣", SPADES: "♠" };
const RED = new Set(["HEARTS", "DIAMONDS"]);
const SUIT_ORDER = ["CLUBS", "DIAMONDS", "SPADES", "HEARTS"]; // colours alternate in a sorted hand
const RANK_ORDER = { J: 11, Q: 12, K: 13, A: 14 };

// Stored values in words, by their name in the descriptions; null hides a value the rules keep
// for themselves (how many have passed). A name not here is shown as it is ("score 5").
const STORED_WORDS = {
  PASSED: () => null,
  HAND: (v) => `deal ${v}`,
  SHIFT: (v, passing) => (passing ? { 0: "no pass this deal", 1: "pass to the next player", 2: "pass across", 3: "pass to the previous player" }[v] ?? null : null),
  BROKEN: (v) => (v ? "hearts broken" : null),
  TRICK: (v) => `trick ${v}`,
};

// What each page remembers of a deal: the cards its seat received in the pass (ids in its hand).
const received = new Map(); // room code + seat -> {deal, ids: Set, labels}

function rankValue(rank) {
  return RANK_ORDER[rank] ?? Number(rank);
}

// A hand by suit, then rank; cards without a suit and rank keep their order.
function sortedHand(cards) {
  if (!cards.every((c) => c.attrs.SUIT && c.attrs.RANK !== undefined)) return cards;
  return [...cards].sort((a, b) => SUIT_ORDER.indexOf(a.attrs.SUIT) - SUIT_ORDER.indexOf(b.attrs.SUIT) || rankValue(a.attrs.RANK) - rankValue(b.attrs.RANK));
}

function storedValue(view, owner, name) {
  const found = view.storage.find(([o, n]) => o === owner && n === name);
  return found ? found[2] : undefined;
}

function ownCount(view, seat, pattern) {
  return view.locations.filter((l) => l.owner === seat && pattern.test(l.name)).reduce((n, l) => n + l.count, 0);
}

// Hearts' pass is under way for `seat` (its names: SHIFT the direction, 0 for none; TRICK the
// trick counter, unset or 13 between deals): a full hand between its hand and its PASS zone,
// nothing on the table, and a choice of more than the two of clubs a first lead must be.
function passing(view, seat, options = null) {
  const shift = storedValue(view, -1, "SHIFT");
  const trick = storedValue(view, -1, "TRICK");
  if (shift === undefined || shift === 0 || (trick !== undefined && trick !== 13)) return false;
  if (view.locations.some((l) => l.owner < 0 && l.name !== "STOCK" && l.count > 0)) return false;
  if (ownCount(view, seat, /^HAND$/) + ownCount(view, seat, /PASS/) !== 13) return false;
  const given = ownCount(view, seat, /PASS/);
  return given > 0 ? given < 3 : options === null || options.length > 1;
}

export function cardText(card) {
  return Object.values(card.attrs).map(String).join(" ");
}

function cardFace(card, clickable, onclick) {
  const attrs = card.attrs;
  const suit = attrs.SUIT;
  const rank = attrs.RANK;
  const words = cardText(card);
  const face =
    suit && rank !== undefined
      ? [h("span.rank", {}, String(rank)), h("span.suit", {}, SUITS[suit] || suit)]
      : Object.entries(attrs).map(([k, v]) => h("span.attr", { title: k }, String(v)));
  return h(
    clickable ? "button.pcard" : "span.pcard",
    {
      type: clickable ? "button" : null,
      class: [suit && RED.has(suit) ? "red" : "", clickable ? "playable" : ""].join(" "),
      title: words,
      "aria-label": words,
      dataset: { card: words },
      onclick: clickable ? onclick : null,
    },
    face,
  );
}

// On the table a card carries the name of the seat that played it, when the page saw it played.
// `fresh`: ids of cards to mark (those received in the pass).
function zone(loc, ctx, choose, fresh = new Set()) {
  const onTable = loc.owner < 0;
  const cards = loc.cards
    ? sortedHand(loc.cards).map((card) => {
        const option = choose(card);
        const face = cardFace(card, option !== undefined, () => ctx.act(option));
        if (fresh.has(card.id)) face.classList.add("received");
        const by = onTable && ctx.playedBy ? ctx.playedBy(cardText(card)) : undefined;
        if (by === undefined || by === null) return face;
        return h("span.played", { dataset: { by } }, face, h("small.by", {}, ctx.seatName(by)));
      })
    : Array.from({ length: Math.min(loc.count, 13) }, () => h("span.pcard.back", { "aria-hidden": "true" }));
  return h(
    "div.zone",
    { dataset: { zone: loc.name, owner: loc.owner } },
    h("div.zone-name", {}, loc.name.toLowerCase(), h("small.muted", {}, ` ${loc.count}`)),
    h("div.cards", {}, cards.length ? cards : h("span.muted", {}, "empty")),
  );
}

// The trick just taken, as the table showed it, kept in sight while the next one is played (bots
// lead at once: "until the next card" would be no time at all). Only cards that were face up: the
// previous view's trick, and the card the last move named.
const tricks = new Map(); // room code -> {cards, trick: the trick counter while it is shown}

function lastTrick(ctx) {
  const { prev, update, summary } = ctx;
  if (!summary || !summary.code) return null;
  const counter = storedValue(update.view, -1, "TRICK");
  const before = prev && prev.view ? prev.view.locations.find((l) => l.owner < 0 && l.name === "TRICK") : null;
  const now = update.view.locations.find((l) => l.owner < 0 && l.name === "TRICK");
  const text = update.last && update.last.text;
  if (before && before.cards && before.cards.length && (!now || now.count === 0 || now.count < before.count) && text && /^plays /.test(text)) {
    const label = text.slice("plays ".length).split(";")[0];
    const [rank, suit] = label.split(" ");
    const played = { id: `taken-${label}`, attrs: { RANK: /^\d+$/.test(rank) ? Number(rank) : rank, SUIT: suit } };
    const seen = new Set(update.view.locations.filter((l) => l.owner < 0).flatMap((l) => (l.cards || []).map(cardText)));
    // a trick laid face up elsewhere (Agram's pile of done tricks) is in sight already
    if (!seen.has(label)) tricks.set(summary.code, { cards: [...before.cards, played], trick: counter, seq: update.seq });
  }
  const kept = tricks.get(summary.code);
  if (!kept || (counter !== undefined ? counter !== kept.trick : kept.seq !== update.seq)) return null;
  return { name: "LAST TRICK", owner: -1, count: kept.cards.length, cards: kept.cards };
}

// The cards the seat received in the pass: new in its hand when every PASS zone emptied.
function receivedCards(ctx) {
  const { prev, update, seat, summary } = ctx;
  if (seat === null || seat === undefined || !summary) return null;
  const key = `${summary.code}:${seat}`;
  const deal = storedValue(update.view, -1, "HAND");
  const hand = (view) => view.locations.filter((l) => l.owner === seat && (l.name === "HAND" || /PASS/.test(l.name))).flatMap((l) => l.cards || []);
  // the pass is done when the seat's PASS zone, full before, is empty
  if (prev && prev.view && ownCount(prev.view, seat, /PASS/) === 3 && ownCount(update.view, seat, /PASS/) === 0) {
    const had = new Set(hand(prev.view).map((c) => c.id));
    const fresh = hand(update.view).filter((c) => !had.has(c.id));
    if (fresh.length) received.set(key, { deal, ids: new Set(fresh.map((c) => c.id)), labels: fresh.map(cardText) });
  }
  const kept = received.get(key);
  return kept && kept.deal === deal ? kept : null;
}

export const recycle = {
  render(ctx) {
    const { view, decision } = ctx.update;
    const got = receivedCards(ctx);
    const taken = lastTrick(ctx);
    // A card is clickable when an option of the open choice names it ("8 CLUBS", "8 CLUBS: lead").
    const options = decision && decision.kind === "choose_one" ? decision.options : [];
    const choose = (card) => {
      const text = cardText(card);
      return options.find((o) => typeof o === "string" && (o === text || o.startsWith(`${text}:`)));
    };
    const table = view.locations.filter((l) => l.owner < 0);
    const bySeat = [];
    for (let s = 0; s < view.players; s++) bySeat.push(view.locations.filter((l) => l.owner === s));
    const inPass = passing(view, ctx.seat) || (ctx.seat !== null && ctx.seat !== undefined && ownCount(view, ctx.seat, /PASS/) === 3);
    const stored = (owner) =>
      view.storage
        .filter(([o]) => o === owner)
        .map(([, name, value]) => [name, STORED_WORDS[name] ? STORED_WORDS[name](value, inPass) : `${name.toLowerCase()} ${value}`])
        .filter(([, words]) => words !== null)
        .map(([name, words]) => h("span.stat", { dataset: { stored: name } }, words));
    const dice = Object.entries(view.dice || {}).map(([name, values]) =>
      h("div.dice", { dataset: { dice: name } }, h("span.zone-name", {}, name.toLowerCase()), values.length ? values.map((v) => h("span.die", {}, String(v))) : h("span.muted", {}, " not thrown")),
    );
    const seats = bySeat.map((locs, s) =>
      h(
        "div.seat-area",
        { class: [s === view.current ? "current" : "", s === ctx.seat ? "mine" : ""].join(" "), dataset: { seatArea: s } },
        h("div.seat-title", {}, ctx.seatName(s), s === view.current ? h("small", {}, " · to play") : null, " ", stored(s)),
        locs.map((loc) => zone(loc, ctx, s === ctx.seat ? choose : () => undefined, s === ctx.seat && got ? got.ids : undefined)),
      ),
    );
    const rounds = view.round_scores && view.round_scores.length ? roundTable(view, ctx) : null;
    return {
      element: h(
        "div.recycle",
        {},
        h(
          "div.table",
          {},
          h("div.seat-title", {}, "table ", stored(-1)),
          // an empty stock (every card dealt) is no news
          table.filter((loc) => !(loc.name === "STOCK" && loc.count === 0)).map((loc) => zone(loc, ctx, choose)),
          taken ? h("div.last-trick", { id: "last-trick" }, zone(taken, ctx, () => undefined)) : null,
          dice,
        ),
        got ? h("p.received", { id: "received" }, `You received in the pass: ${got.labels.join(", ")}.`) : null,
        seats,
        rounds,
      ),
      handles: false, // options that name no card (throw the dice, pass) stay as buttons
    };
  },
  actionText: (action) => `plays ${action}`,
  promptText: (decision, update) => {
    const cards = (decision.options || []).filter((o) => typeof o === "string" && /^\S+ \S+(:|$)/.test(o));
    if (!cards.length) return "pick one option below";
    const view = update && update.view;
    return view && passing(view, view.seat, decision.options) ? "click a card to pass it (face down)" : "click a card to play it";
  },
};

function roundTable(view, ctx) {
  const head = h("tr", {}, h("th", {}, "round"), Array.from({ length: view.players }, (_, s) => h("th", {}, ctx.seatName(s))));
  const rows = view.round_scores.map(([round, scores]) => h("tr", {}, h("td", {}, String(round)), scores.map((v) => h("td", {}, String(v)))));
  return h("table.rounds", {}, h("thead", {}, head), h("tbody", {}, rows));
}
