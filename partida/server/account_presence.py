"""Where accounts are: the one interface behind which a single server and one node of several
differ for people and bots. The greeting, challenges, the bot directory and tournaments ask it;
only the wiring (`server/app.py`) chooses which one.

A single server has every connection here, so `SingleNodePresence` finds nobody elsewhere at no
cost; a node of several (`server/presence.py`) writes who is connected to it, and reaches
accounts connected to other nodes over the broker. Where rooms are is the other half
(`server/room_directory.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from partida.server.challenges import Challenge
    from partida.server.session import Session
    from partida.storage.nodes import Presence as Where


@dataclass
class RemoteChallenge:
    """A challenge that lives on another node, pushed to an account connected here."""

    node: str
    url: str
    account_id: int
    created: float = field(default_factory=time.monotonic)


class AccountPresence(Protocol):
    @property
    def node_urls(self) -> list[str] | None:
        """The live nodes' URLs for `welcome`, the only ones a `summon` or `moved` will name
        (None: a single server says nothing)."""

    async def arrived(self, session: Session) -> None:
        """An account logged in here: findable from other nodes."""

    def departed(self, session: Session) -> None:
        """A connection closed."""

    async def elsewhere(self, name: str) -> list[Where]:
        """Where the account `name` is connected, on other nodes only."""

    async def summon(self, name: str, game: str) -> Session | None:
        """A bot account connected only to other nodes, brought to a connection here."""

    async def connected_among(self, account_ids: list[int]) -> set[int]:
        """Which of these accounts are connected to other nodes (that a message can reach)."""

    async def tell(self, account_ids: list[int], message: dict[str, Any]) -> None:
        """Push a tournament's news (`tournament_started`, `_round`, `_over`) to those of these
        accounts connected to other nodes."""

    def holds(self, challenge_id: str, session: Session) -> RemoteChallenge | None:
        """A challenge to `session`'s account that lives on another node."""

    async def call(self, name: str, kind: str, fields: dict[str, Any]) -> bool:
        """Push `kind` (a `tournament_game`) with `fields` and this node's `url` to the account
        `name` wherever else it is connected; False if it is nowhere else."""

    async def forward(self, challenge: Challenge, elsewhere: list[Where]) -> None:
        """Tell a challenged person connected to other nodes."""

    async def decline(self, session: Session, request_id: Any, challenge_id: str, remote: RemoteChallenge) -> None:
        """Carry a decline back to the challenge's node."""


class SingleNodePresence:
    """Every connection is here: nobody elsewhere to find, summon or tell."""

    node_urls: list[str] | None = None

    async def arrived(self, session: Session) -> None:
        return None

    def departed(self, session: Session) -> None:
        return None

    async def elsewhere(self, name: str) -> list[Where]:
        return []

    async def summon(self, name: str, game: str) -> Session | None:
        return None

    async def connected_among(self, account_ids: list[int]) -> set[int]:
        return set()

    async def tell(self, account_ids: list[int], message: dict[str, Any]) -> None:
        return None

    def holds(self, challenge_id: str, session: Session) -> RemoteChallenge | None:
        return None

    async def call(self, name: str, kind: str, fields: dict[str, Any]) -> bool:
        return False

    async def forward(self, challenge: Challenge, elsewhere: list[Where]) -> None:
        return None

    async def decline(self, session: Session, request_id: Any, challenge_id: str, remote: RemoteChallenge) -> None:
        return None
