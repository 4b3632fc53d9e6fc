"""Statistics of matches between two agents: Elo with an interval, likelihood of superiority and
the sequential probability ratio test, computed from counts alone (no I/O), so that `partida
match` and `partida stats` give the same figures a result from fastchess or OpenBench would."""
