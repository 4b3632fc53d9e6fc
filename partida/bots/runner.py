"""The bot runner: an agent behind a websocket, playing like any client.

One process serves every room it is seated in (by `add_bot`, a challenge, or a restart that
returns it to its games). Agents are synchronous and may search for a second or more, so each
decision runs in a worker thread and the connection keeps answering pings meanwhile.

When the connection is lost (say the server restarts) the runner connects again with a growing
delay and takes its seats back: a bot account is put back by the server; a guest bot rejoins with
the seat tokens it was given.

Under a room's clock the runner follows it: a searching agent's per-move budget (`seconds`) is
cut to fit the time the update says the seat has left (`move_budget`), and an agent that still
overruns is answered for with a random legal answer before the seat's time runs out.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections.abc import Callable
from typing import Any

from partida.bots.base import Agent, Forfeit, Turn
from partida.bots.declaration import agent_accepts
from partida.bots.registry import all_agents, make_agent
from partida.bots.thinking import FairThinking
from partida.client.bot_loop import Client
from partida.client.refusals import ConnectionLost, ServerError
from partida.games.base import Game
from partida.games.prompts import Prompt
from partida.games.registry import Registry, default_registry
from partida.protocol.accepts import Accepts

log = logging.getLogger(__name__)

# Makes the agent for one seat of one room, given the room's `seated` notice: a runner whose
# agents are no built-in ones (the hosted bots' programs, partida/hosting/runner.py).
MakeAgent = Callable[[Game, int, dict[str, Any]], Agent]

LATENCY = 0.15  # seconds kept for the answer to travel and the server to apply it


def move_budget(clock: dict[str, Any] | None, seat: int) -> float | None:
    """The thinking time one decision may use under the room's clock (None: no clock). A fixed
    per-move budget keeps half its time in reserve; under Fischer a move spends a thirtieth of
    what is left plus most of the increment, and never more than 40% of what is left."""
    if not clock or seat is None:
        return None
    left = float(clock["remaining"][seat])
    spec = clock.get("spec") or {}
    if spec.get("per_move") is not None:
        return max(0.01, min(left * 0.5, left - LATENCY))
    increment = float(spec.get("increment") or 0.0)
    return max(0.01, min(left / 30 + increment * 0.7, left * 0.4))


# Refusals that trying again cannot cure: the runner stops and says why.
TOURNAMENT_RETRY = 5.0  # seconds between tries to enter a tournament not created yet
SEEK_RELIST = 5.0  # seconds between two listings of the seeks, for a bot answering them
FATAL = frozenset(
    {
        "auth_failed",
        "unknown_agent",
        "unsupported_version",
        "no_such_ladder",
        "bots_only",
        "wrong_game",
        "bad_field",
    }
)


class BotRunner:
    def __init__(
        self,
        url: str,
        agent: str,
        *,
        name: str | None = None,
        token: str | None = None,
        games: list[str] | None = None,
        params: dict[str, Any] | None = None,
        registry: Registry | None = None,
        ladders: list[str] | None = None,
        max_games: int | None = None,
        tournaments: list[str] | None = None,
        answer_seeks: bool = False,
        terms: Accepts | None = None,
        greet: str | None = None,
        make: MakeAgent | None = None,
    ) -> None:
        """`make`: the agents come from it, `agent` being only the name the hello declares, and
        the games it plays are `games` alone."""
        if make is None and agent not in all_agents():
            raise ValueError(f"unknown agent {agent!r} (known: {', '.join(sorted(all_agents()))})")
        if not token:
            raise ValueError(
                "a bot logs in with a bot account: create one with `partida db create-bot NAME` and pass its "
                "token (--token or $PARTIDA_BOT_TOKEN)"
            )
        self.registry = registry or default_registry()
        unknown = [g for g in games or [] if g not in self.registry]
        if unknown:  # the server would never seat a bot for it: it waited for nothing, saying nothing
            raise ValueError(f"unknown game {unknown[0]!r} (known: {', '.join(self.registry.names())})")
        self.url = url
        self.agent = agent
        self.name = name or agent
        self.token = token
        # Declare what this process can play (protocol/accepts.py): the games its agent's
        # `supports()` allows here, perfect-information ones only for a search that needs the
        # whole state; a bot seated in a game it cannot play never moves (the game hung for good).
        own = agent_accepts(agent, self.registry) if make is None else Accepts()
        assert own is not None  # a built-in agent, checked above
        self.make = make
        narrowed = own if games is None else own.narrowed(Accepts.from_hello(games))
        self.accepts = narrowed.narrowed(terms or Accepts())
        self.games = sorted(self.accepts.games or ())
        if not self.games:
            raise ValueError(f"agent {agent!r} plays none of the games asked for (it plays {own.describe()})")
        self.params = params or {}
        self.ladders = ladders or []
        self.tournaments = tournaments or []
        self.answer_seeks = answer_seeks  # take the lobby's seeks that allow bots, of games it plays
        self.max_games = max_games
        self.greet = greet  # said in each game's players' channel as the bot sits down (lichess-bot's greeting)
        self.greeted: set[str] = set()  # rooms greeted: a seat taken back after a reconnect is not greeted again
        self.client: Client | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.rng = random.Random()
        self.playing: set[str] = set()  # rooms with a play loop (one loop serves all our seats there)
        self.held: dict[str, dict[int, str]] = {}  # room -> seat -> token, to take seats back
        self.thinking = FairThinking()  # no more searches at once than cores, shared in turn by its parties

    async def run(self, reconnect: bool = True, max_delay: float = 10.0) -> None:
        """Connect, play, and when the connection drops connect again (the server may restart),
        waiting longer after each failed attempt, up to `max_delay` seconds."""
        delay = 0.5
        told = 0.0  # the server's `retry_after` on the last refusal: never try sooner
        connected_before = False
        # Several URLs (comma-separated): nodes of one deployment, tried in turn, so that a bot
        # whose node died connects to another one (which sends it on to its games' new nodes).
        urls = [u.strip() for u in self.url.split(",") if u.strip()] or [self.url]
        turn = 0
        while True:
            url = urls[turn % len(urls)]
            try:
                try:
                    self.client = await Client.connect(
                        url, name=self.name, token=self.token, agent=self.agent, accepts=self.accepts, nodes=urls
                    )
                except ConnectionLost:
                    self.client = None
                    turn += 1  # that node is unreachable: the next one, next time
                    raise
                delay = 0.5
                log.info("%s connected to %s as %s", self.agent, url, self.client.welcome["you"]["name"])
                for ladder in self.ladders:
                    await self.client.ladder_join(ladder, self.max_games)
                    log.info("%s joined ladder %s", self.agent, ladder)
                if self.tournaments:
                    entering = asyncio.get_running_loop().create_task(self._enter_tournaments(self.client))
                    self.tasks.add(entering)
                    entering.add_done_callback(self.tasks.discard)
                if self.answer_seeks:
                    answering = asyncio.get_running_loop().create_task(self._answer_seeks(self.client))
                    self.tasks.add(answering)
                    answering.add_done_callback(self.tasks.discard)
                connected_before = True
                await self._serve(self.client)
            except ServerError as exc:
                if self.client is not None:
                    await self.client.close()
                # after a reconnect the server may not have noticed the old connection drop yet
                if exc.code in FATAL or (exc.code == "ladder_joined_elsewhere" and not connected_before):
                    raise
                log.warning("%s: %s", self.agent, exc)
                told = exc.retry_after or 0.0
            finally:
                await self._stop_playing()
            if not reconnect:
                return
            pause, told = max(delay * (0.75 + self.rng.random() / 2), told), 0.0
            log.info("%s: connection lost; connecting again in %.1f s", self.agent, pause)
            await asyncio.sleep(pause)
            delay = min(delay * 2, max_delay)

    async def _stop_playing(self) -> None:
        """The play loops of a lost connection end with it; new ones start after reconnecting."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.playing.clear()

    async def _take_seats_back(self, client: Client) -> None:
        """Rejoin, with their tokens, the seats held before the connection was lost (a bot account
        is put back by the server and gets `seated` notices instead)."""
        for room, seats in list(self.held.items()):
            for seat, token in list(seats.items()):
                try:
                    joined = await client.join(room, seat=seat, token=token)
                except ConnectionLost:
                    raise
                except ServerError as exc:
                    log.info("%s: seat %d in room %s is gone (%s)", self.agent, seat, room, exc.code)
                    seats.pop(seat, None)
                    continue
                notice = {"type": "seated", "room": room, "summary": joined["summary"], "seat": seat, "token": token}
                client.seated.put_nowait(notice)
            if not seats:
                self.held.pop(room, None)

    async def _serve(self, client: Client) -> None:
        closed = asyncio.create_task(client.closed.wait())
        news = asyncio.create_task(self._log_ladder_news(client))
        try:
            if self.token is None:
                await self._take_seats_back(client)
            while True:
                seated = asyncio.create_task(client.seated.get())
                done, _ = await asyncio.wait({seated, closed}, return_when=asyncio.FIRST_COMPLETED)
                if closed in done:
                    seated.cancel()
                    return
                notice = seated.result()
                if notice.get("token"):
                    self.held.setdefault(notice["room"], {})[notice["seat"]] = notice["token"]
                if notice["room"] in self.playing:
                    continue
                self.playing.add(notice["room"])
                task = asyncio.create_task(self._play_room(client, notice))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        finally:
            closed.cancel()
            news.cancel()

    async def _enter_tournaments(self, client: Client) -> None:
        """Enter each tournament named, waiting for those not created yet (a server started with
        `--tournament-bots` starts its bots before anyone creates the tournament). An entry
        outlives the connection: entering again after a reconnect changes nothing."""
        waiting = list(self.tournaments)
        while waiting and not client.closed.is_set():
            pause = TOURNAMENT_RETRY
            for tournament in list(waiting):
                try:
                    await client.tournament_join(tournament)
                    log.info("%s entered tournament %s", self.agent, tournament)
                    waiting.remove(tournament)
                except ConnectionLost:
                    return
                except ServerError as refused:
                    if refused.retry_after is not None:  # a rate limit: again once it says
                        pause = max(pause, refused.retry_after)
                        break
                    if refused.code != "no_such_tournament":
                        log.warning("%s: tournament %s: %s", self.agent, tournament, refused)
                        waiting.remove(tournament)
            if waiting:
                await asyncio.sleep(pause)

    async def _answer_seeks(self, client: Client) -> None:
        """Take every seek that allows bots, of a game this bot plays, as it appears in the
        lobby; the server seats the bot (`seated`) and `_serve` plays the game. A seek the bot
        could not take for being busy is tried again when the lobby is listed again, every
        `SEEK_RELIST` seconds; one that refused it is not."""
        me = client.welcome["you"]["name"]
        refused: set[int] = set()
        seeks = await client.list_seeks(watch=True)
        while not client.closed.is_set():
            for seek in seeks:
                if seek["id"] in refused or not seek["allow_bots"] or seek["game"] not in self.games:
                    continue
                if seek["by"]["name"] == me:
                    continue
                try:
                    await client.seek_take(seek["id"])
                    log.info("%s took seek %d (%s, from %s)", self.agent, seek["id"], seek["game"], seek["by"]["name"])
                except ServerError as exc:
                    if exc.code != "rate_limited":  # taken by another, gone, or not for this bot
                        refused.add(seek["id"])
                    log.info("%s: seek %d: %s", self.agent, seek["id"], exc.message)
                    if exc.retry_after is not None:  # the next take waits as long as the server said
                        await asyncio.sleep(exc.retry_after)
            try:
                async with asyncio.timeout(SEEK_RELIST):  # not wait_for: see answer_within
                    news = await client.lobby_events.get()
                seeks = news.get("added", []) if news["type"] == "lobby_seeks" else []
                if news["type"] == "lobby_seeks" and news.get("resync"):  # more news than a push carries
                    seeks = await client.list_seeks()
            except TimeoutError:
                seeks = await client.list_seeks()

    async def _log_ladder_news(self, client: Client) -> None:
        me = client.welcome["you"]["name"]
        while True:
            event = await client.ladder_events.get()
            if event["type"] == "rating":
                for change in event["ratings"]:
                    if change["name"] == me:
                        log.info(
                            "%s: ladder %s rated game %s: place %d, rating %.2f (mu %.2f, sigma %.2f)",
                            me,
                            event["ladder"],
                            event["game_id"],
                            change["rank"],
                            change["rating"],
                            change["mu"],
                            change["sigma"],
                        )

    async def _play_room(self, client: Client, notice: dict[str, Any]) -> None:
        room = notice["room"]
        game = self.registry.get(notice["summary"]["game"])
        agents: dict[int, Agent] = {}
        # Who this room's thinking is for: the server's opaque `party` (one address's guests, one
        # account), else the other seats' names; one party's many games wait for each other
        # rather than everyone else waiting for them.
        me = client.welcome["you"]["name"]
        names = tuple(sorted({s.get("name") or "" for s in notice["summary"]["seats"]} - {me}))
        party = notice.get("party") or names or (room,)

        def agent_for(seat: int) -> Agent:
            if seat not in agents:
                if self.make is not None:
                    agents[seat] = self.make(game, seat, notice)
                else:
                    agents[seat] = make_agent(self.agent, game, seed=self.rng.getrandbits(32), **self.params)
                agents[seat].new_game(game, seat)
            return agents[seat]

        rejected = [0, -1]  # answers refused for the decision at seq [1]: past two, answer at random

        def on_error(exc: ServerError) -> None:
            rejected[0] += 1
            log.warning("%s in %s: %s", self.agent, room, exc)

        configured: dict[int, float] = {}
        resigned: set[int] = set()  # seats whose agent forfeited: the server's bot plays them now

        async def decide(update: dict[str, Any], prompt: Prompt) -> Any:
            if rejected[1] != update["seq"]:
                rejected[:] = [0, update["seq"]]
            if rejected[0] >= 2:
                return prompt.random_answer(self.rng)
            agent = agent_for(update["seat"])
            turn = Turn(game, update["seat"], prompt, update["view"], update.get("clock"))
            budget = move_budget(update.get("clock"), update["seat"])
            if budget is None:
                return await self.thinking.run(party, agent.act, turn)
            seconds = getattr(agent, "seconds", None)
            if isinstance(seconds, int | float) and seconds > 0:  # a search with a time budget
                configured.setdefault(update["seat"], float(seconds))
                agent.seconds = min(configured[update["seat"]], budget)  # type: ignore[attr-defined]
            left = float(update["clock"]["remaining"][update["seat"]])
            thinking = asyncio.ensure_future(self.thinking.run(party, agent.act, turn))
            try:
                return await answer_within(thinking, max(0.01, left - LATENCY))
            except TimeoutError:
                log.warning("%s in %s: no answer within the clock; answering at random", self.agent, room)
                thinking.cancel()  # still queued: it never starts; searching: its thread keeps its core
                # its search may still run: the next decision gets a new agent
                _close(agents.pop(update["seat"], None))
                return prompt.random_answer(self.rng)

        async def decide_or_resign(update: dict[str, Any], prompt: Prompt) -> Any:
            if update["seat"] in resigned:
                return prompt.random_answer(self.rng)
            try:
                return await decide(update, prompt)
            except Forfeit as exc:  # an engine that failed: its seat resigns, saying why
                resigned.add(update["seat"])
                _close(agents.pop(update["seat"], None))
                log.warning("%s in %s: seat %d resigns: %s", self.agent, room, update["seat"], exc.note)
                try:
                    await client.resign(room, update["seat"], note=exc.note)
                except ServerError as refused:
                    log.warning("%s in %s: the resignation was refused: %s", self.agent, room, refused)
                return prompt.random_answer(self.rng)  # refused as over, or raced by the server's bot

        if self.greet and room not in self.greeted:
            self.greeted.add(room)
            try:
                await client.chat(self.greet, room=room)
            except ServerError as refused:  # a greeting refused (too long, silenced) still plays the game
                log.warning("%s in %s: the greeting was refused: %s", self.agent, room, refused)
        try:
            final = await client.play(room, decide_or_resign, on_error=on_error)
            log.info("%s: game in room %s over: %s", self.agent, room, final.get("result"))
            self.held.pop(room, None)
            self.greeted.discard(room)
        except ConnectionLost:
            pass
        except Exception:
            log.exception("%s: failed in room %s", self.agent, room)
        finally:
            self.playing.discard(room)
            for agent in agents.values():
                _close(agent)


async def answer_within(thinking: asyncio.Future[Any], seconds: float) -> Any:
    """The search's answer, or TimeoutError after `seconds`; the search itself goes on (it is
    shielded: its thread keeps its core until it ends). A cancellation that arrives just as the
    answer does is kept, not traded for the answer: Python 3.11's `wait_for` would return the
    answer and drop it, and a runner stopped mid-game would then wait for its next decision
    forever instead of stopping."""
    async with asyncio.timeout(seconds):
        return await asyncio.shield(thinking)


def _close(agent: Agent | None) -> None:
    """An agent's game is over for it: an engine bridge's process ends, in a thread of its own
    (a polite engine gets a moment to leave)."""
    if agent is not None and type(agent).close is not Agent.close:
        threading.Thread(target=agent.close, daemon=True).start()
