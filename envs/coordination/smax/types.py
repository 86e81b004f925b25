"""SMAX types: the unit table, the action layout, and the state and params dataclasses."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams

__all__ = [
    "UNIT_NAMES",
    "UNIT_LETTERS",
    "UNIT_STATS",
    "UnitStats",
    "NUM_UNIT_TYPES",
    "MOVE_NAMES",
    "NUM_MOVES",
    "STOP",
    "FIRST_ATTACK",
    "OTHER_FEATURES",
    "OWN_FEATURES",
    "SmaxState",
    "SmaxParams",
]


@dataclasses.dataclass(frozen=True)
class UnitStats:
    """Per-type constants (float32 ``[T]`` NumPy arrays, indexed by unit type); JaxMARL's defaults."""

    speed: np.ndarray  # map units per second of game time
    damage: np.ndarray  # health taken from the target per shot
    attack_range: np.ndarray  # a target closer than this (centre to centre) can be shot
    sight: np.ndarray  # units closer than this are observed
    radius: np.ndarray  # body radius: overlapping bodies are pushed apart
    health: np.ndarray  # starting (and maximum) health
    cooldown: np.ndarray  # seconds between shots (before the random jitter)


#: The six unit types, in JaxMARL's order (the type index is this position).
UNIT_NAMES = ("marine", "marauder", "stalker", "zealot", "zergling", "hydralisk")
#: One-letter labels of the types (as in JaxMARL's renderer).
UNIT_LETTERS = ("m", "M", "s", "Z", "z", "h")
NUM_UNIT_TYPES = len(UNIT_NAMES)


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


#: Stats per unit type (columns follow :data:`UNIT_NAMES`).
UNIT_STATS = UnitStats(
    speed=_f32(3.15, 2.25, 4.13, 3.15, 4.13, 3.15),
    damage=_f32(9.0, 10.0, 13.0, 8.0, 5.0, 12.0),
    attack_range=_f32(5.0, 6.0, 6.0, 2.0, 2.0, 5.0),
    sight=_f32(9.0, 10.0, 10.0, 9.0, 8.0, 9.0),
    radius=_f32(0.375, 0.5625, 0.625, 0.5, 0.375, 0.625),
    health=_f32(45.0, 125.0, 160.0, 150.0, 35.0, 80.0),
    cooldown=_f32(0.61, 1.07, 1.87, 0.86, 0.5, 0.59),
)

#: Action layout of every unit: four moves, stop, then one attack per unit of the other team.
MOVE_NAMES = ("north", "east", "south", "west", "stop")
NUM_MOVES = len(MOVE_NAMES)
STOP = 4
FIRST_ATTACK = NUM_MOVES

#: Observation features of each other unit, then of the observing unit itself (each followed by a
#: one-hot of the unit type).
OTHER_FEATURES = ("health", "dx", "dy", "last_move_x", "last_move_y", "last_attack", "cooldown")
OWN_FEATURES = ("health", "x", "y", "cooldown")


@struct.dataclass
class SmaxState:
    """One battle. Units ``0 .. A-1`` are the allies, ``A .. A+E-1`` the enemies."""

    pos: jax.Array  # float32 [U, 2], (x, y) in map units; y grows north
    health: jax.Array  # float32 [U]
    alive: jax.Array  # bool [U]
    unit_type: jax.Array  # int32 [U], index into UNIT_NAMES
    cooldown: jax.Array  # float32 [U], seconds until the weapon is ready (<= 0: ready; keeps falling)
    last_move: jax.Array  # float32 [U, 2], the movement direction ordered in the last step
    last_attack: jax.Array  # int32 [U], the attack action of the last step (0 when none)
    target: jax.Array  # float32 [E, 2], the heuristic's default destination per enemy
    last_target: jax.Array  # int32 [E], the heuristic's current target (slot in its view, -1 none)
    step: jax.Array  # int32 [], steps taken


@struct.dataclass
class SmaxParams(EnvParams):
    max_steps: jax.Array  # int32 [], the episode is cut when a step starts at this count
    won_battle_bonus: jax.Array  # float32 [], reward for wiping out the other team
