"""The Python client SDK (`Client`) and the terminal client built on it.

The SDK in parts, each readable alone: `connection.py` (the websockets to a deployment's nodes:
hello, replies matched to requests, pushes routed to queues, `moved`, `summon`, taking seats back
after a node is lost; the websockets themselves in `links.py`), `requests.py` (a typed method per
request), `bot_loop.py` (`Client`, whose `play` answers a room's decisions), and `refusals.py`
(`ServerError`, `ConnectionLost`, `retry_after` and `patiently`). Import from here.
"""

from partida.client.bot_loop import Client
from partida.client.refusals import ConnectionLost, ServerError, patiently

__all__ = ["Client", "ConnectionLost", "ServerError", "patiently"]
