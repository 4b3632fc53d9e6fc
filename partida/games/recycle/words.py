"""RECYCLE games in words a player reads: the table, hands and scores, and the rule texts that
stand for moves ("(throwalldice 'DICE)" reads "throws the dice").

A description names its zones and counters in capitals (`HAND`, `TRICK`, `SCORE`) and its moves
as expressions of the language; people should see "your hand", "the trick", "scores" and "draws
the top card of the stock into their hand". Only what the view holds is written: hidden zones are
counted, never listed.
"""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r"\(|\)|'?[^\s()]+")


def card_label(attrs: dict[str, Any]) -> str:
    """A card by its attributes' values, as the description orders them ("10 CLUBS")."""
    return " ".join(str(v) for v in attrs.values())


def _parse(text: str) -> Any:
    """An expression as nested lists of words (None when it is not one)."""
    stack: list[list[Any]] = [[]]
    for token in TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                return None
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token.lstrip("'"))
    if len(stack) != 1 or len(stack[0]) != 1:
        return None
    return stack[0][0]


def zone_name(name: str) -> str:
    return name.lower().replace("_", " ")


def _who(expr: Any) -> str:
    if expr == ["current", "player"] or expr == "current":
        return "their"
    if expr == ["next", "player"] or expr == "next":
        return "the next player's"
    if expr == ["previous", "player"] or expr == "previous":
        return "the previous player's"
    if expr == "game":
        return "the"
    return "a"


def _place(expr: Any) -> str:
    """`(top ((current player) iloc HAND))` -> "the top card of their hand"."""
    if isinstance(expr, list) and len(expr) == 2 and expr[0] in ("top", "bottom"):
        return f"the {expr[0]} card of {_place(expr[1])}"
    if isinstance(expr, list) and len(expr) == 3 and expr[1] in ("iloc", "vloc", "hloc", "mem", "sto"):
        return f"{_who(expr[0])} {zone_name(str(expr[2]))}"
    return "a card"


def describe_rule(text: str) -> str:
    """A move written as its rule, in words; the rule itself when it is not one we know."""
    expr = _parse(text)
    if not isinstance(expr, list) or not expr:
        return text
    verb = expr[0]
    if verb in ("throwalldice", "throwdice", "throwdie") and len(expr) >= 2:
        return "throws the dice" if verb == "throwalldice" else f"throws {zone_name(str(expr[1]))}"
    if verb == "move" and len(expr) == 3:
        target = expr[2][1] if isinstance(expr[2], list) and expr[2][:1] in (["top"], ["bottom"]) else expr[2]
        return f"moves {_place(expr[1])} to {_place(target)}"
    if verb in ("inc", "dec") and len(expr) == 3 and isinstance(expr[1], list) and len(expr[1]) == 3:
        counter = zone_name(str(expr[1][2]))
        if counter in ("passes", "pass"):
            return "passes"
        return f"{'adds' if verb == 'inc' else 'takes'} {expr[2]} {'to' if verb == 'inc' else 'from'} {counter}"
    if verb in ("set", "put") and len(expr) == 3 and isinstance(expr[1], list) and len(expr[1]) == 3:
        return f"sets {zone_name(str(expr[1][2]))} to {expr[2]}"
    return text


def describe_choice(label: str) -> str:
    """An answer as a sentence fragment: a card is played, a rule is described."""
    return describe_rule(label) if label.startswith("(") else f"plays {label}"


def _owner(owner: int, seat: int | None, game: int, team_of: Any) -> str:
    if owner == game:
        return ""
    team = team_of(owner)
    if team is not None:
        return f"team {team + 1}'s "
    return "your " if owner == seat else f"player {owner + 1}'s "


def render_view(title: str, view: dict[str, Any], game_owner: int, team_of: Any) -> str:
    """The table as lines of words: whose turn, every zone (hidden ones counted), counters,
    dice, and the scores at the end."""
    seat = view.get("seat")
    if view["over"]:
        lines = [f"{title}: the game is over"]
    elif view["current"] == seat:
        lines = [f"{title}: your turn (you are player {seat + 1})"]
    else:
        lines = [
            f"{title}: player {view['current'] + 1} to play"
            + (f" (you are player {seat + 1})" if seat is not None else "")
        ]
    for loc in view["locations"]:
        whose = _owner(loc["owner"], seat, game_owner, team_of)
        name = zone_name(loc["name"])
        label = (whose + name) if whose else f"the {name}"
        if "cards" in loc:
            shown = ", ".join(card_label(c["attrs"]) for c in loc["cards"]) or "empty"
        else:
            count = loc["count"]
            shown = f"{count} card{'s' if count != 1 else ''}, face down" if count else "empty"
        lines.append(f"  {label[0].upper() + label[1:]}: {shown}")
    per_player: dict[str, list[str]] = {}
    for owner, name, value in view["storage"]:
        if owner == game_owner:
            lines.append(f"  {zone_name(name).capitalize()}: {value}")
        else:
            team = team_of(owner)
            who = f"team {team + 1}" if team is not None else "you" if owner == seat else f"player {owner + 1}"
            per_player.setdefault(zone_name(name), []).append(f"{who} {value}")
    for name, values in per_player.items():
        heading = "Scores" if name == "score" else name.capitalize()
        lines.append(f"  {heading}: " + ", ".join(values))
    for name, values in view["dice"].items():
        dice = ", ".join(str(v) for v in values)
        named = "" if zone_name(name) in ("dice", "die") else f" ({zone_name(name)})"
        lines.append(f"  Dice{named}: {dice}" + (f" (total {sum(values)})" if len(values) > 1 else ""))
    if view.get("scores") is not None:
        lines.append("  Final scores: " + ", ".join(f"player {i + 1} {s:g}" for i, s in enumerate(view["scores"])))
    return "\n".join(lines)
