"""Level-Based Foraging (LBF), step-for-step equal to lbforaging 2.0.0.

- :mod:`~alem.envs.coordination.lbf.types`: state and params dataclasses, action constants.
- :mod:`~alem.envs.coordination.lbf.generator`: the layout and levels drawn at reset (in jit).
- :mod:`~alem.envs.coordination.lbf.env`: :class:`LevelBasedForaging` (the docstring card),
  spaces, dynamics and observations.
- :mod:`~alem.envs.coordination.lbf.viewer`: rules text, ASCII views and RGB frames.

Every public name is re-exported here, so ``alem.envs.coordination.lbf:LevelBasedForaging``
stays the registry entry point.
"""

from alem.envs.coordination.lbf.env import LevelBasedForaging
from alem.envs.coordination.lbf.types import (
    ACTION_NAMES,
    EAST,
    LOAD,
    NOOP,
    NORTH,
    SOUTH,
    WEST,
    LBFParams,
    LBFState,
)

__all__ = [
    "LBFParams",
    "LBFState",
    "LevelBasedForaging",
    "ACTION_NAMES",
    "NOOP",
    "NORTH",
    "SOUTH",
    "WEST",
    "EAST",
    "LOAD",
]
