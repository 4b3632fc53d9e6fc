"""The shell's contract: every request type the protocol defines has exactly one service that
answers it, and a type cannot be claimed twice."""

from __future__ import annotations

import pytest

from partida.client import Client, ServerError
from partida.protocol import messages
from partida.server.app import Server
from partida.server.limits import Limiter, Limits
from partida.server.room_directory import SingleNodeRooms
from partida.server.shell import Shell


async def test_every_request_type_has_a_service(server: Server) -> None:
    assert set(server.handlers) == set(messages.REQUESTS)


async def test_a_type_is_registered_once() -> None:
    async def first(session: object, request: object) -> None: ...

    async def second(session: object, request: object) -> None: ...

    shell = Shell(Limiter(Limits()), SingleNodeRooms(), 1024)
    shell.register({"ping": first})
    with pytest.raises(ValueError, match="ping"):
        shell.register({"ping": second, "hello": second})
    assert shell.handlers == {"ping": first}


async def test_a_failing_service_answers_internal_error_and_the_connection_goes_on(server: Server) -> None:
    """Whatever a service raises that is not a refusal becomes `internal_error` for that request
    only: the connection, and the next request on it, are served."""

    async def broken(session: object, request: object) -> None:
        raise RuntimeError("a bug in a service")

    server.handlers["list_games"] = broken
    client = await Client.connect(server.url, name="ada")
    try:
        with pytest.raises(ServerError) as failed:
            await client.list_games()
        assert failed.value.code == "internal_error"
        assert (await client.list_rooms()) == []
    finally:
        await client.close()
