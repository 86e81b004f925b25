"""The scripted SMAX player (JaxMARL 0.2.0's heuristic enemy), reading each unit's own observation.

Per unit and step:

- **Target**: among the units of the other team that it sees (health feature > 0) and that stand
  within its attack range, it keeps shooting its previous target while that one qualifies;
  otherwise it picks the nearest (``attack_mode="closest"``) or a uniformly drawn one
  (``"random"``).
- **Move** (when it has nothing in range, or with ``shoot=False``): towards a uniformly drawn visible
  unit of the other team, else towards its *default destination*, fixed on its first step as its
  own position reflected through the map centre. The move is the cardinal direction best aligned
  with the way there (ties: north, east, south, west).

Positions are read back from the observation (own position times the map size, others' offsets
times the unit's sight range), exactly as the reference does; a dead unit sees nothing and reads
itself as a marine at the origin. The memory per unit is ``(destination, target slot)``; the
initial memory is ``((0, 0), -1)``, recognised by value, as the reference does.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.smax.types import (
    FIRST_ATTACK,
    NUM_UNIT_TYPES,
    OTHER_FEATURES,
    OWN_FEATURES,
    UNIT_STATS,
)

__all__ = ["heuristic_actions"]

_BLOCK = len(OTHER_FEATURES) + NUM_UNIT_TYPES


def _pick(key: jax.Array, weights: jax.Array) -> jax.Array:
    """An index drawn with probability proportional to ``weights``: the same draw as
    ``jax.random.choice(key, len(weights), p=weights / weights.sum())``, whose binary search is a
    loop, written as a comparison count (lighter to compile)."""
    cumulative = jnp.cumsum(weights / jnp.sum(weights))
    threshold = cumulative[-1] * (1 - jax.random.uniform(key, (), cumulative.dtype))
    return jnp.sum(cumulative < threshold).astype(jnp.int32)


def _one_unit(key, obs, destination, target, *, own_team, other_team, width, height, shoot, attack_mode):
    k_move, k_attack = jax.random.split(key)
    own = obs[-(len(OWN_FEATURES) + NUM_UNIT_TYPES) :]
    kind = jnp.argmax(own[len(OWN_FEATURES) :])  # all zero (dead): 0, a marine
    me = own[1:3] * jnp.array([width, height], jnp.float32)
    foes = obs[: -len(own)].reshape(-1, _BLOCK)[own_team - 1 :]  # [other_team, features]
    foe_offset = foes[:, 1:3] * jnp.asarray(UNIT_STATS.sight)[kind]
    seen = foes[:, 0] > 0
    dist = jnp.sqrt(jnp.sum(foe_offset * foe_offset, axis=-1))
    in_range = seen & (dist < jnp.asarray(UNIT_STATS.attack_range)[kind])

    if attack_mode == "random":
        fresh = _pick(k_attack, in_range)
    else:
        far = jnp.sqrt(jnp.float32(width * width + height * height))
        fresh = jnp.argmin(jnp.where(in_range, dist, far))
    keep = (target != -1) & in_range[target]
    aim = jnp.where(keep, target, fresh).astype(jnp.int32)
    new_target = jnp.where(in_range[aim], aim, -1).astype(jnp.int32)

    centre = jnp.array([width / 2, height / 2], jnp.float32)
    first_step = jnp.all(destination == 0) & (target == -1)
    destination = jnp.where(first_step, centre - (me - centre), destination)
    chase = foe_offset[jnp.minimum(_pick(k_move, seen), other_team - 1)] + me
    goal = jnp.where(seen.any(), chase, destination)
    way = goal - me
    move = jnp.argmax(jnp.stack([way[1], way[0], -way[1], -way[0]]))

    fire = in_range.any() & shoot
    action = jnp.where(fire, aim + FIRST_ATTACK, move).astype(jnp.int32)
    return action, destination, new_target


def heuristic_actions(
    key: jax.Array,
    obs: jax.Array,
    destination: jax.Array,
    target: jax.Array,
    *,
    own_team: int,
    other_team: int,
    width: float,
    height: float,
    shoot: bool = True,
    attack_mode: str = "closest",
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Actions of one team's units from their observations.

    Args:
        key: one key for the team (split into one per unit).
        obs: float32 ``[K, D]``, the team's unit-list observations (K = ``own_team``).
        destination: float32 ``[K, 2]``, the memory's default destinations.
        target: int32 ``[K]``, the memory's target slots (-1: none).
        own_team, other_team: the team sizes.
        width, height: the map size.
        shoot: whether the units attack (False: they only move).
        attack_mode: ``"closest"`` or ``"random"`` choice of a new target.

    Returns:
        ``(actions int32 [K], destination, target)``: actions in the unit's action layout (moves
        0-4, attack ``5 + slot``) and the updated memory.
    """
    if attack_mode not in ("closest", "random"):
        raise ValueError(f"attack_mode must be 'closest' or 'random', got {attack_mode!r}")
    one = functools.partial(
        _one_unit,
        own_team=int(own_team),
        other_team=int(other_team),
        width=float(width),
        height=float(height),
        shoot=bool(shoot),
        attack_mode=attack_mode,
    )
    keys = jax.random.split(key, int(np.shape(obs)[0]))
    return jax.vmap(one)(keys, obs, destination, target)
