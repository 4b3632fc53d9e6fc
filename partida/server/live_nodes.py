"""The deployment's live nodes, as last read from the shared directory: one list that the
node's lease round refreshes (`server/cluster.py`) and its presence reads and refreshes
(`server/presence.py`), so a `welcome` names the nodes a `summon` or `moved` may name."""

from __future__ import annotations


class LiveNodes:
    def __init__(self, urls: list[str]) -> None:
        self.urls = urls  # public websocket URLs; replaced whole, never changed in place
