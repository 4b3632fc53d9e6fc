"""The bot directory (`server/services/bots.py`) over stand-in bot connections and rooms: which
bot is seated for a name, what each refusal is and says, and which agents `list_games` offers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ErrorCode, ProtocolError
from partida.protocol import messages as m
from partida.protocol.accepts import Accepts
from partida.room.clocks import ClockSpec
from partida.server.account_presence import SingleNodePresence
from partida.server.connections import Connections
from partida.server.limits import Limiter, Limits
from partida.server.rooms.driver import Room
from partida.server.services.bots import BotDirectory
from partida.server.session import Session
from tests.fakes import sent, session

GAMES = default_registry()
TICTACTOE, HEARTS = GAMES.get("tictactoe"), GAMES.get("hearts")
_ids = iter(range(100, 10_000))


def room(status: str = "playing") -> Room:
    """A room of this node (the real driver, which the directory tells from other nodes' rooms)
    around a stand-in core holding what the directory reads: its status and seats."""
    return Room(None, SimpleNamespace(status=status, seats=[]), None, "code", public=False, rated=False)  # type: ignore[arg-type]


class Asked:
    """Rooms with bots by the address that asked for them (`RoomsByAddress`), as a plain map."""

    def __init__(self) -> None:
        self.rooms: dict[str, set[Any]] = {}

    def add(self, address: str, room: Any) -> None:
        self.rooms.setdefault(address, set()).add(room)

    def holds(self, address: str, room: Any) -> bool:
        return room in self.rooms.get(address, set())

    def count(self, address: str, limit: int) -> int:
        return len(self.rooms.get(address, set()))


def bot(name: str, agent: str, busy: int = 0, accepts: Accepts | None = None) -> Session:
    connection = session(name, "bot", next(_ids), agent=agent)
    assert connection.identity is not None
    connection.identity.accepts = accepts
    for _ in range(busy):
        connection.rooms.add(room())
    return connection


def directory(*bots: Session, **limits: Any) -> tuple[BotDirectory, Asked]:
    connections = Connections()
    for b in bots:
        connections.add(b)
    asked = Asked()
    return BotDirectory(connections, GAMES, Limiter(Limits(**limits)), SingleNodePresence(), asked), asked  # type: ignore[arg-type]


def refused(call: Any, *args: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as error:
        call(*args)
    return error.value


def test_an_agents_name_seats_the_servers_own_pool_bot_first_then_the_least_busy() -> None:
    pool = bot("pool-mcts", "mcts", busy=5)
    idle, busy = bot("someones", "mcts", busy=0), bot("anothers", "mcts", busy=2)
    bots, _ = directory(idle, pool, busy)
    assert bots.pick("mcts", TICTACTOE) is pool
    bots, _ = directory(busy, idle)
    assert bots.pick("mcts", TICTACTOE) is idle


def test_a_bot_at_its_most_games_is_passed_over_and_when_all_are_no_bot_is_available() -> None:
    full, free = bot("pool-random", "random", busy=2), bot("random-2", "random", busy=1)
    bots, _ = directory(full, free, games_per_bot=2)
    assert bots.pick("random", TICTACTOE) is free
    free.rooms.add(room())
    assert refused(bots.pick, "random", TICTACTOE).code == ErrorCode.NO_BOT_AVAILABLE
    finished = bot("random-3", "random", busy=0)
    finished.rooms.add(room("finished"))
    bots, _ = directory(full, finished, games_per_bot=1)
    assert bots.pick("random", TICTACTOE) is finished  # a finished game holds no place


def test_a_bot_accounts_name_seats_it_if_its_declaration_allows_the_room() -> None:
    picky = bot("Deep", "random", accepts=Accepts.from_hello(["tictactoe"], clock_min=5.0))
    bots, _ = directory(picky, games_per_bot=1)
    assert bots.pick("deep", TICTACTOE) is picky
    declined = refused(bots.pick, "deep", HEARTS)
    assert declined.code == ErrorCode.BOT_DECLINES and declined.message.startswith("the bot Deep does not play hearts")
    assert declined.details == {"accepts": bots.accepts(picky).to_data()}
    assert refused(bots.pick, "deep", TICTACTOE, 2, ClockSpec(per_move=1.0)).code == ErrorCode.BOT_DECLINES
    picky.rooms.add(room("waiting"))
    assert refused(bots.pick, "deep", TICTACTOE).code == ErrorCode.NO_BOT_AVAILABLE


def test_names_that_seat_nothing_say_why() -> None:
    mcts = bot("pool-mcts", "mcts")
    bots, _ = directory(mcts)
    for wanted, code, said in (
        ("gtp", ErrorCode.UNKNOWN_AGENT, "a bridge"),  # names no bot: a program behind it does
        ("nobody", ErrorCode.UNKNOWN_AGENT, "agents connected for tictactoe: mcts"),
        ("random", ErrorCode.NO_BOT_AVAILABLE, "no random bot is connected"),
    ):
        error = refused(bots.pick, wanted, TICTACTOE)
        assert error.code == code and said in error.message, wanted
    error = refused(bots.pick, "mcts", HEARTS)  # connected, and it does not play hidden information
    assert error.code == ErrorCode.BOT_DECLINES and "hidden information" in error.message


def test_an_address_holds_its_share_of_one_bots_games_then_another_bot_of_the_agent_is_seated() -> None:
    first, second = bot("pool-random-1", "random"), bot("pool-random-2", "random")
    bots, asked = directory(first, second, games_per_bot_per_address=1)
    asker = session("ann")
    asker.limits = bots.limiter.admit(asker.address)
    asked_for = room()
    first.rooms.add(asked_for)
    second.rooms.add(room())
    asked.add(asker.address, asked_for)
    assert bots.pick("random", TICTACTOE, asker=asker) is second
    assert refused(bots.pick, "pool-random-1", TICTACTOE, None, False, asker).code == ErrorCode.RATE_LIMITED


def test_a_game_with_a_bot_and_no_clock_gets_a_move_clock_unless_the_operator_says_none() -> None:
    assert directory(bot_move_seconds=30.0)[0].game_clock() == ClockSpec(per_move=30.0)
    assert directory(bot_move_seconds=0.0)[0].game_clock() is None


async def test_list_games_offers_each_game_the_agents_that_play_it_and_no_bridge() -> None:
    bots, _ = directory(bot("pool-mcts", "mcts"), bot("pool-random", "random"), bot("someones-engine", "gtp"))
    asker = session("ann")
    await bots.on_list_games(asker, m.ListGames(id=2))
    games = {g["name"]: g["bots"] for g in sent(asker)[-1]["games"]}
    assert games["tictactoe"] == ["mcts", "random"]
    assert games["hearts"] == ["random"]
