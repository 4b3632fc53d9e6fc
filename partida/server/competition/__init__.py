"""The directors of the competitions: each runs its events between requests (opens rounds, seats
players, settles no-shows), driven by one scheduling loop (`scheduler.py`). The requests that
create, join and read them are answered in `partida.server.services`; the rules are pure, in
`partida.competition`."""
