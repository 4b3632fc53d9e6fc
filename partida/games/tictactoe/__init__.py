"""Tic-tac-toe: the smallest game, the model for every other package under `games/`."""

from partida.games.tictactoe.rules import TicTacToe

GAMES = [TicTacToe()]
