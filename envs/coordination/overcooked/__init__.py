"""Overcooked (Carroll et al. 2019), step-for-step equal to overcooked-ai 1.1.0.

- :mod:`~alem.envs.coordination.overcooked.types`: state and params dataclasses, action,
  tile and object codes, observation channel names.
- :mod:`~alem.envs.coordination.overcooked.layouts`: the five original layouts and their
  orders (recipe values and cooking times).
- :mod:`~alem.envs.coordination.overcooked.env`: :class:`Overcooked` (the docstring card),
  spaces, dynamics and the lossless observation.
- :mod:`~alem.envs.coordination.overcooked.viewer`: rules text, ASCII kitchen and RGB frames.

Every public name is re-exported here, so ``alem.envs.coordination.overcooked:Overcooked``
is the registry entry point.
"""

from alem.envs.coordination.overcooked.env import Overcooked
from alem.envs.coordination.overcooked.layouts import LAYOUTS, Layout
from alem.envs.coordination.overcooked.types import (
    ACTION_NAMES,
    CHANNEL_NAMES,
    EAST,
    INTERACT,
    NORTH,
    SOUTH,
    STAY,
    WEST,
    OvercookedParams,
    OvercookedState,
)

__all__ = [
    "Overcooked",
    "OvercookedParams",
    "OvercookedState",
    "Layout",
    "LAYOUTS",
    "ACTION_NAMES",
    "CHANNEL_NAMES",
    "NORTH",
    "SOUTH",
    "EAST",
    "WEST",
    "STAY",
    "INTERACT",
]
