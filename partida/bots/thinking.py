"""Thinking time shared fairly between the people a bot plays.

A bot process plays every game it is seated in, and its agents think in worker threads. Handed
to the threads in arrival order, the decisions of one person who opened forty games and
answers at once would always be ahead of everyone else's: another player's move waited
behind forty searches. And with more searches at once than the machine has cores, every search
is slower, the hog's and everyone else's alike (eight threads on two cores made another
player's reply seven times slower). So three rules, kept here:

- never more searches at once than `cores`, counting a search whose answer was given up on
  (its thread still computes until it returns);
- each decision names its party (who it is for: the server tells a bot by `seated`'s `party`),
  and a free core goes to the waiting party served least recently, so one party's queue waits
  for its own games, and another party's decision waits for at most the searches running when
  it came, never for one started after it;
- a party has fewer searches at once than `cores` (when there are two or more): one person's
  games never hold every core, so another party's decision starts at once.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity, which a container or `taskset` may
    narrow), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class FairThinking:
    def __init__(self, cores: int | None = None) -> None:
        self.cores = max(cores if cores is not None else usable_cores(), 1)
        # a party's searches at once: fewer than the cores, so one is left for anyone else
        self.per_party = max(self.cores - 1, 1)
        self._running = 0
        self._running_of: collections.Counter[Hashable] = collections.Counter()
        # party -> its decisions waiting, in order
        self._waiting: dict[Hashable, collections.deque[asyncio.Future[None]]] = {}
        # party -> when it last started a search (a tick), kept while it waits or searches
        self._served: dict[Hashable, int] = {}
        self._ticks = itertools.count(1)

    @property
    def running(self) -> int:
        """Searches under way, those whose answer was given up on included."""
        return self._running

    async def run(self, party: Hashable, think: Callable[..., T], *args: Any) -> T:
        """`think(*args)` in a worker thread once it is `party`'s turn. Cancelling the caller
        after its turn came does not stop the thread, and its core stays taken until it ends."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(party, collections.deque()).append(turn)
        self._next()
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():  # handed a turn it will not take
                self._finished(party)
            else:
                self._forget(party, turn)
            raise
        search = asyncio.ensure_future(asyncio.to_thread(think, *args))
        # the core is given back when the thread ends, not when the caller stops waiting
        search.add_done_callback(lambda done: self._ended(party, done))
        return await asyncio.shield(search)

    def _ended(self, party: Hashable, search: asyncio.Future[Any]) -> None:
        if not search.cancelled():
            search.exception()  # retrieved: a caller that gave up no longer reads it
        self._finished(party)

    def _finished(self, party: Hashable) -> None:
        self._running -= 1
        self._running_of[party] -= 1
        if self._running_of[party] <= 0:
            del self._running_of[party]
            if party not in self._waiting:
                self._served.pop(party, None)
        self._next()

    def _forget(self, party: Hashable, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(party)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self._waiting[party]
                if party not in self._running_of:
                    self._served.pop(party, None)

    def _next(self) -> None:
        while self._running < self.cores:
            ready = [p for p in self._waiting if self._running_of[p] < self.per_party]
            if not ready:
                return
            # the party served least recently (one never served first, in the order it came)
            party = min(ready, key=lambda p: self._served.get(p, 0))
            queue = self._waiting[party]
            turn = queue.popleft()
            if not queue:
                del self._waiting[party]
            if turn.done():  # cancelled meanwhile
                continue
            self._running += 1
            self._running_of[party] += 1
            self._served[party] = next(self._ticks)
            turn.set_result(None)
