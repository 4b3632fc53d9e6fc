"""Thinking time shared fairly between the people a bot plays.

A bot process plays every game it is seated in, and its agents think in worker threads. Handed
to the threads in arrival order, the decisions of one person who opened forty games and
answers at once would always be ahead of everyone else's: another player's move waited
behind forty searches. Here each decision names who it is for (the other seats of its room),
and a free worker takes the next decision of the next such party in turn, so a party with many
games waits for its own games, not others for them.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class FairThinking:
    def __init__(self, workers: int = 8) -> None:
        self.workers = max(workers, 1)
        self._running = 0
        # party -> its decisions waiting, in order; the parties in the order their turns come
        self._waiting: collections.OrderedDict[Hashable, collections.deque[asyncio.Future[None]]] = (
            collections.OrderedDict()
        )

    async def run(self, party: Hashable, think: Callable[..., T], *args: Any) -> T:
        """`think(*args)` in a worker thread once it is `party`'s turn."""
        if self._running >= self.workers or self._waiting:
            turn = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(party, collections.deque()).append(turn)
            try:
                await turn
            except BaseException:
                if not turn.done() or turn.cancelled():
                    self._forget(party, turn)
                else:  # handed a turn it will not take: the next one gets it
                    self._running -= 1
                    self._next()
                raise
        else:
            self._running += 1
        try:
            return await asyncio.to_thread(think, *args)
        finally:
            self._running -= 1
            self._next()

    def _forget(self, party: Hashable, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(party)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self._waiting[party]

    def _next(self) -> None:
        while self._running < self.workers and self._waiting:
            party, queue = next(iter(self._waiting.items()))
            turn = queue.popleft()
            if queue:
                self._waiting.move_to_end(party)  # its next decision waits for the others' turns
            else:
                del self._waiting[party]
            if not turn.done():
                self._running += 1
                turn.set_result(None)
