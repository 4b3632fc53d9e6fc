"""Quick pairing: `seek` posts "play a 5+3 Othello with anyone", paired at once with the oldest
compatible waiting seek or listed until someone takes it (`seek_take`); `seek_cancel` and
`list_seeks` (with pushed changes). A pairing opens a private room with both seated and tells
each person its room, seat and seat token (`seek_paired`); a bot is seated as any bot is.

The rules (compatibility, who may answer, the order) are `partida.competition.seeks`; the open
seeks, their pages and their pushes are `server/seek_board.py`. A listing costs the asker what it
costs (`Limiter.charge`): the bytes it is sent, and the page's building when no one asked for it
since it changed.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from partida.competition.ratings import PersonRating
from partida.competition.seeks import Party, Seek, accepts, compatible, seek_problem
from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.room.clocks import ClockSpec
from partida.room.terms import RoomTerms
from partida.server.limits import Limiter
from partida.server.pages import check_reading
from partida.server.rooms.table import Rooms
from partida.server.seek_board import MAX_SEEKS, OpenSeek, SeekBoard, check_page_request
from partida.server.seek_board import reply as seeks_reply
from partida.server.seek_exchange import SeekExchange, owner_from_key, owner_key, row_parts, seek_of
from partida.server.services.bots import BotDirectory
from partida.server.services.rooms import RoomService
from partida.server.session import Session

if TYPE_CHECKING:
    from partida.server.account_presence import AccountPresence
    from partida.server.shell import Handler
    from partida.storage.shared_seeks import SeekRow

# An account's rating (1500 for a newcomer) in a game and a clock's class, for rating ranges (None
# without a class): `store.person_ratings.rating_of`.
RatingOf = Callable[[int, str, ClockSpec | None], Awaitable[PersonRating | None]]

log = logging.getLogger(__name__)

BYTES_PER_TOKEN = 4096  # a listing sent costs the asker a request per this many bytes


class _PosterLeft(Exception):
    """A seek's poster left while its room was being opened: nobody is seated, the room closes."""


class SeekService:
    def __init__(
        self,
        board: SeekBoard,
        terms: RoomService,
        rooms: Rooms,
        bots: BotDirectory,
        rating_of: RatingOf,
        limiter: Limiter,
        shared: SeekExchange | None = None,
        presence: AccountPresence | None = None,
    ) -> None:
        self.board = board
        # A node of several: every node's seeks, paired in the database (None: a single server,
        # whose seeks live in this node's memory alone).
        self.shared = shared
        self.presence = presence  # brings a bot connected to another node to a seek's room
        self.limiter = limiter
        self.terms = terms  # checks a seek's terms as it checks a new room's
        self.rooms = rooms
        self.bots = bots
        self.rating_of = rating_of

    def handlers(self) -> Mapping[str, Handler]:
        return {
            "seek": self.on_seek,
            "seek_cancel": self.on_cancel,
            "seek_take": self.on_take,
            "list_seeks": self.on_list,
        }

    def disconnected(self, session: Session) -> None:
        """A seek dies with its poster's connection."""
        self.board.drop_from(session)
        self.board.unwatch(session)
        if self.shared is not None:
            self.shared.poster_left(session)

    async def on_seek(self, session: Session, req: m.Seek) -> None:
        terms = self.terms.check_terms(session, req.game, req.options, req.seats, req.clock)
        if terms.seats != 2:
            raise ProtocolError(
                ErrorCode.BAD_SEEK, "seeks are for two players: for more, create a room and share its code"
            )
        self._bot_plays(session, terms, None)
        rating_range = _rating_range(req.range)
        party = await self._party(session, terms)
        seek = Seek(
            id=self.board.next_id(),
            posted=time.time(),
            party=party,
            game=terms.game.name,
            options=terms.options,
            seats=terms.seats,
            clock=terms.clock,
            rated=req.rated,
            rating_range=rating_range,
            allow_bots=req.allow_bots,
        )
        problem = seek_problem(seek)
        if problem is not None:
            code = ErrorCode.BAD_SEEK
            if seek.rated and party.is_guest:
                code = ErrorCode.RATED_NEEDS_ACCOUNT
            elif seek.rated and terms.clock is None:
                code = ErrorCode.RATED_NEEDS_CLOCK
            raise ProtocolError(code, f"seek: {problem}")
        exempt = session.limits is None or session.limits.exempt
        most = None if exempt else self.limiter.limits.seeks_per_address
        if self.shared is not None:
            await self._post_shared(session, req, seek, terms, most)
            return
        self.board.check_room_for(party.owner, session.address, most)
        posted = OpenSeek(seek, session, terms)
        tried = False
        while True:
            match = self.board.book.match(seek)
            if match is None:
                if tried:  # other seeks may have come while a pairing was tried
                    self.board.check_room_for(party.owner, session.address, most)
                self.board.add(posted)
                session.send(server_message("seek_posted", req.id, seek=posted.data, paired=False))
                return
            waiting = self.board.take(match.id)
            assert waiting is not None
            tried = True
            try:
                await self._pair(waiting, posted)
            except _PosterLeft:
                continue  # its poster left as the room opened: the next oldest compatible seek, if any
            except BaseException:
                self.board.add(waiting)  # still waiting (unless its poster left): the failure was the room's
                raise
            break
        # after its `seek_paired`: a client reading replies and pushes in order has both
        session.send(server_message("seek_posted", req.id, seek=posted.data, paired=True))

    async def on_cancel(self, session: Session, req: m.SeekCancel) -> None:
        seek = self.board.open.get(req.seek)
        if seek is None or seek.session is not session:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"you have no open seek {req.seek}")
        if self.shared is not None:
            if not await self.shared.table.drop(self.shared.node, [req.seek]):  # being paired by another node
                raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"you have no open seek {req.seek}")
            self.shared.settled(seek)
        self.board.remove(req.seek)
        session.send(server_message("seek_cancelled", req.id, seek=req.seek))

    async def on_take(self, session: Session, req: m.SeekTake) -> None:
        if self.shared is not None:
            await self._take_shared(session, req)
            return
        seek = self.board.open.get(req.seek)
        if seek is None:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"there is no open seek {req.seek}")
        self._bot_plays(session, seek.terms, seek.session)
        party = await self._party(session, seek.terms)
        if not accepts(seek.seek, party):
            raise ProtocolError(ErrorCode.SEEK_REFUSED, f"seek {req.seek} {_why_refused(seek.seek, party)}")
        if self.board.take(req.seek) is None:  # paired or taken while the rating was read
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"there is no open seek {req.seek}")
        try:
            seats = await self._pair(seek, None, taker=session)
        except _PosterLeft:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"seek {req.seek} is gone: its poster left") from None
        except BaseException:
            self.board.add(seek)  # still waiting (unless its poster left)
            raise
        room, seat, token = seats[session]
        opponent = room["seats"][1 - seat]["name"]  # the taker is told whom it plays, as the poster is
        session.send(
            server_message(
                "seek_taken",
                req.id,
                seek=req.seek,
                room=room["code"],
                summary=room,
                seat=seat,
                token=token,
                opponent=opponent,
            )
        )

    async def on_list(self, session: Session, req: m.ListSeeks) -> None:
        limit = check_page_request(req.cursor, req.limit)
        check_reading(session)
        ready = self.board.cached(req.game, req.cursor, limit, session.encoding)
        page = self.board.page(req.game, req.cursor, limit, session.encoding)
        if session.limits is not None:
            # what the page costs: its bytes sent, and its building if nobody asked since it changed
            self.limiter.charge(session.limits, len(page.seeks) / BYTES_PER_TOKEN + (0 if ready else limit / 10))
        session.send_frame(seeks_reply(req.id, page, session.encoding))
        if req.watch:
            self.board.watch(session, req.game)
        elif req.watch is False:
            self.board.unwatch(session)

    def _bot_plays(self, session: Session, terms: RoomTerms, opponent: Session | None) -> None:
        """A bot seated in a game it cannot play would hold the game until its clock ran out:
        its declaration (protocol/accepts.py) is held to when it posts or takes a seek."""
        me = session.identity
        if me is not None and me.kind == "bot":
            self.bots.check(session, terms.game, terms.seats, terms.clock or self.bots.game_clock(), opponent)

    async def _party(self, session: Session, terms: RoomTerms) -> Party:
        me = session.identity
        assert me is not None
        account = me.account_id
        rating = None if account is None else await self.rating_of(account, terms.game.name, terms.clock)
        owner: Any = ("guest", session.id) if account is None else account
        return Party(
            owner,
            rating=None if rating is None else float(rating.display),
            is_bot=me.kind == "bot",
            is_guest=account is None,
            provisional=rating is not None and rating.provisional,
        )

    async def _pair(
        self, first: OpenSeek, second: OpenSeek | None, taker: Session | None = None
    ) -> dict[Session, tuple[dict[str, Any], int, str | None]]:
        """The room of two seeks (or of a seek and the one who took it): private, the seeks'
        terms, seats drawn at random; each person is pushed `seek_paired` with its seat and token
        (a taker learns it from its reply), a bot is seated as a bot. Returns each session's room
        summary, seat and token. Raises `_PosterLeft` when a seek's poster left while the room
        was being opened: the room closes unstarted, with nobody seated."""
        other = second.session if second is not None else taker
        assert other is not None
        sessions = [first.session, other]
        seeks = [first, second]
        bots = [s for s in sessions if s.identity is not None and s.identity.kind == "bot"]
        people = [s for s in sessions if s not in bots]
        if bots:
            for person in people:
                self.bots.may_play_bots(person)
        most = self.bots.limiter.limits.games_per_bot
        for bot in bots:
            if self.bots.games_of(bot) >= most:
                raise ProtocolError(ErrorCode.RATE_LIMITED, f"{bot.name} is playing {most} games, its most")
            for person in people:
                self.bots.may_take(bot, person)
        clock = first.terms.clock or (self.bots.game_clock() if bots else None)
        terms = replace(first.terms, public=False, auto_start=True, clock=clock, rated=first.seek.rated, takebacks=True)
        room = await self.rooms.open(terms, None)
        if secrets.randbelow(2):
            sessions.reverse()
            seeks.reverse()
        tokens: dict[Session, str | None] = {}

        async def seat_both() -> None:
            # Checked in the room's command, before anyone sits: a poster whose connection ended
            # while the room was being stored would otherwise hold a seat nobody sits in. Once
            # seated, a connection's end reaches the room as anyone's does.
            if any(seek is not None and seek.left for seek in seeks):
                await room.close_unstarted()
                raise _PosterLeft
            for seat, session in enumerate(sessions):  # the second seat taken starts the game
                if session in bots:
                    await room.seat_bot(session, seat)
                    tokens[session] = None
                else:
                    await room.join(session, seat, None)
                    tokens[session] = room.core.token_for(seat)

        await room.call(seat_both)
        for seek in seeks:
            if seek is not None:
                self.board.settle(seek)
        if bots and people:
            self.bots.games_by_address.add(people[0].address, room)
        names = [s.name for s in sessions]
        summary = room.summary()
        seated: dict[Session, tuple[dict[str, Any], int, str | None]] = {}
        for seat, (session, seek) in enumerate(zip(sessions, seeks, strict=True)):
            seated[session] = (summary, seat, tokens[session])
            if seek is not None and session not in bots:
                session.send(
                    server_message(
                        "seek_paired",
                        seek=seek.seek.id,
                        room=room.code,
                        summary=summary,
                        seat=seat,
                        token=tokens[session],
                        opponent=names[1 - seat],
                    )
                )
        return seated

    # A node of several (`server/seek_exchange.py`): the database decides each pairing.

    async def _post_shared(self, session: Session, req: m.Seek, seek: Seek, terms: RoomTerms, most: int | None) -> None:
        """Write the seek first, then look for the oldest compatible open seek of any node and
        take both in one claim: of two seeks posted at once on two nodes, the later look sees
        the earlier row, and only one claim of the pair succeeds."""
        shared = self.shared
        assert shared is not None
        key = owner_key(seek.party.owner, shared.node)
        seek = replace(seek, party=replace(seek.party, owner=owner_from_key(key)))
        terms_key, party_data, terms_data = row_parts(seek, session)
        listing = {k: v for k, v in OpenSeek(seek, session, terms).data.items() if k != "id"}
        written = await shared.table.post(
            shared.node, key, session.address, terms_key, party_data, terms_data, listing, MAX_SEEKS, most
        )
        if not written.id:
            if written.owner_count >= MAX_SEEKS:
                raise ProtocolError(
                    ErrorCode.TOO_MANY_SEEKS,
                    f"you have {written.owner_count} open seeks, the most at once: cancel one first",
                )
            raise ProtocolError(
                ErrorCode.TOO_MANY_SEEKS,
                f"{written.address_count} seeks posted from your address are open, the most at once: "
                "wait for some to be paired",
            )
        seek = replace(seek, id=written.id)
        posted = OpenSeek(seek, session, terms)
        shared.local[seek.id] = posted
        if session.closed:  # gone while the row was written
            shared.poster_left(session)
            return
        passed: set[int] = set()  # candidates whose pairing failed for want of their poster
        while True:
            match = None
            for row in await shared.table.candidates(terms_key, seek.id):
                if row.id in passed or not compatible(seek, seek_of(row)):
                    continue
                if row.node == shared.node and row.id not in shared.local:
                    continue  # its poster has just left: its row is on its way out
                found = await shared.table.claim(shared.node, [seek.id, row.id])
                if seek.id not in found:  # another node paired this seek meanwhile: it says so
                    session.send(server_message("seek_posted", req.id, seek=posted.data, paired=False))
                    return
                if row.id in found:
                    match = row
                    break
            if match is None:
                shared.listed(posted)
                session.send(server_message("seek_posted", req.id, seek=posted.data, paired=False))
                return
            try:
                await self._pair_shared(match, posted, None)
            except _PosterLeft:
                passed.add(match.id)
                if posted.left:
                    return
                continue
            except ProtocolError as exc:
                log.info("seek %d: could not pair with seek %d: %s", seek.id, match.id, exc.message)
                passed.add(match.id)
                continue
            except BaseException:  # the poster is answered an error: the seek is not left behind
                shared.local.pop(seek.id, None)
                with contextlib.suppress(Exception):
                    await shared.table.drop(shared.node, [seek.id])
                raise
            break
        session.send(server_message("seek_posted", req.id, seek=posted.data, paired=True))

    async def _take_shared(self, session: Session, req: m.SeekTake) -> None:
        shared = self.shared
        assert shared is not None
        row = await shared.table.get(req.seek)
        if row is None:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"there is no open seek {req.seek}")
        other = seek_of(row)
        terms = self._terms_of(other)
        waiting = shared.local.get(row.id) if row.node == shared.node else None
        if row.node == shared.node and waiting is None:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"there is no open seek {req.seek}")
        self._bot_plays(session, terms, waiting.session if waiting is not None else None)
        party = await self._party(session, terms)
        party = replace(party, owner=owner_from_key(owner_key(party.owner, shared.node)))
        if not accepts(other, party):
            raise ProtocolError(ErrorCode.SEEK_REFUSED, f"seek {req.seek} {_why_refused(other, party)}")
        if req.seek not in await shared.table.claim(shared.node, [req.seek]):  # taken, or paired, meanwhile
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"there is no open seek {req.seek}")
        try:
            seats = await self._pair_shared(row, None, session)
        except _PosterLeft:
            raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"seek {req.seek} is gone: its poster left") from None
        room, seat, token = seats[session]
        session.send(
            server_message("seek_taken", req.id, seek=req.seek, room=room["code"], summary=room, seat=seat, token=token)
        )

    def _terms_of(self, seek: Seek) -> RoomTerms:
        """The room terms of another node's seek, as its node checked them."""
        try:
            game = self.terms.registry.get(seek.game)
        except Exception:
            raise ProtocolError(ErrorCode.UNKNOWN_GAME, f"this node does not have the game {seek.game}") from None
        clock = seek.clock if isinstance(seek.clock, ClockSpec) else None
        return RoomTerms(game, dict(seek.options), seek.seats, clock=clock, abandon_after=self.rooms.abandon_after)

    async def _pair_shared(
        self, row: SeekRow, posted: OpenSeek | None, taker: Session | None
    ) -> dict[Session, tuple[dict[str, Any], int, str | None]]:
        """Pair the claimed seek `row` with this node's new seek `posted` (or with `taker`). Its
        poster here: as on one node. Elsewhere: a bot is summoned, a person has a seat reserved
        and is told through its node. The claimed rows go once the room has both; a failure
        hands them back (`_PosterLeft` drops the row of the poster who left)."""
        shared = self.shared
        assert shared is not None
        ours = [posted.seek.id] if posted is not None else []
        try:
            if row.node == shared.node:
                waiting = shared.local.get(row.id)
                if waiting is None:
                    raise _PosterLeft
                self.board.take(row.id)  # unlisted (if it was listed yet)
                try:
                    seated = await self._pair(waiting, posted, taker=taker)
                except BaseException:
                    self.board.add(waiting)
                    raise
                shared.settled(waiting)
            else:
                seated = await self._pair_elsewhere(row, posted, taker)
                shared.claimed(row.id)
        except _PosterLeft:
            left = [s.seek.id for s in (posted, shared.local.get(row.id)) if s is not None and s.left]
            await shared.table.drop(shared.node, left, claimed_too=True)
            await shared.table.unclaim(shared.node, [i for i in [*ours, row.id] if i not in left])
            raise
        except BaseException:
            await shared.table.unclaim(shared.node, [*ours, row.id])
            raise
        if posted is not None:
            shared.settled(posted)
        await shared.table.drop(shared.node, [*ours, row.id], claimed_too=True)
        return seated

    async def _pair_elsewhere(
        self, row: SeekRow, posted: OpenSeek | None, taker: Session | None
    ) -> dict[Session, tuple[dict[str, Any], int, str | None]]:
        shared = self.shared
        assert shared is not None
        other = seek_of(row)
        name, kind = str(row.party.get("name")), str(row.party.get("kind"))
        terms = posted.terms if posted is not None else self._terms_of(other)
        notice = {"seek": row.id, "node": shared.node}
        if kind == "bot":
            bot = await self.presence.summon(name, other.game) if self.presence is not None else None
            if bot is None:
                raise ProtocolError(ErrorCode.NO_SUCH_SEEK, f"seek {row.id} is gone: its bot left")
            seated = await self._pair(OpenSeek(other, bot, terms), posted, taker=taker)
            await shared.table.paired(row.id, shared.node, {"summoned": True})
            await shared.publisher.publish(f"nodes/{row.node}/seek_paired", notice)
            return seated
        here = posted.session if posted is not None else taker
        assert here is not None and here.identity is not None
        is_bot = here.identity.kind == "bot"
        if is_bot and self.bots.games_of(here) >= self.bots.limiter.limits.games_per_bot:
            most = self.bots.limiter.limits.games_per_bot
            raise ProtocolError(ErrorCode.RATE_LIMITED, f"{here.name} is playing {most} games, its most")
        clock = terms.clock or (self.bots.game_clock() if is_bot else None)
        room = await self.rooms.open(
            replace(terms, public=False, auto_start=True, clock=clock, rated=other.rated), None
        )
        mine = secrets.randbelow(2)
        theirs = 1 - mine
        tokens: dict[int, str | None] = {}

        async def seat_both() -> None:
            if posted is not None and posted.left:
                await room.close_unstarted()
                raise _PosterLeft
            account = row.party.get("account_id")
            tokens[theirs] = room.reserve(theirs, name, kind, account if isinstance(account, int) else None)
            if is_bot:
                await room.seat_bot(here, mine)
                tokens[mine] = None
            else:
                await room.join(here, mine, None)
                tokens[mine] = room.core.token_for(mine)
            room.away_from_the_start(theirs)

        await room.call(seat_both)
        summary = room.summary()
        where = {
            "room": room.code,
            "summary": summary,
            "seat": theirs,
            "token": tokens[theirs],
            "opponent": here.name,
            "url": shared.public_url,
        }
        await shared.table.paired(row.id, shared.node, where)
        await shared.publisher.publish(f"nodes/{row.node}/seek_paired", notice)
        if posted is not None:
            self.board.settle(posted)
            if not is_bot:
                here.send(
                    server_message(
                        "seek_paired",
                        seek=posted.seek.id,
                        room=room.code,
                        summary=summary,
                        seat=mine,
                        token=tokens[mine],
                        opponent=name,
                    )
                )
        return {here: (summary, mine, tokens[mine])}


def _rating_range(raw: list[float] | None) -> tuple[float, float] | None:
    if raw is None:
        return None
    if len(raw) != 2:
        raise ProtocolError(ErrorCode.BAD_SEEK, "seek: range is [low, high]")
    low, high = float(raw[0]), float(raw[1])
    if low > high:
        raise ProtocolError(ErrorCode.BAD_SEEK, f"seek: the rating range {low:g}-{high:g} is empty")
    return low, high


def _why_refused(seek: Seek, party: Party) -> str:
    if party.owner == seek.party.owner:
        return "is your own: cancel it instead"
    if seek.rated and party.is_guest:
        return "is rated: guests cannot take it (log in)"
    if party.is_bot and not seek.allow_bots:
        return "does not allow bots"
    low, high = seek.rating_range or (0.0, 0.0)
    rating = "no rating" if party.rating is None else f"a rating of {party.rating:.0f}"
    return f"asks for a rating from {low:g} to {high:g}; you have {rating} there"
