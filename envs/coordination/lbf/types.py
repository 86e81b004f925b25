"""Level-Based Foraging types: state and params dataclasses and the named constants."""

from __future__ import annotations

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams

__all__ = [
    "ACTION_NAMES",
    "NOOP",
    "NORTH",
    "SOUTH",
    "WEST",
    "EAST",
    "LOAD",
    "ACTION_DELTAS",
    "ACTION_ALIASES",
    "COOP_AGENTS",
    "LBFState",
    "LBFParams",
]

ACTION_NAMES = ("noop", "north", "south", "west", "east", "load")
NOOP, NORTH, SOUTH, WEST, EAST, LOAD = range(len(ACTION_NAMES))
#: ``(d_row, d_col)`` per action; row 0 is the top (north) of the grid.
ACTION_DELTAS = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1], [0, 0]], dtype=np.int32)
#: Extra spellings accepted by the text parser. No one-letter aliases: free-text replies
#: contain stray "s"/"e" tokens ("it's").
ACTION_ALIASES = {
    word: action
    for action, words in {
        NOOP: ("none", "no-op", "no op", "stay", "wait", "do nothing", "stay put", "rest"),
        NORTH: ("up", "move north", "go north", "move up", "go up"),
        SOUTH: ("down", "move south", "go south", "move down", "go down"),
        WEST: ("left", "move west", "go west", "move left", "go left"),
        EAST: ("right", "move east", "go east", "move right", "go right"),
        LOAD: ("pick up", "pickup", "collect", "forage", "load food", "collect food", "pick up food"),
    }.items()
    for word in words
}
#: With ``max_food_level=None`` the highest food level is the summed level of (up to) this
#: many agents: the lowest ones of the episode for sampling, the highest possible for bounds.
COOP_AGENTS = 3


@struct.dataclass
class LBFState:
    agent_pos: jax.Array  # int32 [N, 2], (row, col)
    agent_level: jax.Array  # int32 [N]
    food_pos: jax.Array  # int32 [F, 2]; meaningless where food_level == 0
    food_level: jax.Array  # int32 [F]; 0 = loaded or never placed
    food_spawned: jax.Array  # float32 [], summed food levels at reset (reward normaliser)
    step: jax.Array  # int32 [], steps taken


@struct.dataclass
class LBFParams(EnvParams):
    max_steps: jax.Array  # int32 [], the time limit (lbforaging's max_episode_steps)
    penalty: jax.Array  # float32 [], paid by each agent of a failed load
    force_coop: jax.Array  # bool [], every food at the maximum level
    normalize_reward: jax.Array  # bool [], divide rewards by the food spawned
