"""One-agent alem envs as Gymnasium envs: :func:`make_env` and :func:`make_vector_env`.

Which ids fit: those whose env has exactly one agent, with default keywords
``gymnax/cartpole-v1``, ``gymnax/pendulum-v1`` (continuous actions) and
``mpe/simple-v0``; any other id built with one agent (``num_agents=1`` where the
env takes it) fits as well. Multi-agent ids raise ``ValueError`` (use
:mod:`alem.interop.pettingzoo`).

Conventions
-----------
- **Spaces**: the agent's alem spaces as ``gymnasium.spaces`` (``Discrete`` or ``Box``
  actions, ``Box`` observations of the env's dtype).
- **Action masks** (discrete envs): ``info["action_mask"]``, ``int8 [n]``, as in
  :mod:`alem.interop.pettingzoo` (the vector env: ``[num_envs, n]``, with ``"_action_mask"``).
- An action outside ``action_space`` (``action_space.contains`` is False) is a ``ValueError``;
  nothing is stepped.
- **Seeding**: ``reset(seed=s)`` calls ``super().reset(seed=s)`` (``np_random``) and starts the
  key chain at ``jax.random.key(s)``; an unseeded ``reset()`` draws the chain's seed from
  ``np_random``. Each reset and step splits the chain once
  (:func:`alem.interop._common.episode_keys`).
- ``terminated``/``truncated`` are alem's (kept apart, as in gymnasium); ``reward`` a float.
- **Speed**: reset and step are jitted once per alem env object.

Vector env (:class:`AlemVectorEnv`)
-----------------------------------
``num_envs`` copies stepped by one jitted call of
:class:`alem.wrappers.BatchedAutoReset` (vmapped, resets computed only for the envs
that ended). Autoreset mode: ``gymnasium.vector.AutoresetMode.SAME_STEP`` (alem's own
semantics): when env ``i`` ends, the step returns the new episode's first observation
in ``obs[i]`` with the final transition's ``reward``, ``terminated`` and ``truncated``;
the final observation is in ``infos["final_obs"][i]`` (an object array holding ``None``
for envs that did not end, mask ``infos["_final_obs"]``), and ``infos["final_info"]``
is an empty dict per ended env (mask ``infos["_final_info"]``), as gymnasium's own
``SyncVectorEnv`` reports them in that mode. Both keys appear only on steps where an
env ended. ``reset(seed=s)`` seeds the batch from one key (an int), or each env from
its own seed (a list of ints: ``jax.random.key(s_i)``); ``options`` are ignored.
Note: gymnasium's vector ``RecordEpisodeStatistics`` and ``NormalizeReward`` up to 1.3
assume next-step bookkeeping even under ``SAME_STEP`` (every episode after an env's first
loses its first step in their statistics); Gymnasium pull requests 1624 and 1668 fix that.
"""

from __future__ import annotations

import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import require_positive_int
from alem.interop._common import (
    Session,
    checked_action,
    env_from,
    render_modes,
    require,
    strong_types,
    to_gymnasium_space,
)

require("gymnasium", "gymnasium>=1.0")

import gymnasium  # noqa: E402
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

__all__ = ["AlemGymnasiumEnv", "AlemVectorEnv", "make_env", "make_vector_env"]

_SEED_BOUND = 2**31 - 1


def _one_agent_env(env: str | MultiAgentEnv, kwargs: dict[str, Any]) -> MultiAgentEnv:
    env = env_from(env, kwargs)
    if env.num_agents != 1:
        raise ValueError(
            f"{env.id} has {env.num_agents} agents; gymnasium envs have one "
            "(use alem.interop.pettingzoo for multi-agent envs)"
        )
    return env


class AlemGymnasiumEnv(gymnasium.Env):
    """A one-agent alem env as a ``gymnasium.Env``; see the module docstring for the conventions.

    Args:
        env: a registered id or a one-agent alem env object.
        params: the env params (default ``env.default_params``).
        render_mode: ``None``, ``"rgb_array"`` or ``"ansi"`` where the env supports it.
        **kwargs: passed to ``alem.make`` with an id.
    """

    def __init__(
        self,
        env: str | MultiAgentEnv,
        params: Any = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        self.env = _one_agent_env(env, kwargs)
        self.session = Session(self.env, params)
        self.observation_space = to_gymnasium_space(self.env.observation_space(0))
        self.action_space = to_gymnasium_space(self.env.action_space(0))
        modes = render_modes(self.env)
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"{self.env.id}: render_mode={render_mode!r} is not one of {modes}")
        # render_fps: the frame rate video recorders (gymnasium's RecordVideo) write frames at.
        self.metadata = {"render_modes": modes, "render_fps": 10}
        self.render_mode = render_mode
        self._continuous = bool(self.env.continuous_actions)
        self._act_shape = tuple(self.env.action_space().shape)

    def _obs(self) -> np.ndarray:
        return np.array(self.session.ts["obs"][0], dtype=self.observation_space.dtype)

    def _info(self) -> dict[str, Any]:
        if self._continuous:
            return {}
        return {"action_mask": self.session.ts["action_mask"][0, : self.action_space.n].astype(np.int8)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        chain_seed = seed if seed is not None else int(self.np_random.integers(_SEED_BOUND))
        self.session.reset(chain_seed)
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        action = checked_action(self.action_space, action, self.env.id)
        if self._continuous:
            actions = np.asarray(action, np.float32).reshape(self._act_shape)
        else:
            actions = np.asarray([int(action)], np.int32)
        ts = self.session.step(actions)
        return (
            self._obs(),
            float(ts["reward"][0]),
            bool(ts["terminated"]),
            bool(ts["truncated"]),
            self._info(),
        )

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return self.env.render_rgb(self.session.state, self.session.params)
        if self.render_mode == "ansi":
            return self.env.render_text(self.session.state, 0, self.session.params)
        return None


# ---------------------------------------------------------------------------- vector env
_BATCHED: weakref.WeakKeyDictionary[MultiAgentEnv, dict[int, tuple]] = weakref.WeakKeyDictionary()


def _batched(env: MultiAgentEnv, num_envs: int) -> tuple:
    """``(reset_from_key, reset_from_keys, step)``, jitted once per env object and batch size."""
    per_env = _BATCHED.setdefault(env, {})
    if num_envs in per_env:
        return per_env[num_envs]
    from alem.wrappers import BatchedAutoReset

    batch = BatchedAutoReset(env, num_envs)
    fields = lambda ts: (ts.obs[:, 0], ts.action_mask[:, 0], ts.reward[:, 0], ts.terminated, ts.truncated)

    def reset_one_key(key, params):
        key, sub = jax.random.split(key)
        state, ts = batch.reset(sub, params)
        return key, strong_types(state), fields(ts)

    def reset_keys(keys, params):
        split = jax.vmap(jax.random.split)(keys)
        state, ts = jax.vmap(env.reset, in_axes=(0, None))(split[:, 1], params)
        return split[0, 0], strong_types(state), fields(ts)

    def step(key, state, actions, params):
        key, sub = jax.random.split(key)
        state, ts = batch.step(sub, state, actions, params)
        return key, strong_types(state), (*fields(ts), ts.info["final_obs"][:, 0])

    per_env[num_envs] = (jax.jit(reset_one_key), jax.jit(reset_keys), jax.jit(step))
    return per_env[num_envs]


class AlemVectorEnv(VectorEnv):
    """``num_envs`` copies of a one-agent alem env, jitted and vmapped, with same-step autoreset.

    See the module docstring for the autoreset convention (``AutoresetMode.SAME_STEP``).
    """

    def __init__(
        self,
        env: str | MultiAgentEnv,
        num_envs: int,
        params: Any = None,
        **kwargs: Any,
    ):
        self.env = _one_agent_env(env, kwargs)
        self.num_envs = require_positive_int(num_envs, "num_envs")
        self.params = self.env.default_params if params is None else params
        if params is not None:
            self.env.check_params(params)
        self.single_observation_space = to_gymnasium_space(self.env.observation_space(0))
        self.single_action_space = to_gymnasium_space(self.env.action_space(0))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
        self.render_mode = None
        self._continuous = bool(self.env.continuous_actions)
        self._act_shape = (self.num_envs, *self.env.action_space().shape)
        self._reset_key, self._reset_keys, self._step = _batched(self.env, self.num_envs)
        self._key: jax.Array | None = None
        self._state: Any = None
        self._np_random_seed: int | None = None

    def _infos(self, mask: np.ndarray) -> dict[str, Any]:
        if self._continuous:
            return {}
        n = self.single_action_space.n
        return {"action_mask": mask[:, :n].astype(np.int8), "_action_mask": np.ones(self.num_envs, bool)}

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return np.asarray(obs, dtype=self.single_observation_space.dtype)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if isinstance(seed, list | tuple | np.ndarray):
            seeds = [int(s) for s in seed]
            if len(seeds) != self.num_envs:
                raise ValueError(f"got {len(seeds)} seeds for {self.num_envs} envs")
            super().reset(seed=seeds[0])
            keys = jnp.stack([jax.random.key(s) for s in seeds])
            self._key, self._state, fields = self._reset_keys(keys, self.params)
        else:
            super().reset(seed=seed)
            chain_seed = seed if seed is not None else int(self.np_random.integers(_SEED_BOUND))
            self._key, self._state, fields = self._reset_key(jax.random.key(chain_seed), self.params)
        obs, mask, *_ = jax.device_get(fields)
        return self._obs(obs), self._infos(mask)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._state is None:
            raise RuntimeError(f"{self.env.id}: call reset() before step()")
        actions = checked_action(self.action_space, actions, f"{self.env.id} (vector of {self.num_envs})")
        if self._continuous:
            acts = np.asarray(actions, np.float32).reshape(self._act_shape)
        else:
            acts = np.asarray(actions).reshape(self.num_envs, 1).astype(np.int32)
        self._key, self._state, fields = self._step(self._key, self._state, jnp.asarray(acts), self.params)
        obs, mask, reward, terminated, truncated, final_obs = jax.device_get(fields)
        infos = self._infos(mask)
        done = np.logical_or(terminated, truncated)
        if done.any():
            finals = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                finals[i] = self._obs(final_obs[i])
            infos.update(
                final_obs=finals,
                _final_obs=done.copy(),
                final_info={},
                _final_info=done.copy(),
            )
        return (
            self._obs(obs),
            np.asarray(reward, np.float32),
            np.asarray(terminated, bool),
            np.asarray(truncated, bool),
            infos,
        )


def make_env(id: str | MultiAgentEnv, params: Any = None, render_mode: str | None = None, **kwargs: Any):
    """A one-agent alem env (id plus ``alem.make`` keywords, or an env object) as a ``gymnasium.Env``."""
    return AlemGymnasiumEnv(id, params=params, render_mode=render_mode, **kwargs)


def make_vector_env(
    id: str | MultiAgentEnv, num_envs: int, params: Any = None, **kwargs: Any
) -> AlemVectorEnv:
    """``num_envs`` copies of a one-agent alem env as a ``gymnasium.vector.VectorEnv`` (same-step autoreset)."""
    return AlemVectorEnv(id, num_envs, params=params, **kwargs)
