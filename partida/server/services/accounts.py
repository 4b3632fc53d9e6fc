"""A person's account over the protocol, once logged in: a new password, and logging out (sign-up
and login are hellos: `services/greeting.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from partida.protocol import ErrorCode, ProtocolError, server_message
from partida.protocol import messages as m
from partida.server.connections import Connections
from partida.server.logins import Logins
from partida.server.session import Session
from partida.storage.accounts import check_password_rule
from partida.storage.store import Store

if TYPE_CHECKING:
    from partida.server.shell import Handler


class AccountService:
    def __init__(self, store: Store, logins: Logins, connections: Connections) -> None:
        self.store = store
        self.logins = logins  # the back-off and queue the old password's check goes through, and the sessions
        self.connections = connections  # the account's other connections here, ended with its sessions

    def handlers(self) -> Mapping[str, Handler]:
        return {"change_password": self.on_change_password, "log_out": self.on_log_out}

    async def on_change_password(self, session: Session, req: m.ChangePassword) -> None:
        """The old password is checked as a login's is (paced, counted on failure: a connection
        left open is not a way to guess it), the new one against the rule; then every session
        token given before stops working, and this connection gets a new one."""
        me = session.identity
        if me is None or me.kind != "user" or me.account_id is None:
            raise ProtocolError(ErrorCode.ACCOUNTS_ONLY, "change_password: only a person's account has a password")
        problem = check_password_rule(req.new)
        if problem is not None:
            raise ProtocolError(ErrorCode.BAD_PASSWORD, f"change_password: {problem}")
        await self.logins.check(session.address, me.name)
        async with self.logins.turn(session.address):
            await self.logins.check(session.address, me.name, pause=False)
            account = await self.store.check_password(me.name, req.old)
            if account is None or account.id != me.account_id:
                self.logins.failed(session.address, me.name)
                raise ProtocolError(ErrorCode.AUTH_FAILED, "change_password: the old password is wrong")
            self.logins.succeeded(session.address, me.name)
            await self.store.set_password(me.account_id, req.new)
        self._end_sessions(me.account_id, session)
        session.send(server_message("password_changed", req.id, resume=self.logins.resume_token(me.account_id)))

    async def on_log_out(self, session: Session, req: m.LogOut) -> None:
        """A person's session tokens stop working (here and on every other computer that kept
        one), and this connection ends; a guest's or a bot's connection just ends."""
        me = session.identity
        if me is not None and me.kind == "user" and me.account_id is not None:
            self._end_sessions(me.account_id, session)
        session.send(server_message("logged_out", req.id))
        session.close_soon(1000, "logged out")

    def _end_sessions(self, account_id: int, asker: Session) -> None:
        """The account's session tokens stop working, and its other connections to this node
        end: a tab left open on a shared computer is logged out too, not only at its next
        reload. (Another node's connections end at their next login there.)"""
        self.logins.forget_sessions(account_id)
        for other in self.connections.of_account_id(account_id):
            if other is not asker:
                other.close_soon(1000, "logged out")
