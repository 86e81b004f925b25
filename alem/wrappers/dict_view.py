"""A dict-per-agent view for users coming from JaxMARL."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from alem.core import MultiAgentEnv
from alem.wrappers.autoreset import AutoReset


class DictView:
    """JaxMARL-style API over an alem env: dicts keyed by agent name, auto-reset.

    - ``reset(key) -> (obs, state)``
    - ``step(key, state, actions) -> (obs, state, rewards, dones, info)`` where
      ``actions``, ``obs`` and ``rewards`` are ``{agent: array}``, ``dones`` has
      one entry per agent plus ``"__all__"`` (terminated or truncated), and
      ``info`` keeps alem's info plus ``terminated``/``truncated`` kept apart.
    - ``get_avail_actions(state) -> {agent: mask}``, ``observation_space(agent)``,
      ``action_space(agent)``, ``agents``, ``num_agents``.

    Params are fixed at construction (JaxMARL envs take none). Agents that are
    not acting in a turn-based game still receive an observation; their
    actions are ignored.
    """

    def __init__(self, env: MultiAgentEnv, params: Any = None):
        self.env = env if isinstance(env, AutoReset) else AutoReset(env)
        self.params = env.default_params if params is None else params
        self.agents = list(env.agents)
        self.num_agents = len(self.agents)
        self._index = {a: i for i, a in enumerate(self.agents)}

    def _split(self, x: jax.Array) -> dict[str, jax.Array]:
        return {a: x[i] for i, a in enumerate(self.agents)}

    def reset(self, key: jax.Array):
        state, ts = self.env.reset(key, self.params)
        return self._split(ts.obs), state

    def step(self, key: jax.Array, state, actions: dict[str, Any]):
        missing = set(self.agents) - set(actions)
        extra = set(actions) - set(self.agents)
        if missing or extra:
            raise KeyError(
                f"{self.env.id}: actions must have one entry per agent {self.agents}; "
                f"missing {sorted(missing)}, unknown {sorted(extra)}"
            )
        stacked = jnp.stack([jnp.asarray(actions[a]) for a in self.agents])
        state, ts = self.env.step(key, state, stacked, self.params)
        done = ts.done
        dones = {a: done for a in self.agents}
        dones["__all__"] = done
        info = {**ts.info, "terminated": ts.terminated, "truncated": ts.truncated, "acting": ts.acting}
        return self._split(ts.obs), state, self._split(ts.reward), dones, info

    def get_avail_actions(self, state) -> dict[str, jax.Array]:
        return self._split(self.env.action_mask(state, self.params))

    def observation_space(self, agent: str):
        return self.env.observation_space(self._index[agent])

    def action_space(self, agent: str):
        return self.env.action_space(self._index[agent])
