"""Othello: rules, transcripts and GGF records, and the fast bitboard engine."""

from partida.games.othello.rules import Othello, OthelloState

GAMES = [Othello()]

__all__ = ["GAMES", "Othello", "OthelloState"]
