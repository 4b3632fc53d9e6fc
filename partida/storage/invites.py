"""Sign-up invite codes in the database: made by the operator's `partida db invite`, spent by a
sign-up on a server that requires one (`partida serve --sign-up invite`).

A code is 128 random bits, so guessing one is hopeless at the pace failed logins allow; only its
sha256 is stored. Spending is one conditional UPDATE, so two sign-ups racing for a code's last use
cannot both have it.
"""

from __future__ import annotations

import secrets

from sqlalchemy import insert, update

from partida.storage.accounts import hash_token
from partida.storage.database import Database
from partida.storage.models import SignUpInvite

MAX_USES = 10_000
MAX_CODE = 64  # longer is no code of ours: refused before it is hashed


class InviteStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, uses: int = 1) -> str:
        """A new code good for `uses` sign-ups, shown to the operator once."""
        if not 1 <= uses <= MAX_USES:
            raise ValueError(f"an invite is good for 1 to {MAX_USES} sign-ups")
        code = secrets.token_urlsafe(16)
        async with self.db.write() as conn:
            await conn.execute(insert(SignUpInvite).values(code_hash=hash_token(code), uses_left=uses))
        return code

    async def spend(self, code: str) -> bool:
        """Take one use of `code`; False when it is not a code given out, or is used up."""
        if not code or len(code) > MAX_CODE:
            return False
        async with self.db.write() as conn:
            result = await conn.execute(
                update(SignUpInvite)
                .where(SignUpInvite.code_hash == hash_token(code), SignUpInvite.uses_left > 0)
                .values(uses_left=SignUpInvite.uses_left - 1)
            )
        return result.rowcount == 1

    async def give_back(self, code: str) -> None:
        """A use taken for a sign-up that then failed (its name was taken meanwhile)."""
        async with self.db.write() as conn:
            await conn.execute(
                update(SignUpInvite)
                .where(SignUpInvite.code_hash == hash_token(code))
                .values(uses_left=SignUpInvite.uses_left + 1)
            )
