"""The open challenges (`server/challenges.py`) on timers moved by hand: how many one connection
may have, who may take one (anyone else learns nothing of it), and when one lapses and who is
told."""

from __future__ import annotations

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.server.challenges import CHALLENGE_TTL, MAX_OPEN_PER_SESSION, Challenge, Challenges
from partida.server.session import Session
from tests.fakes import ManualLoop, session

TICTACTOE = default_registry().get("tictactoe")
BOB_ID = 2


def challenge(challenger: Session, to: int = BOB_ID) -> Challenge:
    return Challenge(challenger, to, "bob", TICTACTOE, {}, 2, None)


def book() -> tuple[Challenges, ManualLoop, list[Challenge]]:
    lapsed: list[Challenge] = []
    loop = ManualLoop()
    return Challenges(lapsed.append, loop), loop, lapsed  # type: ignore[arg-type]


def test_an_unanswered_challenge_lapses_after_its_time_and_its_challenger_is_told() -> None:
    challenges, loop, lapsed = book()
    sent = challenge(session("ann", "user", 1))
    challenges.add(sent)
    loop.advance(CHALLENGE_TTL - 1)
    assert lapsed == [] and sent.id in challenges.open
    loop.advance(1)
    assert lapsed == [sent] and sent.id not in challenges.open


def test_a_challenge_whose_challenger_left_lapses_untold() -> None:
    challenges, loop, lapsed = book()
    ann = session("ann", "user", 1)
    challenges.add(challenge(ann))
    ann.close_soon()
    loop.advance(CHALLENGE_TTL)
    assert lapsed == [] and challenges.open == {}


def test_only_the_challenged_account_may_take_a_challenge_and_then_it_no_longer_lapses() -> None:
    challenges, loop, lapsed = book()
    sent = challenge(session("ann", "user", 1))
    challenges.add(sent)
    for stranger in (session("cid", "user", 3), session("bob"), session("ann", "user", 1)):
        with pytest.raises(ProtocolError) as refused:
            challenges.take(sent.id, stranger)
        assert refused.value.code == ErrorCode.NO_SUCH_CHALLENGE
    with pytest.raises(ProtocolError) as unknown:
        challenges.take("nope", session("bob", "user", BOB_ID))
    assert unknown.value.code == refused.value.code  # a stranger cannot tell it from none at all
    assert challenges.take(sent.id, session("bob", "user", BOB_ID)) is sent
    loop.advance(CHALLENGE_TTL)
    assert lapsed == []


def test_a_connection_has_a_bounded_number_of_open_challenges() -> None:
    challenges, _, _ = book()
    ann, cid = session("ann", "user", 1), session("cid", "user", 3)
    for _ in range(MAX_OPEN_PER_SESSION):
        challenges.add(challenge(ann))
    with pytest.raises(ProtocolError) as refused:
        challenges.add(challenge(ann))
    assert refused.value.code == ErrorCode.RATE_LIMITED
    challenges.add(challenge(cid))  # another connection's are its own
    first = next(iter(challenges.open))
    challenges.drop(first)
    challenges.add(challenge(ann))  # one answered: room for another


def test_a_challenger_leaving_takes_its_challenges_with_it() -> None:
    challenges, loop, lapsed = book()
    ann, cid = session("ann", "user", 1), session("cid", "user", 3)
    mine = [challenge(ann), challenge(ann)]
    theirs = challenge(cid)
    for c in (*mine, theirs):
        challenges.add(c)
    assert set(challenges.drop_from(ann)) == set(mine)
    assert list(challenges.open) == [theirs.id]
    loop.advance(CHALLENGE_TTL)
    assert lapsed == [theirs]  # the dropped ones' timers went with them
