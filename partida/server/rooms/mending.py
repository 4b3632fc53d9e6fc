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
  a restarted server resumes a game (`RoomCore.catch_up`), clocks from the snapshot stored with
  the last action, pushes the fresh views to everyone (`Outcome.RELOADED`), and the player whose
  action was not the stored one is told `stale_decision` (`Outcome.STALE`).

The comparison is pure (`partida.room.record.judge`); `after_failed_write` reads the log and
judges, and the driver (`driver.py`) acts on the verdict: this module is handed the store, the
core and the room's code, never the room.

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
from partida.room import endings
from partida.room.record import judge
from partida.storage.database import NotWritten, log_failure
from partida.storage.store import END_STATUSES

if TYPE_CHECKING:
    from partida.room.core import RoomCore
    from partida.storage.store import Store, StoredGame

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    STORED = "stored"  # the action is in the log as the room holds it: carry on as on success
    ABSENT = "absent"  # not in the log (or the log could not be read): undo it
    RELOADED = "reloaded"  # the log differs and holds the action: the room takes the log
    STALE = "stale"  # the log differs without the action: the room takes it, the action is refused


async def after_failed_write(
    store: Store,
    core: RoomCore[Any],
    code: str,
    seat: int,
    action: Action,
    result: dict[str, Any] | None,
    failure: Exception,
) -> tuple[Outcome, StoredGame | None]:
    """Called by room `code`'s driver (under its lock, the action applied to `core`'s state but
    not to its log) when the write of `action` by `seat` failed with `failure`; `result` is the
    result the write carried, if the action ended the game. With `RELOADED` and `STALE`, the
    stored game the room must take. A write refused before it was sent (a fenced node, whose
    games another node may be playing) is undone without a look: the log is not this room's to
    adopt then."""
    stored = await _read_back(store, core.game_id, code, failure, "the action is undone")
    if stored is None:
        return Outcome.ABSENT, None
    verdict = judge(core.actions, stored.actions, seat, action)
    if verdict.stored and not verdict.differs:
        log.warning("room %s: the failed write of action %d was stored after all; it stands", code, core.seq)
        if result is not None and stored.status not in END_STATUSES:
            # Only when the action was stored by someone else (the server stores an ending action
            # with its result, in one transaction); if this fails too, a restart records it.
            try:
                await store.finish_game(core.game_id, result)
            except Exception as exc:
                log_failure(log, exc, "room %s: the result could not be stored; a restart will store it", code)
        return Outcome.STORED, None
    if not verdict.differs:
        return Outcome.ABSENT, None
    log.warning(
        "room %s: the stored log (%d actions) is not the room's (%d); the room takes it",
        code,
        len(stored.actions),
        core.seq,
    )
    return (Outcome.RELOADED if verdict.stored else Outcome.STALE), stored


def stored_end(stored: StoredGame) -> dict[str, Any] | None:
    """The result a stored game ended with (an aborted game has none stored), or None while on."""
    if stored.status not in END_STATUSES:
        return None
    return stored.result if stored.result is not None else endings.aborted()


async def start_stored(
    store: Store,
    game_id: int,
    code: str,
    seats: list[tuple[int, int | None, str]],
    tokens: dict[int, str],
    failure: Exception,
) -> bool:
    """After a failed write of room `code`'s start (`Store.start_game` with these seats and
    tokens, which raised `failure`): whether it landed all the same, so the room starts as if it
    had been told so."""
    stored = await _read_back(store, game_id, code, failure, "the room stays waiting")
    if stored is None or stored.status != "playing":
        return False
    if stored.seat_list != seats or any(stored.seat_tokens.get(seat) != token for seat, token in tokens.items()):
        log.error("room %s: the game is stored as playing with other seats; the room stays waiting", code)
        return False
    log.warning("room %s: the failed write of the start was stored after all; the game starts", code)
    return True


async def _read_back(store: Store, game_id: int, code: str, failure: Exception, otherwise: str) -> StoredGame | None:
    """The game as stored after a write of it failed with `failure`, or None: none stored, none
    to look at (a write refused before it was sent cannot have landed: `NotWritten`), or none
    readable (logged, with what the room does `otherwise`)."""
    if isinstance(failure, NotWritten):
        return None
    try:
        return await store.load_game(game_id)
    except Exception as exc:
        log_failure(log, exc, "room %s: the stored game cannot be read either; %s", code, otherwise)
        return None
