"""Pathfinding types: params and state dataclasses and the named constants of the env.

The mode is a params field (an int32 index into :data:`MODES`) so one compiled program
serves all three modes; compare it with :data:`ONE_SHOT`, :data:`LIFELONG` and
:data:`DISAPPEAR`, never with bare integers.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax

from alem import struct
from alem.envs.pathfinding import grid as G
from alem.errors import EnvArgumentError

__all__ = [
    "MODES",
    "ONE_SHOT",
    "LIFELONG",
    "DISAPPEAR",
    "POGEMA_ON_TARGET",
    "MAP_TYPES",
    "OBS_TYPES",
    "NUM_ACTIONS",
    "ACTION_ALIASES",
    "PathfindingParams",
    "PathfindingState",
    "check_choice",
]

#: Episode modes; ``params.mode`` is an index into this tuple.
MODES = ("one_shot", "lifelong", "disappear")
#: Values of ``params.mode``.
ONE_SHOT, LIFELONG, DISAPPEAR = range(len(MODES))
#: alem mode -> POGEMA ``on_target``.
POGEMA_ON_TARGET = {"one_shot": "nothing", "lifelong": "restart", "disappear": "finish"}
MAP_TYPES = ("random", "maze", "fixed")
OBS_TYPES = ("local", "global")
#: Actions per agent (POGEMA's order, :data:`alem.envs.pathfinding.grid.ACTION_NAMES`).
NUM_ACTIONS = len(G.ACTION_NAMES)
#: Extra spellings of the actions accepted by the text parser.
ACTION_ALIASES = {"stay": 0, "north": 1, "south": 2, "west": 3, "east": 4}


@struct.dataclass
class PathfindingParams:
    maps: jax.Array  # bool [M, H, W] obstacle maps (map_type "fixed"; M >= 1)
    spawn: jax.Array  # bool [M, H, W] cells where starts/goals are sampled
    starts: jax.Array  # int32 [M, N, 2] given starts (used where has_task)
    goals: jax.Array  # int32 [M, N, L, 2] given goal sequences (L = goal_sequence_len)
    has_task: jax.Array  # bool [M]
    density: jax.Array  # float32 [] obstacle density (map_type "random")
    max_steps: jax.Array  # int32 [] episode length limit
    mode: jax.Array  # int32 [] index into MODES (a param: one compiled program for every mode)


@struct.dataclass
class PathfindingState:
    pos: jax.Array  # int32 [N, 2]
    goal: jax.Array  # int32 [N, 2] current goal
    goal_seq: jax.Array  # int32 [N, L, 2] goal sequence (lifelong with a given task)
    goal_idx: jax.Array  # int32 [N] index into goal_seq
    use_seq: jax.Array  # bool [] goals come from goal_seq
    active: jax.Array  # bool [N] (disappear mode: False once the agent reached its goal)
    padded: jax.Array  # bool [H+2R, W+2R] obstacle map padded for the field of view
    spawn_cum: jax.Array  # int32 [H*W] running count of spawn cells (lifelong random goals)
    t: jax.Array  # int32 [] steps taken
    solve_t: jax.Array  # int32 [N] step index of arrival (-1: not on goal / not arrived)
    reached: jax.Array  # int32 [] goals reached this episode
    collisions: jax.Array  # int32 []
    bumps: jax.Array  # int32 []
    lb_soc: jax.Array  # int32 []
    lb_makespan: jax.Array  # int32 []
    # int32 [N, H+2R, W+2R]: BFS distance to each agent's goal, padded with INF (goal_direction or
    # progress_reward; [N, 0, 0] otherwise)
    goal_dist: jax.Array
    # bool [H+2R, W+2R]: POGEMA 1.4.0's agent occupancy grid, written move by move in agent order
    # (pogema_occupancy=True; [0, 0] otherwise), which the local observation's agents channel reads
    occupied: jax.Array


def check_choice(name: str, value: str, options: Sequence[str]) -> None:
    """Raise :class:`~alem.errors.EnvArgumentError` unless ``value`` is one of ``options``."""
    if value not in options:
        raise EnvArgumentError(f"{name}={value!r} is not supported; choose one of {list(options)}")
