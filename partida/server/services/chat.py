"""Chat: `chat` (a line in a room's channel or a tournament's) and `chat_history`, the `chat`
pushes, the history a connection is sent when it joins or watches a room, and the operator's
removals and silences carried to live views.

Who reads and writes which channel is `partida/room/chat.py`'s rule; here a line is checked,
charged to its sender's chat buckets (`Limiter.may_chat`), stored (through the store's group
writer: no commit of its own on the event loop) and only then pushed, so every line anyone saw
is in the game's record. The newest lines of each place are kept in memory, so a join or a watch
costs no read; a place not seen since the server started (a game resumed after a restart) is
read once. The operator works from the command line on the database; a sweep every few seconds
reads the lines removed since the last one (pushed as `chat_removed` to whoever may still show
them) and the silences in force.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.room import chat as rules
from partida.server.limits import Limiter
from partida.server.rooms.driver import Room
from partida.server.rooms.table import Rooms
from partida.server.session import Session, send_all
from partida.storage.chat import HISTORY, ChatLine, ChatStore
from partida.storage.models import utcnow

if TYPE_CHECKING:
    from partida.server.shell import Handler

log = logging.getLogger(__name__)

PLACES_KEPT = 500  # places (games, tournaments) whose newest lines are kept in memory
SWEEP_SECONDS = 2.0  # how often the operator's removals and silences are read back
Place = tuple[str, int]  # ("game", game id) or ("tournament", tournament id)


class ChatService:
    def __init__(self, chat: ChatStore, rooms: Rooms, limiter: Limiter, sweep_seconds: float = SWEEP_SECONDS) -> None:
        self.chat = chat
        self.rooms = rooms
        self.limiter = limiter
        self.sweep_seconds = sweep_seconds
        self._kept: OrderedDict[Place, dict[str, deque[ChatLine]]] = OrderedDict()
        self._tournaments: dict[str, int] = {}  # name -> id, of tournaments chatted in
        self._watchers: dict[int, set[Session]] = {}  # tournament id -> connections reading its chat
        self._watching: dict[Session, int] = {}  # a connection's one tournament chat
        self._silenced: dict[int, datetime | None] = {}  # account id -> until (None: for good)
        self._announced: deque[int] = deque(maxlen=1000)  # removed lines already pushed
        self._sweeper: asyncio.Task[None] | None = None

    def handlers(self) -> Mapping[str, Handler]:
        return {"chat": self.on_chat, "chat_history": self.on_history}

    # Life cycle.

    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper

    def disconnected(self, session: Session) -> None:
        self._stop_watching(session)

    # Requests.

    async def on_chat(self, session: Session, req: m.Chat) -> None:
        identity = session.identity
        assert identity is not None  # the shell lets only greeted connections this far
        seat: int | None = None
        if req.room is not None:
            if req.tournament is not None:
                raise ProtocolError(ErrorCode.BAD_FIELD, "chat: name a room or a tournament, not both")
            room = self.rooms.room(req.room)
            seats = _seats_of(room, session)
            channel = rules.channel_to_post(req.channel, bool(seats), session in room.spectators)
            seat = seats[0] if seats else None
            place: Place = ("game", room.core.game_id)
        elif req.tournament is not None:
            if req.channel not in (None, rules.TOURNAMENT):
                raise ProtocolError(ErrorCode.BAD_FIELD, f"chat: a tournament's channel is {rules.TOURNAMENT}")
            place, channel, room = ("tournament", await self._tournament(req.tournament)), rules.TOURNAMENT, None
        else:
            raise ProtocolError(ErrorCode.BAD_FIELD, "chat: name a room or a tournament")
        text = rules.clean(req.text)
        self._check_silence(identity.account_id)
        if session.limits is not None:
            account = None if identity.account_id is None else f"account:{identity.account_id}"
            self.limiter.may_chat(f"connection:{session.id}", account, f"address:{session.address}")
        await self._lines_of(place)  # the place's history in memory before the line joins it
        line = await self.chat.add(place, channel, identity.account_id, identity.name, identity.kind, seat, text)
        self._keep(place, line)
        if room is not None:
            readers = self._room_readers(room, channel)
            send_all(readers, server_message("chat", room=room.code, message=line.to_data()))
        else:
            self._watch(session, place[1])
            readers = self._watchers.get(place[1], set())
            send_all(readers, server_message("chat", tournament=req.tournament, message=line.to_data()))
        session.send(server_message("chat_sent", req.id, message=line.to_data()))

    async def on_history(self, session: Session, req: m.ChatHistory) -> None:
        """A room's lines this connection may read, or a tournament's (and its chat pushed from
        now on: a connection reads one tournament's chat at a time)."""
        if (req.room is None) == (req.tournament is None):
            raise ProtocolError(ErrorCode.BAD_FIELD, "chat_history: name a room or a tournament")
        if req.room is not None:
            room = self.rooms.room(req.room)
            lines = await self._room_lines(room, session)
            session.send(server_message("chat_history", req.id, room=room.code, messages=lines))
            return
        assert req.tournament is not None
        tournament_id = await self._tournament(req.tournament)
        self._watch(session, tournament_id)
        lines = _lines_data((await self._lines_of(("tournament", tournament_id))).values())
        session.send(server_message("chat_history", req.id, tournament=req.tournament, messages=lines))

    # The rooms' hooks.

    async def entered(self, session: Session, room: Room) -> None:
        """A connection joined or watched `room`: the lines it may read, as a `chat_history`
        push (none when there are none, as in nearly every new room)."""
        try:
            lines = await self._room_lines(room, session)
        except Exception:  # the history is a courtesy: the join stands without it
            log.exception("room %s: could not read its chat", room.code)
            return
        if lines:
            session.send(server_message("chat_history", room=room.code, messages=lines))

    def game_over(self, room: Room) -> None:
        """A game ended: its players may read the spectators' channel now (`rules`), so each
        is sent it as a history push."""
        kept = self._kept.get(("game", room.core.game_id))
        said = kept.get(rules.SPECTATORS) if kept else None
        if not said:
            return
        players = [s.session for s in room.core.seats if s is not None and s.session is not None]
        lines = [line.to_data() for line in said]
        send_all(players, server_message("chat_history", room=room.code, messages=lines, channel=rules.SPECTATORS))

    # Places and their lines.

    async def _room_lines(self, room: Room, session: Session) -> list[dict[str, Any]]:
        over = room.core.status in ("finished", "aborted")
        channels = rules.channels_read(bool(_seats_of(room, session)), over)
        kept = await self._lines_of(("game", room.core.game_id))
        return _lines_data(kept[c] for c in channels if c in kept)

    def opened(self, room: Room) -> None:
        """A room opened afresh on this server: every line its game will have is said through
        here, so its history starts kept, empty, and no join of it reads the database."""
        self._remember(("game", room.core.game_id), {})

    async def _lines_of(self, place: Place) -> dict[str, deque[ChatLine]]:
        """The newest lines of `place` by channel, read once from the database when not kept."""
        kept = self._kept.get(place)
        if kept is not None:
            self._kept.move_to_end(place)
            return kept
        kept = {}
        channels = rules.ROOM_CHANNELS if place[0] == "game" else (rules.TOURNAMENT,)
        for line in await self.chat.history(place, channels):
            kept.setdefault(line.channel, deque(maxlen=HISTORY)).append(line)
        if place in self._kept:  # another request read it meanwhile: its lines since are there
            return self._kept[place]
        return self._remember(place, kept)

    def _remember(self, place: Place, kept: dict[str, deque[ChatLine]]) -> dict[str, deque[ChatLine]]:
        self._kept[place] = kept
        while len(self._kept) > PLACES_KEPT:
            self._kept.popitem(last=False)
        return kept

    def _keep(self, place: Place, line: ChatLine) -> None:
        kept = self._kept.setdefault(place, {})
        kept.setdefault(line.channel, deque(maxlen=HISTORY)).append(line)

    @staticmethod
    def _room_readers(room: Room, channel: str) -> set[Session]:
        """Who reads a line of `channel` in `room` now: its spectators always, its players as
        the rule says (`rules.players_read`)."""
        if rules.players_read(channel, room.core.status in ("finished", "aborted")):
            return room.audience()
        # a player's every connection is a player's, even one that only watches (a second tab)
        return {session for session in room.spectators if not _seats_of(room, session)}

    async def _tournament(self, name: str) -> int:
        tournament_id = self._tournaments.get(name)
        if tournament_id is None:
            tournament_id = await self.chat.tournament_id(name)
            if tournament_id is None:
                raise ProtocolError(ErrorCode.NO_SUCH_TOURNAMENT, f"there is no tournament named {name!r}")
            if len(self._tournaments) > PLACES_KEPT:
                self._tournaments.clear()
            self._tournaments[name] = tournament_id
        return tournament_id

    def _watch(self, session: Session, tournament_id: int) -> None:
        if self._watching.get(session) == tournament_id:
            return
        self._stop_watching(session)
        self._watching[session] = tournament_id
        self._watchers.setdefault(tournament_id, set()).add(session)

    def _stop_watching(self, session: Session) -> None:
        old = self._watching.pop(session, None)
        if old is not None:
            watchers = self._watchers.get(old)
            if watchers is not None:
                watchers.discard(session)
                if not watchers:
                    del self._watchers[old]

    # The operator's removals and silences.

    def _check_silence(self, account_id: int | None) -> None:
        if account_id is None or account_id not in self._silenced:
            return
        until = self._silenced[account_id]
        if until is not None and until <= utcnow():
            del self._silenced[account_id]
            return
        when = "for good" if until is None else f"until {until.isoformat(timespec='minutes')}"
        raise ProtocolError(
            ErrorCode.SILENCED,
            f"the operator silenced this account {when}",
            details={"until": None if until is None else until.isoformat()},
        )

    async def _sweep_forever(self) -> None:
        since = utcnow() - timedelta(seconds=self.sweep_seconds)
        while True:
            started = utcnow()
            try:
                await self.sweep(since)
                since = started - timedelta(seconds=1)  # a removal committed as the last sweep read
            except Exception as exc:  # the database away: the next sweep reads what this one missed
                log.warning("chat: could not read the operator's removals and silences (%s)", exc)
            await asyncio.sleep(self.sweep_seconds)

    async def sweep(self, since: datetime) -> None:
        """Read the silences in force and the lines removed since `since`; take each removed
        line out of memory and tell whoever may be showing it."""
        self._silenced = await self.chat.silenced()
        for line in await self.chat.removed_since(since):
            if line.id in self._announced:
                continue
            self._announced.append(line.id)
            kept = self._kept.get(line.where)
            if kept is not None and line.channel in kept:
                kept[line.channel] = deque((one for one in kept[line.channel] if one.id != line.id), maxlen=HISTORY)
            kind, ident = line.where
            if kind == "game":
                room = self.rooms.by_game_id(ident)
                if room is not None:
                    removed = server_message("chat_removed", room=room.code, id=line.id)
                    # only to those who may read its channel: a player mid-game learns nothing of
                    # the spectators' channel, not even that a line of it was removed
                    send_all(self._room_readers(room, line.channel), removed)
            else:
                watchers = self._watchers.get(ident)
                if watchers:
                    name = next((n for n, i in self._tournaments.items() if i == ident), None)
                    send_all(watchers, server_message("chat_removed", tournament=name, id=line.id))


def _seats_of(room: Room, session: Session) -> list[int]:
    """The seats `session` plays in `room`: those it holds, else those of its account (its
    other connections'), else, for a guest, those under its name. A player who also watches
    from another tab is a player there too, so the spectators' channel stays closed to it."""
    held = room.core.seats_of(session)
    identity = session.identity
    if held or identity is None:
        return held
    return [
        i
        for i, seat in enumerate(room.core.seats)
        if seat is not None
        and (
            seat.account_id == identity.account_id
            if identity.account_id is not None
            else seat.account_id is None and seat.name == identity.name
        )
    ]


def _lines_data(channels: Iterable[Iterable[ChatLine]]) -> list[dict[str, Any]]:
    """Lines of several channels as one list, in the order they were said."""
    return [line.to_data() for line in sorted((ln for lines in channels for ln in lines), key=lambda ln: ln.id)]
