"""The terms a room is opened with, as one frozen value: checked once (by the rooms service),
then handed whole to the room, the store and the rematch that copies them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from partida.games.base import Game
from partida.room.clocks import ClockSpec
from partida.room.endings import DEFAULT_ABANDON_AFTER


@dataclass(frozen=True)
class RoomTerms:
    game: Game
    options: dict[str, Any] = field(default_factory=dict)  # resolved by the game: what is stored
    seats: int = 2
    public: bool = False
    auto_start: bool = True  # start when every seat is taken
    clock: ClockSpec | None = None
    abandon_after: float = DEFAULT_ABANDON_AFTER  # grace of an absent seat in a game without a clock
    rated: bool = False  # changes its accounts' ratings when it ends (needs a clock; no guests)
    # Its seats may take moves back by agreement: a casual room a person opened, a challenge or a
    # casual seek (never a tournament's or a ladder's); the game must allow them too (`Game.takebacks`).
    takebacks: bool = False
    # Seat i may be taken only by account kept[i] (None: by anyone); empty: no seat is kept. A
    # tournament's table keeps each seat for its entrant, so its room code seats nobody else.
    kept: tuple[int | None, ...] = ()
