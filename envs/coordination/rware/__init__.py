"""Multi-robot warehouse (RWARE), step-for-step equal to rware 2.0.0.

- :mod:`~alem.envs.coordination.rware.types`: state and params dataclasses, action and direction
  constants.
- :mod:`~alem.envs.coordination.rware.generator`: warehouse layouts (rware's presets and layout
  strings) and the start drawn at reset (in jit).
- :mod:`~alem.envs.coordination.rware.collisions`: rware's resolution of conflicting moves.
- :mod:`~alem.envs.coordination.rware.env`: :class:`Warehouse` (the docstring card), spaces,
  dynamics and observations.
- :mod:`~alem.envs.coordination.rware.viewer`: rules text, ASCII maps and RGB frames.

Every public name is re-exported here, so ``alem.envs.coordination.rware:Warehouse`` is the registry
entry point.
"""

from alem.envs.coordination.rware.env import Warehouse
from alem.envs.coordination.rware.types import (
    ACTION_NAMES,
    FORWARD,
    LEFT,
    NOOP,
    RIGHT,
    TOGGLE_LOAD,
    RwareParams,
    RwareState,
)

__all__ = [
    "Warehouse",
    "RwareParams",
    "RwareState",
    "ACTION_NAMES",
    "NOOP",
    "FORWARD",
    "LEFT",
    "RIGHT",
    "TOGGLE_LOAD",
]
