"""Every registered id, cheaply (default tier): make, reset, step, jit and vmap on tiny shapes.

One compiled program per id (``Harness.smoke`` in tests/conftest.py: reset, random legal actions
and one step of 2 envs under ``jit(vmap)``). The full contract (rollouts, flags against the
dynamics, auto-reset, bad input) is tests/test_conformance.py, in the exhaustive tier.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import alem
from tests.ids import contract_ids

ENV_IDS = contract_ids()  # every id; SMAX by three of its maps (tests/ids.py)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_and_step_under_jit_and_vmap(env_id, harness):
    h = harness(env_id)
    env, n = h.env, h.env.num_agents
    spec = alem.registry()[env_id]
    assert spec.family in {"games", "pathfinding", "coordination", "single_agent"}
    assert spec.text == env.supports_text
    if isinstance(spec.num_agents, int):
        assert spec.num_agents == n
    assert env.__class__.__doc__ and len(env.__class__.__doc__) > 40, "every env needs a docstring card"

    states, ts, states2, ts2 = h.smoke(jax.random.key(0), h.params)
    space = jax.vmap(env.observation_space().contains)
    assert ts.obs.shape == (2, *env.observation_space().shape)
    assert ts.reward.shape == (2, n) and ts.reward.dtype == jnp.float32
    assert ts.acting.shape == (2, n) and bool(ts.acting.any(-1).all()), "nobody acts after reset"
    assert not bool((ts.terminated | ts.truncated).any())
    assert bool(space(ts.obs).all()) and bool(space(ts2.obs).all()), "observation outside the declared space"
    if not env.continuous_actions:
        assert ts.action_mask.shape == (2, n, env.num_actions) and ts.action_mask.dtype == jnp.bool_
        assert bool((ts.action_mask.any(-1) | ~ts.acting).all()), "an acting agent has no legal action"
    # the step keeps every shape, dtype and the state's structure
    assert jax.tree.map(lambda x: (x.shape, x.dtype), ts2) == jax.tree.map(lambda x: (x.shape, x.dtype), ts)
    assert jax.tree.structure(states2) == jax.tree.structure(states)
    assert bool(jnp.isfinite(ts2.reward).all())
    assert not bool(ts2.info["illegal_action"].any()), "a random legal action was flagged illegal"
