"""Multi-robot warehouse types: state and params dataclasses and the named constants."""

from __future__ import annotations

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams

__all__ = [
    "ACTION_NAMES",
    "NOOP",
    "FORWARD",
    "LEFT",
    "RIGHT",
    "TOGGLE_LOAD",
    "NUM_MOVES",
    "ACTION_ALIASES",
    "DIRECTION_NAMES",
    "UP",
    "DOWN",
    "WEST",
    "EAST",
    "DIRECTION_DELTAS",
    "TURN_RIGHT",
    "TURN_LEFT",
    "REWARD_TYPES",
    "INDIVIDUAL",
    "GLOBAL",
    "TWO_STAGE",
    "OBSERVATION_TYPES",
    "IMAGE_LAYERS",
    "DEFAULT_IMAGE_LAYERS",
    "NO_LIMIT",
    "RwareState",
    "RwareParams",
]

#: The five moves; with ``msg_bits > 0`` an action is ``move + 5 * message`` (see the card).
ACTION_NAMES = ("noop", "forward", "left", "right", "toggle_load")
NOOP, FORWARD, LEFT, RIGHT, TOGGLE_LOAD = range(len(ACTION_NAMES))
NUM_MOVES = len(ACTION_NAMES)
#: Extra spellings accepted by the text parser (no one-letter aliases).
ACTION_ALIASES = {
    word: action
    for action, words in {
        NOOP: ("none", "no-op", "no op", "stay", "wait", "do nothing", "nothing"),
        FORWARD: ("move forward", "go forward", "move", "ahead", "go ahead", "drive forward", "advance"),
        LEFT: ("turn left", "rotate left", "turn anticlockwise", "turn counterclockwise"),
        RIGHT: ("turn right", "rotate right", "turn clockwise"),
        TOGGLE_LOAD: (
            "toggle load",
            "toggle",
            "load",
            "unload",
            "pick up",
            "pickup",
            "pick up shelf",
            "put down",
            "drop",
            "drop shelf",
            "load shelf",
            "unload shelf",
        ),
    }.items()
    for word in words
}

#: rware's ``Direction`` values: 0 up (row - 1), 1 down, 2 left (column - 1), 3 right.
DIRECTION_NAMES = ("up", "down", "left", "right")
UP, DOWN, WEST, EAST = range(4)
#: ``(d_row, d_col)`` of a forward move per direction.
DIRECTION_DELTAS = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int32)
#: Direction after turning right (clockwise) / left, indexed by the current direction.
TURN_RIGHT = np.array([EAST, WEST, UP, DOWN], dtype=np.int32)
TURN_LEFT = np.array([WEST, EAST, DOWN, UP], dtype=np.int32)

#: Reward types (rware's ``RewardType`` values).
REWARD_TYPES = {"global": 0, "individual": 1, "two_stage": 2}
GLOBAL, INDIVIDUAL, TWO_STAGE = 0, 1, 2

#: Observation types alem offers (rware's ``DICT`` is ``"flattened"`` unflattened).
OBSERVATION_TYPES = ("flattened", "image", "image_dict")
#: rware's ``ImageLayer`` names, by value.
IMAGE_LAYERS = ("shelves", "requests", "agents", "agent_direction", "agent_load", "goals", "accessible")
DEFAULT_IMAGE_LAYERS = ("shelves", "requests", "agents", "goals", "accessible")

#: ``max_steps`` / ``max_inactivity_steps`` standing for rware's ``None`` (no limit).
NO_LIMIT = 2**31 - 1


@struct.dataclass
class RwareState:
    agent_pos: jax.Array  # int32 [N, 2], (row, col); rware's (y, x)
    agent_dir: jax.Array  # int32 [N], DIRECTION_NAMES index
    carrying: jax.Array  # int32 [N], index of the carried shelf, -1 for none
    has_delivered: jax.Array  # bool [N], two-stage reward: delivered and not yet unloaded
    message: jax.Array  # float32 [N, msg_bits], the last message bits sent
    shelf_pos: jax.Array  # int32 [S, 2], (row, col); a carried shelf is at its agent
    request_queue: jax.Array  # int32 [Q], requested shelf indices (distinct)
    step: jax.Array  # int32 [], steps taken
    inactive_steps: jax.Array  # int32 [], steps since the last delivery


@struct.dataclass
class RwareParams(EnvParams):
    max_steps: jax.Array  # int32 [], time limit (NO_LIMIT for rware's None)
    max_inactivity_steps: jax.Array  # int32 [], steps without delivery before the end (NO_LIMIT: never)
    reward_type: jax.Array  # int32 [], one of REWARD_TYPES
