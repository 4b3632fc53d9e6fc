"""Duel: a two-player trading-card duel with hidden hands (specs/duel.md)."""

from partida.games.duel.game import Duel

GAMES = [Duel()]
