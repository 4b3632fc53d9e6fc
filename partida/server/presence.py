"""Reaching an account connected to another node: for challenges and `add_bot` across nodes.

A room is played on one node, and a bot is seated over its own connection, so the room's node
must have that connection. Each node writes which accounts (people and bots) are connected to
it (`node_accounts`, `partida.storage.nodes`) and listens on its own topic of the bus,
`partida/nodes/{node}/...`, for what other nodes ask of it:

- `summon` {account_id, url}: a node wants this bot seated in one of its rooms (`add_bot`, a
  room's `bots`, a challenge to the bot). This node pushes `summon` with that node's URL to the
  bot's connections; the bot opens a connection there with the same hello (the SDK does it by
  itself), and the asking node, which waits for that hello, seats it as any bot of its own.
- `challenge` {challenge, account_id, url}: a person connected here is challenged by someone
  on the node at `url`. The challenge stays on the challenger's node, which keeps its clock and
  opens the room; this node pushes `challenge` to the person's connections as a challenge of its
  own. An `accept` is answered `moved` to the challenger's node (the SDK follows it and accepts
  there, so the room and the seat token never travel between nodes); a `decline` is carried back.
- `declined` {challenge, by, reason}: the challenged person declined (or was gone); the
  challenger is told `challenge_declined`.
- `news` {accounts, message, url}: a tournament's `tournament_started`, `tournament_round` or
  `tournament_over` for its entrants connected here (public to them; nothing else is passed on).
- `call` {type: tournament_game, account_id, fields, url}: a tournament table opened on the
  node at `url` keeps a seat for a person connected here; this node pushes `tournament_game`
  with that `url` (never a seat token: the seat is kept for the account, which takes it with
  `join` there, the SDK and the browser following `moved`).

Nothing secret crosses the bus: no seat token, no room code; who challenges whom, and which
account is connected where, do. What names a URL (`summon`, `challenge`) is acted on only if the
URL is a live node's in the directory (in PostgreSQL): anyone who can publish
on the broker could otherwise send a bot, with its token, or a person accepting a challenge, to
a server of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from partida.bots.declaration import bot_accepts
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol.accepts import Accepts, allows
from partida.server import challenges
from partida.server.account_presence import RemoteChallenge

if TYPE_CHECKING:
    from partida.games.base import Game
    from partida.games.registry import Registry
    from partida.server.challenges import Challenge, Challenges
    from partida.server.events import EventBus
    from partida.server.live_nodes import LiveNodes
    from partida.server.publisher import Publisher
    from partida.server.session import Session
    from partida.storage.nodes import NodeDirectory
    from partida.storage.nodes import Presence as Where

log = logging.getLogger(__name__)

SUMMON_WAIT = 10.0  # seconds a node waits for a summoned bot to connect
CALLS = ("tournament_game",)  # pushes one node asks another to pass on to a person connected there
NEWS = ("tournament_started", "tournament_round", "tournament_over")  # passed on to entrants connected there


def plays(agent: str | None, games: list[str] | None, game: Game, registry: Registry) -> str | None:
    """Why a bot of another node may not play `game`, None if it may: the games the directory
    keeps of its hello, narrowed by its built-in agent's declaration (protocol/accepts.py). The
    rest of its declaration is held to once it has come (services/bots.py)."""
    return allows(bot_accepts(Accepts.from_hello(games), agent, registry), game)


class Presence:
    """The presence of a node among several (`server/account_presence.py`). It is built with the
    server's parts; the directory and the bus exist once the database and the broker are open,
    so they come with `start`, which the node calls once it has entered the directory."""

    def __init__(
        self,
        node: str,
        public_url: str,
        live: LiveNodes,
        registry: Registry,
        publisher: Publisher,
        challenges: Challenges,
    ) -> None:
        self.node = node  # this node's name: its rows and its topic on the broker
        self.public_url = public_url  # where a summoned bot or a challenged person is sent
        self.live = live  # the live nodes' URLs: a message naming another URL is ignored
        self.registry = registry
        self.publisher = publisher
        self.challenges = challenges  # this node's open challenges, which a decline ends
        self.directory: NodeDirectory | None = None  # set by `start`
        self.relaying = False  # whether a broker carries messages between nodes (`start`)
        self.accounts: defaultdict[int, set[Session]] = defaultdict(set)  # account id -> connections here
        self.remote: dict[str, RemoteChallenge] = {}  # challenge id -> where it lives
        self._arrivals: defaultdict[int, list[asyncio.Future[Session]]] = defaultdict(list)
        self._writing = asyncio.Lock()  # rows written in the order connections came and went
        self._tasks: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None
        self.forged = 0  # messages ignored for naming no live node of the directory
        self._urls_read = 0.0  # when the live nodes' URLs were last read for `_from_a_node`

    @property
    def node_urls(self) -> list[str]:
        return self.live.urls

    async def start(self, directory: NodeDirectory, broker: EventBus | None) -> None:
        """Forget the accounts of this node's last life, and listen to the other nodes (on
        `broker`, the bus that reaches them; None: nothing does, and nobody elsewhere is found)."""
        self.directory = directory
        self.relaying = broker is not None
        await directory.left(self.node)
        if broker is not None:
            subscription = broker.subscribe(f"partida/nodes/{self.node}/#")
            self._listener = asyncio.get_running_loop().create_task(self._listen(subscription))

    async def stop(self) -> None:
        for task in [*self._tasks, *([self._listener] if self._listener else [])]:
            task.cancel()
        await asyncio.gather(*self._tasks, *([self._listener] if self._listener else []), return_exceptions=True)
        if self.directory is None:  # never started
            return
        with contextlib.suppress(Exception):
            await self.directory.left(self.node)

    # Who is connected here.

    async def arrived(self, session: Session) -> None:
        """An account said hello here: written before its `welcome`, so a challenge from another
        node finds it from then on; a node waiting for this bot gets it."""
        identity = session.identity
        assert identity is not None and identity.account_id is not None
        self.accounts[identity.account_id].add(session)
        if identity.kind == "bot":
            for waiter in self._arrivals.pop(identity.account_id, []):
                if not waiter.done():
                    waiter.set_result(session)
        assert self.directory is not None
        try:
            async with self._writing:
                await self.directory.arrived(
                    self.node, identity.account_id, identity.name, identity.kind, identity.agent, identity.games
                )
        except Exception as exc:
            log.warning("node %s: could not note that %s is connected: %s", self.node, identity.name, exc)

    def departed(self, session: Session) -> None:
        identity = session.identity
        if identity is None or identity.account_id is None:
            return
        here = self.accounts.get(identity.account_id)
        if here is None:
            return
        here.discard(session)
        if not here:
            del self.accounts[identity.account_id]
            self._spawn(self._forget(identity.account_id))

    async def _forget(self, account_id: int) -> None:
        assert self.directory is not None
        async with self._writing:
            if account_id not in self.accounts:  # not back meanwhile
                await self.directory.left(self.node, [account_id])

    async def elsewhere(self, name: str) -> list[Where]:
        """Where else the account `name` is connected (live nodes only), if a message can reach it."""
        if not self.relaying:
            return []
        assert self.directory is not None
        return await self.directory.connected(name, self.node)

    async def connected_among(self, account_ids: list[int]) -> set[int]:
        """Which of `account_ids` are connected to other live nodes: an arena's free entrants
        elsewhere, whom it summons (bots) or calls (people) to its tables."""
        if not self.relaying or not account_ids:
            return set()
        assert self.directory is not None
        return await self.directory.connected_among(account_ids, self.node)

    async def tell(self, account_ids: list[int], message: dict[str, Any]) -> None:
        """Push `message` (a tournament's news, public to its entrants) to those of `account_ids`
        connected to other nodes: one broker message per node."""
        if not self.relaying or not account_ids or message.get("type") not in NEWS:
            return
        assert self.directory is not None
        by_node: defaultdict[str, list[int]] = defaultdict(list)
        for node, account in await self.directory.nodes_of(account_ids, self.node):
            by_node[node].append(account)
        for node, accounts in sorted(by_node.items()):
            payload = {"type": "news", "accounts": accounts, "message": message}
            await self.publisher.publish(f"nodes/{node}/news", {**payload, "url": self.public_url, "node": self.node})

    # Bots of other nodes.

    async def summon(self, name: str, game: str) -> Session | None:
        """The bot account `name` connected to another node, brought here to be seated: None if
        no other node has it; `no_bot_available` if it does not play `game` or does not come."""
        bots = [w for w in await self.elsewhere(name) if w.kind == "bot"]
        if not bots:
            return None
        where = bots[0]
        registry = self.registry
        reason = plays(where.agent, where.games, registry.get(game), registry) if game in registry else None
        if reason is not None:
            raise ProtocolError(ErrorCode.BOT_DECLINES, f"the bot {where.name} {reason}")
        waiter: asyncio.Future[Session] = asyncio.get_running_loop().create_future()
        self._arrivals[where.account_id].append(waiter)
        payload = {
            "type": "summon",
            "account_id": where.account_id,
            "url": self.public_url,
            "node": self.node,
        }
        await self.publisher.publish(f"nodes/{where.node}/summon", payload)
        try:
            async with asyncio.timeout(SUMMON_WAIT):
                return await waiter
        except TimeoutError:
            raise ProtocolError(
                ErrorCode.NO_BOT_AVAILABLE, f"the bot {where.name} (on node {where.node}) did not come; try again"
            ) from None
        finally:
            with contextlib.suppress(ValueError):
                self._arrivals[where.account_id].remove(waiter)
            if not self._arrivals.get(where.account_id):
                self._arrivals.pop(where.account_id, None)

    # Tournament calls of people on other nodes.

    async def call(self, name: str, kind: str, fields: dict[str, Any]) -> bool:
        """A person connected only to other nodes is pushed `kind` there, with this node's URL:
        a tournament table opened here with a seat kept for the account, which it takes with
        `join` (no seat token crosses the broker)."""
        if kind not in CALLS:
            raise ValueError(f"{kind} is not a call")
        people = [w for w in await self.elsewhere(name) if w.kind != "bot"]
        for where in people:
            payload = {
                "type": kind,
                "account_id": where.account_id,
                "fields": fields,
                "url": self.public_url,
                "node": self.node,
            }
            await self.publisher.publish(f"nodes/{where.node}/call", payload)
        return bool(people)

    # Challenges of people on other nodes.

    async def forward(self, challenge: Challenge, elsewhere: list[Where]) -> None:
        """Send a challenge (kept on this node) to the nodes where the challenged person is."""
        payload = {
            "type": "challenge",
            "challenge": challenge.to_data(),
            "account_id": challenge.account_id,
            "url": self.public_url,
            "node": self.node,
        }
        challenge.nodes = {w.node for w in elsewhere if w.account_id == challenge.account_id}
        for node in sorted(challenge.nodes):
            await self.publisher.publish(f"nodes/{node}/challenge", payload)

    def holds(self, challenge_id: str, session: Session) -> RemoteChallenge | None:
        """The challenge of another node pushed to this connection's account, if it is one."""
        self._expire()
        remote = self.remote.get(challenge_id)
        identity = session.identity
        if remote is None or identity is None or identity.account_id != remote.account_id:
            return None
        return remote

    async def decline(self, session: Session, request_id: Any, challenge_id: str, remote: RemoteChallenge) -> None:
        """Carry a decline back to the challenger's node."""
        assert session.identity is not None
        self.remote.pop(challenge_id, None)
        by = session.identity.name
        payload = {
            "type": "declined",
            "challenge": challenge_id,
            "by": by,
            "reason": "declined",
            "node": self.node,
        }
        await self.publisher.publish(f"nodes/{remote.node}/declined", payload)
        session.send(server_message("challenge_declined", request_id, challenge=challenge_id, by=by))

    def _expire(self) -> None:
        now = time.monotonic()
        for challenge_id in [i for i, r in self.remote.items() if now - r.created > challenges.CHALLENGE_TTL]:
            del self.remote[challenge_id]

    # Messages from other nodes.

    async def _listen(self, subscription: Any) -> None:
        async with subscription:
            async for event in subscription:
                try:
                    await self._on_message(event.payload)
                except Exception:
                    log.exception("node %s: a message from another node failed", self.node)

    async def _on_message(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        account_id = payload.get("account_id")
        here = [s for s in self.accounts.get(account_id, ()) if not s.closed] if isinstance(account_id, int) else []
        if kind in ("summon", "challenge", "news", *CALLS) and not await self._from_a_node(payload):
            return
        if kind == "news":
            message = payload.get("message")
            accounts = payload.get("accounts")
            if isinstance(message, dict) and message.get("type") in NEWS and isinstance(accounts, list):
                for account in accounts:
                    for session in self.accounts.get(account, ()) if isinstance(account, int) else ():
                        if not session.closed:
                            session.send(message)
        elif kind in CALLS:
            fields = payload.get("fields")
            if isinstance(fields, dict):
                message = server_message(kind, **{k: v for k, v in fields.items() if k != "token"}, url=payload["url"])
                for session in here:
                    session.send(message)
        elif kind == "summon":
            for session in here:
                if session.identity is not None and session.identity.kind == "bot":
                    session.send(server_message("summon", url=payload["url"]))
        elif kind == "challenge":
            data = payload.get("challenge")
            if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(account_id, int):
                return
            node, url = str(payload.get("node")), str(payload.get("url"))
            if not here:  # gone meanwhile
                gone = {"type": "declined", "challenge": data["id"], "by": data.get("to"), "reason": "not connected"}
                await self.publisher.publish(f"nodes/{node}/declined", {**gone, "node": self.node})
                return
            self._expire()
            self.remote[data["id"]] = RemoteChallenge(node, url, account_id)
            for session in here:
                session.send(server_message("challenge", challenge=data))
        elif kind == "declined":
            challenge_id = str(payload.get("challenge"))
            open_ = self.challenges.open.get(challenge_id)
            if open_ is not None and payload.get("reason") == "not connected":
                open_.nodes.discard(str(payload.get("node")))
                if open_.nodes:
                    return  # told on another node, where the person still is
            challenge = self.challenges.drop(challenge_id)
            if challenge is not None and not challenge.challenger.closed:
                message = server_message(
                    "challenge_declined", challenge=challenge.id, by=payload.get("by"), reason=payload.get("reason")
                )
                challenge.challenger.send(message)

    async def _from_a_node(self, payload: dict[str, Any]) -> bool:
        """Whether the `url` a message names is a live node's in the directory (the node's
        list of them, read again at most once a second when a URL is not in it: a node that has
        just started). A message that fails is ignored, and counted in the log: the first, then
        every hundredth (whoever forges them could otherwise fill the log too)."""
        node, url = payload.get("node"), payload.get("url")
        if isinstance(node, str) and isinstance(url, str):
            now = time.monotonic()
            if url not in self.live.urls and now - self._urls_read > 1.0:
                assert self.directory is not None
                self._urls_read = now
                self.live.urls = await self.directory.live_urls()
            if url in self.live.urls:
                return True
        self.forged += 1
        if self.forged == 1 or self.forged % 100 == 0:
            log.warning(
                "node %s: ignored %d message(s) from the broker naming no live node (the last: %s from node %r, "
                "url %r); is the broker open to others than the nodes?",
                self.node,
                self.forged,
                payload.get("type"),
                node,
                url,
            )
        return False

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
