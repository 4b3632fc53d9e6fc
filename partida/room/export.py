"""A stored game as a file: the text record a reader expects, or the JSON the replay loads.

Both are made from the one record the `game` request sends (`server/history.py`'s `record`,
with `steps`), so an export shows a viewer exactly what that viewer's replay shows and nothing
more: a finished game its moves in words (its seed revealed, it hides nothing), a game still on
only the spectators' picture, never a hand. The text is a game's own file format when it has one
(Othello: GGF, the Generic Game Format of GGS that NBoard reads and writes: `Game.file_record`),
otherwise tag pairs in the style of PGN (`[Site "..."]`) and one numbered line per entry of the
log, a taken-back move marked and its takeback in its place. Pure: plain values in, text out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from partida.games.base import Game
from partida.room import takebacks

FORMATS = ("text", "json")


def filename(record: dict[str, Any], fmt: str) -> str:
    """`partida-othello-42.ggf`: the game and its id, the extension its format's."""
    ext = "json" if fmt == "json" else ("ggf" if record["game"] == "othello" else "txt")
    return f"partida-{record['game']}-{record['game_id']}.{ext}"


def as_json(record: dict[str, Any]) -> str:
    """The replay's own record (`game` with `steps`), as the file."""
    return json.dumps(record, ensure_ascii=False, indent=1) + "\n"


def _names(record: dict[str, Any]) -> dict[int, str]:
    return {s["seat"]: s["name"] for s in record.get("seats", []) if s.get("name")}


def _date(record: dict[str, Any]) -> str:
    """PGN's `YYYY.MM.DD` (the game's creation, in UTC), `????.??.??` when unknown."""
    at = record.get("created_at") or ""
    return at[:10].replace("-", ".") if len(at) >= 10 else "????.??.??"


def time_control(clock: dict[str, Any] | None) -> str:
    """PGN's TimeControl: `300+3` (seconds plus increment), `1/30` (30 s a move), `-` none."""
    if not clock:
        return "-"
    if clock.get("per_move") is not None:
        return f"1/{clock['per_move']:g}"
    return f"{clock['initial']:g}+{clock.get('increment', 0):g}"


def result_tag(record: dict[str, Any]) -> str:
    """`1-0`, `0-1`, `1/2-1/2` for two seats; the ranks in seat order for more; `*` unfinished."""
    result = record.get("result")
    if record.get("status") != "finished" or not result or not result.get("ranks"):
        return "*"
    ranks = result["ranks"]
    if len(ranks) == 2:
        if ranks[0] == ranks[1]:
            return "1/2-1/2"
        return "1-0" if ranks[0] < ranks[1] else "0-1"
    return "ranks " + ",".join(str(r) for r in ranks)


def entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The log as the replay tells it: `log` (a finished game's moves in words, or a live
    perfect-information game's actions), else what the spectators were told at each step."""
    log = record.get("log")
    if log is not None:
        return list(log)
    return [dict(step["last"]) for step in record.get("steps", [])[1:] if step.get("last")]


def standing(record: dict[str, Any]) -> list[tuple[int, Any]]:
    """The moves that stand (takebacks applied), as (seat, action); for a game whose log names
    its actions (a perfect-information game, or one that is over)."""
    log = [(e["seat"], e["action"]) for e in record.get("log") or []]
    return takebacks.line(log)


def text(
    record: dict[str, Any],
    game: Game,
    *,
    site: str = "Partida",
    event: str | None = None,
    round: int | None = None,
    rated: bool = False,
) -> str:
    """The readable record of one game (see the module's docstring); `event` and `round`: a
    tournament's name and the round the game was played in."""
    names = _names(record)
    tags: dict[str, str] = {
        "Event": event or ("Rated game" if rated else "Casual game"),
        "Site": site,
        "Date": _date(record),
        "Round": str(round) if round is not None else "-",
    }
    for seat in range(record.get("seats_count") or len(names)):
        label = game.seat_label(seat)
        tags[f"Player{seat + 1}"] = names.get(seat, "?") + (f" ({label})" if label else "")
    tags.update(
        {
            "Result": result_tag(record),
            "Termination": ((record.get("result") or {}).get("reason") or record.get("status") or "?"),
            "TimeControl": time_control(record.get("clock")),
            "Game": f"{game.title} ({game.name})",
            "GameId": str(record["game_id"]),
            "SeedHash": record.get("seed_hash") or "?",
        }
    )
    if record.get("seed") is not None:
        tags["Seed"] = str(record["seed"])
    if record.get("options"):
        tags["Options"] = json.dumps(record["options"], sort_keys=True)
    seed = record.get("seed")
    if record.get("log") is not None and game.perfect_information and (seed is not None or not game.chance):
        # re-run from its moves: with its revealed seed, or none in a game without chance
        played = game.replay(record.get("options"), int(seed or 0), record.get("seats_count") or 2, standing(record))
        own = game.file_record(played, tags)
        if own is not None:
            return own + "\n"
    return _tagged(tags, entries(record), names, game) + "\n"


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _tagged(tags: dict[str, str], moves: Sequence[dict[str, Any]], names: dict[int, str], game: Game) -> str:
    lines = [f'[{key} "{_quoted(value)}"]' for key, value in tags.items()]
    lines.append("")
    for number, move in enumerate(moves, start=1):
        seat = move.get("seat")
        if seat is not None and takebacks.is_takeback(seat):
            by = move.get("by", (move.get("action") or {}).get("by"))
            lines.append(f"{number}. {names.get(by, f'seat {by}')} {move.get('text') or 'takes back'}")
            continue
        who = names.get(seat, f"seat {seat}") if seat is not None else "?"
        words = move.get("text")
        if not words:
            action = move.get("action")
            words = "moves" if action is None else str(action)
        mark = " {taken back}" if move.get("taken_back") else ""
        lines.append(f"{number}. {who}: {words}{mark}")
    lines.append("")
    lines.append(tags["Result"])
    return "\n".join(lines)
