"""The Python client SDK (`Client`) and the terminal client built on it."""

from partida.client.connection import Client, ConnectionLost, ServerError, patiently

__all__ = ["Client", "ConnectionLost", "ServerError", "patiently"]
