"""Fencing: the guard every game write passes before it reaches the database.

A node of several (`partida serve --node`) holds its games under a lease it renews; once the
lease may have lapsed, another node may take its games, and a write from this node could land
beside the new owner's. `Fence` says until when this node may write; the group writer asks it
for every write it is given (`batching.GroupWriter`, through which every game write of `Store`
goes), so no game write, present or added later, reaches the database past the fence.
A single server has no fence and writes whenever asked.
"""

from __future__ import annotations

import asyncio

from partida.storage.database import NotWritten

# Of the lease: a write asked for this close to the lease's end is not begun.
FENCE_MARGIN = 1 / 3


class Fence:
    """Whether this node may still write its games: until a third of a lease before the lease
    taken at the last successful renewal would run out. Measured on this process's monotonic
    clock from the moment the renewal was sent, which is no later than the database's `now()`
    that set the lease, so the node stops before any other node may take its rooms."""

    def __init__(self, lease: float) -> None:
        self.lease = lease
        self.valid_until = 0.0

    def renewed(self, sent_at: float) -> None:
        self.valid_until = sent_at + self.lease * (1 - FENCE_MARGIN)

    def check(self) -> None:
        """Raise `NotWritten` once the lease may have lapsed (nothing has been sent then)."""
        if asyncio.get_running_loop().time() > self.valid_until:
            raise NotWritten("this node could not renew its lease on its rooms; it writes nothing until it can.")
