"""RECYCLE: card and dice games described as text (specs/recycle.md, docs/recycle.md).

Every `*.rcl` file in `descriptions/` becomes a game; other files load through `FILE_LOADERS`
(`partida serve --game-file PATH`, or a games folder).
"""

from __future__ import annotations

from pathlib import Path

from partida.games.recycle.compiler import RecycleRuntimeError
from partida.games.recycle.game import RecycleGame, load_game_file
from partida.games.recycle.parser import RecycleSyntaxError

DESCRIPTIONS = Path(__file__).parent / "descriptions"

GAMES = [load_game_file(path) for path in sorted(DESCRIPTIONS.glob("*.rcl"))]
FILE_LOADERS = {".rcl": load_game_file}

__all__ = ["FILE_LOADERS", "GAMES", "RecycleGame", "RecycleRuntimeError", "RecycleSyntaxError", "load_game_file"]
