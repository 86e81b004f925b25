"""Hanabi, the cooperative card game, exact to OpenSpiel's ``hanabi`` (the card is in :mod:`.env`).

The package: :mod:`.types` (state, parameters, constants), :mod:`.env` (the rules and the
observation encoding), :mod:`.text` (rules, views, move names and the parser),
:mod:`.viewer` (``render_rgb``) and :mod:`.players` (the rule-based partner).
"""

from alem.envs.games.hanabi.env import Hanabi
from alem.envs.games.hanabi.players import RulePlayer, rule_actions
from alem.envs.games.hanabi.types import COLOUR_NAMES, OBSERVATION_TYPES, HanabiParams, HanabiState

__all__ = [
    "HanabiState",
    "HanabiParams",
    "Hanabi",
    "RulePlayer",
    "rule_actions",
    "COLOUR_NAMES",
    "OBSERVATION_TYPES",
]
