"""The seed commitment that makes a game provably fair: its hash is published when the game
starts, the seed itself when it ends, and anyone can re-run the game from the seed."""

from __future__ import annotations

import hashlib


def seed_hash(seed: int) -> str:
    """What is published at the start: `sha256("partida-seed:" + str(seed))`, hex."""
    return hashlib.sha256(f"partida-seed:{seed}".encode()).hexdigest()
