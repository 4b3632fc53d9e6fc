"""Rooms counted per address, for the limits on how many one address may hold open at once.

Kept per address, so that creating a room does not scan every room of the server; a room that
stopped counting (started, finished, gone) stays in its address's set until the set is swept,
which happens only when the count could reach the limit or the set has doubled since its last
sweep: sweeping at every room created would look at every room of the address each time, and
from one address playing many games at once (a bot host, a load test) that was 1% of the event
loop at 500 games in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from partida.server.rooms.driver import Room


class RoomsByAddress:
    def __init__(self, rooms: Mapping[str, Room], counts: Callable[[Room], bool]) -> None:
        self._rooms = rooms  # the rooms table: a room no longer there counts no more
        self._counts = counts
        self._by_address: dict[str, set[Room]] = {}
        self._swept_at: dict[str, int] = {}  # address -> its set's size after its last sweep

    def add(self, address: str, room: Room) -> None:
        self._by_address.setdefault(address, set()).add(room)

    def holds(self, address: str, room: Room) -> bool:
        """Whether `room` was counted for `address` (it may have stopped counting since)."""
        rooms = self._by_address.get(address)
        return rooms is not None and room in rooms

    def count(self, address: str, limit: int) -> int:
        """The rooms of `address` that count: exact from `limit` up, below it at least as many."""
        rooms = self._by_address.get(address)
        if not rooms:
            return 0
        swept = self._swept_at.get(address, 0)
        if len(rooms) < limit and len(rooms) < 2 * swept + 8:
            return len(rooms)
        rooms.difference_update([r for r in rooms if not self._counts(r) or self._rooms.get(r.code) is not r])
        self._swept_at[address] = len(rooms)
        if not rooms:
            del self._by_address[address], self._swept_at[address]
        return len(rooms)
