"""The game record: a game is its rules, options, seat count, seed and action log; everything
else (every view at every step, the result, what each move said) follows by re-running it.

One implementation for every reader of a record: the room (the `last` of each update), the
history service (`steps`: the spectators' picture after every move), the relay (another node's
room rebuilt from its stored log) and `partida replay` (`verify`: the seed checked against its
published hash, the stored result against the rules'). Only spectators' views and the public
`last` come out of `steps`, so a record of a card game shows no hand, even with its seed revealed.
`judge` compares a room's log with the stored one when a write of it may or may not have landed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from partida.games.base import Action, Game, IllegalAction, State
from partida.protocol import ErrorCode, ProtocolError
from partida.room import takebacks
from partida.room.endings import with_dropouts
from partida.room.seed import seed_hash

Log = Sequence[tuple[int, Action]]


class StoredRecord(Protocol):
    """What `verify` reads of a stored game (storage's `StoredGame`, or a finished game read
    from a server in the same shape)."""

    id: int
    game: str
    options: dict[str, Any]
    seats: int
    seed: int
    seed_hash: str
    status: str
    result: dict[str, Any] | None
    actions: list[tuple[int, Action]]


class Unreplayable(ValueError):
    """A log the rules refuse (a game whose rules changed since it was played)."""


def public_last(game: Game, state: State, seat: int, action: Action) -> dict[str, Any]:
    """An update's `last`: what every seat and spectator learns of an answer just applied to
    `state` (the action itself only in a perfect-information game, and the game's sentence)."""
    return {"seat": seat, "action": action if game.perfect_information else None, "text": state.last_event()}


def steps(game: Game, options: dict[str, Any], seed: int, seats: int, actions: Log) -> list[dict[str, Any]]:
    """What a spectator saw at every step of a game: `{view, last}` before the first move and after
    each entry of the log, re-run from the seed through the game's rules (a takeback's step: the
    position it went back to, its `last` naming the moves it undid). The player scrubbing
    through it sees each moment as the table saw it then. A log the rules refuse is
    `no_such_game`."""
    state = game.create(options, seed=seed, seats=seats)
    out: list[dict[str, Any]] = [{"view": state.view(None), "last": None}]
    for i, (seat, action) in enumerate(actions):
        try:
            if takebacks.is_takeback(seat):
                state = game.replay(options, seed, seats, takebacks.line(actions[: i + 1]))
                out.append({"view": state.view(None), "last": takebacks.public_last(actions[: i + 1])})
                continue
            state.apply(seat, action)
        except IllegalAction as exc:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"this game cannot be replayed: {exc}") from None
        out.append({"view": state.view(None), "last": public_last(game, state, seat, action)})
    return out


def told(game: Game, stored: StoredRecord, *, over: bool) -> tuple[list[dict[str, Any]], State]:
    """Every entry of a stored game's log as a replay tells it (`Game.told_moves`: a finished
    game's moves may name what was hidden, its seed being revealed), and the state after the
    last one. A takeback is told in its place (`seat` -1, its `action`, `by`, `text`) and the
    moves it undid are marked `taken_back`. Raises `IllegalAction` for a log the rules refuse."""
    state = game.create(stored.options, seed=stored.seed, seats=stored.seats)
    log = stored.actions
    if not takebacks.has_takebacks(log):
        return game.told_moves(state, log, over=over), state
    moves: list[dict[str, Any]] = []
    standing: list[int] = []  # positions in `moves` of the moves that stand
    start = 0
    for i, (seat, action) in enumerate([*log, (takebacks.TAKEBACK_SEAT, None)]):
        if not takebacks.is_takeback(seat):
            continue
        run = game.told_moves(state, log[start:i], over=over)
        standing.extend(range(len(moves), len(moves) + len(run)))
        moves.extend(run)
        if i == len(log):  # the sentinel: the log is told
            break
        count = takebacks.count_of(action)
        if count > len(standing):
            raise IllegalAction(f"a takeback of {count} moves where {len(standing)} stand", code="bad_takeback")
        for position in standing[-count:]:
            moves[position]["taken_back"] = True
        del standing[-count:]
        moves.append({"seat": seat, "action": action, "by": action.get("by"), "text": takebacks.told(count)})
        state = game.replay(stored.options, stored.seed, stored.seats, takebacks.line(log[: i + 1]))
        start = i + 1
    return moves, state


def verify(game: Game, stored: StoredRecord) -> dict[str, Any]:
    """Re-run a stored game and check it: `seed_verified` (the seed is the one whose hash was
    published at the start), `result_verified` (the stored result is what the rules give; None
    when the game ended outside its rules' moves), the moves as told, the final spectators' view,
    the picture and the game's own notation. Raises `Unreplayable` for a log the rules refuse."""
    try:
        moves, state = told(game, stored, over=stored.status == "finished")
    except IllegalAction as exc:
        raise Unreplayable(f"game {stored.id} does not replay: {exc.message}") from None
    over = state.is_over()
    data: dict[str, Any] = {
        "id": stored.id,
        "game": stored.game,
        "options": stored.options,
        "status": stored.status,
        "seed": stored.seed if stored.status == "finished" else None,
        "seed_hash": stored.seed_hash,
        "seed_verified": seed_hash(stored.seed) == stored.seed_hash,
        "moves": moves,
        "final_view": state.view(None),
        # what the rules say; a game ended otherwise (time, resignation...) has its reason in
        # the stored result
        "result": {**state.result().to_data(), "reason": "normal"} if over else None,
        "stored_result": stored.result,
        "result_verified": same_result(state.result().to_data() if over else None, stored.result),
        "picture": game.render(state.view(None)),
    }
    notation = game.record(state)
    if notation is not None:
        data["transcript"] = notation
    return data


def same_result(replayed: dict[str, Any] | None, stored: dict[str, Any] | None) -> bool | None:
    """Whether the stored result is what the rules give; None when there is nothing to compare
    (no stored result, or a game that ended outside the rules' moves, say by a resignation). A
    result the rules gave whose moves do not end the game (an action missing from the log) is
    False. Seats that resigned from a game of three or more rank last, as the room ranked them."""
    if stored is None or stored.get("reason", "normal") != "normal":
        return None
    if replayed is None:
        return False
    if stored.get("dropped"):
        replayed = with_dropouts(replayed, stored["dropped"])
    as_json = lambda value: json.dumps(value, sort_keys=True, default=list)  # noqa: E731
    return all(as_json(replayed.get(key)) == as_json(stored.get(key)) for key in replayed)


# A room's log against the stored one.


@dataclass(frozen=True)
class Verdict:
    stored: bool  # the log holds the room's actions and then this one
    differs: bool  # the log holds something other than the room's actions, with or without this one


def _as_stored(value: Any) -> Any:
    """`value` as it comes back from the log's JSON column (tuples as lists, keys as strings), so
    an action read back compares equal to the one the room holds."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return value


def _same(a: Sequence[tuple[int, Action]], b: Sequence[tuple[int, Action]]) -> bool:
    return len(a) == len(b) and all(
        sa == sb and (xa == xb or _as_stored(xa) == _as_stored(xb)) for (sa, xa), (sb, xb) in zip(a, b, strict=True)
    )


def judge(
    held: Sequence[tuple[int, Action]], stored: Sequence[tuple[int, Action]], seat: int, action: Action
) -> Verdict:
    """Compare a room's log (`held`, without the action whose write failed) with the stored one,
    after a write whose failure leaves unknown whether it landed (`server/rooms/mending.py` acts
    on the verdict)."""
    mine = [*held, (seat, action)]
    if len(stored) >= len(mine) and _same(stored[: len(mine)], mine):
        return Verdict(stored=True, differs=len(stored) > len(mine))
    return Verdict(stored=False, differs=not _same(stored, held))
