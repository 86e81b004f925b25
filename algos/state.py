"""What the PPO core carries between updates (:class:`PPOState`, the value normaliser) and
hands from a rollout to the update (:class:`PPOBatch`). ``LearnerState`` and ``Batch`` are their
deprecated aliases, kept for one release."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from alem import struct

__all__ = ["ValueNorm", "PPOState", "PPOBatch", "LearnerState", "Batch"]


@struct.dataclass
class ValueNorm:
    """Debiased running mean and second moment of value targets (MAPPO's value normalisation)."""

    mean: jax.Array
    mean_sq: jax.Array
    debias: jax.Array

    @classmethod
    def create(cls) -> ValueNorm:
        z = jnp.zeros((), jnp.float32)
        return cls(z, z, z)

    def stats(self) -> tuple[jax.Array, jax.Array]:
        d = jnp.maximum(self.debias, 1e-5)
        mean = self.mean / d
        var = jnp.maximum(self.mean_sq / d - mean**2, 1e-2)
        return mean, jnp.sqrt(var)

    def update(self, x: jax.Array, weight: jax.Array, beta: float) -> ValueNorm:
        w = weight / jnp.maximum(weight.sum(), 1.0)
        m, m2 = (x * w).sum(), (x**2 * w).sum()
        return ValueNorm(
            beta * self.mean + (1 - beta) * m,
            beta * self.mean_sq + (1 - beta) * m2,
            beta * self.debias + (1 - beta),
        )


@struct.dataclass
class PPOState:
    """The PPO core's state between updates (the value-based core's is :class:`~alem.algos.qlearning.QState`)."""

    params: Any  # {"actor": [K, ...], "critic": [K, ...]}
    opt_state: Any  # per role: leading axis K
    env_state: Any  # batched [E]
    timestep: Any  # batched [E]
    hidden: Any  # {"actor": [E, Ma, H], "critic": [E, M, H]}
    resets: jax.Array  # bool [E]: the current obs starts an episode
    value_norm: ValueNorm
    betas: jax.Array  # float32 [2, M]: DPO's beta1 and beta2 per unit
    key: jax.Array
    update: jax.Array  # int32 [] updates done
    pool: Any = None  # self-play only: the opponent pool (alem.algos.selfplay.Pool)
    match: Any = None  # self-play only: {"seat": int32 [E], "slot": int32 [E]} of each env's episode
    hyper: Any = None  # a vmapped sweep only: {knob: float32 []} of this row (PPOConfig.sweep)

    #: Fields with the env batch as their leading axis: a data-parallel run splits them over
    #: devices and replicates the rest (:func:`alem.training.shard_state`).
    batched_fields: ClassVar[tuple[str, ...]] = ("env_state", "timestep", "hidden", "resets", "match")


@struct.dataclass
class PPOBatch:
    """One PPO rollout, time-major ``[T, E, ...]``."""

    obs: jax.Array
    gstate: jax.Array
    mask: jax.Array  # [T, E, N, A]
    acting: jax.Array  # [T, E, N]
    action: jax.Array  # [T, E, Md] in distribution space ([T, E, Md, D] for continuous actions)
    old_logp: jax.Array  # [T, E, Md] log-probability of the action taken
    old_table: (
        jax.Array
    )  # [T, E, Md, P] the old distribution's parameters (DPO's exact KL); [..., 0] otherwise
    value: jax.Array  # [T, E, M] denormalised
    value_raw: jax.Array  # [T, E, M] network output
    reward: jax.Array  # [T, E, M]
    done: jax.Array  # [T, E]
    truncated: jax.Array  # [T, E]
    final_value: jax.Array  # [T, E, M]
    resets: jax.Array  # [T, E]
    seat_w: Any = None  # self-play only: float [T, E, M], 1 on the learner's units (its seat; both vs itself)


#: Deprecated aliases of :class:`PPOState` and :class:`PPOBatch`, kept for one release.
LearnerState = PPOState
Batch = PPOBatch
