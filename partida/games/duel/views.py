"""What each seat may see, built in one place from the state, and the text picture of a view.

A seat sees both life totals, the battlefield, both graveyards, its own hand (with ids), the
opponent's hand size, both library sizes, the mulligan counts, both deck lists (the cards each
library, hand and graveyard are drawn from) and, after a scry, what it knows of its own library.
Spectators see only the part both seats see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from partida.games.base import View

if TYPE_CHECKING:
    from partida.games.duel.state import DuelState


def build_view(state: DuelState, seat: int | None) -> View:
    players = []
    for s, p in enumerate(state.players):
        players.append(
            {
                "deck": state.deck_names[s],
                "decklist": dict(state.decks[s]),
                "life": p.life,
                "hand_count": len(p.hand),
                "library_count": len(p.library),
                "graveyard": [c.name for c in p.graveyard],
                "mulligans": p.mulligans,
                "kept": p.kept,
                "land_played": p.land_played,
                "lost": p.lost,
            }
        )
    view: View = {
        "seat": seat,
        "phase": state.phase,
        "turn": state.turn,
        "first": state.first,
        "active": state.active,
        "decider": state.decider,
        "players": players,
        "battlefield": [
            {
                "id": perm.id,
                "name": perm.card.name,
                "owner": perm.owner,
                "tapped": perm.tapped,
                "damage": perm.damage,
                "counters": perm.counters,
                "sick": perm.sick,
            }
            for perm in state.battlefield
        ],
        "combat": {
            "attackers": list(state.attackers),
            "blocks": [list(b) for b in state.blocks],
            "orders": {k: list(v) for k, v in state.orders.items()},
            "order_queue": list(state.order_queue),
        },
    }
    if seat is not None:
        me = state.players[seat]
        view["hand"] = [{"id": cid, "name": card.name} for cid, card in me.hand]
        known: dict[str, Any] = {}
        if me.known_top is not None:
            known["top"] = me.known_top.name
        if me.known_bottom is not None:
            known["bottom"] = me.known_bottom.name
        if state.phase == "scry" and state.decider == seat and me.library:
            known["top"] = me.library[0].name
        view["library_known"] = known
    if state.phase == "over":
        winner = state.winner()
        view["winner"] = winner
    return view


def nicknames(battlefield: list[dict[str, Any]]) -> dict[str, str]:
    """Each permanent's name as people read it: its card name, with `#2`, `#3`... when its owner
    has several of that card (numbered in battlefield order, as boards list them), so that two
    answers about two Pensive Minotaurs never read the same. The board, the prompts and the
    terminal all name permanents through this, so a name in a prompt is the name on the board."""
    seen: dict[tuple[int, str], int] = {}
    counts: dict[tuple[int, str], int] = {}
    for perm in battlefield:
        key = (perm["owner"], perm["name"])
        counts[key] = counts.get(key, 0) + 1
    names = {}
    for perm in battlefield:
        key = (perm["owner"], perm["name"])
        seen[key] = seen.get(key, 0) + 1
        names[perm["id"]] = perm["name"] if counts[key] == 1 else f"{perm['name']} #{seen[key]}"
    return names


def _perm_text(perm: dict[str, Any], cards: Any, name: str, active: int) -> str:
    card = cards[perm["name"]]
    if card.is_land:
        return f"{name}{' (tapped)' if perm['tapped'] else ''}"
    power = card.power + perm["counters"]
    toughness = card.toughness + perm["counters"]
    flags = []
    if card.keywords:
        flags.append(", ".join(sorted(card.keywords)))
    if perm["tapped"]:
        flags.append("tapped")
    if perm["damage"]:
        flags.append(f"{perm['damage']} damage")
    if perm["counters"]:
        flags.append(f"+{perm['counters']}/+{perm['counters']}")
    if perm["sick"] and card.is_creature and perm["owner"] == active:
        # sickness only stops attacking on its owner's turn; it never stops a block
        flags.append("summoning sick")
    extra = f" [{'; '.join(flags)}]" if flags else ""
    return f"{name} {power}/{toughness}{extra}"


PHASE_NAMES = {
    "mulligan": "mulligans",
    "scry": "scry",
    "main1": "first main phase",
    "attackers": "declare attackers",
    "blockers": "declare blockers",
    "order": "damage order",
    "main2": "second main phase",
    "discard": "end of turn",
    "over": "game over",
}


def whose(seat: int | None, player: int, you: str, opponent: str) -> str:
    """`player` named from the reader's side: you or the opponent, or by number for spectators."""
    if seat is None:
        return f"player {player + 1}"
    return you if player == seat else opponent


def render_view(view: View, cards: Any) -> str:
    """A plain-text picture: life totals, hand, battlefield, graveyards, counts and combat."""
    seat = view["seat"]
    phase = view["phase"]
    header = f"Turn {view['turn']}, {PHASE_NAMES.get(phase, phase)}"
    if phase not in ("mulligan", "scry", "over"):
        header += " - " + whose(seat, view["active"], "your turn", "opponent's turn")
    lines = [header]
    order = [1 - seat, seat] if seat is not None else [0, 1]
    ids = nicknames(view["battlefield"])
    active = view["active"]
    for s in order:
        p = view["players"][s]
        who = "You" if s == seat else ("Opponent" if seat is not None else f"Player {s + 1}")
        lines.append(
            f"{who} ({p['deck']}): {p['life']} life, {p['hand_count']} in hand, {p['library_count']} in library, "
            f"{len(p['graveyard'])} in graveyard, {p['mulligans']} mulligan(s)"
        )
        lands = [
            _perm_text(x, cards, ids[x["id"]], active)
            for x in view["battlefield"]
            if x["owner"] == s and cards[x["name"]].is_land
        ]
        others = [x for x in view["battlefield"] if x["owner"] == s and not cards[x["name"]].is_land]
        untapped = sum(
            1 for x in view["battlefield"] if x["owner"] == s and cards[x["name"]].is_land and not x["tapped"]
        )
        lines.append(f"  lands: {len(lands)} ({untapped} untapped)")
        for x in others:
            lines.append(f"  {_perm_text(x, cards, ids[x['id']], active)}")
        if p["graveyard"]:
            lines.append(f"  graveyard: {', '.join(p['graveyard'])}")
    if seat is not None:
        lines.append("Your hand:" + ("" if view["hand"] else " (empty)"))
        lines.extend(f"  {cards[c['name']].text()}" for c in view["hand"])
        known = view.get("library_known") or {}
        if known:
            lines.append("You know: " + ", ".join(f"{k} of library is {v}" for k, v in known.items()))
    combat = view["combat"]
    if combat["attackers"] and view["phase"] in ("blockers", "order"):
        lines.append("Attacking: " + ", ".join(ids.get(a, a) for a in combat["attackers"]))
        for b, a in combat["blocks"]:
            lines.append(f"  {ids.get(b, 'a creature')} blocks {ids.get(a, 'an attacker that is gone')}")
    if view["phase"] == "over":
        winner = view.get("winner")
        if winner is None:
            outcome = "a draw"
        elif seat is None:
            outcome = f"player {winner + 1} wins"
        else:
            outcome = "you win" if winner == seat else "your opponent wins"
        lines.append(f"Game over: {outcome}")
    return "\n".join(lines)
