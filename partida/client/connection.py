"""The connection under the SDK: one client's websockets to a deployment's nodes.

Its own part because it is the one place that knows there may be several nodes and that
connections drop, so that the request API and the bot loop above it need not: it says the hello,
matches each reply to its request by `id`, routes every pushed message to its queue (per room,
seated, challenges, ladders, tournaments, the lobby, seeks, errors), follows a `moved` answer to
the node that has the room, answers a `summon`, and after a node is lost takes this client's
seats and spectator places back wherever the room went. One reader task per websocket does all
the routing, so a program can play many rooms over one client (the bot runner does).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Self

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from partida.client.links import Link, host_of, listed_nodes, open_websocket, retry_pause, same_url
from partida.client.refusals import ConnectionLost, ServerError
from partida.protocol import PROTOCOL_VERSION, Encoding, ProtocolError, decode, encode
from partida.protocol.accepts import Accepts

MAX_MOVES = 4  # `moved` answers followed for one request before giving up (nodes disagreeing)


class Connection:
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
        # a tournament's `chat`, `chat_history` and `chat_removed` pushes (a room's go with its other news)
        self.chat_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(1000)
        self.closed = asyncio.Event()
        self._home = Link(url, websocket)
        self._links: list[Link] = [self._home]  # the home link first
        self._routes: dict[str, Link] = {}  # room code -> the link of the node that has it
        self._opening: dict[str, asyncio.Future[Link]] = {}
        # What this client holds in each room, to take it back on the node a room moves to:
        # seat -> seat token, and the rooms it watches.
        self._seats: defaultdict[str, dict[int, str]] = defaultdict(dict)
        self._watching: set[str] = set()
        self._lost: set[str] = set()  # rooms whose node went away since this client was let in
        # Ladders joined (their `ladder_join` fields) and the link each membership lives on: the
        # scheduler's node, which may not be this client's own.
        self._ladders: dict[str, dict[str, Any]] = {}
        self._ladder_routes: dict[str, Link] = {}
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
    ) -> Self:
        """`nodes`: URLs of the deployment's other nodes, trusted with `summon` and `moved` as
        `url` is (see `trust`). `accepts`: a bot's declaration of what it plays (its `games`
        stand for `games`)."""
        client = cls(await open_websocket(url, timeout), encoding, url)
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
        client.trust(*listed_nodes(client.welcome))
        if isinstance(client.welcome.get("resume"), str):
            # Connections to come (another node, a reconnect) offer the session first: the
            # server then needs no password check; the password stays for a server that
            # restarted since, or another node, which do not know the session.
            client._hello = {**hello, "resume": client.welcome["resume"]}
        return client

    def trust(self, *urls: str) -> None:
        """Count the hosts of `urls` as this client's deployment: `summon` and `moved` lead only
        to them."""
        self._hosts.update(host for host in map(host_of, urls) if host is not None)

    def trusts(self, url: str) -> bool:
        """Whether `url` is a websocket URL on a host of this client's deployment."""
        return host_of(url) in self._hosts

    async def __aenter__(self) -> Self:
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

    async def _send(self, link: Link, message: dict[str, Any]) -> None:
        try:
            await link.websocket.send(encode(message, self.encoding))
        except ConnectionClosed:
            raise ConnectionLost() from None

    def _link_for(self, room: Any) -> Link:
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
        there: Link | None = None
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
                pause = retry_pause(pause)
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

    def _ladder_link(self, ladder: str) -> Link:
        link = self._ladder_routes.get(ladder)
        return link if link is not None and not link.closed.is_set() else self._home

    async def _join_ladder_again(self, ladder: str) -> None:
        """The scheduler's node went away with this client's membership: join again, wherever
        the scheduler runs now (another node takes it over at once)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.move_patience
        pause = retry_pause(0.0)
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
            pause = retry_pause(pause)

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

    async def _take_back(self, room: str, link: Link) -> None:
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

    async def _exchange(self, link: Link, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
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

    async def _link_to(self, url: str) -> Link:
        """The open link to the node at `url`, connecting (and saying hello) if there is none."""
        for link in self._links:
            if same_url(link.url, url) and not link.closed.is_set():
                return link
        if url in self._opening:
            return await asyncio.shield(self._opening[url])
        future: asyncio.Future[Link] = asyncio.get_running_loop().create_future()
        self._opening[url] = future
        try:
            link = Link(url, await open_websocket(url, self._timeout))
            link.reader = asyncio.get_running_loop().create_task(self._read(link))
            self._links.append(link)
            reply = await self._exchange(link, "hello", self._hello)
            if reply["type"] == "error":
                await link.websocket.close()
                raise ServerError.from_reply(reply)
            self.trust(*listed_nodes(reply))
            future.set_result(link)
            return link
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a lone opener must not leave an unread error behind
            raise
        finally:
            del self._opening[url]

    async def _read(self, link: Link) -> None:
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

    async def _take_seat(self, room: str, seat: int, token: str | None) -> None:
        """Sit in a seat held for this client in a room of another node (a seek or a tournament
        table paired there), through `join`, which `moved` takes to the room's node."""
        try:
            await self.join(room, seat=seat, token=token)
        except ServerError as exc:
            self.errors.put_nowait({"type": "error", "code": exc.code, "message": exc.message})

    async def _answer_summon(self, url: str) -> None:
        try:
            await self._link_to(url)
        except ServerError as exc:  # that node is gone, or refused: it seats another bot
            self.errors.put_nowait({"type": "error", "code": exc.code, "message": exc.message})

    def _route(self, message: dict[str, Any], link: Link | None = None) -> None:
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
        elif kind in ("chat", "chat_history", "chat_removed"):
            if isinstance(message.get("room"), str):  # with the room's other news (`play`'s `on_chat`)
                self._rooms[message["room"]].put_nowait(message)
            else:  # a tournament's
                with contextlib.suppress(asyncio.QueueFull):  # unread past 1000: later lines are dropped
                    self.chat_events.put_nowait(message)
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
            if isinstance(message.get("url"), str) and message.get("token"):
                # Paired by another node of the deployment: the seat waits there (`moved` leads to it).
                self._in_background(self._take_seat(message["room"], message["seat"], message["token"]))
            self.seek_events.put_nowait(message)
        elif kind in ("lobby", "lobby_seeks", "lobby_tournaments"):
            with contextlib.suppress(asyncio.QueueFull):
                self.lobby_events.put_nowait(message)
        elif kind.startswith("tournament_"):
            if kind == "tournament_game" and message.get("token"):
                self._seats[message["room"]][message["seat"]] = message["token"]  # to take it back
            elif kind == "tournament_game" and isinstance(message.get("url"), str):
                # The table is on another node, its seat kept for this account: sit there.
                self._in_background(self._take_seat(message["room"], message["seat"], None))
            with contextlib.suppress(asyncio.QueueFull):
                self.tournament_events.put_nowait(message)
