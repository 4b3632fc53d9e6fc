"""Challenging a person (`server/services/challenges.py`) with a stand-in rooms service, a
single node's presence and real connections on a fake transport: who may be challenged, who is
told what, and what happens when either side goes away or time runs out."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.server.account_presence import SingleNodePresence
from partida.server.challenges import CHALLENGE_TTL, Challenges
from partida.server.connections import Connections
from partida.server.limits import Limiter
from partida.server.services.challenges import ChallengeService
from partida.server.session import Session
from tests.fakes import ManualLoop, sent, sent_types, session

GAMES = default_registry()


class FakeRooms:
    """The rooms service's check of a room's terms (the game by name, the rest as given)."""

    def check_terms(self, who: Session, game: str, options: Any, seats: Any, clock: Any) -> SimpleNamespace:
        return SimpleNamespace(game=GAMES.get(game), options=options or {}, seats=seats or 2, clock=None)


@pytest.fixture
def parts() -> SimpleNamespace:
    loop = ManualLoop()
    challenges = Challenges(loop=loop)  # type: ignore[arg-type]
    connections = Connections()
    service = ChallengeService(
        challenges,
        connections,
        SingleNodePresence(),
        None,
        FakeRooms(),
        Limiter(),
        60.0,  # type: ignore[arg-type]
    )
    ann, bob, bob_phone = session("ann", "user", 1), session("Bob", "user", 2), session("Bob", "user", 2)
    for who in (ann, bob, bob_phone):
        connections.add(who)
    return SimpleNamespace(
        service=service,
        challenges=challenges,
        connections=connections,
        loop=loop,
        ann=ann,
        bob=bob,
        bob_phone=bob_phone,
    )


async def challenged(parts: SimpleNamespace) -> str:
    await parts.service.on_challenge(parts.ann, m.Challenge(to="bob", game="tictactoe", id=1))
    return sent(parts.ann)[-1]["challenge"]["id"]


async def test_every_connection_of_the_challenged_account_is_told(parts: SimpleNamespace) -> None:
    challenge_id = await challenged(parts)
    reply = sent(parts.ann)[-1]
    assert reply["type"] == "challenge_sent" and reply["id"] == 1
    assert reply["challenge"]["from"] == {"name": "ann", "kind": "user"} and reply["challenge"]["to"] == "Bob"
    for phone in (parts.bob, parts.bob_phone):
        assert sent(phone)[-1] == {"type": "challenge", "challenge": reply["challenge"]}
    assert challenge_id in parts.challenges.open


async def test_only_a_connected_account_other_than_oneself_can_be_challenged(parts: SimpleNamespace) -> None:
    parts.connections.add(session("zed"))  # a guest: no account
    for to, code in (
        ("zed", ErrorCode.NO_SUCH_PLAYER),
        ("nobody", ErrorCode.NO_SUCH_PLAYER),
        ("ANN", ErrorCode.BAD_FIELD),
    ):
        with pytest.raises(ProtocolError) as refused:
            await parts.service.on_challenge(parts.ann, m.Challenge(to=to, game="tictactoe"))
        assert refused.value.code == code, to
    assert parts.challenges.open == {}


async def test_a_decline_tells_the_challenger_and_only_the_challenged_may_decline(parts: SimpleNamespace) -> None:
    challenge_id = await challenged(parts)
    with pytest.raises(ProtocolError) as refused:
        await parts.service.on_decline(session("cid", "user", 3), m.DeclineChallenge(challenge=challenge_id))
    assert refused.value.code == ErrorCode.NO_SUCH_CHALLENGE
    await parts.service.on_decline(parts.bob_phone, m.DeclineChallenge(challenge=challenge_id, id=9))
    assert sent(parts.ann)[-1] == {
        "type": "challenge_declined",
        "challenge": challenge_id,
        "by": "Bob",
        "reason": "declined",
    }
    assert sent(parts.bob_phone)[-1] == {"type": "challenge_declined", "id": 9, "challenge": challenge_id, "by": "Bob"}
    with pytest.raises(ProtocolError) as again:
        await parts.service.on_decline(parts.bob, m.DeclineChallenge(challenge=challenge_id))
    assert again.value.code == ErrorCode.NO_SUCH_CHALLENGE


async def test_the_challenger_hears_at_once_when_the_challenged_accounts_last_connection_leaves(
    parts: SimpleNamespace,
) -> None:
    challenge_id = await challenged(parts)
    told = len(sent(parts.ann))
    parts.connections.discard(parts.bob)
    parts.service.disconnected(parts.bob)
    assert len(sent(parts.ann)) == told  # the phone is still there to answer
    parts.connections.discard(parts.bob_phone)
    parts.service.disconnected(parts.bob_phone)
    assert sent(parts.ann)[-1] == {
        "type": "challenge_declined",
        "challenge": challenge_id,
        "by": "Bob",
        "reason": "left",
    }
    assert parts.challenges.open == {}


async def test_an_unanswered_challenge_lapses_and_a_challenger_leaving_withdraws_it(parts: SimpleNamespace) -> None:
    challenge_id = await challenged(parts)
    parts.loop.advance(CHALLENGE_TTL)
    assert sent(parts.ann)[-1] == {
        "type": "challenge_declined",
        "challenge": challenge_id,
        "by": "Bob",
        "reason": "expired",
    }
    second = await challenged(parts)
    parts.service.disconnected(parts.ann)
    assert second not in parts.challenges.open
    parts.loop.advance(CHALLENGE_TTL)
    assert sent_types(parts.ann).count("challenge_declined") == 1
