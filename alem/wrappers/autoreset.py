"""Auto-reset with gymnax 1.0 semantics."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alem.core import TimeStep
from alem.wrappers.base import Wrapper


def select_tree(pred: jax.Array, on_true, on_false):
    """Leafwise ``where(pred, a, b)`` for two pytrees of one structure (``pred`` scalar)."""
    return jax.tree.map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


class AutoReset(Wrapper):
    """Resets the env inside ``step`` when an episode ends.

    Semantics (gymnax 1.0): ``step`` splits its key into a step key and a reset
    key. If the transition ends the episode, the returned state, ``obs``,
    ``action_mask`` and ``acting`` are those of a fresh ``reset`` with the reset
    key, while ``reward``, ``terminated`` and ``truncated`` stay those of the
    final transition; the final observation is in ``info["final_obs"]``
    (the step's own obs when the episode did not end).

    Both branches are computed and selected with ``where`` (no ``cond``), the
    efficient choice under ``vmap``.
    """

    def reset(self, key, params=None):
        state, ts = self._env.reset(key, params)
        return state, ts.replace(info={**ts.info, "final_obs": ts.obs})

    def step(self, key, state, actions, params=None):
        key_step, key_reset = jax.random.split(key)
        state_st, ts_st = self._env.step(key_step, state, actions, params)
        state_re, ts_re = self._env.reset(key_reset, params)
        done = ts_st.done
        state = select_tree(done, state_re, state_st)
        ts = TimeStep(
            obs=jnp.where(done, ts_re.obs, ts_st.obs),
            action_mask=jnp.where(done, ts_re.action_mask, ts_st.action_mask),
            reward=ts_st.reward,
            terminated=ts_st.terminated,
            truncated=ts_st.truncated,
            acting=jnp.where(done, ts_re.acting, ts_st.acting),
            info={**ts_st.info, "final_obs": ts_st.obs},
        )
        return state, ts
