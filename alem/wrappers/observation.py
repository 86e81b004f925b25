"""Observation transforms: flatten, agent-id one-hot, running normalisation.

Each transform also applies to ``info["final_obs"]`` when an inner
:class:`~alem.wrappers.AutoReset` put it there, so bootstrapping from the final
observation sees the same features as acting does.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import TimeStep
from alem.errors import EnvArgumentError
from alem.wrappers.base import Wrapper


def map_obs(ts: TimeStep, fn) -> TimeStep:
    """Apply ``fn`` to ``ts.obs`` and, if present, ``ts.info["final_obs"]``."""
    info = dict(ts.info)
    if "final_obs" in info:
        info["final_obs"] = fn(info["final_obs"])
    return ts.replace(obs=fn(ts.obs), info=info)


class ObservationWrapper(Wrapper):
    """A stateless map of every agent's observation; subclasses define :meth:`transform`."""

    def transform(self, obs: jax.Array) -> jax.Array:
        raise NotImplementedError

    def reset(self, key, params=None):
        state, ts = self._env.reset(key, params)
        return state, map_obs(ts, self.transform)

    def step(self, key, state, actions, params=None):
        state, ts = self._env.step(key, state, actions, params)
        return state, map_obs(ts, self.transform)

    def observe(self, state, params):
        return self.transform(self._env.observe(state, params))


class FlattenObs(ObservationWrapper):
    """``[N, *shape]`` observations become ``[N, prod(shape)]``."""

    def transform(self, obs):
        return obs.reshape(obs.shape[0], -1)

    def observation_space(self, agent: int | None = None):
        inner = self._env.observation_space(agent)
        if agent is None:
            n = self.num_agents
            return spaces.Box(inner.low.reshape(n, -1), inner.high.reshape(n, -1), dtype=inner.dtype)
        return spaces.Box(inner.low.reshape(-1), inner.high.reshape(-1), dtype=inner.dtype)


class AgentIdOneHot(ObservationWrapper):
    """Appends a one-hot agent index to each agent's flat observation (``[N, D + N]``)."""

    def __init__(self, env):
        super().__init__(env)
        shape = env.observation_space().shape
        if len(shape) != 2:
            raise EnvArgumentError(
                f"AgentIdOneHot needs flat per-agent observations [N, D], got {tuple(shape)} "
                f"for {env.id}; wrap it in FlattenObs first"
            )

    def transform(self, obs):
        n = self.num_agents
        return jnp.concatenate([obs, jnp.eye(n, dtype=obs.dtype)], axis=-1)

    def observation_space(self, agent: int | None = None):
        inner = self._env.observation_space(agent)
        n = self.num_agents
        if agent is None:
            return spaces.Box(
                np.concatenate([inner.low, np.zeros((n, n))], -1),
                np.concatenate([inner.high, np.ones((n, n))], -1),
                dtype=inner.dtype,
            )
        return spaces.Box(
            np.concatenate([inner.low, np.zeros(n)]),
            np.concatenate([inner.high, np.ones(n)]),
            dtype=inner.dtype,
        )


@struct.dataclass
class NormalizeObsState:
    env_state: Any
    mean: jax.Array
    var: jax.Array
    count: jax.Array


class NormalizeObs(Wrapper):
    """Normalises observations by running mean and variance, then clips.

    Statistics are per feature, pooled over agents. Under ``jax.vmap(...,
    axis_name=name)`` pass ``axis_name=name`` to pool them over the batch of
    envs too (every env then holds the same statistics); otherwise each env
    keeps its own. ``update=False`` freezes them (for evaluation). Put this
    wrapper outside :class:`AutoReset`: its ``reset`` starts fresh statistics.
    """

    def __init__(
        self, env, *, clip: float = 10.0, eps: float = 1e-8, axis_name: str | None = None, update: bool = True
    ):
        super().__init__(env)
        self.clip, self.eps, self.axis_name, self.update = float(clip), float(eps), axis_name, bool(update)

    def inner_state(self, state: NormalizeObsState):
        return state.env_state

    def with_inner_state(self, state: NormalizeObsState, inner: Any) -> NormalizeObsState:
        return state.replace(env_state=inner)

    def observation_space(self, agent: int | None = None):
        inner = self._env.observation_space(agent)
        return spaces.Box(-self.clip, self.clip, inner.shape, dtype=jnp.float32)

    def _update(self, stats: NormalizeObsState, obs: jax.Array) -> NormalizeObsState:
        if not self.update:
            return stats
        x = obs.astype(jnp.float32)
        b = jnp.float32(x.shape[0])
        mean_b, sq_b = x.mean(axis=0), jnp.square(x).mean(axis=0)
        if self.axis_name is not None:
            mean_b = jax.lax.pmean(mean_b, self.axis_name)
            sq_b = jax.lax.pmean(sq_b, self.axis_name)
            b = jax.lax.psum(b, self.axis_name)
        var_b = jnp.maximum(sq_b - jnp.square(mean_b), 0.0)
        total = stats.count + b
        delta = mean_b - stats.mean
        mean = stats.mean + delta * b / total
        m2 = stats.var * stats.count + var_b * b + jnp.square(delta) * stats.count * b / total
        return stats.replace(mean=mean, var=m2 / total, count=total)

    def _normalize(self, stats: NormalizeObsState, obs: jax.Array) -> jax.Array:
        z = (obs - stats.mean) / jnp.sqrt(stats.var + self.eps)
        return jnp.clip(z, -self.clip, self.clip).astype(jnp.float32)

    def reset(self, key, params=None):
        env_state, ts = self._env.reset(key, params)
        feat = ts.obs.shape[1:]
        stats = NormalizeObsState(env_state, jnp.zeros(feat), jnp.ones(feat), jnp.float32(0.0))
        stats = self._update(stats, ts.obs)
        return stats, map_obs(ts, lambda o: self._normalize(stats, o))

    def step(self, key, state: NormalizeObsState, actions, params=None):
        env_state, ts = self._env.step(key, state.env_state, actions, params)
        stats = self._update(state.replace(env_state=env_state), ts.obs)
        return stats, map_obs(ts, lambda o: self._normalize(stats, o))
