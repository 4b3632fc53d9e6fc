"""The wiring: the one place that builds the server's parts and hands each service the few it
uses, chooses where rooms and accounts are looked for (a single server, or one node of several),
and runs the life cycle.

What each part does is in its own module: the shell turns frames into requests
(`server/shell.py`), the services answer them (`server/services/`), rooms play games
(`server/rooms/`), the room directory and the presence find what is not here
(`server/room_directory.py` and `server/cluster.py`, `server/account_presence.py` and
`server/presence.py`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.http11 import Request, Response

from partida.games.registry import Registry, default_registry
from partida.protocol import MAX_MESSAGE_BYTES
from partida.room.endings import DEFAULT_ABANDON_AFTER
from partida.server import web
from partida.server.account_presence import AccountPresence, SingleNodePresence
from partida.server.addresses import Addresses
from partida.server.challenges import Challenges
from partida.server.cluster import DEFAULT_LEASE, Cluster, NodeParts
from partida.server.competition.ladder_director import LadderDirector
from partida.server.competition.tournament_director import LOCK_KEY as TOURNAMENTS_LOCK
from partida.server.competition.tournament_director import TournamentDirector
from partida.server.connections import Connections
from partida.server.conversation import Conversation
from partida.server.events import EventBus, open_bus
from partida.server.limits import Limiter, Limits
from partida.server.live_nodes import LiveNodes
from partida.server.lobby import Lobby
from partida.server.lobby_relay import LobbyRelay
from partida.server.logins import Logins
from partida.server.presence import Presence
from partida.server.publisher import Publisher
from partida.server.room_directory import RoomDirectory, SingleNodeRooms
from partida.server.rooms.table import Rooms
from partida.server.scheduler_lock import SchedulerLock
from partida.server.seek_board import SeekBoard
from partida.server.seek_exchange import SeekExchange
from partida.server.services.accounts import AccountService
from partida.server.services.bots import BotDirectory
from partida.server.services.challenges import ChallengeService
from partida.server.services.chat import SWEEP_SECONDS, ChatService
from partida.server.services.export import ExportService
from partida.server.services.greeting import Greeting
from partida.server.services.history import HistoryService
from partida.server.services.hosted_bots import HostedBotService, HostingSettings
from partida.server.services.invitations import InvitationService
from partida.server.services.ladders import LadderService
from partida.server.services.lobby import LobbyService
from partida.server.services.ratings import RatingService
from partida.server.services.rooms import RoomService
from partida.server.services.seeks import SeekService
from partida.server.services.tournaments import TournamentService
from partida.server.session import OUTBOX_BYTES, Session
from partida.server.shell import Shell
from partida.server.sign_ups import DEFAULT_MODE as DEFAULT_SIGN_UP
from partida.server.sign_ups import SignUps
from partida.server.tournament_list import TournamentPages
from partida.server.transport import Link, Listener, serve
from partida.storage.database import Database, default_url
from partida.storage.hosted import HostedStore
from partida.storage.invites import InviteStore
from partida.storage.nodes import NodeDirectory
from partida.storage.sqlite_claim import SqliteClaim
from partida.storage.store import Store
from partida.storage.tournaments import TournamentStore

log = logging.getLogger(__name__)


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
    # Who may make an account from a client (server/sign_ups.py): open, invite or closed.
    sign_up: str = DEFAULT_SIGN_UP
    # How often the operator's chat removals and silences (made from the command line) are read back.
    chat_sweep: float = SWEEP_SECONDS
    # Hosted bots (`partida serve --host-bots`): where their bundles are stored; None: hosting off.
    hosting: HostingSettings | None = None


class Server:
    """The parts, built here: those that need no database at once, the services when `start`
    has opened the database. Tests and the CLI reach the parts by these attributes."""

    def __init__(self, config: ServerConfig, registry: Registry | None = None) -> None:
        self.config = config
        self.registry = registry or default_registry(config.game_files, config.game_dirs)
        self.limiter = Limiter(config.limits)
        self.logins = Logins(config.limits)
        self.addresses = Addresses(config.trusted_proxies)
        self.connections = Connections()
        self.challenges = Challenges()
        self.publisher = Publisher()
        self.cluster: Cluster | None = None
        self.room_directory: RoomDirectory = SingleNodeRooms()  # where rooms are
        self.presence: AccountPresence = SingleNodePresence()  # where accounts are
        if config.node is not None:
            public_url = config.public_url or self.url
            live = LiveNodes([public_url])
            node_presence = Presence(config.node, public_url, live, self.registry, self.publisher, self.challenges)
            self.cluster = Cluster(config.node, public_url, live, node_presence, config.lease)
            self.room_directory = self.cluster
            self.presence = node_presence
        self.lobby = Lobby(remote=self.room_directory.other_rooms)
        # this node's rooms, their one holder
        self.rooms = Rooms(
            self.registry, self.lobby, self.room_directory, self.publisher, self.limiter.limits, config.abandon_after
        )
        self.shell = Shell(self.limiter, self.room_directory, config.max_message_bytes)
        self.bots = BotDirectory(
            self.connections,
            self.registry,
            self.limiter,
            self.presence,
            self.rooms.by_address(lambda room: room.core.status in ("waiting", "playing")),
        )
        self.db: Database | None = None
        self.store: Store = None  # type: ignore[assignment]  # set in start()
        self.bus: EventBus | None = None
        self.room_service: RoomService = None  # type: ignore[assignment]  # set in start()
        self.ladders: LadderService = None  # type: ignore[assignment]  # set in start()
        self.ladder_director: LadderDirector = None  # type: ignore[assignment]  # set in start()
        self.tournaments: TournamentService = None  # type: ignore[assignment]  # set in start()
        self.tournament_director: TournamentDirector = None  # type: ignore[assignment]  # set in start()
        self.ratings: RatingService = None  # type: ignore[assignment]  # set in start()
        self.lobby_service: LobbyService = None  # type: ignore[assignment]  # set in start()
        self.challenge_service: ChallengeService = None  # type: ignore[assignment]  # set in start()
        self.seeks = SeekBoard()
        self.seek_service: SeekService = None  # type: ignore[assignment]  # set in start()
        self.chat: ChatService = None  # type: ignore[assignment]  # set in start()
        self.hosted_bots: HostedBotService = None  # type: ignore[assignment]  # set in start()
        self.seek_exchange: SeekExchange | None = None  # a node with a broker: every node's seeks
        self.lobby_relay: LobbyRelay | None = None  # a node with a broker: every node's rooms, pushed
        self.tournament_pages: TournamentPages | None = None  # set in start()
        self._ws: Listener | None = None
        self._claim: SqliteClaim | None = None

    @property
    def sessions(self) -> set[Session]:
        return self.connections.sessions

    @property
    def handlers(self) -> dict[str, Any]:
        return self.shell.handlers

    def bot_sessions(self) -> list[Session]:
        return self.connections.bots()

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
        self.store = Store(self.db, fence=None if self.cluster is None else self.cluster.fence)
        self.bus = await open_bus(self.config.mqtt_url)
        self.publisher.bus = self.bus
        self._build_services(self.db)
        if self.cluster is None:
            await self.rooms.resume(await self.store.unfinished_games())
        else:
            try:
                await self.cluster.start(
                    self._node_parts(NodeDirectory(self.db), self.bus)
                )  # resumes this node's and dead nodes' games
            except BaseException:
                await self.bus.close()
                await self.db.close()
                self._release_claim()
                raise
        if self.cluster is not None and self.cluster.relaying:
            self.seek_exchange = SeekExchange(self.cluster.name, self.cluster.public_url, self.seeks, self.publisher)
            await self.seek_exchange.start(self.db, self.bus)
            self.seek_service.shared = self.seek_exchange
            self.lobby_relay = LobbyRelay(self.cluster.name, self.lobby, self.tournament_pages, self.publisher)
            self.lobby_relay.start(self.bus)
        await self.ladder_director.start()
        self._ws = await serve(
            self.connection,
            self.config.host,
            self.config.port,
            max_size=max(self.config.max_message_bytes * 16, 1 << 20),
            ping_interval=20,
            ping_timeout=20,
            process_request=self._process_request,  # plain HTTP GETs get the browser client (server/web.py)
        )
        if self.config.port == 0:
            self.config.port = next(iter(self._ws.sockets)).getsockname()[1]
        self.rooms.start()
        self.tournament_director.start()
        self.ratings.start()
        self.chat.start()
        log.info("serving on ws://%s:%d", self.config.host, self.config.port)

    def _build_services(self, db: Database) -> None:
        """Each service with the parts it uses, and its request types registered with the shell."""
        self.rooms.attach(self.store)
        rooms = RoomService(self.rooms, self.registry, self.limiter, self.bots, self.publisher)
        lock = SchedulerLock(db, self.cluster.name) if self.cluster is not None else None
        self.ladder_director = LadderDirector(
            self.store,
            self.rooms,
            self.registry,
            self.publisher,
            nodes=self.cluster,
            lock=lock,
        )
        self.ladders = LadderService(self.store.ladders, self.registry, self.ladder_director)
        self.rooms.on_finished(self.ladder_director.game_over)
        self.ratings = RatingService(self.store, self.registry)
        self.rooms.on_started(self.ratings.game_started)
        self.rooms.on_finished(self.ratings.game_over)
        self.room_service = rooms
        self.lobby_service = LobbyService(self.lobby, self.limiter)
        self.challenge_service = ChallengeService(
            self.challenges, self.connections, self.presence, self.bots, rooms, self.rooms, self.limiter
        )
        self.seek_service = SeekService(
            self.seeks,
            rooms,
            self.rooms,
            self.bots,
            rating_of=self.store.person_ratings.rating_of,
            limiter=self.limiter,
            presence=self.presence,
        )
        tournament_store = TournamentStore(db)
        tournament_pages = self.tournament_pages = TournamentPages(tournament_store.page)
        self.tournament_director = TournamentDirector(
            tournament_store,
            self.rooms,
            self.registry,
            self.connections,
            self.publisher,
            tournament_pages.changed,
            presence=self.presence,
            lock=SchedulerLock(db, self.cluster.name, TOURNAMENTS_LOCK, "the tournaments") if self.cluster else None,
        )
        self.tournaments = TournamentService(
            tournament_store,
            self.registry,
            self.limiter,
            rooms.check_options,
            tournament_pages,
            self.tournament_director,
        )
        self.rooms.on_finished(self.tournament_director.game_over)
        self.chat = ChatService(self.store.chat, self.rooms, self.limiter, self.config.chat_sweep)
        rooms.entered.append(self.chat.entered)
        self.rooms.on_finished(self.chat.game_over)
        self.rooms.on_opened(self.chat.opened)
        self.hosted_bots = HostedBotService(HostedStore(db), self.registry, self.config.hosting, self.limiter.limits)
        services = [
            Greeting(
                self.store,
                self.logins,
                self.presence,
                bot_arrived=rooms.return_bot_to_its_seats,
                sign_ups=SignUps(self.config.limits, self.config.sign_up),
                invites=InviteStore(db),
            ),
            AccountService(self.store, self.logins, self.connections),
            InvitationService(self.rooms),
            self.bots,
            self.lobby_service,
            rooms,
            HistoryService(self.store, self.registry, self.rooms.by_game_id),
            ExportService(self.store, self.registry, self.rooms.by_game_id, self.limiter),
            self.challenge_service,
            self.seek_service,
            self.ladders,
            self.tournaments,
            self.ratings,
            self.chat,
            self.hosted_bots,
        ]
        for service in services:
            self.shell.register(service.handlers())

    def _node_parts(self, directory: NodeDirectory, bus: EventBus) -> NodeParts:
        return NodeParts(
            directory=directory,
            store=self.store,
            bus=bus,
            registry=self.registry,
            limiter=self.limiter,
            rooms=self.rooms,
            bots=self.connections.bots,
            resume=self.rooms.resume,
            seat_bot_again=self.room_service.return_bot_to_its_seats,
        )

    @property
    def url(self) -> str:
        return f"ws://{self.config.host}:{self.config.port}"

    @property
    def http_url(self) -> str:
        """Where a browser opens the web client (same port as the websocket)."""
        return f"http://{self.config.host}:{self.config.port}/"

    async def stop(self) -> None:
        if self.tournament_director is not None:
            await self.tournament_director.stop()
        if self.ladder_director is not None:
            await self.ladder_director.stop()
        if self.ratings is not None:
            await self.ratings.stop()
        if self.chat is not None:
            await self.chat.stop()
        await self.lobby.stop()
        self.seeks.stop()
        if self.tournament_pages is not None:
            self.tournament_pages.stop()
        if self._ws is not None:
            self._ws.close()
            await self._ws.wait_closed()
        await self.rooms.stop()
        if self.seek_exchange is not None:
            await self.seek_exchange.stop()
        if self.lobby_relay is not None:
            await self.lobby_relay.stop()
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

    async def _disconnected(self, session: Session) -> None:
        """A connection closed: every part that kept something of it forgets it, its seats last."""
        self.connections.discard(session)
        self.lobby_service.disconnected(session)
        self.challenge_service.disconnected(session)
        self.seek_service.disconnected(session)
        if self.tournament_pages is not None:
            self.tournament_pages.unwatch(session)
        self.presence.departed(session)
        self.ladders.disconnected(session)
        if self.chat is not None:
            self.chat.disconnected(session)
        self.hosted_bots.disconnected(session)
        await self.room_service.disconnected(session)

    # Connections.

    def _process_request(self, link: Link, request: Request) -> Response | None:
        """Every HTTP request, before any handshake: too many from one address are refused
        here, cheaply; websocket upgrades go on to `connection`, the rest get a file."""
        websocket = "websocket" in request.headers.get("Upgrade", "").lower()
        address = self.addresses.client(_peer(link), request.headers.get("X-Forwarded-For"))
        if websocket:
            wait = self.limiter.may_open(address)
            return web.too_many_requests(wait) if wait else None
        response = web.respond(request)
        wait = self.limiter.may_fetch(address, web.cost(response))
        return web.too_many_requests(wait) if wait else response

    def connection(self, link: Link) -> Conversation | None:
        """A client past the handshake: its session, or a close if its address has too many."""
        request = link.request
        forwarded = request.headers.get("X-Forwarded-For") if request is not None else None
        address = self.addresses.client(_peer(link), forwarded)
        limits = self.limiter.admit(address)
        if limits is None:
            link.close(1008, "too many connections from your address")
            return None
        session = Session(link, address=address, outbox_limit=self.config.outbox_bytes, limits=limits)
        self.connections.add(session)
        timeouts = self.limiter.limits
        return Conversation(
            link, session, self.shell.handle_frame, self._ended, timeouts.hello_timeout, timeouts.idle_timeout
        )

    async def _ended(self, session: Session) -> None:
        """A connection's end (it was closed, or its client went)."""
        assert session.limits is not None
        self.limiter.release(session.limits)
        await self._disconnected(session)
        session.close_soon()


def _peer(link: Link) -> str:
    peer = link.remote_address
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")
