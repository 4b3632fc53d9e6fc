"""The shell: a frame in, a request dispatched to the service that registered its type, every
failure mapped to an `error` with a stable code. No service sees a frame, and no frame reaches a
service before it is decoded, checked (`partida.protocol`) and counted against its sender.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from partida.protocol import ErrorCode, ProtocolError, decode, error_message, parse_request
from partida.server.limits import BYTES_PER_REQUEST, Limiter
from partida.server.room_directory import RoomDirectory
from partida.server.session import Session
from partida.storage.database import StorageError, describe_error

log = logging.getLogger(__name__)

Handler = Callable[[Session, Any], Awaitable[object]]  # its result is not read
REQUEST_ID_TYPES = (int, str)  # a tuple: `int | str` would be built again at every request


class Shell:
    def __init__(self, limiter: Limiter, room_directory: RoomDirectory, max_message_bytes: int) -> None:
        self.limiter = limiter
        self.room_directory = room_directory  # asked for a room this node does not have
        self.max_message_bytes = max_message_bytes
        self.handlers: dict[str, Handler] = {}

    def register(self, handlers: Mapping[str, Handler]) -> None:
        """A service's request types; each type has exactly one service."""
        taken = self.handlers.keys() & handlers.keys()
        if taken:
            raise ValueError(f"request types registered twice: {sorted(taken)}")
        self.handlers.update(handlers)

    async def handle_frame(self, session: Session, frame: bytes | str) -> None:
        request_id = None
        request = None
        try:
            limited = None
            if session.limits is not None:
                try:
                    self.limiter.request(session.limits)  # before decoding: bad frames count too
                    if len(frame) > BYTES_PER_REQUEST:
                        self.limiter.received(session.limits, len(frame))
                except ProtocolError as exc:
                    if exc.close:
                        raise
                    limited = exc
            message = decode(frame, self.max_message_bytes)
            request_id = message.get("id")
            if not isinstance(request_id, REQUEST_ID_TYPES):
                request_id = None
            if limited is not None:
                raise limited
            request = parse_request(message)
            if session.identity is None and request.type != "hello":  # not greeted
                raise ProtocolError(ErrorCode.HELLO_REQUIRED, "the first message must be a hello")
            if session.limits is not None and isinstance(getattr(request, "room", None), str):
                self.limiter.may_guess(session.limits)
            await self.handlers[request.type](session, request)
        except ProtocolError as exc:
            if exc.code == ErrorCode.NO_SUCH_ROOM and request is not None:
                found = await self._elsewhere(session, request, exc)
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
        finally:
            # A kept refusal's traceback holds this frame, and the frame holds it and the frame's
            # bytes: a cycle the server's rare collections would free only much later.
            limited = None

    async def _elsewhere(self, session: Session, request: Any, missing: ProtocolError) -> ProtocolError | None:
        """A room this node does not have: the room directory's answer (None: served after all)."""
        if not isinstance(getattr(request, "room", None), str):
            return missing
        try:
            return await self.room_directory.room_elsewhere(session, request, missing, self.dispatch)
        except ProtocolError as exc:
            return exc
        except Exception:
            log.exception("%s: request failed", session.name)
            return ProtocolError(ErrorCode.INTERNAL, "the server failed on that request")

    async def dispatch(self, session: Session, request: Any) -> None:
        await self.handlers[request.type](session, request)
