"""Overcooked types: state and params dataclasses and the named constants.

Cells are ``(x, y)`` pairs as in overcooked-ai: ``x`` is the column, ``y`` the row, and row 0
is the top (north) edge. Grids (terrain, objects) are indexed ``[y, x]``.
"""

from __future__ import annotations

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams

__all__ = [
    "ACTION_NAMES",
    "NORTH",
    "SOUTH",
    "EAST",
    "WEST",
    "STAY",
    "INTERACT",
    "DIRECTIONS",
    "DIRECTION_NAMES",
    "ACTION_ALIASES",
    "FLOOR",
    "COUNTER",
    "POT",
    "ONION_DISPENSER",
    "TOMATO_DISPENSER",
    "DISH_DISPENSER",
    "SERVING",
    "TILE_CHARS",
    "NOTHING",
    "ONION",
    "TOMATO",
    "DISH",
    "SOUP",
    "OBJECT_NAMES",
    "MAX_INGREDIENTS",
    "NUM_CHANNELS",
    "CHANNEL_NAMES",
    "OvercookedState",
    "OvercookedParams",
]

#: overcooked-ai's ``Action.INDEX_TO_ACTION`` order: the four directions, stay, interact.
ACTION_NAMES = ("up", "down", "right", "left", "stay", "interact")
NORTH, SOUTH, EAST, WEST, STAY, INTERACT = range(len(ACTION_NAMES))
#: ``(dx, dy)`` per orientation index (``Direction.INDEX_TO_DIRECTION``: north, south, east, west).
DIRECTIONS = np.array([[0, -1], [0, 1], [1, 0], [-1, 0]], dtype=np.int32)
DIRECTION_NAMES = ("north", "south", "east", "west")
#: Extra spellings accepted by the text parser.
ACTION_ALIASES = {
    word: action
    for action, words in {
        NORTH: ("north", "move up", "go up", "move north", "go north"),
        SOUTH: ("south", "move down", "go down", "move south", "go south"),
        EAST: ("east", "move right", "go right", "move east", "go east"),
        WEST: ("west", "move left", "go left", "move west", "go west"),
        STAY: ("wait", "noop", "no-op", "no op", "do nothing", "stay put", "none"),
        INTERACT: ("use", "act", "pick up", "put down", "place", "drop", "serve", "cook", "interact with"),
    }.items()
    for word in words
}

# Terrain codes (layout characters: space, X, P, O, T, D, S).
FLOOR, COUNTER, POT, ONION_DISPENSER, TOMATO_DISPENSER, DISH_DISPENSER, SERVING = range(7)
TILE_CHARS = " XPOTDS"

# Object codes (held by a player, on a counter, or a soup in a pot).
NOTHING, ONION, TOMATO, DISH, SOUP = range(5)
OBJECT_NAMES = ("nothing", "onion", "tomato", "dish", "soup")
#: Ingredients a pot holds (overcooked-ai's ``Recipe.MAX_NUM_INGREDIENTS``).
MAX_INGREDIENTS = 3

#: overcooked-ai's ``lossless_state_encoding`` planes, in its order (``player_0`` is the
#: observing agent, ``player_1`` the other one).
CHANNEL_NAMES = (
    "player_0_loc",
    "player_1_loc",
    *(f"player_{p}_orientation_{d}" for p in range(2) for d in range(4)),
    "pot_loc",
    "counter_loc",
    "onion_disp_loc",
    "tomato_disp_loc",
    "dish_disp_loc",
    "serve_loc",
    "onions_in_pot",
    "tomatoes_in_pot",
    "onions_in_soup",
    "tomatoes_in_soup",
    "soup_cook_time_remaining",
    "soup_done",
    "dishes",
    "onions",
    "tomatoes",
    "urgency",
)
NUM_CHANNELS = len(CHANNEL_NAMES)


@struct.dataclass
class OvercookedState:
    pos: jax.Array  # int32 [N, 2], (x, y)
    dir: jax.Array  # int32 [N], orientation index (north, south, east, west)
    held: jax.Array  # int32 [N], object code
    held_soup: jax.Array  # int32 [N, 2], (onions, tomatoes) of a held soup, else 0
    obj: jax.Array  # int32 [H, W], object on each tile (counters, pots); floor cells stay 0
    soup: jax.Array  # int32 [H, W, 2], (onions, tomatoes) of the soup on a tile
    tick: jax.Array  # int32 [H, W], cooking tick of that soup; -1 until cooking starts
    delivered: jax.Array  # int32 [], soups served so far (also those worth nothing)
    time: jax.Array  # int32 [], steps taken (overcooked-ai's timestep)


@struct.dataclass
class OvercookedParams(EnvParams):
    max_steps: jax.Array  # int32 [], the horizon
    shaping_factor: jax.Array  # float32 [], weight of the shaped reward in `reward` (0: sparse only)
    placement_in_pot_rew: jax.Array  # float32 [], shaped: an ingredient put in a pot
    dish_pickup_rew: jax.Array  # float32 [], shaped: a useful dish taken from the dispenser
    soup_pickup_rew: jax.Array  # float32 [], shaped: a cooked soup taken from a pot with a dish
    recipe_value: jax.Array  # float32 [4, 4], sparse reward of serving (onions, tomatoes)
    cook_time: jax.Array  # int32 [4, 4], cooking ticks of a soup of (onions, tomatoes)
