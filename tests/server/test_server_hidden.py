"""The server sends each seat exactly its own view and spectators exactly the public one.

The check is generic: after a game played through the server, the game is re-run locally from the
revealed seed and the stored actions, and every update each connection received is compared with
the view its seat had at that point. What a view may contain is the games' own tests' business;
this pins down that the server never hands anyone another seat's view.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any

import pytest

from partida.games.base import Decision, Game, Result, State, View
from partida.games.prompts import ChooseOne, Prompt


class SecretCardsState(State):
    """Each seat holds a hidden card and bets or folds in turn; the highest card among bettors wins."""

    def __init__(self, cards: list[int], bets: list[str | None]) -> None:
        self.cards = cards
        self.bets = bets

    @property
    def num_seats(self) -> int:
        return len(self.cards)

    def pending(self) -> list[Decision]:
        for seat, bet in enumerate(self.bets):
            if bet is None:
                return [Decision(seat, ChooseOne(name="bet", options=["bet", "fold"]))]
        return []

    def apply(self, seat: int, action: Any) -> None:
        decision = self.require_decision(seat)
        self.bets[seat] = decision.prompt.validate(action)

    def view(self, seat: int | None) -> View:
        over = self.is_over()
        return {
            "cards": [c if over or s == seat else None for s, c in enumerate(self.cards)],
            "bets": list(self.bets),
        }

    def is_over(self) -> bool:
        return None not in self.bets

    def result(self) -> Result:
        return Result.from_scores([c if b == "bet" else -1 for c, b in zip(self.cards, self.bets, strict=True)])

    def clone(self) -> SecretCardsState:
        return SecretCardsState(list(self.cards), list(self.bets))


class SecretCards(Game):
    name = "secretcards"
    title = "Secret cards"
    max_seats = 4
    perfect_information = False

    def new_state(self, options: Mapping[str, Any], seed: int, seats: int) -> SecretCardsState:
        return SecretCardsState(random.Random(seed).sample(range(1, 101), seats), [None] * seats)

    def determinize(self, view: View, seat: int | None, rng: random.Random) -> SecretCardsState:
        known = [c for c in view["cards"] if c is not None]
        pool = [c for c in range(1, 101) if c not in known]
        cards = [c if c is not None else pool.pop(rng.randrange(len(pool))) for c in view["cards"]]
        return SecretCardsState(cards, list(view["bets"]))


async def check_views_through_server(server, connect, game_name: str, seats: int, options=None) -> int:  # type: ignore[no-untyped-def]
    """Play a game with random players and a spectator; return how many updates were checked."""
    players = [await connect(name=f"p{i}") for i in range(seats)]
    spectator = await connect(name="spectator")
    code = (await players[0].create_room(game_name, options, seats=seats, seat=0, public=False))["room"]
    await spectator.watch(code)
    received: dict[int | None, list[dict[str, Any]]] = {}

    def recorder(rng: random.Random):  # type: ignore[no-untyped-def]
        def decide(update: dict[str, Any], prompt: Prompt) -> Any:
            return prompt.random_answer(rng)

        return decide

    for i, player in enumerate(players[1:], 1):
        await player.join(code, seat=i)

    async def record_player(i: int) -> None:
        def keep(update: dict[str, Any]) -> None:
            received.setdefault(update["seat"], []).append(update)

        await players[i].play(code, recorder(random.Random(i)), on_update=keep)

    async def record_spectator() -> None:
        while True:
            update = await spectator.next_update(code, timeout=60)
            received.setdefault(None, []).append(update)
            if update["status"] == "finished":
                return

    await asyncio.gather(*(record_player(i) for i in range(seats)), record_spectator())
    room = server.rooms[code]
    stored = await server.store.load_game(room.core.game_id)
    game = server.registry.get(game_name)
    state = game.new_state(game.resolve_options(options), stored.seed, seats)
    views_by_seq = [{s: state.view(s) for s in [None, *range(seats)]}]
    for seat, action in stored.actions:
        state.apply(seat, action)
        views_by_seq.append({s: state.view(s) for s in [None, *range(seats)]})
    checked = 0
    for seat, updates in received.items():
        for update in updates:
            assert update["view"] == views_by_seq[update["seq"]][seat], (seat, update["seq"])
            checked += 1
    assert set(received) == {None, *range(seats)}
    return checked


async def test_each_seat_gets_only_its_own_view(server, connect) -> None:
    server.registry.add(SecretCards())
    checked = await check_views_through_server(server, connect, "secretcards", 3)
    assert checked >= 3 * 4


@pytest.mark.parametrize("game_name", ["duel", "agram", "throwdicematchcard"])
async def test_hidden_information_games_through_the_server(server, connect, game_name: str) -> None:
    assert game_name in server.registry  # shipped with the server: a dropped game fails here
    game = server.registry.get(game_name)
    await check_views_through_server(server, connect, game_name, game.min_seats)
