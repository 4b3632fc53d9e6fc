"""This node's rooms: the table that holds them (`table.py`), the driver of one room
(`driver.py`: the lock, the core's effects, the timer, the pushes), the secrets a room is made
with (`codes.py`), the counts per address (`counts.py`), rematches (`rematch.py`), and what a
room does when a write of its game fails (`mending.py`). The rules of a room are its core's
(`partida/room/core.py`)."""
