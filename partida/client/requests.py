"""The request API: one typed method per request of the protocol.

Its own part because it is the list a bot author looks things up in ("how do I post a seek?"):
each method names the request's fields as arguments, sends it with `Connection.request`, and
returns the reply (or the part of it worth having: a list, a summary); an `error` reply raises
`ServerError`. Nothing here knows about nodes, links or reconnection: the connection underneath
does that for every request alike. A listing that comes in pages is walked page after page,
waiting out a `retry_after` with `patiently`.
"""

from __future__ import annotations

import functools
from typing import Any

from partida.client.connection import Connection
from partida.client.refusals import patiently


class Requests(Connection):
    """A connection with a method for each request (see docs/protocol.md for what each does)."""

    # Rooms: create, sit, watch, play.

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

    # Takebacks (casual games of Othello and tic-tac-toe, between people).

    async def offer_takeback(self, room: str, seat: int | None = None) -> dict[str, Any]:
        """Ask to take back your last move (and the reply after it); updates carry
        `takeback_offer` until it is answered or a move is made."""
        return await self._seat_request("takeback_offer", room, seat)

    async def accept_takeback(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("takeback_accept", room, seat)

    async def decline_takeback(self, room: str, seat: int | None = None) -> dict[str, Any]:
        return await self._seat_request("takeback_decline", room, seat)

    async def rematch(self, room: str, seat: int | None = None) -> dict[str, Any]:
        """Offer (or accept) a rematch of a finished game. The reply's `rematch` is the new
        room's summary once every human seat has asked, else null; everyone seated then gets a
        `rematch` message on the old room (`new_room`, `seat`, `token`)."""
        return await self._seat_request("rematch", room, seat)

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

    # Stored games.

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

    async def export(self, game_id: int, fmt: str = "text") -> dict[str, Any]:
        """A stored game as a file: `{game_id, format, filename, content}`; `fmt` is `text` (the
        game's record with its tags; Othello's GGF) or `json` (what a replay loads)."""
        return await self.request("export", game_id=game_id, format=fmt)

    # Challenges.

    async def challenge(
        self,
        to: str,
        game: str,
        options: dict[str, Any] | None = None,
        seats: int | None = None,
        clock: dict[str, Any] | None = None,
        rated: bool = False,
    ) -> dict[str, Any]:
        """Challenge the account `to` (a person or a bot); returns the challenge. Its outcome
        arrives in `challenges`: `challenge_accepted` (room, seat, token) or `challenge_declined`."""
        fields = {"options": options, "seats": seats, "clock": clock, "rated": rated or None}
        reply = await self.request("challenge", to=to, game=game, **{k: v for k, v in fields.items() if v is not None})
        return reply["challenge"]

    async def accept(self, challenge_id: str) -> dict[str, Any]:
        """Accept a challenge pushed to you; the reply has the room, your seat and token."""
        return await self.request("accept", challenge=challenge_id)

    async def decline(self, challenge_id: str) -> dict[str, Any]:
        return await self.request("decline", challenge=challenge_id)

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
        """Take a listed seek; the reply has the room, your seat and token, and your opponent."""
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
        self,
        status: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        watch: bool | None = None,
    ) -> dict[str, Any]:
        """One page of tournaments (`tournaments`, without options, and `next`: the cursor of
        the page after it, or None); `watch=True`: `lobby_tournaments` in `lobby_events` when
        tournaments change (list again)."""
        fields = {"status": status, "cursor": cursor, "limit": limit, "watch": watch}
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

    # Chat: lines in a room's channel or a tournament's (the room's arrive with its other
    # pushes, a tournament's in `chat_events`).

    async def chat(
        self, text: str, *, room: str | None = None, tournament: str | None = None, channel: str | None = None
    ) -> dict[str, Any]:
        """Say `text` in `room` (in your channel: `players` when seated, else `spectators`) or
        in `tournament`; returns the stored line. Refusals: `chat_too_long`, `chat_empty`,
        `chat_not_allowed`, `silenced`, `rate_limited` (with `retry_after`)."""
        fields = {"text": text, "room": room, "tournament": tournament, "channel": channel}
        return (await self.request("chat", **{k: v for k, v in fields.items() if v is not None}))["message"]

    async def chat_history(self, *, room: str | None = None, tournament: str | None = None) -> list[dict[str, Any]]:
        """The newest lines you may read of a room, or of a tournament (whose lines are pushed
        to `chat_events` from then on)."""
        fields = {"room": room, "tournament": tournament}
        reply = await self.request("chat_history", **{k: v for k, v in fields.items() if v is not None})
        return list(reply["messages"])

    # Hosted bots (a person's account): submit a program for the server to run.

    async def bot_submit(self, name: str, games: list[str], run: str, archive: bytes) -> dict[str, Any]:
        """Submit `archive` (a tar, gzipped or not, or a zip of the bot's files) as the next
        version of your hosted bot `name`, which runs `run` in its directory and plays `games`;
        sent in chunks, each waiting out a `retry_after`. Returns `bot_submitted` (`bot`, `version`)."""
        import base64
        import hashlib

        ready = await patiently(
            lambda: self.request(
                "bot_submit",
                name=name,
                games=games,
                run=run,
                size=len(archive),
                sha256=hashlib.sha256(archive).hexdigest(),
            )
        )
        upload, chunk = ready["upload"], int(ready["chunk"])
        offset, reply = 0, ready
        while offset < len(archive):
            data = base64.b64encode(archive[offset : offset + chunk]).decode()
            at = offset
            reply = await patiently(
                lambda at=at, data=data: self.request("bot_upload", upload=upload, offset=at, data=data), tries=20
            )
            offset += chunk
        return reply

    async def bot_list(self) -> list[dict[str, Any]]:
        """Your hosted bots, each with its versions, state (active, paused and why, withdrawn)."""
        return (await self.request("bot_list"))["bots"]

    async def bot_logs(self, name: str, limit: int | None = None) -> dict[str, Any]:
        """Your hosted bot's `logs` (verdicts, and games that left stderr, each with its tail) and latest `games`."""
        fields: dict[str, Any] = {"name": name}
        if limit is not None:
            fields["limit"] = limit
        return await self.request("bot_logs", **fields)

    async def bot_activate(self, name: str, version: int) -> dict[str, Any]:
        return (await self.request("bot_activate", name=name, version=version))["bot"]

    async def bot_withdraw(self, name: str) -> dict[str, Any]:
        return (await self.request("bot_withdraw", name=name))["bot"]
