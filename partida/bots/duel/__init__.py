"""The Duel agents: the mulligan agent, the one-turn searches and the multi-turn lookahead, with
the planning machinery (`plan`, `turn`) and the evaluations (`evaluation`, `fit`) they share.
The agent registry finds them here, through `AGENTS`."""

from partida.bots.duel import lookahead, mulligan, search

AGENTS = [*mulligan.AGENTS, *search.AGENTS, *lookahead.AGENTS]
