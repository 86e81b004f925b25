"""The uniform-random baseline as a learner: the same ``init``/``run`` interface as the PPO core.

It learns nothing; one "update" is one random-policy rollout of ``num_envs`` envs for
``num_steps`` steps (:func:`alem.rollout.random_rollout`). Giving it the learner interface
lets ``python -m alem.train algo=random`` go through the one training loop
(:mod:`alem.training`): same progress lines, metrics rows and loggers as a PPO run, and a
throughput check of the env alone.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax

from alem import struct
from alem.core import MultiAgentEnv
from alem.rollout import Rollout, RolloutState, random_rollout

__all__ = ["RandomLearner", "RandomState"]


@struct.dataclass
class RandomState:
    """The envs between updates and the PRNG key of the next one."""

    rollout: RolloutState
    key: jax.Array

    #: Fields with the env batch as their leading axis (split over devices by ``alem.training``).
    batched_fields: ClassVar[tuple[str, ...]] = ("rollout",)


@dataclasses.dataclass(frozen=True, eq=False)
class RandomLearner:
    """Uniform-random legal actions in ``num_envs`` envs; ``run`` returns per-rollout episode sums."""

    env: MultiAgentEnv
    num_envs: int
    num_steps: int
    name: ClassVar[str] = "random"
    #: Nothing to save: a resumed random run starts over.
    checkpointed: ClassVar[bool] = False

    @functools.cached_property
    def rollout(self) -> Rollout:
        return random_rollout(self.env, self.num_envs, self.num_steps)

    def init(self, key: jax.Array, env_params: Any = None) -> RandomState:
        params = self.env.default_params if env_params is None else env_params
        k_reset, k_next = jax.random.split(key)
        return RandomState(rollout=self.rollout.init(k_reset, params), key=k_next)

    def run(self, state: RandomState, num_updates: int, env_params: Any = None) -> tuple[RandomState, dict]:
        """``num_updates`` rollouts; metrics have a leading ``[num_updates]`` axis."""
        params = self.env.default_params if env_params is None else env_params
        rollout = self.rollout

        def one(s: RandomState, _):
            key, k_roll = jax.random.split(s.key)
            inner, m = rollout(k_roll, params, s.rollout)
            keep = ("episodes", "return_sum", "length_sum", "illegal_actions")
            return RandomState(rollout=inner, key=key), {k: m[k] for k in keep}

        return jax.lax.scan(one, state, None, length=num_updates)
