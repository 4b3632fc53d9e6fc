"""The tournament requests (server/services/tournaments.py) with fake ports: a store of dicts and
a director that records what it is told. What is tested is the seam between them: a tournament
created is planned on the director at the time the service's clock gives, an entrant come is told
to it, and a refused request tells it nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from partida.games.registry import default_registry
from partida.protocol import ProtocolError
from partida.protocol import messages as m
from partida.server.limits import Limiter, Limits
from partida.server.services.tournaments import TournamentService
from partida.server.tournament_list import TournamentPages
from partida.storage.tournaments import Slot, TournamentInfo

NOW = 1_800_000_000.0
CLOCK = {"initial": 60.0, "increment": 0.0}


class Session:
    def __init__(self, account_id: int | None, kind: str = "user") -> None:
        self.identity = SimpleNamespace(account_id=account_id, kind=kind, name=f"a{account_id}")
        self.address = "192.0.2.1"
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


class Store:
    def __init__(self) -> None:
        self.infos: dict[str, TournamentInfo] = {}
        self.entered: list[tuple[int, int]] = []

    async def live_created(self, account_id: int, address: str | None) -> tuple[int, int]:
        return (0, 0)

    async def create(
        self,
        name: str,
        game: str,
        options: Any,
        seats: int,
        clock: Any,
        fmt: str,
        entry: str,
        starts_at: datetime,
        **fields: Any,
    ) -> TournamentInfo:
        info = TournamentInfo(
            len(self.infos) + 1,
            name,
            game,
            options,
            seats,
            clock,
            fmt,
            entry,
            fields["rounds"],
            fields["duration"],
            starts_at,
            "registering",
            0,
            starts_at,
            None,
        )
        self.infos[name] = info
        return info

    async def get(self, name: str) -> TournamentInfo | None:
        return self.infos.get(name)

    async def enter(self, tournament_id: int, account_id: int) -> None:
        self.entered.append((tournament_id, account_id))


class Director:
    def __init__(self) -> None:
        self.planned: list[Slot] = []
        self.told: list[int] = []

    def plan(self, slot: Slot) -> None:
        self.planned.append(slot)

    def entered(self, tournament: int) -> None:
        self.told.append(tournament)


def service() -> tuple[TournamentService, Store, Director]:
    store, director = Store(), Director()
    tournaments = TournamentService(
        store,  # type: ignore[arg-type]
        default_registry(),
        Limiter(Limits()),
        lambda game, options: options or {},
        TournamentPages(lambda *args: None),  # type: ignore[arg-type,return-value]
        director,  # type: ignore[arg-type]
        now=lambda: NOW,
    )
    return tournaments, store, director


async def test_a_tournament_created_is_planned_at_the_services_time() -> None:
    tournaments, store, director = service()
    org = Session(1)
    req = m.TournamentCreate("blitz", "tictactoe", "arena", CLOCK, duration=600.0, starts_in=90.0, id=7)
    await tournaments.on_create(org, req)  # type: ignore[arg-type]
    assert director.planned == [Slot(1, "registering", "arena", NOW + 90.0, 600.0)]
    assert director.planned[0].ends_at == NOW + 90.0 + 600.0
    (reply,) = org.sent
    assert reply["type"] == "tournament_created" and reply["id"] == 7
    assert reply["tournament"]["starts_at"] == NOW + 90.0
    assert store.infos["blitz"].starts_at == datetime.fromtimestamp(NOW + 90.0, UTC)


async def test_an_entrant_is_told_to_the_director_and_a_refused_one_is_not() -> None:
    tournaments, store, director = service()
    await tournaments.on_create(Session(1), m.TournamentCreate("rr", "tictactoe", "round-robin", CLOCK))  # type: ignore[arg-type]
    ann = Session(2)
    await tournaments.on_join(ann, m.TournamentJoin("rr"))  # type: ignore[arg-type]
    assert store.entered == [(1, 2)] and director.told == [1]
    assert ann.sent[-1]["type"] == "tournament_joined"
    store.infos["rr"].status = "running"  # a round robin running takes no more entrants
    with pytest.raises(ProtocolError) as refused:
        await tournaments.on_join(Session(3), m.TournamentJoin("rr"))  # type: ignore[arg-type]
    assert refused.value.code == "tournament_closed"
    with pytest.raises(ProtocolError) as refused:
        await tournaments.on_join(Session(None), m.TournamentJoin("rr"))  # type: ignore[arg-type]
    assert refused.value.code == "accounts_only"
    assert store.entered == [(1, 2)] and director.told == [1]
