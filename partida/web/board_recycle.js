// Every RECYCLE game (card and dice games written as descriptions) through one renderer driven by
// the view alone: the table's zones, each seat's zones, hands as cards, dice, stored values,
// scores per round. A hidden zone arrives as a count only, and is drawn as face-down cards.

import { h } from "./dom.js";

const SUITS = { HEARTS: "♥", DIAMONDS: "♦", CLUBS: "♣", SPADES: "♠" };
const RED = new Set(["HEARTS", "DIAMONDS"]);

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
function zone(loc, ctx, choose) {
  const onTable = loc.owner < 0;
  const cards = loc.cards
    ? loc.cards.map((card) => {
        const option = choose(card);
        const face = cardFace(card, option !== undefined, () => ctx.act(option));
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

export const recycle = {
  render(ctx) {
    const { view, decision } = ctx.update;
    // A card is clickable when an option of the open choice names it ("8 CLUBS", "8 CLUBS: lead").
    const options = decision && decision.kind === "choose_one" ? decision.options : [];
    const choose = (card) => {
      const text = cardText(card);
      return options.find((o) => typeof o === "string" && (o === text || o.startsWith(`${text}:`)));
    };
    const table = view.locations.filter((l) => l.owner < 0);
    const bySeat = [];
    for (let s = 0; s < view.players; s++) bySeat.push(view.locations.filter((l) => l.owner === s));
    const stored = (owner) =>
      view.storage.filter(([o]) => o === owner).map(([, name, value]) => h("span.stat", {}, `${name.toLowerCase()} ${value}`));
    const dice = Object.entries(view.dice || {}).map(([name, values]) =>
      h("div.dice", { dataset: { dice: name } }, h("span.zone-name", {}, name.toLowerCase()), values.length ? values.map((v) => h("span.die", {}, String(v))) : h("span.muted", {}, " not thrown")),
    );
    const seats = bySeat.map((locs, s) =>
      h(
        "div.seat-area",
        { class: [s === view.current ? "current" : "", s === ctx.seat ? "mine" : ""].join(" "), dataset: { seatArea: s } },
        h("div.seat-title", {}, ctx.seatName(s), s === view.current ? h("small", {}, " · to play") : null, " ", stored(s)),
        locs.map((loc) => zone(loc, ctx, s === ctx.seat ? choose : () => undefined)),
      ),
    );
    const rounds = view.round_scores && view.round_scores.length ? roundTable(view, ctx) : null;
    return {
      element: h(
        "div.recycle",
        {},
        h("div.table", {}, h("div.seat-title", {}, "table ", stored(-1)), table.map((loc) => zone(loc, ctx, choose)), dice),
        seats,
        rounds,
      ),
      handles: false, // options that name no card (throw the dice, pass) stay as buttons
    };
  },
  actionText: (action) => `plays ${action}`,
  promptText: (decision) => {
    const cards = (decision.options || []).filter((o) => typeof o === "string" && /^\S+ \S+(:|$)/.test(o));
    return cards.length ? "click a card to play it" : "pick one option below";
  },
};

function roundTable(view, ctx) {
  const head = h("tr", {}, h("th", {}, "round"), Array.from({ length: view.players }, (_, s) => h("th", {}, ctx.seatName(s))));
  const rows = view.round_scores.map(([round, scores]) => h("tr", {}, h("td", {}, String(round)), scores.map((v) => h("td", {}, String(v)))));
  return h("table.rounds", {}, h("thead", {}, head), h("tbody", {}, rows));
}
