"""Tournaments, people's ratings and quick pairing without I/O: the formats' pairing rules (round
robin by Berger tables, Swiss by Dutch rules, arena, tables of more than two seats), tie-breaks and
standings, clock classes and rating changes, and the compatibility of seeks.

Everything here takes plain values and returns plain values, so the service that will open rooms
for a tournament and read its finished games (docs/competition.md) and the tests call the same
functions. Players are named by opaque hashable ids (account ids, names): nothing here knows
accounts, rooms or the clock of the wall.
"""
