"""Finding games, so that adding one never touches the server.

A game package under `partida/games/` exports `GAMES` (a list of `Game` objects). A package that
reads games from description files (the card-game language) also exports `FILE_LOADERS`, a map
from file suffix to a function `path -> Game`; files with those suffixes dropped in a games folder
or passed with `--game-file` become games too.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from pathlib import Path

from partida.games.base import Game

FileLoader = Callable[[Path], Game]


class UnknownGame(LookupError):
    pass


class GameLoadError(ValueError):
    """A description file that cannot become a game; the message says which file and why."""


class Registry:
    def __init__(self) -> None:
        self._games: dict[str, Game] = {}
        self._loaders: dict[str, FileLoader] = {}

    def add(self, game: Game) -> None:
        self._games[game.name] = game

    def get(self, name: str) -> Game:
        try:
            return self._games[name]
        except KeyError:
            known = ", ".join(sorted(self._games))
            raise UnknownGame(f"unknown game {name!r} (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._games

    def names(self) -> list[str]:
        return sorted(self._games)

    def games(self) -> list[Game]:
        return [self._games[name] for name in self.names()]

    def discover_packages(self) -> None:
        import partida.games as package

        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg:
                continue
            module = importlib.import_module(f"partida.games.{info.name}")
            for game in getattr(module, "GAMES", ()):
                self.add(game)
            self._loaders.update(getattr(module, "FILE_LOADERS", {}))

    def load_file(self, path: Path) -> Game:
        loader = self._loaders.get(path.suffix)
        if loader is None:
            suffixes = ", ".join(sorted(self._loaders)) or "none"
            raise GameLoadError(f"{path}: no game reader for {path.suffix!r} files (known: {suffixes})")
        try:
            game = loader(path)
        except GameLoadError:
            raise
        except (OSError, ValueError) as exc:
            # a reader's own message may name the file already: not twice
            said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise GameLoadError(said if said.startswith(f"{path}: ") else f"{path}: {said}") from exc
        self.add(game)
        return game

    def load_folder(self, folder: Path) -> list[Game]:
        try:
            paths = sorted(folder.iterdir())
        except OSError as exc:  # not there, not a folder, not readable: one line, not a traceback
            raise GameLoadError(f"{folder}: {exc.strerror or exc}") from None
        return [self.load_file(p) for p in paths if p.suffix in self._loaders]


def default_registry(game_files: Iterable[Path] = (), game_dirs: Iterable[Path] = ()) -> Registry:
    registry = Registry()
    registry.discover_packages()
    for folder in game_dirs:
        registry.load_folder(folder)
    for path in game_files:
        registry.load_file(path)
    return registry
