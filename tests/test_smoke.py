"""Every registered id, cheaply (default tier): make, reset, step, jit and vmap on tiny shapes.

The full contract (rollouts, flags against the dynamics, auto-reset, bad input) is
tests/test_conformance.py, in the exhaustive tier; both use the id's shared harness.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.rollout import random_actions

ENV_IDS = sorted(alem.registry())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_and_step_under_jit(env_id, harness):
    h = harness(env_id)
    env, n = h.env, h.env.num_agents
    spec = alem.registry()[env_id]
    assert spec.family in {"games", "pathfinding", "coordination", "single_agent"}
    if isinstance(spec.num_agents, int):
        assert spec.num_agents == n
    assert env.__class__.__doc__ and len(env.__class__.__doc__) > 40, "every env needs a docstring card"

    state, ts = h.reset(jax.random.key(0))
    space = env.observation_space()
    assert ts.obs.shape == space.shape and bool(space.contains(ts.obs))
    assert ts.reward.shape == (n,) and ts.reward.dtype == jnp.float32
    assert ts.acting.shape == (n,) and bool(ts.acting.any()), "nobody acts after reset"
    assert not bool(ts.terminated | ts.truncated)
    if not env.continuous_actions:
        assert ts.action_mask.shape == (n, env.num_actions) and ts.action_mask.dtype == jnp.bool_
        assert bool((ts.action_mask.any(-1) | ~ts.acting).all()), "an acting agent has no legal action"

    acts = random_actions(env, jax.random.key(1), ts)
    state2, ts2 = h.step(jax.random.key(2), state, acts)
    assert jax.tree.map(lambda x: (x.shape, x.dtype), ts2) == jax.tree.map(lambda x: (x.shape, x.dtype), ts)
    assert jax.tree.structure(state2) == jax.tree.structure(state)
    assert bool(space.contains(ts2.obs)), "observation outside the declared space after a step"
    assert bool(jnp.isfinite(ts2.reward).all())
    assert not bool(ts2.info["illegal_action"].any()), "a random legal action was flagged illegal"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vmap_matches_single_calls(env_id, harness):
    """A batch of 2 envs under jit(vmap) gives what each env gives alone."""
    h = harness(env_id)
    keys = jax.random.split(jax.random.key(3), 2)
    states, ts = h.vreset(keys)
    assert ts.obs.shape == (2, *h.env.observation_space().shape)
    acts = jax.vmap(lambda k, t: random_actions(h.env, k, t))(jax.random.split(jax.random.key(4), 2), ts)
    step_keys = jax.random.split(jax.random.key(5), 2)
    _, ts2 = h.vstep(step_keys, states, acts)
    for b in range(2):
        s1, t1 = h.reset(keys[b])
        _, t2 = h.step(step_keys[b], s1, acts[b])
        np.testing.assert_allclose(np.asarray(ts2.obs[b]), np.asarray(t2.obs), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(ts2.reward[b]), np.asarray(t2.reward), rtol=1e-5, atol=1e-5)
