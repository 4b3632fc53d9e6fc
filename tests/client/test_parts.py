"""The SDK's parts stay readable alone (docs/design.md, Layout): each module of
partida/client/ imports only the parts before it in ORDER, so the connection knows nothing of
the requests or the bot loop, and the requests nothing of the bot loop; and the public surface,
`partida.client`, is where the names are."""

from __future__ import annotations

import ast
from pathlib import Path

import partida.client
from partida.client.bot_loop import Client
from partida.client.connection import Connection
from partida.client.requests import Requests

CLIENT = Path(partida.client.__file__).parent
PREFIX = "partida.client."
ORDER = ["refusals", "links", "connection", "requests", "bot_loop"]


def sdk_imports(part: str) -> set[str]:
    tree = ast.parse((CLIENT / f"{part}.py").read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
    return {m.removeprefix(PREFIX) for m in modules if m.startswith(PREFIX)}


def test_each_part_imports_only_the_parts_before_it() -> None:
    broken = [
        f"partida/client/{part}.py imports {imported}"
        for at, part in enumerate(ORDER)
        for imported in sorted(sdk_imports(part))
        if imported not in ORDER[:at]
    ]
    assert not broken, "\n".join(broken)
    assert sdk_imports("requests") == {"connection", "refusals"}  # the checker sees imports


def test_the_client_is_the_connection_with_its_requests_and_its_loop() -> None:
    assert Client.__mro__[:3] == (Client, Requests, Connection)
    assert partida.client.Client is Client
    assert set(partida.client.__all__) == {"Client", "ConnectionLost", "ServerError", "patiently"}
    assert partida.client.ServerError.__module__ == partida.client.patiently.__module__ == "partida.client.refusals"
