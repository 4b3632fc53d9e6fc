"""A complete Partida bot in Python, over stdin/stdout: tic-tac-toe, winning when it can and
blocking when it must. Run it with `partida bot --cmd "python3 examples/bots/tictactoe.py" --game tictactoe`."""

import json
import random
import sys

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def completes(board, square, mark):
    """Whether `mark` on `square` makes three in a row."""
    return any(square in line and all(board[s] == mark or s == square for s in line) for line in LINES)


for line in sys.stdin:  # one decision a line, until the game ends and stdin closes
    turn = json.loads(line)
    board, me = turn["view"]["board"], turn["seat"]
    options = turn["decision"]["options"]
    wins = [s for s in options if completes(board, s, me)]
    blocks = [s for s in options if completes(board, s, 1 - me)]
    centre = [4] if 4 in options else []
    move = random.choice(wins or blocks or centre or options)
    print(json.dumps({"action": move}), flush=True)
