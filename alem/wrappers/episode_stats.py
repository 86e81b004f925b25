"""Episode statistics: per-agent returns and lengths, reported when an episode ends."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from alem import struct
from alem.wrappers.base import Wrapper


@struct.dataclass
class EpisodeStatsState:
    env_state: Any
    returns: Any  # float32 [N], running
    length: Any  # int32 [], env steps so far
    decisions: Any  # int32 [N], steps at which each agent acted
    last_returns: Any  # float32 [N], of the last finished episode
    last_length: Any
    last_decisions: Any


class EpisodeStats(Wrapper):
    """Accumulates returns per agent and reports them at episode end.

    ``info`` gains ``episode_return`` (float32 ``[N]``), ``episode_length``
    (int32 ``[]``, env steps: plies in a turn-based game),
    ``episode_decisions`` (int32 ``[N]``, how often each agent acted),
    ``episode_done`` (bool ``[]``) and ``episode_outcomes`` (``{name: bool []}`` for each of
    the env's ``outcomes``: that info entry on the step an episode ended, False on the other
    steps; an empty dict when the env declares none) and ``episode_metrics`` (``{name: float32 []}``
    for each of the env's ``episode_metrics``, likewise: the value on the step an episode ended,
    0 on the other steps). The ``episode_*`` values are those of the
    most recently finished episode, so they can be averaged with
    ``episode_done`` as weight. Rewards count for every agent on every step,
    acting or not, so terminal payoffs in turn-based games reach both players.

    Put it outside :class:`AutoReset` (``EpisodeStats(AutoReset(env))``) so it
    sees the final reward before the reset; without auto-reset it also works.
    """

    def inner_state(self, state: EpisodeStatsState) -> Any:
        return state.env_state

    def with_inner_state(self, state: EpisodeStatsState, inner: Any) -> EpisodeStatsState:
        return state.replace(env_state=inner)

    def _info(self, ts, stats: EpisodeStatsState, done) -> dict:
        return {
            **ts.info,
            "episode_return": stats.last_returns,
            "episode_length": stats.last_length,
            "episode_decisions": stats.last_decisions,
            "episode_done": done,
            "episode_outcomes": {k: jnp.asarray(ts.info[k], bool) & done for k in self.outcomes},
            "episode_metrics": {
                k: jnp.where(done, jnp.asarray(ts.info[k], jnp.float32), 0.0) for k in self.episode_metrics
            },
        }

    def reset(self, key, params=None):
        env_state, ts = self._env.reset(key, params)
        n = self.num_agents
        zeros_f, zeros_i = jnp.zeros((n,), jnp.float32), jnp.zeros((n,), jnp.int32)
        stats = EpisodeStatsState(env_state, zeros_f, jnp.int32(0), zeros_i, zeros_f, jnp.int32(0), zeros_i)
        return stats, ts.replace(info=self._info(ts, stats, jnp.bool_(False)))

    def step(self, key, state: EpisodeStatsState, actions, params=None):
        # Who acted is decided by the state before the step.
        params_ = self.default_params if params is None else params
        acted = self._env.acting(state.env_state, params_).astype(jnp.int32)
        env_state, ts = self._env.step(key, state.env_state, actions, params)
        done = ts.done
        returns = state.returns + ts.reward
        length = state.length + 1
        decisions = state.decisions + acted
        keep = 1 - done.astype(jnp.int32)
        stats = EpisodeStatsState(
            env_state=env_state,
            returns=returns * keep,
            length=length * keep,
            decisions=decisions * keep,
            last_returns=jnp.where(done, returns, state.last_returns),
            last_length=jnp.where(done, length, state.last_length),
            last_decisions=jnp.where(done, decisions, state.last_decisions),
        )
        return stats, ts.replace(info=self._info(ts, stats, done))
