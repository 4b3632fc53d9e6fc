// Duel: both battlefields, life and counts, graveyards, the player's own hand with card text
// (from the card pool the server lists in `list_games`), and combat. The open decision is
// answered by clicking: a hand card plays or casts it (then a target, when it needs one); the
// prompt panel holds the rest (mulligan, scry, attackers, blockers, damage order, discard).

import { h } from "./dom.js";

const PHASES = {
  mulligan: "mulligans",
  scry: "scry",
  main1: "first main phase",
  attackers: "declare attackers",
  blockers: "declare blockers",
  order: "damage order",
  main2: "second main phase",
  discard: "end of turn",
  over: "game over",
};

let picking = null; // {seq, name}: a spell chosen in hand, waiting for its target

function info(ctx, name) {
  return (ctx.game.cards && ctx.game.cards[name]) || { type: "card", text: name };
}

// `click`: {onclick, mark} when the tile answers the open decision (a target, an attacker, a
// blocker); `mark` names the highlight.
function permanentTile(ctx, perm, combat, click) {
  const card = info(ctx, perm.name);
  const power = (card.power ?? 0) + perm.counters;
  const toughness = (card.toughness ?? 0) + perm.counters;
  const attacking = combat.attackers.includes(perm.id);
  const blocking = combat.blocks.find(([b]) => b === perm.id);
  const names = Object.fromEntries(ctx.update.view.battlefield.map((p) => [p.id, p.name]));
  const flags = [
    ...(card.keywords || []),
    perm.tapped ? "tapped" : null,
    // sickness only stops attacking on its owner's turn, never a block
    perm.sick && card.type === "creature" && perm.owner === ctx.update.view.active ? "summoning sick" : null,
    perm.damage ? `${perm.damage} damage` : null,
    perm.counters ? `+${perm.counters}/+${perm.counters}` : null,
    attacking ? "attacking" : null,
    blocking ? (names[blocking[1]] ? `blocking ${names[blocking[1]]}` : "blocked (its attacker is gone)") : null,
  ].filter(Boolean);
  return h(
    click ? "button.perm" : "div.perm",
    {
      type: click ? "button" : null,
      class: [perm.tapped ? "tapped" : "", attacking ? "attacking" : "", blocking ? "blocking" : "", click ? click.mark : "", card.type].join(" "),
      dataset: { perm: perm.id, name: perm.name },
      title: card.text,
      onclick: click ? click.onclick : null,
    },
    h("b", {}, perm.name),
    card.type === "creature" ? h("span.pt", {}, ` ${power}/${toughness}`) : null,
    flags.length ? h("small.flags", {}, flags.join(" · ")) : null,
  );
}

function handCard(ctx, card, onclick, chosen) {
  const data = info(ctx, card.name);
  return h(
    onclick ? "button.dcard" : "div.dcard",
    { type: onclick ? "button" : null, class: [onclick ? "playable" : "", chosen ? "chosen" : "", data.type].join(" "), dataset: { hand: card.id, name: card.name }, onclick },
    h("span.dname", {}, card.name, data.cost ? h("span.cost", {}, ` ${data.cost}`) : null),
    h("small.dtext", {}, data.text),
  );
}

function playerPanel(ctx, view, s, targetOption) {
  const p = view.players[s];
  const who = ctx.seatName(s);
  return h(
    targetOption !== undefined ? "button.player" : "div.player",
    { type: targetOption !== undefined ? "button" : null, class: [targetOption !== undefined ? "target" : "", s === view.active ? "active" : ""].join(" "), dataset: { player: s }, onclick: targetOption !== undefined ? () => ctx.act(targetOption) : null },
    h("b", {}, who),
    h("span.life", { dataset: { life: s } }, ` ${p.life} life`),
    h("small.muted", {}, ` · ${p.deck} deck · ${p.hand_count} in hand · ${p.library_count} in library${p.mulligans ? ` · ${p.mulligans} mulligan${p.mulligans > 1 ? "s" : ""}` : ""}`),
    p.graveyard.length ? h("div.graveyard", { dataset: { graveyard: s } }, h("small", {}, `graveyard (${p.graveyard.length}): ${p.graveyard.join(", ")}`)) : null,
  );
}

let combatPick = null; // {seq, attackers: Set, blocker, blocks: Map blocker -> attacker}

// Attackers and blockers chosen on the board: click your creatures to attack; to block, click one
// of yours, then the attacker it blocks. The side panel holds the confirm button.
function combatClicks(ctx, decision, seq) {
  const none = { clickOf: () => null, panel: null, hint: null };
  if (!decision || (decision.name !== "attackers" && decision.name !== "blockers")) return none;
  if (decision.kind !== (decision.name === "attackers" ? "choose_subset" : "assign")) return none;
  if (!combatPick || combatPick.seq !== seq) combatPick = { seq, attackers: new Set(), blocker: null, blocks: new Map() };
  const pick = combatPick;
  const name = (id) => duel.nameOf(id, ctx);
  if (decision.name === "attackers") {
    const candidates = new Set(decision.candidates);
    const n = pick.attackers.size;
    const tooMany = n > decision.max || n < decision.min;
    return {
      clickOf: (perm) =>
        candidates.has(perm.id)
          ? {
              mark: pick.attackers.has(perm.id) ? "candidate chosen-attacker" : "candidate",
              onclick: () => {
                if (pick.attackers.has(perm.id)) pick.attackers.delete(perm.id);
                else pick.attackers.add(perm.id);
                ctx.redraw();
              },
            }
          : null,
      hint: h("p.hint", {}, "Click your creatures to attack with them, then confirm."),
      panel: h(
        "div.combat",
        {},
        h("p", {}, n ? `Attacking with ${[...pick.attackers].map(name).join(", ")}` : "No attackers chosen."),
        h("button.primary", { type: "button", dataset: { confirm: "" }, disabled: tooMany, onclick: () => ctx.act(decision.candidates.filter((c) => pick.attackers.has(c))) }, n ? `Attack with ${n}` : "Do not attack"),
      ),
    };
  }
  const sources = new Map(decision.sources.map((s, i) => [s, decision.targets[i]]));
  const allowed = pick.blocker !== null ? new Set(sources.get(pick.blocker) || []) : new Set();
  const pairs = decision.sources.filter((s) => pick.blocks.has(s)).map((s) => [s, pick.blocks.get(s)]);
  return {
    clickOf: (perm) => {
      if (sources.has(perm.id)) {
        return {
          mark: pick.blocker === perm.id ? "candidate chosen-blocker" : pick.blocks.has(perm.id) ? "candidate assigned" : "candidate",
          onclick: () => {
            if (pick.blocks.has(perm.id)) pick.blocks.delete(perm.id);
            pick.blocker = pick.blocker === perm.id ? null : perm.id;
            ctx.redraw();
          },
        };
      }
      if (allowed.has(perm.id)) {
        return {
          mark: "target",
          onclick: () => {
            pick.blocks.set(pick.blocker, perm.id);
            pick.blocker = null;
            ctx.redraw();
          },
        };
      }
      return null;
    },
    hint: h("p.hint", {}, pick.blocker === null ? "Click one of your creatures to block with it." : `Now click the attacker ${name(pick.blocker)} blocks.`),
    panel: h(
      "div.combat",
      {},
      pairs.length ? h("ul", {}, pairs.map(([b, a]) => h("li", {}, `${name(b)} blocks ${name(a)}`))) : h("p", {}, "No blocks chosen."),
      h("button.primary", { type: "button", dataset: { confirm: "" }, disabled: decision.required && pairs.length !== decision.sources.length, onclick: () => ctx.act(pairs) }, pairs.length ? `Block (${pairs.length})` : "Do not block"),
    ),
  };
}

export const duel = {
  render(ctx) {
    const { view, decision, seq } = ctx.update;
    const me = ctx.seat;
    const mainOptions = decision && decision.name === "main" ? decision.options : [];
    if (picking && picking.seq !== seq) picking = null;
    // Spells and lands by card name: the rules offer one action per name, whichever copy.
    const byName = new Map();
    for (const option of mainOptions) {
      if (option === "pass") continue;
      const cid = option.play || option.cast;
      const card = (view.hand || []).find((c) => c.id === cid);
      if (!card) continue;
      if (!byName.has(card.name)) byName.set(card.name, []);
      byName.get(card.name).push(option);
    }
    const targetsOf = new Map(); // target (perm id or seat) -> option, while picking a spell's target
    if (picking) for (const option of byName.get(picking.name) || []) if (option.target !== undefined) targetsOf.set(option.target, option);
    const clickHand = (card) => {
      const options = byName.get(card.name);
      if (!options) return null;
      return () => {
        if (options.length === 1 && options[0].target === undefined) return ctx.act(options[0]);
        picking = picking && picking.name === card.name ? null : { seq, name: card.name };
        ctx.redraw();
      };
    };
    const combat = combatClicks(ctx, decision, seq);
    const clickOf = (perm) => {
      const target = targetsOf.get(perm.id);
      if (target !== undefined) return { mark: "target", onclick: () => ctx.act(target) };
      return combat.clickOf(perm);
    };
    const order = me === null || me === undefined ? [1, 0] : [1 - me, me];
    const sides = order.map((s) => {
      const mine = view.battlefield.filter((p) => p.owner === s);
      const lands = mine.filter((p) => info(ctx, p.name).type === "land");
      const others = mine.filter((p) => info(ctx, p.name).type !== "land");
      return h(
        "div.side-board",
        { dataset: { side: s }, class: s === me ? "mine" : "theirs" },
        playerPanel(ctx, view, s, targetsOf.get(s)),
        h("div.row.creatures", {}, others.length ? others.map((p) => permanentTile(ctx, p, view.combat, clickOf(p))) : h("span.muted", {}, "no creatures")),
        h("div.row.lands", {}, lands.map((p) => permanentTile(ctx, p, view.combat, clickOf(p)))),
      );
    });
    const known = view.library_known && Object.keys(view.library_known).length ? h("p.muted", {}, "You know: ", Object.entries(view.library_known).map(([k, v]) => `${k} of your library is ${v}`).join(", ")) : null;
    const hand = view.hand
      ? h("div.hand", { id: "hand" }, h("div.zone-name", {}, `your hand (${view.hand.length})`), h("div.row", {}, view.hand.map((c) => handCard(ctx, c, clickHand(c), picking && picking.name === c.name))))
      : null;
    const turn = view.phase === "mulligan" || view.phase === "over" ? "" : ` · ${ctx.seatName(view.active)}'s turn`;
    const banner = h("p.banner", { id: "phase", dataset: { phase: view.phase } }, `Turn ${view.turn} · ${PHASES[view.phase] || view.phase}${turn}`);
    const last = ctx.update.last && ctx.update.last.text ? h("p.last", { id: "last" }, `Last: ${ctx.seatName(ctx.update.last.seat)} ${ctx.update.last.text}`) : null;
    const hint = picking ? h("p.hint", {}, `Choose a target for ${picking.name} (highlighted), or click it again to cancel.`) : null;
    return {
      element: h("div.duel", {}, banner, last, sides[0], h("hr"), sides[1], hint || combat.hint, known, hand),
      handles: combat.panel !== null,
      extra: combat.panel,
    };
  },
  nameOf(value, ctx) {
    const perm = ctx.update.view.battlefield.find((p) => p.id === value);
    if (perm) {
      const card = info(ctx, perm.name);
      return card.type === "creature" ? `${perm.name} ${(card.power ?? 0) + perm.counters}/${(card.toughness ?? 0) + perm.counters}` : perm.name;
    }
    const inHand = (ctx.update.view.hand || []).find((c) => c.id === value);
    return inHand ? inHand.name : String(value);
  },
  actionText: (action) => JSON.stringify(action),
};
