"""Partida: an open server for turn-based games, its games, bots, clients and lab."""

__version__ = "0.1.0"
