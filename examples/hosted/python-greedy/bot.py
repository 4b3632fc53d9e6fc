"""A hosted Othello bot in Python (submit it with `partida bots submit`, docs/hosted-bots.md):
for each decision it reads one JSON line on stdin and answers with one on stdout. It plays the
move that turns the most discs, a corner first, and never a square next to an empty corner
while it has another choice."""

import json
import sys

SIDE = 8
CORNERS = {0, 7, 56, 63}
NEXT_TO_CORNER = {1: 0, 8: 0, 9: 0, 6: 7, 14: 7, 15: 7, 48: 56, 49: 56, 57: 56, 54: 63, 55: 63, 62: 63}
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def square(name):
    return (int(name[1]) - 1) * SIDE + "abcdefgh".index(name[0])


def flips(board, at, me, them):
    row, col, turned = divmod(at, SIDE) + (0,)
    for dr, dc in DIRECTIONS:
        r, c, run = row + dr, col + dc, 0
        while 0 <= r < SIDE and 0 <= c < SIDE and board[r * SIDE + c] == them:
            r, c, run = r + dr, c + dc, run + 1
        if run and 0 <= r < SIDE and 0 <= c < SIDE and board[r * SIDE + c] == me:
            turned += run
    return turned


def score(board, option, me, them):
    if not (isinstance(option, str) and len(option) == 2 and option[0] in "abcdefgh" and option[1] in "12345678"):
        return 0  # not a square (a pass): the only choice anyway
    at = square(option)
    corner = 100 if at in CORNERS else 0
    risky = -50 if at in NEXT_TO_CORNER and board[NEXT_TO_CORNER[at]] == "-" else 0
    return corner + risky + flips(board, at, me, them)


games = 0
for line in sys.stdin:  # one decision a line, until the game ends and stdin closes
    turn = json.loads(line)
    if games == 0:
        print(f"greedy: playing {turn['game']} as seat {turn['seat']}", file=sys.stderr, flush=True)
        games = 1
    board = turn["view"]["board"]
    me, them = ("X", "O") if turn["seat"] == 0 else ("O", "X")
    options = turn["decision"]["options"]
    best = max(options, key=lambda option: score(board, option, me, them))
    print(json.dumps({"action": best}), flush=True)
