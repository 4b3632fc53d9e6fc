"""The websocket server: a thin shell that turns frames into requests for the lobby and rooms.

Bad input never crashes anything: every frame is decoded and checked (`partida.protocol`) before
a handler sees it, every handler error becomes an `error` message with a stable code, and rooms
run their commands in their own tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from partida import __version__
from partida.bots.registry import all_agents
from partida.games.base import BadOptions, Game
from partida.games.registry import Registry, UnknownGame, default_registry
from partida.protocol import (
    MAX_MESSAGE_BYTES,
    SUPPORTED_VERSIONS,
    Encoding,
    ErrorCode,
    ProtocolError,
    decode,
    encode,
    encoding_of,
    error_message,
    parse_request,
    server_message,
)
from partida.protocol import messages as m
from partida.room.clocks import MAX_SECONDS, BadClock, ClockSpec
from partida.room.endings import DEFAULT_ABANDON_AFTER
from partida.server import ending_requests, history, web
from partida.server.addresses import Addresses
from partida.server.challenges import Challenge, Challenges
from partida.server.cluster import DEFAULT_LEASE, Cluster, FencedStore
from partida.server.events import EventBus, open_bus
from partida.server.idle import IdleWatch
from partida.server.ladders import LadderService
from partida.server.limits import Limiter, Limits
from partida.server.lobby import Lobby, check_page_request
from partida.server.lobby import reply as rooms_reply
from partida.server.logins import Logins
from partida.server.presence import plays
from partida.server.receiving import Connection
from partida.server.rematch import offer_rematch, open_rematch
from partida.server.room_counts import RoomsByAddress
from partida.server.rooms import Room
from partida.server.session import OUTBOX_BYTES, Identity, Session
from partida.storage.accounts import check_name
from partida.storage.database import Database, StorageError, default_url, describe_error
from partida.storage.models import Account
from partida.storage.sqlite_claim import SqliteClaim
from partida.storage.store import Store, StoredGame

log = logging.getLogger(__name__)

GUEST_NAME_LENGTH = 32
# Ending requests: the rule that carries each out, and the reply that says it was done.
ENDING_REQUESTS = {
    "resign": (ending_requests.resign, "resigned"),
    "offer_draw": (ending_requests.offer_draw, "draw_offered"),
    "accept_draw": (ending_requests.accept_draw, "draw_accepted"),
    "decline_draw": (ending_requests.decline_draw, "draw_declined"),
    "abort": (ending_requests.abort, "aborted"),
}
RESERVED_PREFIX = "pool-"  # the built-in bots' accounts, reserved before the pool creates them
FINISHED_ROOM_TTL = 600.0  # seconds a finished room stays reachable for late viewers
UNREAD_BEFORE_LISTING = 256 * 1024  # bytes queued unread past which a connection is listed nothing more
REQUEST_ID_TYPES = (int, str)  # a tuple: `int | str` would be built again at every request


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    db_url: str | None = None
    mqtt_url: str | None = None
    game_files: list[Path] = field(default_factory=list)
    game_dirs: list[Path] = field(default_factory=list)
    max_message_bytes: int = MAX_MESSAGE_BYTES
    outbox_bytes: int = OUTBOX_BYTES
    limits: Limits = field(default_factory=Limits)
    abandon_after: float = DEFAULT_ABANDON_AFTER  # grace period of an absent seat without a clock
    # One node of several (server/cluster.py): its name, the URL clients reach it at (default
    # ws://host:port), and the lease on its rooms in seconds. None: a single server.
    node: str | None = None
    public_url: str | None = None
    lease: float = DEFAULT_LEASE
    # Reverse proxies (addresses or networks) whose X-Forwarded-For names the client (server/addresses.py).
    trusted_proxies: list[str] = field(default_factory=list)
    # The CPUs the SQLite writer's process runs on, when the server pinned itself to one
    # (`partida serve --cpu`); None: the server's own.
    writer_cpus: frozenset[int] | None = None


class Server:
    def __init__(self, config: ServerConfig, registry: Registry | None = None) -> None:
        self.config = config
        self.registry = registry or default_registry(config.game_files, config.game_dirs)
        self.rooms: dict[str, Room] = {}
        self._waiting_by_address = RoomsByAddress(self.rooms, lambda room: room.status == "waiting")
        self._public_by_address = RoomsByAddress(self.rooms, lambda room: room.status in ("waiting", "playing"))
        self._bot_games_by_address = RoomsByAddress(self.rooms, lambda room: room.status in ("waiting", "playing"))
        self.limiter = Limiter(config.limits)
        self.logins = Logins(config.limits)
        self.addresses = Addresses(config.trusted_proxies)
        self.sessions: set[Session] = set()
        self.challenges = Challenges(on_lapse=self._challenge_lapsed)
        self.db: Database | None = None
        self.store: Store = None  # type: ignore[assignment]  # set in start()
        self.bus: EventBus | None = None
        self.cluster: Cluster | None = None
        if config.node is not None:
            self.cluster = Cluster(self, config.node, config.public_url or self.url, config.lease)
        self._ws: WsServer | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._claim: SqliteClaim | None = None
        self.ladders = LadderService(self)
        self.lobby = Lobby(remote=self._other_nodes_rooms if self.cluster is not None else None)
        self.handlers: dict[str, Callable[[Session, Any], Awaitable[None]]] = {
            "hello": self.on_hello,
            "ping": self.on_ping,
            "list_games": self.on_list_games,
            "list_rooms": self.on_list_rooms,
            "create_room": self.on_create_room,
            "join": self.on_join,
            "leave": self.on_leave,
            "watch": self.on_watch,
            "add_bot": self.on_add_bot,
            "start": self.on_start,
            "act": self.on_act,
            "resign": self.on_ending,
            "offer_draw": self.on_ending,
            "accept_draw": self.on_ending,
            "decline_draw": self.on_ending,
            "abort": self.on_ending,
            "rematch": self.on_rematch,
            "games": self.on_games,
            "game": self.on_game,
            "challenge": self.on_challenge,
            "accept": self.on_accept,
            "decline": self.on_decline,
            "ladder_join": self.ladders.on_join,
            "ladder_leave": self.ladders.on_leave,
            "ladder_list": self.ladders.on_list,
            "ladder_standings": self.ladders.on_standings,
            "ladder_history": self.ladders.on_history,
        }

    # Life cycle.

    async def start(self) -> None:
        url = self.config.db_url or default_url()
        self._claim = SqliteClaim.take(url)  # one server per SQLite file (storage/sqlite_claim.py)
        try:
            self.db = await Database.open(url, writer_cpus=self.config.writer_cpus)
        except BaseException:
            self._release_claim()
            raise
        try:
            await self.db.check_writable()
        except BaseException:
            await self.db.close()
            self._release_claim()
            raise
        self.store = Store(self.db) if self.cluster is None else FencedStore(self.db, self.cluster.fence)
        self.bus = await open_bus(self.config.mqtt_url)
        if self.cluster is None:
            await self.resume_games()
        else:
            try:
                await self.cluster.start()  # resumes this node's games and dead nodes' games
            except BaseException:
                await self.bus.close()
                await self.db.close()
                self._release_claim()
                raise
        await self.ladders.start()
        self._ws = await serve(
            self.connection,
            self.config.host,
            self.config.port,
            max_size=max(self.config.max_message_bytes * 16, 1 << 20),
            compression=None,  # messages are small MessagePack maps: deflate costs CPU and memory for little
            ping_interval=20,
            ping_timeout=20,
            process_request=self._process_request,  # plain HTTP GETs get the browser client (server/web.py)
            server_header=None,  # no software and versions to look up vulnerabilities by
            create_connection=Connection,  # ordinary frames read without websockets' parser (server/receiving.py)
        )
        if self.config.port == 0:
            self.config.port = next(iter(self._ws.sockets)).getsockname()[1]
        self._reaper = asyncio.get_running_loop().create_task(self._reap_finished_rooms())
        log.info("serving on ws://%s:%d", self.config.host, self.config.port)

    @property
    def url(self) -> str:
        return f"ws://{self.config.host}:{self.config.port}"

    @property
    def http_url(self) -> str:
        """Where a browser opens the web client (same port as the websocket)."""
        return f"http://{self.config.host}:{self.config.port}/"

    async def stop(self) -> None:
        await self.ladders.stop()
        await self.lobby.stop()
        if self._ws is not None:
            self._ws.close()
            await self._ws.wait_closed()
        if self._reaper is not None:
            self._reaper.cancel()
        for room in list(self.rooms.values()):
            await room.close()
        if self.cluster is not None:
            await self.cluster.stop()
        if self.bus is not None:
            await self.bus.close()
        if self.db is not None:
            await self.db.close()
        self._release_claim()

    def _release_claim(self) -> None:
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    async def resume_games(self, games: list[StoredGame] | None = None) -> list[Room]:
        """Rebuild every unfinished game from its log (or `games`: a node taking over a dead
        node's); players return to their seats."""
        rooms = []
        for stored in await self.store.unfinished_games() if games is None else games:
            room = None
            try:
                room = Room.resume(self, self.registry.get(stored.game), stored)
                self.rooms[room.code] = room
                room.open()
                self.lobby.changed(room)
                await room.call(room.finish_resumed)
            except Exception:
                # An unknown game, a log its rules refuse, or its due result or its bot's move
                # refused by the database: the game stays in the database as it is, for the next
                # start; one such game must not keep the others (and the server) from playing.
                log.exception("could not resume game %s (%s); leaving it as it is", stored.id, stored.game)
                if room is not None:
                    self.rooms.pop(room.code, None)
                    await room.close()
                continue
            log.info("resumed game %s in room %s at move %d", stored.id, room.code, room.seq)
            rooms.append(room)
        return rooms

    def publishes(self, topic: str) -> bool:
        """Whether an event under `topic` would reach a subscriber (here or on a broker)."""
        return self.bus is not None and self.bus.wants(f"partida/{topic}")

    async def publish(self, topic: str, payload: dict[str, Any]) -> None:
        if self.bus is not None:
            try:
                await self.bus.publish(f"partida/{topic}", payload)
            except Exception:
                log.exception("could not publish %s", topic)

    async def _reap_finished_rooms(self) -> None:
        """Finished rooms leave memory after a while; rooms that never start are closed (their
        games stored as aborted), so abandoned rooms do not pile up."""
        loop = asyncio.get_running_loop()
        waiting_ttl = self.limiter.limits.waiting_room_ttl
        while True:
            await asyncio.sleep(min(30.0, max(waiting_ttl / 2, 0.05)) if waiting_ttl else 30.0)
            now = loop.time()
            for code, room in list(self.rooms.items()):
                if room.finished_at is not None and now - room.finished_at > FINISHED_ROOM_TTL:
                    del self.rooms[code]
                    await room.close()
                elif waiting_ttl and room.status == "waiting" and time.time() - room.created > waiting_ttl:
                    with contextlib.suppress(Exception):
                        await room.call(room.close_unstarted)
                    self.rooms.pop(code, None)
                    await room.close()
                else:
                    continue
                if self.cluster is not None:
                    self.cluster.forget(room)  # out of the directory too

    # Connections.

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """Every HTTP request, before any handshake: too many from one address are refused
        here, cheaply; websocket upgrades go on to `connection`, the rest get a file."""
        websocket = "websocket" in request.headers.get("Upgrade", "").lower()
        address = self.addresses.client(_peer(connection), request.headers.get("X-Forwarded-For"))
        if not self.limiter.may_open(address, websocket):
            return web.too_many_requests()
        return None if websocket else web.respond(request)

    async def connection(self, websocket: ServerConnection) -> None:
        request = websocket.request
        forwarded = request.headers.get("X-Forwarded-For") if request is not None else None
        address = self.addresses.client(_peer(websocket), forwarded)
        limits = self.limiter.admit(address)
        if limits is None:
            await websocket.close(1008, "too many connections from your address")
            return
        session = Session(websocket, address=address, outbox_limit=self.config.outbox_bytes, limits=limits)
        self.sessions.add(session)
        writer = asyncio.get_running_loop().create_task(session.writer())
        first = True
        idle: IdleWatch | None = None
        try:
            while True:
                if session.greeted:
                    frame = await websocket.recv()
                else:
                    try:
                        async with asyncio.timeout(self.limiter.limits.hello_timeout or None):
                            frame = await websocket.recv()
                    except TimeoutError:
                        log.info("%s (%s): no hello in time, closing", session.name, address)
                        session.close_soon(1008, "no hello in time")
                        break
                if idle is not None:
                    idle.touch()
                if first:
                    session.encoding = encoding_of(frame)
                    first = False
                await self.handle_frame(session, frame)
                if session.closed:
                    break
                if idle is None and session.greeted and self.limiter.limits.idle_timeout:
                    idle = IdleWatch(session, self.limiter.limits.idle_timeout)
        except ConnectionClosed:
            pass
        finally:
            if idle is not None:
                idle.cancel()
            self.limiter.release(limits)
            self.sessions.discard(session)
            self.lobby.unwatch(session)
            self.challenges.drop_from(session)
            self._challenged_left(session)
            if self.cluster is not None:
                self.cluster.presence.left(session)
            self.ladders.disconnected(session)
            if session.rooms:
                # one task of its own leaves every room, to the last, even if this one is cancelled
                await asyncio.shield(asyncio.ensure_future(self._leave_rooms(session)))
            session.close_soon()
            try:
                await asyncio.wait_for(writer, 1 if session.close_reason[0] == 1008 else 5)
            except Exception:  # a client that reads nothing, not even the close: cut it off
                writer.cancel()
                websocket.transport.abort()

    async def _leave_rooms(self, session: Session) -> None:
        """A gone connection's seats, in every room it was in, one room after the other: one
        task for them all, where each room was a task of its own (`Room.call`), and a bot that
        played game after game on one connection is in every room not yet reaped."""
        for room in list(session.rooms):
            with contextlib.suppress(Exception):  # a room that closed meanwhile; failures are logged
                await room.call_here(lambda room=room: room.disconnect(session))

    async def handle_frame(self, session: Session, frame: bytes | str) -> None:
        request_id = None
        request = None
        try:
            limited = None
            if session.limits is not None:
                try:
                    self.limiter.request(session.limits)  # before decoding: bad frames count too
                except ProtocolError as exc:
                    if exc.close:
                        raise
                    limited = exc
            message = decode(frame, self.config.max_message_bytes)
            request_id = message.get("id")
            if not isinstance(request_id, REQUEST_ID_TYPES):
                request_id = None
            if limited is not None:
                raise limited
            request = parse_request(message)
            if not session.greeted and request.type != "hello":
                raise ProtocolError(ErrorCode.HELLO_REQUIRED, "the first message must be a hello")
            if session.limits is not None and isinstance(getattr(request, "room", None), str):
                self.limiter.may_guess(session.limits)
            await self.handlers[request.type](session, request)
        except ProtocolError as exc:
            if exc.code == ErrorCode.NO_SUCH_ROOM and self.cluster is not None and request is not None:
                found = await self._elsewhere(session, request, exc)  # on another node?
                if found is None:
                    return
                exc = found
            if exc.code == ErrorCode.NO_SUCH_ROOM and session.limits is not None:
                self.limiter.guessed(session.limits)
            reply_to = request_id if request_id is not None else exc.request_id
            session.send(error_message(exc.code, exc.message, reply_to, **(exc.details or {})))
            if exc.close:
                close_code = 1009 if exc.code == ErrorCode.FRAME_TOO_LARGE else 1008
                session.close_soon(close_code, exc.code)
        except (SQLAlchemyError, StorageError, OSError) as exc:
            # A full disk, a read-only file, a lost database server: the operator's to fix, the
            # player's to retry; one line in the log rather than a traceback per request.
            log.error("%s: storage failed: %s", session.name, describe_error(exc))
            session.send(error_message(ErrorCode.STORAGE, "the database cannot store that now; try again", request_id))
        except Exception:
            log.exception("%s: request failed", session.name)
            session.send(error_message(ErrorCode.INTERNAL, "the server failed on that request", request_id))

    async def _elsewhere(self, session: Session, request: Any, missing: ProtocolError) -> ProtocolError | None:
        """A room this node does not have: `moved` if another node has it; if its node is dead,
        this node takes it over and runs the request (None: done). Otherwise `missing`."""
        assert self.cluster is not None
        code = getattr(request, "room", None)
        if not isinstance(code, str):
            return missing
        try:
            if request.type in ("watch", "leave") and self.cluster.relaying:
                if await self.cluster.serve_here(session, request):  # a spectator of another node's room
                    return None
            if not await self.cluster.find(code):
                return missing
            await self.handlers[request.type](session, request)
        except ProtocolError as exc:
            return exc
        except Exception:
            log.exception("%s: request failed", session.name)
            return ProtocolError(ErrorCode.INTERNAL, "the server failed on that request")
        return None

    # Handshake and lobby.

    async def on_hello(self, session: Session, req: m.Hello) -> None:
        if session.greeted:
            raise ProtocolError(ErrorCode.ALREADY_GREETED, "this connection has already said hello")
        if req.version not in SUPPORTED_VERSIONS:
            supported = ", ".join(map(str, sorted(SUPPORTED_VERSIONS)))
            raise ProtocolError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"protocol version {req.version} is not supported (supported: {supported})",
                close=True,
            )
        resume = None
        if req.token is not None:
            await self.logins.check(session.address, None)
            account = await self.store.check_token(req.token)
            if account is None:
                self.logins.failed(session.address, None)
                raise ProtocolError(ErrorCode.AUTH_FAILED, "unknown bot token", close=True)
            self.logins.succeeded(session.address, None)
            if session.limits is not None:
                session.limits.exempt = True
            agent = req.agent if req.agent is not None else account.name
            problem = check_name(agent, GUEST_NAME_LENGTH, "an agent name")
            if problem is not None:
                raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {problem}")
            identity = Identity(account.name, "bot", account.id, agent, req.games)
        elif req.agent is not None or req.games is not None:
            raise ProtocolError(
                ErrorCode.NOT_A_BOT,
                "only a bot account may declare an agent or games: log in with its token "
                "(an operator creates one with `partida db create-bot NAME`)",
            )
        elif req.password is not None or req.resume is not None:
            if not req.name:
                raise ProtocolError(ErrorCode.AUTH_FAILED, "a password needs an account name", close=True)
            account = await self._resumed(req.name, req.resume) if req.resume is not None else None
            if account is None:
                if req.password is None:
                    raise ProtocolError(ErrorCode.AUTH_FAILED, "that session has ended: log in again", close=True)
                await self.logins.check(session.address, req.name)
                async with self.logins.turn(session.address):
                    await self.logins.check(session.address, req.name, pause=False)  # failures came in meanwhile?
                    account = await self.store.check_password(req.name, req.password)
                if account is None:
                    self.logins.failed(session.address, req.name)
                    raise ProtocolError(ErrorCode.AUTH_FAILED, "wrong account name or password", close=True)
                self.logins.succeeded(session.address, req.name)
            identity = Identity(account.name, "user", account.id)
            resume = self.logins.resume_token(account.id)
        else:
            name = (req.name or "").strip()[:GUEST_NAME_LENGTH] or f"guest-{session.id}"
            problem = check_name(name, GUEST_NAME_LENGTH, "a name")
            if problem is not None:
                raise ProtocolError(ErrorCode.BAD_FIELD, f"hello: {problem}")
            if name.lower().startswith(RESERVED_PREFIX) or (taken := await self.store.reserved_name(name)):
                owner = name if name.lower().startswith(RESERVED_PREFIX) else taken
                raise ProtocolError(
                    ErrorCode.NAME_RESERVED,
                    f"the name {owner!r} belongs to an account: log in to it, or pick another name",
                )
            identity = Identity(name, "guest")
        session.identity = identity
        session.version = req.version
        if self.cluster is not None and identity.account_id is not None:
            await self.cluster.presence.arrived(session)  # findable from other nodes
        session.send(
            server_message(
                "welcome",
                req.id,
                version=req.version,
                server=f"partida {__version__}",
                session=session.id,
                you=identity.to_data(),
                **({"nodes": self.cluster.node_urls} if self.cluster is not None else {}),
                **({"resume": resume} if resume is not None else {}),
            )
        )
        if identity.account_id is not None and identity.kind == "bot":
            await self.return_bot_to_its_seats(session)

    async def _resumed(self, name: str, token: str) -> Account | None:
        """The user account `name` if `token` is a session token this server gave it."""
        account_id = self.logins.resumed(token)
        if account_id is None:
            return None
        account = await self.store.get_account(account_id)
        if account is None or account.kind != "user" or account.name.lower() != name.lower():
            return None
        return account

    async def return_bot_to_its_seats(self, session: Session) -> None:
        """After a restart the pool bots reconnect (and after a takeover they are here already):
        put them back in the games they were playing."""
        assert session.identity is not None
        for room in list(self.rooms.values()):
            if room.status != "playing":
                continue
            for seat, occupant in enumerate(room.seats):
                if (
                    occupant is not None
                    and occupant.account_id == session.identity.account_id
                    and occupant.session is None
                ):
                    await room.call(lambda room=room, seat=seat: room.seat_bot(session, seat))

    async def on_ping(self, session: Session, req: m.Ping) -> None:
        session.send(server_message("pong", req.id))

    async def on_list_games(self, session: Session, req: m.ListGames) -> None:
        games = []
        for game in self.registry.games():
            info = game.describe()
            info["bots"] = sorted({s.identity.agent for s in self.bot_sessions() if self._bot_plays(s, game.name)})  # type: ignore[union-attr,misc]
            games.append(info)
        session.send(server_message("games", req.id, games=games))

    async def on_list_rooms(self, session: Session, req: m.ListRooms) -> None:
        limit = check_page_request(req.game, req.status, req.cursor, req.limit)
        if session.outbox_bytes > UNREAD_BEFORE_LISTING:
            # Its earlier replies are still unread: nothing more is built for it until it reads.
            raise ProtocolError(ErrorCode.RATE_LIMITED, "read the replies sent to you before asking for more")
        if session.limits is not None and not self.lobby.cached(
            req.game, req.status, req.cursor, limit, session.encoding
        ):
            self.limiter.charge(session.limits, limit / 10)  # a page built costs the asker what it costs
        page = await self.lobby.page(req.game, req.status, req.cursor, limit, session.encoding)
        session.send_frame(rooms_reply(req.id, page, session.encoding))
        if req.watch:
            self.lobby.watch(session, req.game, req.status)
        elif req.watch is False:
            self.lobby.unwatch(session)

    async def _other_nodes_rooms(
        self, game: str | None, status: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        assert self.cluster is not None
        return await self.cluster.lobby(game, status, after, limit)

    def room(self, code: str) -> Room:
        room = self.rooms.get(code.strip().upper())
        if room is None:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, f"there is no room {code!r}")
        return room

    def _room_terms(
        self, session: Session, name: str, raw_options: dict[str, Any] | None, raw_seats: int | None, raw_clock: Any
    ) -> tuple[Game, dict[str, Any], int, ClockSpec | None]:
        """The game, options, seat count and clock a new room would have, checked (for
        `create_room` and `challenge`), and the asker allowed one more waiting room."""
        try:
            game = self.registry.get(name)
        except UnknownGame as exc:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None
        # The size as sent is checked before the game reads the options (a game may parse text
        # in them), the size as resolved after (defaults and conversions: what is stored).
        self._check_options_size(raw_options or {})
        try:
            options = game.resolve_options(raw_options)
            seats = game.check_seats(raw_seats)
        except BadOptions as exc:
            raise ProtocolError(ErrorCode.BAD_OPTIONS, str(exc)) from None
        self._check_options_size(options)
        if session.limits is not None:
            limit = self.limiter.limits.waiting_rooms_per_address
            self.limiter.may_create_room(session.limits, self._waiting_by_address.count(session.address, limit))
        try:
            clock = ClockSpec.parse(raw_clock)
        except BadClock as exc:
            raise ProtocolError(ErrorCode.BAD_CLOCK, str(exc)) from None
        return game, options, seats, clock

    def _check_options_size(self, options: dict[str, Any]) -> None:
        size = len(encode(options, Encoding.MSGPACK))
        if size > self.limiter.limits.options_bytes:
            raise ProtocolError(
                ErrorCode.BAD_OPTIONS, f"the options take {size} bytes; at most {self.limiter.limits.options_bytes}"
            )

    async def on_create_room(self, session: Session, req: m.CreateRoom) -> None:
        game, options, seats, clock = self._room_terms(session, req.game, req.options, req.seats, req.clock)
        if req.public and session.limits is not None:
            limit = self.limiter.limits.public_rooms_per_address
            self.limiter.may_open_public_room(session.limits, self._public_by_address.count(session.address, limit))
        if req.bots:
            self._may_play_bots(session)
        bots = await self._parse_bot_seats(req.bots or {}, seats, game.name)
        if bots and clock is None:
            clock = self._bot_game_clock()
        if req.seat is not None and not 0 <= req.seat < seats:
            raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this game has seats 0 to {seats - 1}")
        grace = self.config.abandon_after if req.abandon_after is None else req.abandon_after
        if not 0 < grace <= MAX_SECONDS:
            raise ProtocolError(
                ErrorCode.BAD_OPTIONS, f"abandon_after must be more than 0 and at most a day, not {grace}"
            )
        # `room_created` is sent once the room's row is committed: a room that could not be
        # stored (a full disk) is refused, never announced (docs/speed.md, "A new room's row").
        room = await self.open_room(game, options, seats, req.public, session, req.auto_start, clock, grace)
        if bots:
            self._bot_games_by_address.add(session.address, room)
        if self.publishes("lobby/room_created"):
            await self.publish(
                "lobby/room_created", {"type": "room_created", **room.event_base(), "public": room.public}
            )
        seat = None
        token = None
        if req.seat is not None:
            # no `room` push for it: the new room has nobody else, and `room_created` below
            # carries the same summary (the push cost a summary, an encoding and a frame per game)
            seat = await room.call_here(lambda: room.join(session, req.seat, None, announce=False))
        for bot_seat, (bot_session, _) in bots.items():
            await room.call(lambda b=bot_session, s=bot_seat: room.seat_bot(b, s))
        if seat is not None:
            token = room.token_for(seat)
        session.send(
            server_message("room_created", req.id, room=room.code, summary=room.summary(), seat=seat, token=token)
        )

    async def open_room(
        self,
        game: Game,
        options: dict[str, Any],
        seats: int,
        public: bool,
        owner: Session | None,
        auto_start: bool,
        clock: ClockSpec | None,
        abandon_after: float,
    ) -> Room:
        """A new room, stored and running (for `create_room` and rematches)."""
        room = Room(self, game, options, seats, public, owner, auto_start, clock=clock, abandon_after=abandon_after)
        while room.code in self.rooms:
            room = Room(self, game, options, seats, public, owner, auto_start, clock=clock, abandon_after=abandon_after)
        room.game_id = await self.store.create_game(
            game.name,
            options,
            room.seed,
            room.seed_hash,
            seats,
            room.code,
            public,
            clock=clock.to_data() if clock else None,
            endings=room.endings.to_data(),
        )
        if self.cluster is not None:
            await self.cluster.add_room(room)  # may give the room another code
        self.rooms[room.code] = room
        if owner is not None:
            self._waiting_by_address.add(owner.address, room)
            if public:
                self._public_by_address.add(owner.address, room)
        room.open()
        self.lobby.changed(room)
        return room

    async def _parse_bot_seats(self, bots: dict[Any, str], seats: int, game: str) -> dict[int, tuple[Session, str]]:
        chosen: dict[int, tuple[Session, str]] = {}
        for key, agent in bots.items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                raise ProtocolError(ErrorCode.BAD_FIELD, f"bots: {key!r} is not a seat number") from None
            if not 0 <= seat < seats:
                raise ProtocolError(ErrorCode.NO_SUCH_SEAT, f"this game has seats 0 to {seats - 1}")
            chosen[seat] = (await self.find_bot(agent, game), agent)
        return chosen

    def _may_play_bots(self, session: Session) -> None:
        if session.limits is not None:
            limit = self.limiter.limits.bot_games_per_address
            self.limiter.may_play_bots(session.limits, self._bot_games_by_address.count(session.address, limit))

    def _bot_game_clock(self) -> ClockSpec | None:
        """The clock of a game with a bot whose creator asked for none: a player who walks away
        without leaving (and so is never abandoned) must not hold the bot's game for good."""
        seconds = self.limiter.limits.bot_move_seconds
        return ClockSpec(per_move=seconds) if seconds > 0 else None

    def _bot_games(self, bot: Session) -> int:
        return sum(1 for room in bot.rooms if room.status in ("waiting", "playing"))

    def bot_sessions(self) -> list[Session]:
        """Connected bot accounts; only these can be seated as bots."""
        return [s for s in self.sessions if s.identity is not None and s.identity.kind == "bot" and not s.closed]

    @staticmethod
    def _bot_plays(session: Session, game: str) -> bool:
        """A bot plays the games it declared; a built-in agent also only those it knows. A custom
        agent that declared no games is offered every game (it may refuse a challenge)."""
        identity = session.identity
        assert identity is not None and identity.agent is not None
        return plays(identity.agent, identity.games, game)

    def _bot_account(self, name: str) -> Session | None:
        """The connection of the bot account `name` here, if it is connected here."""
        return next((s for s in self.bot_sessions() if s.identity.name.lower() == name.lower()), None)  # type: ignore[union-attr]

    def pick_bot(self, wanted: str, game: str) -> Session:
        """The bot to seat for `wanted`: a connected bot account of that name (any agent, built-in
        or its own), else the least busy bot running the built-in agent of that name: the server's
        own pool bots first, someone's bot account running that agent only when no pool bot does."""
        bots = self.bot_sessions()
        most = self.limiter.limits.games_per_bot
        bot = self._bot_account(wanted)
        if bot is not None:
            if not self._bot_plays(bot, game):
                raise ProtocolError(ErrorCode.NO_BOT_AVAILABLE, f"the bot {bot.name} does not play {game}")
            if self._bot_games(bot) >= most:
                raise ProtocolError(
                    ErrorCode.NO_BOT_AVAILABLE, f"the bot {bot.name} is playing {most} games, its most; try again later"
                )
            return bot
        candidates = [s for s in bots if s.identity.agent == wanted and self._bot_plays(s, game)]  # type: ignore[union-attr]
        if candidates:
            free = [s for s in candidates if self._bot_games(s) < most]
            if not free:
                raise ProtocolError(
                    ErrorCode.NO_BOT_AVAILABLE,
                    f"every {wanted} bot is playing {most} games, its most; try again later",
                )
            # the server's own pool bot first (an agent's name means it), then the least busy
            return min(free, key=lambda s: (not s.name.startswith(RESERVED_PREFIX), self._bot_games(s)))
        available = sorted({s.identity.agent for s in bots if self._bot_plays(s, game)})  # type: ignore[union-attr,misc]
        hint = ", ".join(available) if available else "none"
        if wanted not in all_agents():
            raise ProtocolError(
                ErrorCode.UNKNOWN_AGENT,
                f"{wanted!r} is neither a built-in agent nor a connected bot account "
                f"(agents connected for {game}: {hint})",
            )
        raise ProtocolError(
            ErrorCode.NO_BOT_AVAILABLE, f"no {wanted} bot is connected for {game} (connected bots: {hint})"
        )

    async def find_bot(self, wanted: str, game: str) -> Session:
        """`pick_bot`; with several nodes, a bot account of that name connected only to another
        node is summoned here (server/presence.py)."""
        try:
            return self.pick_bot(wanted, game)
        except ProtocolError as exc:
            if self.cluster is None or exc.code not in (ErrorCode.UNKNOWN_AGENT, ErrorCode.NO_BOT_AVAILABLE):
                raise
            if self._bot_account(wanted) is not None:
                raise  # connected here, and does not play the game
            bot = await self.cluster.presence.summon(wanted, game)
            if bot is None:
                raise
            return bot

    async def on_games(self, session: Session, req: m.Games) -> None:
        account_id = session.identity.account_id if session.identity else None
        games = await self.store.list_games(
            history.check_limit(req.limit),
            req.game,
            req.status,
            player=req.player,
            only_visible=True,
            account_id=account_id,
        )
        session.send(server_message("stored_games", req.id, games=[history.listing(g) for g in games]))

    async def on_game(self, session: Session, req: m.GameRecord) -> None:
        stored = await self.store.load_game(req.game_id)
        account_id = session.identity.account_id if session.identity else None
        if stored is None or not history.may_see(stored, account_id):
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {req.game_id} you may see")
        try:
            game = self.registry.get(stored.game)
        except UnknownGame as exc:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, str(exc)) from None
        live = next((r for r in self.rooms.values() if r.game_id == stored.id), None)
        session.send(server_message("stored_game", req.id, game=history.record(stored, game, live, steps=req.steps)))

    # Challenges (the bookkeeping is server/challenges.py).

    async def on_challenge(self, session: Session, req: m.Challenge) -> None:
        me = session.identity
        assert me is not None
        targets = [
            s
            for s in self.sessions
            if s.identity is not None
            and s.identity.account_id is not None
            and s.identity.name.lower() == req.to.strip().lower()
            and not s.closed
        ]
        if not targets and self.cluster is not None:
            elsewhere = await self.cluster.presence.elsewhere(req.to)
            if elsewhere:
                await self._challenge_elsewhere(session, req, elsewhere)
                return
        if not targets:
            raise ProtocolError(
                ErrorCode.NO_SUCH_PLAYER, f"no account named {req.to!r} is connected (guests cannot be challenged)"
            )
        target = targets[0].identity
        assert target is not None and target.account_id is not None
        if target.account_id == me.account_id:
            raise ProtocolError(ErrorCode.BAD_FIELD, "challenge: you cannot challenge yourself")
        game, options, seats, clock = self._room_terms(session, req.game, req.options, req.seats, req.clock)
        if target.kind == "bot":
            self._may_play_bots(session)
            clock = clock or self._bot_game_clock()
        challenge = Challenge(session, target.account_id, target.name, game, options, seats, clock)
        if target.kind == "bot":
            # A bot answers by the games it declared: no round trip, it is seated like any bot.
            session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
            bot = min(targets, key=self._bot_games)
            most = self.limiter.limits.games_per_bot
            if not self._bot_plays(bot, game.name) or self._bot_games(bot) >= most:
                busy = f"{target.name} is playing {most} games, its most; try again later"
                reason = busy if self._bot_plays(bot, game.name) else f"{target.name} does not play {game.name}"
                declined = server_message("challenge_declined", challenge=challenge.id, by=target.name, reason=reason)
                session.send(declined)
                return
            await self._open_challenge_room(challenge, bot)
            return
        self.challenges.add(challenge)
        session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
        for other in targets:
            other.send(server_message("challenge", challenge=challenge.to_data()))

    async def _challenge_elsewhere(self, session: Session, req: m.Challenge, elsewhere: list[Any]) -> None:
        """A challenge to an account connected to other nodes only (server/presence.py): a bot
        is summoned here and seated; a person is told through each node it is connected to. The
        challenge and its room stay on this node."""
        me = session.identity
        assert me is not None and self.cluster is not None
        where = elsewhere[0]
        if where.account_id == me.account_id:
            raise ProtocolError(ErrorCode.BAD_FIELD, "challenge: you cannot challenge yourself")
        game, options, seats, clock = self._room_terms(session, req.game, req.options, req.seats, req.clock)
        challenge = Challenge(session, where.account_id, where.name, game, options, seats, clock)
        if where.kind != "bot":
            self.challenges.add(challenge)
            session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
            await self.cluster.presence.forward(challenge, elsewhere)
            return
        session.send(server_message("challenge_sent", req.id, challenge=challenge.to_data()))
        try:
            bot = await self.cluster.presence.summon(where.name, game.name)
            if bot is None:
                raise ProtocolError(ErrorCode.NO_BOT_AVAILABLE, f"{where.name} is no longer connected")
        except ProtocolError as exc:  # it does not play the game, or did not come
            declined = server_message("challenge_declined", challenge=challenge.id, by=where.name, reason=exc.message)
            session.send(declined)
            return
        if not session.closed:  # the challenger may have left while the bot came
            await self._open_challenge_room(challenge, bot)

    def _challenged_left(self, session: Session) -> None:
        """The last connection here of a challenged account left: nobody can answer its open
        challenges any more (a new connection is not told of them), so their challengers hear so
        now, not when they lapse minutes later. Challenges forwarded to other nodes stay."""
        me = session.identity
        if me is None or me.account_id is None:
            return
        unanswerable = [c for c in self.challenges.open.values() if c.account_id == me.account_id and not c.nodes]
        if not unanswerable:  # the usual case, told without looking at every connection
            return
        if any(s.identity is not None and s.identity.account_id == me.account_id for s in self.sessions):
            return
        for challenge in unanswerable:
            self.challenges.drop(challenge.id)
            challenge.challenger.send(
                server_message("challenge_declined", challenge=challenge.id, by=challenge.to, reason="left")
            )

    def _challenge_lapsed(self, challenge: Challenge) -> None:
        challenge.challenger.send(
            server_message("challenge_declined", challenge=challenge.id, by=challenge.to, reason="expired")
        )

    async def on_accept(self, session: Session, req: m.AcceptChallenge) -> None:
        remote = self.cluster.presence.holds(req.challenge, session) if self.cluster is not None else None
        if remote is not None:  # it lives on the challenger's node: accepted there
            raise ProtocolError(
                ErrorCode.MOVED,
                f"challenge {req.challenge} is on node {remote.node}",
                details={"url": remote.url, "challenge": req.challenge},
            )
        challenge = self.challenges.take(req.challenge, session)
        room, seat, token = await self._open_challenge_room(challenge, session)
        session.send(
            server_message(
                "challenge_accepted",
                req.id,
                challenge=challenge.id,
                room=room["code"],
                summary=room,
                seat=seat,
                token=token,
            )
        )

    async def on_decline(self, session: Session, req: m.DeclineChallenge) -> None:
        remote = self.cluster.presence.holds(req.challenge, session) if self.cluster is not None else None
        if remote is not None:
            await self.cluster.presence.decline(session, req.id, req.challenge, remote)  # type: ignore[union-attr]
            return
        challenge = self.challenges.take(req.challenge, session)
        assert session.identity is not None
        challenge.challenger.send(
            server_message("challenge_declined", challenge=challenge.id, by=session.identity.name, reason="declined")
        )
        session.send(server_message("challenge_declined", req.id, challenge=challenge.id, by=session.identity.name))

    async def _open_challenge_room(
        self, challenge: Challenge, opponent: Session
    ) -> tuple[dict[str, Any], int, str | None]:
        """A private room for a challenge: the challenger in seat 0, the opponent in seat 1 (a bot
        is seated as a bot), other seats free for whoever gets the code. Returns the opponent's
        room summary, seat and token; the challenger is told by `challenge_accepted`."""
        room = await self.open_room(
            challenge.game,
            challenge.options,
            challenge.seats,
            False,
            challenge.challenger,
            True,
            challenge.clock,
            self.config.abandon_after,
        )
        await room.call(lambda: room.join(challenge.challenger, 0, None))
        challenge.challenger.send(
            server_message(
                "challenge_accepted",
                challenge=challenge.id,
                room=room.code,
                summary=room.summary(),
                seat=0,
                token=room.token_for(0),
            )
        )
        assert opponent.identity is not None
        if opponent.identity.kind == "bot":
            self._bot_games_by_address.add(challenge.challenger.address, room)
            seat = await room.call(lambda: room.seat_bot(opponent, 1))
            return room.summary(), seat, None
        seat = await room.call(lambda: room.join(opponent, 1, None))
        return room.summary(), seat, room.token_for(seat)

    async def on_join(self, session: Session, req: m.Join) -> None:
        room = self.room(req.room)
        seat = await room.call_here(lambda: room.join(session, req.seat, req.token))
        session.send(
            server_message(
                "joined", req.id, room=room.code, summary=room.summary(), seat=seat, token=room.token_for(seat)
            )
        )

    async def on_leave(self, session: Session, req: m.Leave) -> None:
        room = self.room(req.room)
        await room.call_here(lambda: room.leave(session))
        session.send(server_message("left", req.id, room=room.code))

    async def on_watch(self, session: Session, req: m.Watch) -> None:
        room = self.room(req.room)
        if room not in session.rooms:
            self.limiter.may_watch(sum(1 for r in session.rooms if session in r.spectators))
        session.send(server_message("watching", req.id, room=room.code, summary=room.summary()))
        await room.call_here(lambda: room.watch(session))

    async def on_add_bot(self, session: Session, req: m.AddBot) -> None:
        room = self.room(req.room)
        if room.owner is not None and session is not room.owner:
            raise ProtocolError(ErrorCode.NOT_OWNER, "only the room's creator can add bots to it")
        self._may_play_bots(session)
        bot = await self.find_bot(req.agent, room.game.name)
        seat = await room.call(lambda: room.seat_bot(bot, req.seat))
        self._bot_games_by_address.add(session.address, room)
        session.send(
            server_message("bot_added", req.id, room=room.code, summary=room.summary(), seat=seat, agent=req.agent)
        )

    async def on_start(self, session: Session, req: m.Start) -> None:
        room = self.room(req.room)
        await room.call_here(lambda: room.start(session))
        session.send(server_message("started", req.id, room=room.code, summary=room.summary()))

    async def on_act(self, session: Session, req: m.Act) -> None:
        room = self.room(req.room)
        seq = await room.call_here(lambda: room.act(session, req.action, req.seq, req.seat))
        if req.id is not None:
            session.send(server_message("acted", req.id, room=room.code, seq=seq))

    # Endings: resign, draw offers, abort (server/ending_requests.py), rematch (server/rematch.py).

    async def on_ending(self, session: Session, req: m.SeatRequest) -> None:
        """resign, offer_draw, accept_draw, decline_draw and abort: one rule each in
        server/ending_requests.py, run as room commands, then the reply that names it."""
        command, reply = ENDING_REQUESTS[req.type]
        room = self.room(req.room)
        await room.call_here(lambda: command(room, session, req.seat))
        session.send(server_message(reply, req.id, room=room.code))

    async def on_rematch(self, session: Session, req: m.Rematch) -> None:
        room = self.room(req.room)
        ready = await room.call(lambda: offer_rematch(room, session, req.seat))
        new = await room.call(lambda: open_rematch(self, room)) if ready else None
        session.send(server_message("rematch_offered", req.id, room=room.code, rematch=new))


def _peer(websocket: ServerConnection) -> str:
    peer = websocket.remote_address
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")
