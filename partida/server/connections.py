"""The connections of this server, and who they are: the one place that answers "is this account
connected here?" for challenges, the bot directory and the life cycle."""

from __future__ import annotations

from collections.abc import Iterator

from partida.server.session import Session


class Connections:
    def __init__(self) -> None:
        self.sessions: set[Session] = set()

    def add(self, session: Session) -> None:
        self.sessions.add(session)

    def discard(self, session: Session) -> None:
        self.sessions.discard(session)

    def bots(self) -> list[Session]:
        """Connected bot accounts; only these can be seated as bots."""
        return [s for s in self.sessions if s.identity is not None and s.identity.kind == "bot" and not s.closed]

    def of_account(self, name: str) -> list[Session]:
        """The open connections of the account `name` (any case); guests are no accounts."""
        wanted = name.strip().lower()
        return [
            s
            for s in self.sessions
            if s.identity is not None
            and s.identity.account_id is not None
            and s.identity.name.lower() == wanted
            and not s.closed
        ]

    def of_account_id(self, account_id: int) -> list[Session]:
        """The open connections logged in to `account_id`."""
        return [
            s for s in self.sessions if s.identity is not None and s.identity.account_id == account_id and not s.closed
        ]

    def account_ids(self) -> set[int]:
        """The accounts with an open connection here: one pass, for a question asked of many."""
        return {
            s.identity.account_id
            for s in self.sessions
            if s.identity is not None and s.identity.account_id is not None and not s.closed
        }

    def holds_account(self, account_id: int) -> bool:
        """Whether any connection here (closing ones too) is logged in to `account_id`."""
        return any(s.identity is not None and s.identity.account_id == account_id for s in self.sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(self.sessions)
