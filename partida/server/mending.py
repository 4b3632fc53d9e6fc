"""What a room does when the write of an action fails: it asks the stored log, which is the truth.

Some failures are ambiguous: the write may have been committed before the failure was seen (the
SQLite writer's process dying between its COMMIT and its answer, a PostgreSQL connection dropping
after the COMMIT went out). Undoing the action then would leave the room a move behind its own
log: its next write of that index would fail as a duplicate forever, and a restart would resume
the game with the move its players were told was refused. So before a room undoes a failed
action it reads the game's log back (`Store.load_game`, on a reading connection, not the writer's):

- the log is the room's plus this action: the write did land; the room carries on as if it had
  been told so (`Outcome.STORED`);
- the log is the room's: nothing landed; the room undoes the action (`Outcome.ABSENT`), as it
  does when the log cannot be read either;
- the log holds anything else (more actions, whatever put them there): the room adopts it the way
  a restarted server resumes a game (`Room.resume`), clocks from the snapshot stored with the last
  action, pushes the fresh views to everyone (`Outcome.RELOADED`), and the player whose action
  was not the stored one is told `stale_decision`.

The comparison is pure (`partida.room.record.judge`); `after_failed_write` wires it to a room.

A game's start has the same trap: its seats are new rows, so a start that landed but was reported
failed could never be stored again (every retry a duplicate seat) while a restart would resume
the game. So a room whose start failed asks the stored game too (`start_stored`): stored as
playing with the room's seats and tokens, the start stands.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Any

from partida.games.base import Action
from partida.protocol import ErrorCode, ProtocolError
from partida.room import endings
from partida.room.record import judge
from partida.storage.database import NotWritten, log_failure
from partida.storage.store import END_STATUSES

if TYPE_CHECKING:
    from partida.server.rooms import Room
    from partida.storage.store import StoredGame

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    STORED = "stored"  # the action is in the log as the room holds it: carry on as on success
    ABSENT = "absent"  # not in the log (or the log could not be read): undo it
    RELOADED = "reloaded"  # the log differed; the room now holds it, and the action is in it


async def after_failed_write(
    room: Room, seat: int, action: Action, result: dict[str, Any] | None, failure: Exception
) -> Outcome:
    """Called by the room (under its lock, the action applied to its state but not to its log)
    when the write of `action` by `seat` failed with `failure`; `result` is the result the write
    carried, if the action ended the game. Raises `stale_decision` when the room reloaded a log
    without it. A write refused before it was sent (a fenced node, whose games another node may
    be playing) is undone without a look: the log is not this room's to adopt then."""
    stored = await _read_back(room, failure, "the action is undone")
    if stored is None:
        return Outcome.ABSENT
    verdict = judge(room.actions, stored.actions, seat, action)
    if verdict.stored and not verdict.differs:
        log.warning("room %s: the failed write of action %d was stored after all; it stands", room.code, room.seq)
        if result is not None and stored.status not in END_STATUSES:
            # Only when the action was stored by someone else (the server stores an ending action
            # with its result, in one transaction); if this fails too, a restart records it.
            try:
                await room.ports.store.finish_game(room.game_id, result)
            except Exception as exc:
                log_failure(log, exc, "room %s: the result could not be stored; a restart will store it", room.code)
        return Outcome.STORED
    if not verdict.differs:
        return Outcome.ABSENT
    log.warning(
        "room %s: the stored log (%d actions) is not the room's (%d); the room takes it",
        room.code,
        len(stored.actions),
        room.seq,
    )
    await reload(room, stored)
    if verdict.stored:
        return Outcome.RELOADED
    raise ProtocolError(
        ErrorCode.STALE_DECISION,
        f"that decision has passed: the stored game is at move {room.seq} (the new views have been sent)",
    )


async def reload(room: Room, stored: StoredGame) -> None:
    """Replace the room's game with the stored one, as `Room.resume` builds it after a restart
    (seats, their connections and the ending bookkeeping stay: only actions can be ahead, since
    every other write of a game is the room's own and waited for), and tell everyone."""
    for acted, _ in stored.actions[room.seq :]:
        room.endings.on_action(acted)  # a draw offer lapses as it would have
    room.adopt_log(stored)
    ended = None
    if stored.status in END_STATUSES:
        ended = stored.result if stored.result is not None else endings.aborted()
    await room.settle_adopted_log(ended)


async def start_stored(
    room: Room, seats: list[tuple[int, int | None, str]], tokens: dict[int, str], failure: Exception
) -> bool:
    """After a failed write of the start (`Store.start_game` with these seats and tokens, which
    raised `failure`): whether it landed all the same, so the room starts as if it had been told so."""
    stored = await _read_back(room, failure, "the room stays waiting")
    if stored is None or stored.status != "playing":
        return False
    if stored.seat_list != seats or any(stored.seat_tokens.get(seat) != token for seat, token in tokens.items()):
        log.error("room %s: the game is stored as playing with other seats; the room stays waiting", room.code)
        return False
    log.warning("room %s: the failed write of the start was stored after all; the game starts", room.code)
    return True


async def _read_back(room: Room, failure: Exception, otherwise: str) -> StoredGame | None:
    """The room's game as stored after a write of it failed with `failure`, or None: none
    stored, none to look at (a write refused before it was sent cannot have landed: `NotWritten`),
    or none readable (logged, with what the room does `otherwise`)."""
    if isinstance(failure, NotWritten):
        return None
    try:
        return await room.ports.store.load_game(room.game_id)
    except Exception as exc:
        log_failure(log, exc, "room %s: the stored game cannot be read either; %s", room.code, otherwise)
        return None
