"""Rules engines: pure state machines behind one interface (`base.Game`, `base.State`)."""

from partida.games.base import Action, BadOptions, Decision, Game, IllegalAction, Option, Result, State, View
from partida.games.prompts import Assign, ChooseOne, ChooseSubset, Order, Prompt, prompt_from_data

__all__ = [
    "Action",
    "Assign",
    "BadOptions",
    "ChooseOne",
    "ChooseSubset",
    "Decision",
    "Game",
    "IllegalAction",
    "Option",
    "Order",
    "Prompt",
    "Result",
    "State",
    "View",
    "prompt_from_data",
]
