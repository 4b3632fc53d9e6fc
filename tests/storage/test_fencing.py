"""The fence's rule (`storage/fencing.py`) with renewals dated by hand: a node writes until a
third of a lease before the lease taken at its last renewal would run out, counted from when
the renewal was sent, and not before its first renewal."""

from __future__ import annotations

import asyncio

import pytest

from partida.storage.database import NotWritten
from partida.storage.fencing import FENCE_MARGIN, Fence

LEASE = 30.0
FENCED_AFTER = LEASE * (1 - FENCE_MARGIN)  # 20 s after the renewal was sent


async def test_a_node_writes_nothing_before_its_first_renewal() -> None:
    with pytest.raises(NotWritten):
        Fence(LEASE).check()


async def test_a_node_writes_until_two_thirds_of_a_lease_after_its_renewal_was_sent() -> None:
    now = asyncio.get_running_loop().time()
    fence = Fence(LEASE)
    fence.renewed(now - FENCED_AFTER + 5)  # sent 15 s ago: 5 s left
    fence.check()
    fence.renewed(now - FENCED_AFTER - 0.01)  # sent just over 20 s ago: lapsed, for all this node knows
    with pytest.raises(NotWritten) as refused:
        fence.check()
    assert "could not renew its lease" in str(refused.value)
    fence.renewed(now)  # renewed again: writes again
    fence.check()
