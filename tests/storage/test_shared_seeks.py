"""The deployment's seeks in PostgreSQL (`partida.storage.shared_seeks`), the one arbiter of who
pairs what: claims racing on overlapping pairs, the per-owner cap under concurrent posts, and a
dead node's seeks and claims (a real PostgreSQL; nodes are rows of `nodes` here, no server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from partida.storage.database import Database
from partida.storage.nodes import NodeDirectory
from partida.storage.shared_seeks import SharedSeekTable, terms_digest
from tests.fixtures.storage import fresh_database

KEY = terms_digest("tictactoe", {}, 2, {"initial": 60, "increment": 1, "timeouts": None}, False)


@pytest.fixture
async def table(postgres) -> AsyncIterator[tuple[SharedSeekTable, NodeDirectory]]:  # type: ignore[no-untyped-def]
    db = await Database.open(fresh_database(postgres, "shared_seeks"))
    directory = NodeDirectory(db)
    for node in ("a", "b", "c"):
        await directory.register(node, f"ws://{node}", 30.0)
    try:
        yield SharedSeekTable(db), directory
    finally:
        await db.close()


async def post(table: SharedSeekTable, node: str, owner: str, address: str = "10.0.0.1", most: int = 3) -> int:
    posted = await table.post(node, owner, address, KEY, {}, {}, {"game": "tictactoe"}, most, None)
    return posted.id


async def test_claims_racing_on_overlapping_pairs_take_each_seek_once(table) -> None:  # type: ignore[no-untyped-def]
    seeks, _ = table
    for _ in range(50):
        one, two, three = [await post(seeks, node, f"a:{i}") for i, node in enumerate("abc")]
        # a pairs (one, two), b pairs (two, one), c takes two alone: at the same moment
        found = await asyncio.gather(
            seeks.claim("a", [one, two]), seeks.claim("b", [two, one]), seeks.claim("c", [two])
        )
        won = [claim for claim, f in zip(([one, two], [two, one], [two]), found, strict=True) if set(f) == set(claim)]
        assert len(won) == 1, found  # seek `two` went to exactly one claimer, whole
        assert await seeks.get(two) is None
        assert (await seeks.get(three)) is not None  # untouched
        await seeks.drop("c", [three])


async def test_the_cap_counts_every_live_node_even_posting_at_once(table) -> None:  # type: ignore[no-untyped-def]
    seeks, _ = table
    ids = await asyncio.gather(*(post(seeks, node, "a:7") for node in "abcabc"))
    assert sorted(i > 0 for i in ids) == [False, False, False, True, True, True]  # three, wherever posted


async def test_a_dead_nodes_seeks_go_and_its_claims_are_opened_again(table) -> None:  # type: ignore[no-untyped-def]
    seeks, directory = table
    mine = await post(seeks, "a", "a:1")
    theirs = await post(seeks, "b", "a:2")
    claimed = await post(seeks, "a", "a:3")
    assert await seeks.claim("b", [claimed]) == {claimed}
    await directory.renew("b", -1.0)  # b's lease has run out: b is dead
    assert await seeks.get(theirs) is None  # a dead node's seek is not offered
    assert [r.id for r in await seeks.candidates(KEY, exclude=0)] == [mine]
    assert await seeks.release_dead_claims() == 1  # claimed by b, which never said where: open again
    assert [r.id for r in await seeks.candidates(KEY, exclude=0)] == [mine, claimed]
    assert await seeks.drop_dead() == [theirs]
    assert (await post(seeks, "a", "a:2")) > 0  # b's seek no longer counts toward its owner's cap
