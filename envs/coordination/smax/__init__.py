"""SMAX (JaxMARL's StarCraft-style unit micromanagement), step-for-step equal to JaxMARL 0.2.0.

- :mod:`~alem.envs.coordination.smax.types`: the unit table, the action layout, state and params.
- :mod:`~alem.envs.coordination.smax.scenarios`: the maps (fixed armies and SMACv2-style random
  ones) and the start of a battle (unit types, start positions), drawn in jit.
- :mod:`~alem.envs.coordination.smax.heuristic`: the scripted player of the enemy army.
- :mod:`~alem.envs.coordination.smax.env`: :class:`SMAX` (the docstring card), spaces, the battle
  simulation, observations and the global state.
- :mod:`~alem.envs.coordination.smax.viewer`: RGB frames.

Every public name is re-exported here, so ``alem.envs.coordination.smax:SMAX`` is the registry entry
point.
"""

from alem.envs.coordination.smax.env import DEFAULT_MAX_STEPS, MOVE_VECTORS, SMAX
from alem.envs.coordination.smax.heuristic import heuristic_actions
from alem.envs.coordination.smax.scenarios import SCENARIOS, Scenario, draw_start
from alem.envs.coordination.smax.types import (
    MOVE_NAMES,
    UNIT_NAMES,
    UNIT_STATS,
    SmaxParams,
    SmaxState,
    UnitStats,
)

__all__ = [
    "SMAX",
    "SmaxParams",
    "SmaxState",
    "Scenario",
    "SCENARIOS",
    "UNIT_NAMES",
    "UNIT_STATS",
    "UnitStats",
    "MOVE_NAMES",
    "MOVE_VECTORS",
    "DEFAULT_MAX_STEPS",
    "draw_start",
    "heuristic_actions",
]
