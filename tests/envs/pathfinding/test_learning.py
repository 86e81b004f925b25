"""IPPO learns grid MAPF from the local view with the goal-direction channel and progress reward
(the recipe of ``configs/env/pathfinding_follow.yaml``, small): a learning threshold."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import alem
from alem.algos import make_config, make_learner
from alem.algos.checkpoint_player import actor_actions

pytestmark = pytest.mark.exhaustive  # a learning run

ENV = dict(num_agents=4, height=8, density=0.2, max_steps=24, goal_direction=True, progress_reward=0.1)
UPDATES = 80


def _csr(env, act, key, episodes: int = 128) -> float:
    """Share of episodes that end with every agent on its goal (POGEMA's CSR), fresh random instances."""

    def episode(k):
        k0, k1 = jax.random.split(k)
        state, ts = env.reset(k0)

        def body(carry, kk):
            state, ts, done, solved = carry
            ka, ks = jax.random.split(kk)
            state, ts = env.step(ks, state, act(ka, ts), env.default_params)
            solved = jnp.where(done, solved, ts.info["CSR"])
            return (state, ts, done | ts.done, solved), None

        carry = (state, ts, jnp.bool_(False), jnp.float32(0))
        return jax.lax.scan(body, carry, jax.random.split(k1, ENV["max_steps"]))[0][3]

    return float(jax.jit(jax.vmap(episode))(jax.random.split(key, episodes)).mean())


def test_ippo_learns_to_bring_every_agent_to_its_goal():
    env = alem.make("pathfinding-v0", **ENV)
    cfg = make_config(
        "ippo", num_envs=32, num_steps=24, num_minibatches=4, lr=1e-3, hidden=(64, 64),
        total_steps=32 * 24 * UPDATES,
    )
    learner = make_learner(env, cfg)
    state, _ = jax.jit(lambda k: learner.run(learner.init(k), UPDATES))(jax.random.key(0))

    trained = lambda k, ts: actor_actions(learner, state.params, ts.obs, ts.action_mask, k)

    random = lambda k, ts: jax.random.randint(k, (env.num_agents,), 0, 5)
    learned, baseline = _csr(env, trained, jax.random.key(1)), _csr(env, random, jax.random.key(1))
    assert learned >= 0.6 and baseline <= 0.1, f"CSR trained {learned}, random {baseline}"
