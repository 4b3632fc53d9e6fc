"""The room core: the rules of a room that need no I/O (clocks, endings, the seed commitment,
the terms a room is opened with), tested with plain values.

It imports only `partida.games` and `partida.protocol`, never the server, storage or asyncio
(tests/test_layout.py holds it to that), so the CLI, the history service and the relay can use
the same rules as the room that played the game.
"""
