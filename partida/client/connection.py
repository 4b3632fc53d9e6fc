"""The async client SDK: connect, say hello, call the lobby, and play.

Requests carry an id and wait for the reply with that id; everything the server pushes (room
updates, `seated` notices, game over) is routed to per-room queues, so a program can play many
rooms over one connection (the bot runner does).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from partida.games.prompts import Prompt, prompt_from_data
from partida.protocol import PROTOCOL_VERSION, Encoding, ProtocolError, decode, encode
from partida.protocol.accepts import Accepts

Decide = Callable[[dict[str, Any], Prompt], Any | Awaitable[Any]]
T = TypeVar("T")


class ServerError(Exception):
    """An `error` message from the server: `code` is stable, `message` is for people.
    `retry_after` is the seconds after which the same request would be let through, when
    waiting alone cures the refusal (a rate limit); otherwise None."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> ServerError:
        wait = reply.get("retry_after")
        ok = isinstance(wait, int | float) and not isinstance(wait, bool) and 0 <= wait < float("inf")
        return cls(reply.get("code", "error"), reply.get("message", ""), float(wait) if ok else None)


class ConnectionLost(ServerError):
    def __init__(self, reason: str = "the connection to the server was lost", retry_after: float | None = None) -> None:
        super().__init__("connection_lost", reason, retry_after)


async def patiently(call: Callable[[], Awaitable[T]], tries: int = 5, longest: float = 60.0) -> T:
    """`await call()`; after a refusal that says when to retry (`retry_after`), wait that long
    (at most `longest` seconds) and call again, up to `tries` calls in all, instead of hammering
    a server that said it is not ready (a lost connection too, when the server refused a new one
    for now with a `Retry-After`). Any other error, and the last refusal, is raised."""
    for _ in range(tries - 1):
        try:
            return await call()
        except ServerError as refused:
            if refused.retry_after is None:
                raise
            await asyncio.sleep(min(refused.retry_after, longest))
    return await call()


MAX_MOVES = 4  # `moved` answers followed for one request before giving up (nodes disagreeing)


def _listed_nodes(welcome: dict[str, Any]) -> list[str]:
    """The node URLs a `welcome` lists (a node of several lists the live ones)."""
    nodes = welcome.get("nodes")
    return [url for url in nodes if isinstance(url, str)] if isinstance(nodes, list) else []


class _Link:
    """One websocket to one server node. The first is the client's own; the others are opened
    when a node answers `moved` (the room lives on another node of the deployment)."""

    def __init__(self, url: str, websocket: ClientConnection) -> None:
        self.url = url
        self.websocket = websocket
        self.reader: asyncio.Task[None] | None = None
        self.requests: set[int] = set()  # ids of requests sent here and not yet answered
        self.closed = asyncio.Event()


def _host(url: str) -> str | None:
    """The host a websocket URL names (lower case), or None for a URL that is not one."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("ws", "wss") and parts.hostname else None


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/").lower() == b.rstrip("/").lower()


async def _open(url: str, timeout: float) -> ClientConnection:
    try:
        return await asyncio.wait_for(connect(url, max_size=1 << 22, open_timeout=timeout, compression=None), timeout)
    except (TimeoutError, OSError) as exc:
        raise ConnectionLost(f"cannot reach {url}: {exc or 'timed out'}") from None
    except (InvalidURI, ValueError):  # not ws:// or wss://, or a port that is not a number
        raise ConnectionLost(f"{url!r} is not a websocket URL: write ws://HOST:PORT") from None
    except InvalidStatus as exc:
        if exc.response.status_code == 429:  # too many new connections from this address: it says when
            wait = exc.response.headers.get("Retry-After", "")
            seconds = float(wait) if wait.isdigit() else None
            raise ConnectionLost(f"{url} refused a new connection for now: {exc}", seconds) from None
        raise ConnectionLost(f"{url} did not answer as a websocket server: {exc}") from None
    except InvalidHandshake as exc:  # something else listens there
        raise ConnectionLost(f"{url} did not answer as a websocket server: {exc}") from None


class Client:
    """A connection to a Partida server. With several server nodes, a request about a room that
    lives on another node is answered `moved` with that node's URL; the client then opens a
    connection there (saying the same hello), sends the request again, and sends everything about
    that room there from then on, so the program never notices. Pushed messages from every node
    arrive in the same per-room queues."""

    def __init__(self, websocket: ClientConnection, encoding: Encoding, url: str = "") -> None:
        self.websocket = websocket
        self.encoding = encoding
        self.url = url
        self.welcome: dict[str, Any] = {}
        self._hello: dict[str, Any] = {}
        self._timeout = 10.0
        self.move_patience = 60.0  # seconds to keep asking where an unreachable node's room went
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._rooms: defaultdict[str, asyncio.Queue[dict[str, Any]]] = defaultdict(asyncio.Queue)
        # updates received but not yet read, per (room, seat): one connection may hold several seats
        self._queued_updates: defaultdict[tuple[str, int | None], int] = defaultdict(int)
        self.seated: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # pushed `challenge` (to you), `challenge_accepted` and `challenge_declined` (of yours)
        self.challenges: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.errors: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ladder_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(1000)
        # Tournament news: `tournament_game` (a room, seat and token: play it), `tournament_started`,
        # `tournament_round`, `tournament_over` (with the final standings).
        self.tournament_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(1000)
        # `lobby` pushes once `list_rooms` watched, `lobby_seeks` once `list_seeks` watched
        self.lobby_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(1000)
        self.seek_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # `seek_paired`: a seek of yours made a room
        self.closed = asyncio.Event()
        self._home = _Link(url, websocket)
        self._links: list[_Link] = [self._home]  # the home link first
        self._routes: dict[str, _Link] = {}  # room code -> the link of the node that has it
        self._opening: dict[str, asyncio.Future[_Link]] = {}
        # What this client holds in each room, to take it back on the node a room moves to:
        # seat -> seat token, and the rooms it watches.
        self._seats: defaultdict[str, dict[int, str]] = defaultdict(dict)
        self._watching: set[str] = set()
        self._lost: set[str] = set()  # rooms whose node went away since this client was let in
        # Ladders joined (their `ladder_join` fields) and the link each membership lives on: the
        # scheduler's node, which may not be this client's own.
        self._ladders: dict[str, dict[str, Any]] = {}
        self._ladder_routes: dict[str, _Link] = {}
        self._background: set[asyncio.Task[None]] = set()
        # The hosts of this client's deployment: a `summon` or `moved` is followed only there, since
        # the new connection says the same hello (password, bot token). The hosts of the URLs it
        # was given, and of the nodes every node it reached lists in its `welcome`.
        self._hosts: set[str] = set()
        self.trust(url)
        self._home.reader = asyncio.get_running_loop().create_task(self._read(self._home))
        self._reader = self._home.reader

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str | None = None,
        password: str | None = None,
        token: str | None = None,
        agent: str | None = None,
        games: list[str] | None = None,
        accepts: Accepts | None = None,
        encoding: Encoding = Encoding.MSGPACK,
        timeout: float = 10.0,
        nodes: Iterable[str] = (),
    ) -> Client:
        """`nodes`: URLs of the deployment's other nodes, trusted with `summon` and `moved` as
        `url` is (see `trust`). `accepts`: a bot's declaration of what it plays (its `games`
        stand for `games`)."""
        client = cls(await _open(url, timeout), encoding, url)
        client._timeout = timeout
        client.trust(*nodes)
        hello: dict[str, Any] = {"version": PROTOCOL_VERSION}
        for key, value in (
            ("name", name),
            ("password", password),
            ("token", token),
            ("agent", agent),
            ("games", games),
        ):
            if value is not None:
                hello[key] = value
        if accepts is not None:
            hello.update(accepts.hello_fields())
        client._hello = hello
        try:
            client.welcome = await client.request("hello", **hello)
        except ServerError:
            await client.close()
            raise
        client.trust(*_listed_nodes(client.welcome))
        if isinstance(client.welcome.get("resume"), str):
            # Connections to come (another node, a reconnect) offer the session first: the
            # server then needs no password check; the password stays for a server that
            # restarted since, or another node, which do not know the session.
            client._hello = {**hello, "resume": client.welcome["resume"]}
        return client

    def trust(self, *urls: str) -> None:
        """Count the hosts of `urls` as this client's deployment: `summon` and `moved` lead only
        to them."""
        self._hosts.update(host for host in map(_host, urls) if host is not None)

    def trusts(self, url: str) -> bool:
        """Whether `url` is a websocket URL on a host of this client's deployment."""
        return _host(url) in self._hosts

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        for link in reversed(self._links):
            await link.websocket.close()
            if link.reader is not None:
                link.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await link.reader

    # Low level.

    async def send(self, message: dict[str, Any]) -> None:
        """Send a message to the node that has the room it names (this client's own otherwise)."""
        await self._send(self._link_for(message.get("room")), message)

    async def _send(self, link: _Link, message: dict[str, Any]) -> None:
        try:
            await link.websocket.send(encode(message, self.encoding))
        except ConnectionClosed:
            raise ConnectionLost() from None

    def _link_for(self, room: Any) -> _Link:
        if isinstance(room, str):
            link = self._routes.get(room.strip().upper())
            if link is not None and not link.closed.is_set():
                return link
        return self._home

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request and wait for its reply; an `error` reply raises `ServerError`. A
        `moved` answer is followed: the request goes again to the node that has the room. If that
        node cannot be reached (it has just died, and its lease has not run out yet), the request
        is asked again of this client's own node, with growing pauses, for up to
        `move_patience` seconds: once the lease runs out, a live node takes the room over."""
        room = fields.get("room")
        ladder = fields.get("ladder") if kind in ("ladder_join", "ladder_leave") else None
        # A challenge pushed by another node is accepted on the challenger's node.
        challenge = fields.get("challenge") if kind in ("accept", "decline") else None
        there: _Link | None = None
        if isinstance(room, str) and kind not in ("join", "watch") and room.strip().upper() in self._lost:
            await self.rejoin(room.strip().upper())  # its node went away: take the seats back first
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.move_patience
        moves = pause = 0.0
        while True:
            if there is not None:
                link = there
            else:
                link = self._link_for(room) if ladder is None else self._ladder_link(ladder)
            reply = await self._exchange(link, kind, fields)
            url = reply.get("url")
            if reply["type"] != "error" or reply.get("code") != "moved":
                break
            if not isinstance(url, str) or moves >= MAX_MOVES or not isinstance(room or ladder or challenge, str):
                break
            if not self.trusts(url):
                raise ServerError("untrusted_url", f"sent on to {url!r}, which is no node of this deployment")
            try:
                link = await self._link_to(url)
                moves += 1
                if isinstance(challenge, str):
                    there = link
                    continue
                if isinstance(ladder, str):  # ladder bots play where the ladder scheduler runs
                    self._ladder_routes[ladder] = link
                    continue
                assert isinstance(room, str)
                self._routes[room.strip().upper()] = link
                if kind not in ("join", "watch"):
                    await self._take_back(room.strip().upper(), link)
            except ConnectionLost:
                if loop.time() >= deadline:
                    raise
                pause = min(max(pause * 2, 0.2), 2.0)
                await asyncio.sleep(pause)
        if reply["type"] == "error":
            raise ServerError.from_reply(reply)
        self._remember(kind, fields, reply)
        if there is not None and isinstance(reply.get("room"), str):
            self._routes[reply["room"]] = there  # the challenge's room is on that node
        if kind == "ladder_join" and isinstance(ladder, str):
            self._ladders[ladder] = dict(fields)
            self._ladder_routes.setdefault(ladder, link)
        elif kind == "ladder_leave" and isinstance(ladder, str):
            self._ladders.pop(ladder, None)
            self._ladder_routes.pop(ladder, None)
        return reply

    def _ladder_link(self, ladder: str) -> _Link:
        link = self._ladder_routes.get(ladder)
        return link if link is not None and not link.closed.is_set() else self._home

    async def _join_ladder_again(self, ladder: str) -> None:
        """The scheduler's node went away with this client's membership: join again, wherever
        the scheduler runs now (another node takes it over at once)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.move_patience
        pause = 0.2
        while ladder in self._ladders and not self.closed.is_set():
            try:
                await self.request("ladder_join", **self._ladders[ladder])
                return
            except ConnectionLost:
                if self.closed.is_set():
                    return
            except ServerError as exc:
                if exc.code not in ("storage_unavailable", "moved") or loop.time() > deadline:
                    self.errors.put_nowait({"type": "error", "code": exc.code, "message": exc.message})
                    return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _remember(self, kind: str, fields: dict[str, Any], reply: dict[str, Any]) -> None:
        """Keep the seat tokens and watched rooms a reply grants (see `_take_back`)."""
        summary = reply.get("summary")
        if kind not in ("join", "watch", "create_room", "accept", "seek_take") or not isinstance(summary, dict):
            return
        code = summary["code"]
        self._lost.discard(code)
        if kind == "watch":
            self._watching.add(code)
        elif reply.get("token") and reply.get("seat") is not None:
            self._seats[code][reply["seat"]] = reply["token"]
        if kind != "create_room":
            self._back_in(code)

    async def _take_back(self, room: str, link: _Link) -> None:
        """On the node a room has moved to, take back this client's seats (with their tokens)
        and its place among the spectators before sending it anything else."""
        for seat, token in list(self._seats.get(room, {}).items()):
            reply = await self._exchange(link, "join", {"room": room, "seat": seat, "token": token})
            if reply["type"] == "error" and reply.get("code") == "auth_failed":
                self._seats[room].pop(seat, None)  # the seat went to someone else
        if room in self._watching:
            await self._exchange(link, "watch", {"room": room})
        self._back_in(room)

    async def rejoin(self, room: str) -> bool:
        """Take back this client's seats and spectator place in `room` after the node that had
        it was lost, wherever the room is now (asking this client's own node, following `moved`,
        for up to `move_patience` seconds). False if there was nothing to take back, or the
        room is gone."""
        seats = dict(self._seats.get(room, {}))
        if not seats and room not in self._watching:
            return False
        try:
            for seat, token in seats.items():
                await self.join(room, seat=seat, token=token)
            if room in self._watching:
                await self.watch(room)
        except ServerError as exc:
            if isinstance(exc, ConnectionLost) and self.closed.is_set():
                raise
            return False
        return True

    def _back_in(self, room: str) -> None:
        """Back in a room after its node was lost: the loss is news no longer."""
        queue = self._rooms.get(room)
        if queue is None or queue.empty():
            return
        kept = [m for m in (queue.get_nowait() for _ in range(queue.qsize())) if m["type"] != "connection_lost"]
        for message in kept:
            queue.put_nowait(message)

    async def _exchange(self, link: _Link, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        link.requests.add(request_id)
        try:
            if link.closed.is_set():
                raise ConnectionLost()
            await self._send(link, {"type": kind, "id": request_id, **fields})
            return await future
        finally:
            self._waiting.pop(request_id, None)
            link.requests.discard(request_id)

    async def _link_to(self, url: str) -> _Link:
        """The open link to the node at `url`, connecting (and saying hello) if there is none."""
        for link in self._links:
            if _same_url(link.url, url) and not link.closed.is_set():
                return link
        if url in self._opening:
            return await asyncio.shield(self._opening[url])
        future: asyncio.Future[_Link] = asyncio.get_running_loop().create_future()
        self._opening[url] = future
        try:
            link = _Link(url, await _open(url, self._timeout))
            link.reader = asyncio.get_running_loop().create_task(self._read(link))
            self._links.append(link)
            reply = await self._exchange(link, "hello", self._hello)
            if reply["type"] == "error":
                await link.websocket.close()
                raise ServerError.from_reply(reply)
            self.trust(*_listed_nodes(reply))
            future.set_result(link)
            return link
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a lone opener must not leave an unread error behind
            raise
        finally:
            del self._opening[url]

    async def _read(self, link: _Link) -> None:
        try:
            async for frame in link.websocket:
                try:
                    message = decode(frame, limit=1 << 22)
                except ProtocolError:
                    continue
                self._route(message, link)
        except ConnectionClosed:
            pass
        finally:
            link.closed.set()
            for request_id in list(link.requests):
                future = self._waiting.get(request_id)
                if future is not None and not future.done():
                    future.set_exception(ConnectionLost())
            if link is self._home:
                self.closed.set()
                lost = list(self._rooms)
            else:  # the rooms on that node: their next request goes home again, to learn where they are
                lost = [room for room, routed in self._routes.items() if routed is link]
                for room in lost:
                    del self._routes[room]
                self._lost.update(lost)
                for ladder in [name for name, routed in self._ladder_routes.items() if routed is link]:
                    del self._ladder_routes[ladder]
                    self._in_background(self._join_ladder_again(ladder))
                with contextlib.suppress(ValueError):
                    self._links.remove(link)
            for room in lost:
                self._rooms[room].put_nowait({"type": "connection_lost"})

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _answer_summon(self, url: str) -> None:
        try:
            await self._link_to(url)
        except ServerError as exc:  # that node is gone, or refused: it seats another bot
            self.errors.put_nowait({"type": "error", "code": exc.code, "message": exc.message})

    def _route(self, message: dict[str, Any], link: _Link | None = None) -> None:
        request_id = message.get("id")
        if request_id is not None and request_id in self._waiting:
            future = self._waiting[request_id]
            if not future.done():
                future.set_result(message)
            return
        kind = message["type"]
        if link is not None and link is not self._home and kind in ("update", "room", "seated"):
            # News of a room from another node (a ladder game the scheduler there seated us in):
            # requests about that room go there.
            self._routes.setdefault(message["room"], link)
        if kind in ("update", "game_over", "room", "seat_lost", "rematch", "rating_verdict", "rating_changed"):
            room = message["room"]
            if kind == "update":
                self._queued_updates[room, message.get("seat")] += 1
            self._rooms[room].put_nowait(message)
        elif kind == "seated":
            if message.get("token"):
                self._seats[message["room"]][message["seat"]] = message["token"]
            self.seated.put_nowait(message)
        elif kind in ("challenge", "challenge_accepted", "challenge_declined"):
            self.challenges.put_nowait(message)
        elif kind == "summon" and isinstance(message.get("url"), str):
            # Another node seats this bot in one of its rooms: connect there (same hello), and
            # it sends `seated` over that connection.
            url = message["url"]
            if self.trusts(url):
                self._in_background(self._answer_summon(url))
            else:
                text = f"a summon to {url!r}, which is no node of this deployment, was not followed"
                self.errors.put_nowait({"type": "error", "code": "untrusted_url", "message": text})
        elif kind == "error" and message.get("code") == "moved" and isinstance(message.get("room"), str):
            # The node let the room go (another node took it over): as if its link were lost.
            room = message["room"]
            self._routes.pop(room, None)
            self._lost.add(room)
            self._rooms[room].put_nowait({"type": "connection_lost"})
        elif kind == "error":
            self.errors.put_nowait(message)
        elif kind in ("ladder_game", "rating"):
            with contextlib.suppress(asyncio.QueueFull):  # unread past 1000: later news is dropped
                self.ladder_events.put_nowait(message)
        elif kind == "seek_paired":
            if message.get("token"):
                self._seats[message["room"]][message["seat"]] = message["token"]
            self.seek_events.put_nowait(message)
        elif kind in ("lobby", "lobby_seeks"):
            with contextlib.suppress(asyncio.QueueFull):
                self.lobby_events.put_nowait(message)
        elif kind.startswith("tournament_"):
            if kind == "tournament_game" and message.get("token"):
                self._seats[message["room"]][message["seat"]] = message["token"]  # to take it back
            with contextlib.suppress(asyncio.QueueFull):
                self.tournament_events.put_nowait(message)

    # Challenges.

    async def challenge(
        self,
        to: str,
        game: str,
        options: dict[str, Any] | None = None,
        seats: int | None = None,
        clock: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Challenge the account `to` (a person or a bot); returns the challenge. Its outcome
        arrives in `challenges`: `challenge_accepted` (room, seat, token) or `challenge_declined`."""
        fields = {"options": options, "seats": seats, "clock": clock}
        reply = await self.request("challenge", to=to, game=game, **{k: v for k, v in fields.items() if v is not None})
        return reply["challenge"]

    async def accept(self, challenge_id: str) -> dict[str, Any]:
        """Accept a challenge pushed to you; the reply has the room, your seat and token."""
        return await self.request("accept", challenge=challenge_id)

    async def decline(self, challenge_id: str) -> dict[str, Any]:
        return await self.request("decline", challenge=challenge_id)

    # The lobby.

    async def list_games(self) -> list[dict[str, Any]]:
        return (await self.request("list_games"))["games"]

    async def list_rooms(self, game: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        """Every public room (of `game`, in `status`: waiting or playing), page after page (each
        page built costs the asker by its bytes: past the rate, a page waits its `retry_after`)."""
        rooms: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await patiently(functools.partial(self.rooms_page, game, status, cursor))
            rooms += page["rooms"]
            cursor = page.get("next")
            if cursor is None:
                return rooms

    async def rooms_page(
        self,
        game: str | None = None,
        status: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        watch: bool | None = None,
    ) -> dict[str, Any]:
        """One page of public rooms (`rooms`, and `next`: the cursor of the page after it, or
        None); `watch=True` also has the server push `lobby` changes for the same filter."""
        fields = {"game": game, "status": status, "cursor": cursor, "limit": limit, "watch": watch}
        return await self.request("list_rooms", **{k: v for k, v in fields.items() if v is not None})

    async def games(
        self, player: str | None = None, game: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Stored games, newest first (public ones, and private ones this account sat in)."""
        filters = {"player": player, "game": game, "status": status}
        reply = await self.request("games", limit=limit, **{k: v for k, v in filters.items() if v is not None})
        return reply["games"]

    async def game(self, game_id: int, *, steps: bool = False) -> dict[str, Any]:
        """One stored game: whole once finished (moves, seed), as spectators see it while live;
        with `steps`, also `steps`: the spectators' `{view, last}` before and after every move."""
        extra = {"steps": True} if steps else {}
        return (await self.request("game", game_id=game_id, **extra))["game"]

    async def create_room(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        *,
        seats: int | None = None,
        public: bool = True,
        seat: int | None = None,
        bots: dict[int, str] | None = None,
        auto_start: bool = True,
        clock: dict[str, Any] | None = None,
        abandon_after: float | None = None,
        rated: bool = False,
    ) -> dict[str, Any]:
        """`clock`: `{"initial": S, "increment": S}` or `{"per_move": S}` (None: no clock);
        `abandon_after`: seconds an absent seat is waited for in a game without a clock;
        `rated`: the result changes the accounts' ratings (needs an account and a clock)."""
        fields: dict[str, Any] = {"game": game, "public": public, "auto_start": auto_start}
        if rated:
            fields["rated"] = True
        if clock is not None:
            fields["clock"] = clock
        if abandon_after is not None:
            fields["abandon_after"] = abandon_after
        if options:
            fields["options"] = options
        if seats is not None:
            fields["seats"] = seats
        if seat is not None:
            fields["seat"] = seat
        if bots:
            fields["bots"] = {str(k): v for k, v in bots.items()}
        return await self.request("create_room", **fields)

    async def join(self, room: str, seat: int | None = None, token: str | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"room": room}
        if seat is not None:
            fields["seat"] = seat
        if token is not None:
            fields["token"] = token
        return await self.request("join", **fields)

    async def leave(self, room: str) -> dict[str, Any]:
        return await self.request("leave", room=room)

    async def watch(self, room: str) -> dict[str, Any]:
        return await self.request("watch", room=room)

    async def add_bot(self, room: str, agent: str, seat: int | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"room": room, "agent": agent}
        if seat is not None:
            fields["seat"] = seat
        return await self.request("add_bot", **fields)

    async def start(self, room: str) -> dict[str, Any]:
        return await self.request("start", room=room)

    async def act(self, room: str, action: Any, seq: int | None = None, seat: int | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"room": room, "action": action}
        if seq is not None:
            fields["seq"] = seq
        if seat is not None:
            fields["seat"] = seat
        return await self.request("act", **fields)

    # Endings.

    async def _seat_request(self, kind: str, room: str, seat: int | None) -> dict[str, Any]:
        fields: dict[str, Any] = {"room": room}
        if seat is not None:
            fields["seat"] = seat
        return await self.request(kind, **fields)

    async def resign(self, room: str, seat: int | None = None, note: str | None = None) -> dict[str, Any]:
        """`note`: why, kept in the result's `notes` (say, the bot's engine failed)."""
        if note is None:
            return await self._seat_request("resign", room, seat)
        fields: dict[str, Any] = {"room": room, "note": note}
        if seat is not None:
            fields["seat"] = seat
        return await self.request("resign", **fields)

    async def offer_draw(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("offer_draw", room, seat)

    async def accept_draw(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("accept_draw", room, seat)

    async def decline_draw(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("decline_draw", room, seat)

    async def abort(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("abort", room, seat)

    async def rematch(self, room: str, seat: int | None = None) -> dict[str, Any]:
        """Offer (or accept) a rematch of a finished game. The reply's `rematch` is the new
        room's summary once every human seat has asked, else null; everyone seated then gets a
        `rematch` message on the old room (`new_room`, `seat`, `token`)."""
        return await self._seat_request("rematch", room, seat)

    # Ladders.

    async def ladder_join(self, ladder: str, max_games: int | None = None) -> dict[str, Any]:
        """Join a ladder (bot accounts only) for as long as this connection lasts."""
        fields: dict[str, Any] = {"ladder": ladder}
        if max_games is not None:
            fields["max_games"] = max_games
        return await self.request("ladder_join", **fields)

    async def ladder_leave(self, ladder: str) -> dict[str, Any]:
        return await self.request("ladder_leave", ladder=ladder)

    async def ladder_list(self) -> list[dict[str, Any]]:
        return (await self.request("ladder_list"))["ladders"]

    async def ladder_standings(self, ladder: str) -> list[dict[str, Any]]:
        return (await self.request("ladder_standings", ladder=ladder))["standings"]

    async def ladder_history(self, ladder: str) -> list[dict[str, Any]]:
        """Each member's rating after each of its rated games: `[{name, points: [{games, mu,
        sigma, rating}]}]`, best first."""
        return (await self.request("ladder_history", ladder=ladder))["series"]

    # People's ratings.

    async def ratings(self, name: str | None = None, game: str | None = None) -> dict[str, Any]:
        """`{name, ratings: [{game, clock_class, rating, mu, sigma, games, provisional, shown}]}`:
        an account's ratings (None: your own)."""
        fields: dict[str, Any] = {}
        if name is not None:
            fields["name"] = name
        if game is not None:
            fields["game"] = game
        return await self.request("ratings", **fields)

    async def rating_history(self, name: str | None, game: str, clock_class: str) -> list[dict[str, Any]]:
        """Each rated game, oldest first: `{game_id, time, rank, before, after}`."""
        reply = await self.request("rating_history", name=name, game=game, clock_class=clock_class)
        return reply["history"]

    async def leaderboard(self, game: str, clock_class: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """Each clock class's board (only `clock_class`'s, if given): `[{place, name, rating, ...}]`."""
        fields: dict[str, Any] = {"game": game}
        if clock_class is not None:
            fields["clock_class"] = clock_class
        return (await self.request("leaderboard", **fields))["boards"]

    # Tournaments.

    async def tournament_create(
        self,
        name: str,
        game: str,
        format: str,
        clock: dict[str, Any],
        entry: str = "both",
        options: dict[str, Any] | None = None,
        seats: int | None = None,
        rounds: int | None = None,
        duration: float | None = None,
        starts_in: float = 60.0,
    ) -> dict[str, Any]:
        """Create a tournament (accounts only); returns its summary."""
        fields: dict[str, Any] = {"name": name, "game": game, "format": format, "clock": clock, "entry": entry}
        extra = {"options": options, "seats": seats, "rounds": rounds, "duration": duration}
        fields.update({k: v for k, v in extra.items() if v is not None}, starts_in=starts_in)
        return (await self.request("tournament_create", **fields))["tournament"]

    async def tournament_list(self, status: str | None = None) -> list[dict[str, Any]]:
        """Every tournament (in `status`), soonest first, page after page."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self.tournaments_page(status, cursor)
            found += page["tournaments"]
            cursor = page.get("next")
            if cursor is None:
                return found

    async def tournaments_page(
        self, status: str | None = None, cursor: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """One page of tournaments (`tournaments`, without options, and `next`: the cursor of
        the page after it, or None)."""
        fields = {"status": status, "cursor": cursor, "limit": limit}
        return await self.request("tournament_list", **{k: v for k, v in fields.items() if v is not None})

    async def tournament_join(self, tournament: str) -> dict[str, Any]:
        """Enter a tournament: its games are pushed as `tournament_game` (a bot is seated)."""
        return (await self.request("tournament_join", tournament=tournament))["tournament"]

    async def tournament_withdraw(self, tournament: str) -> dict[str, Any]:
        return await self.request("tournament_withdraw", tournament=tournament)

    async def tournament_standings(self, tournament: str) -> list[dict[str, Any]]:
        return (await self.request("tournament_standings", tournament=tournament))["standings"]

    async def tournament_pairings(self, tournament: str, round: int | None = None) -> list[dict[str, Any]]:
        fields: dict[str, Any] = {"tournament": tournament}
        if round is not None:
            fields["round"] = round
        return (await self.request("tournament_pairings", **fields))["tables"]

    # Seeks (quick pairing).

    async def seek(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        *,
        seats: int | None = None,
        clock: dict[str, Any] | None = None,
        rated: bool = False,
        rating_range: tuple[float, float] | None = None,
        allow_bots: bool = False,
    ) -> dict[str, Any]:
        """Post a seek; returns the `seek_posted` reply (`seek`, and `paired`: it was paired at
        once). The room comes as a pushed `seek_paired` in `seek_events`."""
        fields: dict[str, Any] = {"game": game, "rated": rated, "allow_bots": allow_bots}
        extra = {"options": options, "seats": seats, "clock": clock}
        fields.update({k: v for k, v in extra.items() if v is not None})
        if rating_range is not None:
            fields["range"] = list(rating_range)
        return await self.request("seek", **fields)

    async def seek_cancel(self, seek: int) -> dict[str, Any]:
        return await self.request("seek_cancel", seek=seek)

    async def seek_take(self, seek: int) -> dict[str, Any]:
        """Take a listed seek; the reply has the room, your seat and token."""
        return await self.request("seek_take", seek=seek)

    async def list_seeks(self, game: str | None = None, watch: bool | None = None) -> list[dict[str, Any]]:
        """Every open seek, oldest first, page after page; `watch`: changes come as
        `lobby_seeks` in `lobby_events`."""
        page = await self.seeks_page(game, watch=watch)
        seeks: list[dict[str, Any]] = page["seeks"]
        while page.get("next") is not None:
            page = await self.seeks_page(game, page["next"])
            seeks += page["seeks"]
        return seeks

    async def seeks_page(
        self, game: str | None = None, cursor: str | None = None, limit: int | None = None, watch: bool | None = None
    ) -> dict[str, Any]:
        """One page of open seeks (`seeks`, and `next`: the cursor of the page after it, or None)."""
        fields = {"game": game, "cursor": cursor, "limit": limit, "watch": watch}
        return await self.request("list_seeks", **{k: v for k, v in fields.items() if v is not None})

    # Play.

    async def next_message(self, room: str, timeout: float | None = None) -> dict[str, Any]:
        """The next pushed message about `room` (update, room, game_over, seat_lost, rematch)."""
        message = await asyncio.wait_for(self._rooms[room].get(), timeout)
        if message["type"] == "connection_lost":
            raise ConnectionLost()
        if message["type"] == "update":
            self._queued_updates[room, message.get("seat")] -= 1
        return message

    async def next_update(self, room: str, timeout: float | None = None) -> dict[str, Any]:
        while True:
            message = await self.next_message(room, timeout)
            if message["type"] == "update":
                return message

    async def play(
        self,
        room: str,
        decide: Decide,
        on_update: Callable[[dict[str, Any]], Any] | None = None,
        on_error: Callable[[ServerError], Any] | None = None,
        on_message: Callable[[dict[str, Any]], Any] | None = None,
    ) -> dict[str, Any]:
        """Answer every decision put to this connection in `room` until the game ends; returns
        the final update (with `result`, its `reason`, and the revealed `seed`). `decide(update,
        prompt)` may be a plain function or a coroutine. A rejected answer is reported to
        `on_error` (or raised when there is none) and the same decision is asked again; an answer
        overtaken by events (the decision passed, or the game ended meanwhile: a timeout, a
        resignation) waits for the next update instead. Other pushed messages about the room
        (`room`, `game_over`, `seat_lost`) go to `on_message`. A lost connection is not a refused
        answer: it raises `ConnectionLost`."""
        while True:
            try:
                update = await self.next_message(room)
            except ConnectionLost:
                # The room's node went away (and this client's own connection did not): carry on
                # wherever the room was taken over.
                if self.closed.is_set() or not await self.rejoin(room):
                    raise
                continue
            if update["type"] != "update":
                if on_message is not None:
                    on_message(update)
                continue
            if update["status"] != "finished" and self._queued_updates[room, update["seat"]] > 0:
                continue  # a newer update for this seat is already here: this decision may be gone
            if on_update is not None:
                on_update(update)
            if update["status"] == "finished":
                return update
            if update.get("decision") is None:
                continue
            prompt = prompt_from_data(update["decision"])
            while True:
                action = decide(update, prompt)
                if inspect.isawaitable(action):
                    action = await action
                try:
                    await self.act(room, action, seq=update["seq"], seat=update["seat"])
                    break
                except ConnectionLost:
                    if self.closed.is_set():
                        raise
                    break  # the next update says whether it was stored, wherever the room is now
                except ServerError as exc:
                    if exc.code in ("stale_decision", "game_over"):
                        break
                    if on_error is None:
                        raise
                    on_error(exc)
