"""The tournament director: it runs each tournament from its start to its last game: round robins
and Swiss round by round, arenas continuously.

It opens rooms with `RoomTerms` (private rooms, the tournament's game, options and clock), seats
its entrants through the rooms' own commands, and reads each table's outcome from the stored game.
It keeps nothing that the database does not hold: a restarted server picks every running
tournament up from its rows, and a game that ended meanwhile is counted once, from its stored
result. The pairing and scoring rules are pure (`partida.competition`); this module only does what
needs I/O. The requests (`tournament_create`, ...) are answered by
`partida.server.services.tournaments`, which tells the director of a new tournament (`plan`) and a
new entrant (`entered`).

When a round is paired, each connected entrant is seated at once: a bot by itself (`seated`), a
person with a pushed `tournament_game` that carries the room, seat and seat token. An entrant not
connected has `NO_SHOW_SECONDS` to come and join its seat (it can find it with
`tournament_pairings`); a table that does not fill in that time is decided for those present.

The director's work follows what happens, not what is stored: it reads the live tournaments' ids,
status and times (`TournamentStore.schedule`) when it starts and every `RESCAN` seconds, and looks
at a tournament only when something is due there: its start, an arena's end, one of its games
over, an entrant joining, a table's no-show time, or (an arena) a free entrant connecting. A
server holding thousands of idle tournaments sleeps between those moments
(`server/competition/scheduler.py`). Every rule's time is read from the injected clock (`now`,
seconds since the epoch), so the rules can be tested without waiting for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from partida.competition import tiebreaks
from partida.competition.points import Score, table_points, tally
from partida.competition.tables import arena_scores, history_of, next_tables
from partida.games.registry import Registry
from partida.protocol import ProtocolError, server_message
from partida.room.clocks import ClockSpec
from partida.room.terms import RoomTerms
from partida.server.account_presence import AccountPresence, SingleNodePresence
from partida.server.competition.scheduler import TICK, Scheduler
from partida.server.connections import Connections
from partida.server.publisher import Publisher
from partida.server.scheduler_lock import SchedulerLock
from partida.storage.tournaments import RoundTaken, Slot, Table, TournamentInfo, TournamentStore

if TYPE_CHECKING:
    from partida.server.rooms.driver import Room
    from partida.server.rooms.table import Rooms

log = logging.getLogger(__name__)

RESCAN = 30.0  # seconds between two reads of the live tournaments' times (another node's new ones)
ELSEWHERE = 5.0  # seconds between looks at a tournament whose game is on another node (no end is told here)
# Seconds at least between two looks: the ends of an arena's games (several a second with a
# few hundred entrants) are taken together, each look reading the tournament's tables once.
SETTLE = 0.25
NO_SHOW_SECONDS = 60.0  # how long a table waits for an entrant who was not connected when paired
LOCK_KEY = 0x746F75726E  # "tourn" in ASCII: the tournaments' advisory lock, apart from the ladders'


class TournamentDirector:
    def __init__(
        self,
        store: TournamentStore,
        rooms: Rooms,
        registry: Registry,
        connections: Connections,
        publisher: Publisher,
        listing_changed: Callable[[], None],
        presence: AccountPresence | None = None,
        lock: SchedulerLock | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.rooms = rooms  # this node's rooms: its tables are opened there
        self.registry = registry
        self.connections = connections
        self.publisher = publisher
        self.listing_changed = listing_changed  # the tournament list's pages are built again
        self.presence: AccountPresence = presence if presence is not None else SingleNodePresence()
        # With several nodes: the lock (its own key) that makes one node run the tournaments.
        self.lock = lock
        self.now = now
        self.scheduler = Scheduler("tournaments", self.tick, self._due_in, lock=lock, settle=SETTLE, logger=log)
        self._paired_at: dict[tuple[int, int, int], float] = {}  # (tournament, round, table) -> when
        self._room_of: dict[str, int] = {}  # a table's room here -> its tournament, until the game ends
        self._slots: dict[int, Slot] = {}  # the live tournaments, as last read or created here
        self._timeline: list[tuple[float, int]] = []  # (when, tournament): a start or an arena's end, a heap
        self._look_at: dict[int, float] = {}  # tournament -> when a table of it reaches its no-show time
        self._waiting: dict[int, set[int]] = {}  # arena -> its free entrants not connected here
        self._due: set[int] = set()  # tournaments to look at now
        self._read_at = 0.0  # time.monotonic() of the next read of the schedule (0: at once)

    # Life cycle.

    def start(self) -> None:
        self.scheduler.start()

    async def stop(self) -> None:
        await self.scheduler.stop()

    def wake(self) -> None:
        self.scheduler.wake()

    def rescan(self) -> None:
        """Read the live tournaments' times at the next look (`partida tournament create
        --db` adds one behind the server's back; it is read within `RESCAN` seconds otherwise)."""
        self._read_at = 0.0
        self.wake()

    def plan(self, slot: Slot) -> None:
        """A tournament created here: its start (and an arena's end) on the timeline."""
        self._plan(slot)
        self.wake()

    def entered(self, tournament: int) -> None:
        """An entrant joined: an arena may pair the newcomer at once."""
        self._due.add(tournament)
        self.wake()

    def game_over(self, room: Room) -> None:
        """A subscriber to this node's finished games (`Rooms.on_finished`): one of its tables
        ended, so the next round (or, in an arena, the players' next games) is paired now.
        Other games cost a dict lookup."""
        tournament = self._room_of.pop(room.code, None)
        if tournament is not None:
            self._due.add(tournament)
            self.wake()

    def _due_in(self) -> float:
        """Seconds until something is due: a start, an arena's end, a no-show time, the next
        read of the schedule; `TICK` while watching for entrants of an arena to connect."""
        if self._waiting:
            return TICK
        if self._due:
            return 0.0
        now = self.now()
        soonest = self._read_at - time.monotonic()
        if self._timeline:
            soonest = min(soonest, self._timeline[0][0] - now)
        if self._look_at:
            soonest = min(soonest, min(self._look_at.values()) - now)
        return min(max(soonest, 0.0), RESCAN)

    async def tick(self) -> None:
        """Look at each tournament something is due in: its start, an arena's end, a game of
        it over, an entrant come, a table's no-show time. A round another node recorded first
        is left to it."""
        try:
            await self._tick()
        except RoundTaken as exc:
            log.info("tournaments: %s", exc)

    async def _tick(self) -> None:
        if time.monotonic() >= self._read_at:
            await self._read_schedule()
            self._read_at = time.monotonic() + RESCAN
        now = self.now()
        while self._timeline and self._timeline[0][0] <= now:
            self._due.add(heapq.heappop(self._timeline)[1])
        for tournament, when in list(self._look_at.items()):
            if when <= now:
                del self._look_at[tournament]
                self._due.add(tournament)
        if self._waiting:
            connected = self.connections.account_ids()
            away = sorted({a for accounts in self._waiting.values() for a in accounts} - connected)
            connected |= await self.presence.connected_among(away)  # connected to another node
            for tournament, accounts in list(self._waiting.items()):
                if accounts & connected:
                    del self._waiting[tournament]
                    self._due.add(tournament)
        while self._due:
            for tournament in sorted(self._due):
                await self._look(tournament)
                self._due.discard(tournament)  # only once looked at: a failed look is tried again

    async def _read_schedule(self) -> None:
        """The live tournaments' ids, status and times. A running one not known before (this
        server just started, or another node ran it) is looked at once, unless it is an arena
        nobody is entered in (a join looks at it; its end is on the timeline)."""
        slots = {slot.id: slot for slot in await self.store.schedule()}
        for slot in slots.values():
            if slot.id not in self._slots:
                if slot.status == "running" and (slot.entered or slot.format != "arena"):
                    self._due.add(slot.id)
                self._plan(slot)
        for gone in self._slots.keys() - slots.keys():
            self._forget(gone)
        self._slots = slots

    def _plan(self, slot: Slot) -> None:
        """Put a tournament's start, and an arena's end, on the timeline."""
        self._slots[slot.id] = slot
        if slot.status == "registering":
            heapq.heappush(self._timeline, (slot.starts_at, slot.id))
        if slot.ends_at is not None:
            heapq.heappush(self._timeline, (slot.ends_at, slot.id))

    def _forget(self, tournament: int) -> None:
        self._slots.pop(tournament, None)
        self._look_at.pop(tournament, None)
        self._waiting.pop(tournament, None)

    async def _look(self, tournament: int) -> None:
        info = await self.store.by_id(tournament)
        if info is None or info.status == "finished":
            self._forget(tournament)
            return
        if info.id not in self._slots:  # created behind this node's back (`--db`, another node), not read yet
            self._plan(Slot(info.id, info.status, info.format, info.starts_at.timestamp(), info.duration))
        if info.status == "registering":
            if info.starts_at.timestamp() > self.now():
                return  # still on the timeline
            await self.store.set_state(info.id, status="running")
            info.status = "running"
            self.listing_changed()
            await self._announce(info, "tournament_started")
        await self._advance(info)

    # Running a tournament.

    async def _advance(self, info: TournamentInfo) -> None:
        entrants = await self.store.entrants(info.id)
        active = [e.account_id for e in entrants if not e.withdrawn]
        ends = info.starts_at.timestamp() + (info.duration or 0)
        if info.format == "arena" and info.round == 0 and len(active) < info.seats and self.now() < ends:
            return  # no game yet and too few to play one: an entrant's join looks again
        tables = await self.store.tables(info.id)
        await self._settle_no_shows(info, tables)
        self._follow(info, tables)
        current = [t for t in tables if t.round == info.round]
        if info.format == "arena":
            if self.now() < ends:
                busy = {a for t in tables if not t.decided for a in t.accounts}
                connected = self.connections.account_ids()
                # Entrants connected to other nodes are free too: a bot is summoned, a person called.
                connected |= await self.presence.connected_among([a for a in active if a not in connected])
                free = [a for a in active if a not in busy and a in connected]
                pairs = next_tables(info.format, info.seats, active, tables, free=free, round=info.round + 1)
                if pairs:
                    await self._open_round(info, info.round + 1, pairs)
                    paired = {a for accounts in pairs for a in accounts}
                    free = [a for a in free if a not in paired]
                away = {a for a in active if a not in busy and a not in connected}
                if away and len(away) + len(free) >= info.seats:
                    self._waiting[info.id] = away  # one of them connecting makes a game
                else:
                    self._waiting.pop(info.id, None)
                return
            if all(t.decided for t in tables):
                await self._finish(info, tables, entrants)
            return
        if current and not all(t.decided for t in current):
            return  # the round is still being played
        if info.round >= self._rounds(info, len(active)) or len(active) < info.seats:
            if info.round > 0 or len(active) < info.seats:
                await self._finish(info, tables, entrants)
            return
        pairs = next_tables(info.format, info.seats, active, tables, round=info.round + 1)
        if not pairs:
            await self._finish(info, tables, entrants)
            return
        await self._open_round(info, info.round + 1, pairs)

    def _follow(self, info: TournamentInfo, tables: list[Table]) -> None:
        """Make sure the end of each undecided table's game is told: a room here is followed (a
        resumed one too); a room on another node, or not yet there, is looked at again later."""
        times: list[float] = []
        for table in tables:
            if table.decided or table.room_code is None:
                continue
            if table.room_code in self.rooms:
                self._room_of[table.room_code] = info.id
                if table.status == "waiting":  # its no-show time
                    since = self._paired_at.get((info.id, table.round, table.table), self.now())
                    times.append(since + NO_SHOW_SECONDS)
            else:
                times.append(self.now() + ELSEWHERE)
        if times:
            self._look_at[info.id] = min(times)
        else:
            self._look_at.pop(info.id, None)

    def _rounds(self, info: TournamentInfo, entrants: int) -> int:
        """The rounds a tournament plays: a round robin's follow from its entrants and cycles."""
        if info.format == "round-robin":
            per_cycle = entrants - 1 if entrants % 2 == 0 else entrants
            return per_cycle * (info.rounds or 1)
        return info.rounds or 1

    async def _open_round(self, info: TournamentInfo, round: int, tables: list[list[int]]) -> None:
        """Open a room per table (a table of one is a bye), record the round whole, then seat
        whoever is connected. A round another scheduler recorded first is left to it."""
        game = self.registry.get(info.game)
        clock = ClockSpec.parse(info.clock)
        grace = self.rooms.abandon_after
        terms = RoomTerms(game, info.options, info.seats, public=True, clock=clock, abandon_after=grace)
        number = max((t.table for t in await self.store.tables(info.id, round)), default=0)
        rows: list[tuple[int, list[int], int | None, dict[str, Any] | None]] = []
        opened: list[tuple[int, Room, list[int]]] = []
        for accounts in tables:
            number += 1
            if len(accounts) < info.seats:
                bye = {"ranks": [1], "bye": True, "points": 0.0 if info.format == "round-robin" else 1.0}
                rows.append((number, accounts, None, bye))
                continue
            room = await self.rooms.open(replace(terms, kept=tuple(accounts)), None)
            rows.append((number, accounts, room.core.game_id, None))
            opened.append((number, room, accounts))
        try:
            await self.store.open_round(info.id, round, rows)
        except RoundTaken:
            for _, room, _ in opened:
                with contextlib.suppress(Exception):
                    await room.call(room.close_unstarted)
            raise
        info.round = round
        log.info("tournament %s: round %d paired (%d tables)", info.name, round, len(rows))
        kinds = {e.account_id: (e.name, e.kind) for e in await self.store.entrants(info.id)}
        self.listing_changed()
        for number, room, _ in opened:
            self._paired_at[(info.id, round, number)] = self.now()
            self._room_of[room.code] = info.id
        if opened:  # the no-show time of the tables just paired
            self._look_at.setdefault(info.id, self.now() + NO_SHOW_SECONDS)
        await asyncio.gather(
            *(self._seat(info, round, number, room, accounts, kinds) for number, room, accounts in opened)
        )
        # An arena pairs whoever is free, game after game: its "rounds" are each a few tables, told
        # to those seated there (`tournament_game`, `seated`); pushing each to every entrant cost
        # the server more than the arena's games themselves.
        await self._announce(info, "tournament_round", round=round, entrants=info.format != "arena")

    async def _seat(
        self,
        info: TournamentInfo,
        round: int,
        table: int,
        room: Room,
        accounts: list[int],
        kinds: Mapping[int, tuple[str, str]],
    ) -> None:
        """Seat each entrant connected here; a bot connected only to another node is summoned
        here first (`AccountPresence.summon`), as a challenge does."""
        names = [kinds.get(a, (f"#{a}", "user"))[0] for a in accounts]
        for seat, account_id in enumerate(accounts):
            sessions = self.connections.of_account_id(account_id)
            if not sessions and kinds.get(account_id, ("", "user"))[1] == "bot":
                try:
                    summoned = await self.presence.summon(names[seat], info.game)
                except ProtocolError as exc:
                    log.info("tournament %s: %s", info.name, exc.message)
                    summoned = None
                sessions = [summoned] if summoned is not None else []
            if not sessions:
                # A person connected to another node is called there: the seat is kept for them.
                called = {"tournament": info.name, "round": round, "table": table, "room": room.code}
                with contextlib.suppress(Exception):  # not called: `tournament_pairings` finds the table
                    await self.presence.call(names[seat], "tournament_game", {**called, "seat": seat, "players": names})
                continue
            session = sessions[0]
            assert session.identity is not None
            pushed: dict[str, Any] = {
                "tournament": info.name,
                "round": round,
                "table": table,
                "room": room.code,
                "seat": seat,
                "players": names,
            }
            try:
                if session.identity.kind == "bot":
                    await room.call(lambda s=session, i=seat: room.seat_bot(s, i))
                else:
                    await room.call(lambda s=session, i=seat: room.join(s, i, None))
                    pushed["token"] = room.core.token_for(seat)
            except ProtocolError as exc:
                log.info("tournament %s: could not seat %s: %s", info.name, session.name, exc.message)
                continue
            for other in sessions:
                other.send(server_message("tournament_game", **pushed))

    async def _settle_no_shows(self, info: TournamentInfo, tables: list[Table]) -> None:
        """A table still waiting for an entrant `NO_SHOW_SECONDS` after it was paired (or first
        seen by this node) is decided for those seated; one whose room is not on this node by then
        (a restart or a node's death before it filled) counts for no one."""
        for table in tables:
            if table.decided or table.status != "waiting" or table.room_code is None:
                continue
            room = self.rooms.get(table.room_code)
            key = (info.id, table.round, table.table)
            since = self._paired_at.setdefault(key, self.now())
            if self.now() - since < NO_SHOW_SECONDS:
                continue  # a room not here yet may still come: resumed after a restart, taken over from a dead node
            present = [i for i, s in enumerate(room.core.seats) if s is not None] if room is not None else []
            ranks = [1 if seat in present else 2 for seat in range(len(table.accounts))]
            result = {"ranks": ranks, "reason": "no_show"} if present else {"ranks": [0] * len(ranks), "void": True}
            await self.store.decide(info.id, table.round, table.table, result)
            table.result = result
            self._paired_at.pop(key, None)
            self._room_of.pop(table.room_code, None)
            if room is not None:
                with contextlib.suppress(Exception):
                    await room.call(room.close_unstarted)

    async def _finish(self, info: TournamentInfo, tables: list[Table], entrants: list[Any]) -> None:
        await self.store.set_state(info.id, status="finished")
        info.status = "finished"
        self._forget(info.id)
        self.listing_changed()
        rows = standings(info.format, tables, entrants)
        await self._announce(info, "tournament_over", standings=rows)

    async def _announce(self, info: TournamentInfo, kind: str, entrants: bool = True, **fields: Any) -> None:
        """Tell the entrants connected here and, through their nodes, those connected only to
        other nodes (unless `entrants` is False), and publish it for everyone else."""
        message = server_message(kind, tournament=info.name, **fields)
        if entrants:
            away = []
            for entrant in await self.store.entrants(info.id):
                if not entrant.withdrawn:
                    sessions = self.connections.of_account_id(entrant.account_id)
                    for session in sessions:
                        session.send(message)
                    if not sessions:
                        away.append(entrant.account_id)
            with contextlib.suppress(Exception):  # not told elsewhere: the standings say it all the same
                await self.presence.tell(away, message)
        await self.publisher.publish(f"tournaments/{info.name}/{kind.removeprefix('tournament_')}", message)


def standings(tournament_format: str, tables: list[Table], entrants: list[Any]) -> list[dict[str, Any]]:
    """The standings: `tiebreaks.py`'s order (a round robin's or a Swiss's tie-breaks), an
    arena's by its points first (a win on a streak of two or more counts double, see
    `arena_scores`), with each entrant's current streak; each line with the entrant's record."""
    arena = tournament_format == "arena"
    scores: dict[int, Score] = {e.account_id: Score(e.account_id) for e in entrants}
    decided = [t for t in tables if t.result is not None and not t.result.get("void")]
    tally(scores, [(t.accounts, table_points(t.result, arena)) for t in decided])  # type: ignore[arg-type]
    order = tiebreaks.ROUND_ROBIN_ORDER if tournament_format == "round-robin" else tiebreaks.SWISS_ORDER
    rows = tiebreaks.standings([e.account_id for e in entrants], history_of(tables), order)
    streaks = arena_scores(tables) if arena else {}
    if arena:
        for account, score in streaks.items():
            if account in scores:
                scores[account].points = float(score.points)
        rows.sort(key=lambda row: -scores[row.player].points)  # stable: the tie-breaks next
    by_id = {e.account_id: e for e in entrants}

    def level(row: tiebreaks.Row) -> Any:  # what entrants sharing a rank share
        return (scores[row.player].points, row.rank) if arena else row.rank

    places: list[int] = []
    for i, row in enumerate(rows):
        places.append(places[-1] if i and level(rows[i - 1]) == level(row) else i + 1)
    return [
        {
            "rank": place,
            **scores[row.player].to_data(),
            **{name: float(value) for name, value in row.tiebreaks.items()},
            **({"streak": streaks[row.player].streak if row.player in streaks else 0} if arena else {}),
            "name": by_id[row.player].name,
            "bot": by_id[row.player].kind == "bot",
            "withdrawn": by_id[row.player].withdrawn,
        }
        for place, row in zip(places, rows, strict=True)
    ]
