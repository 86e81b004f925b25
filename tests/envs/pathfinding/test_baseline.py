"""The classical BFS baseline: solves small instances, never worse than the lower bound, plays as "bfs"."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.pathfinding.baseline import joint_actions
from alem.envs.pathfinding.env import PathfindingEnv
from alem.players import Turn, make_player


@pytest.mark.exhaustive  # compiles a 48-step scan of N BFS per step (~1 min on 2 busy cores)
def test_baseline_solves_small_one_shot_instances():
    env = PathfindingEnv(4, 8, density=0.1, max_steps=48)
    params = env.default_params

    def episode(key):
        k0, k1 = jax.random.split(key)
        state, ts = env.reset(k0, params)

        def body(carry, k):
            state, ts, done, final = carry
            state, ts2 = env.step(k, state, joint_actions(k, env, state), params)
            final = jax.tree.map(lambda f, x: jnp.where(done, f, x), final, ts2.info)
            return (state, ts2, done | ts2.done, final), None

        init = (state, ts, jnp.bool_(False), ts.info)
        (_, _, done, info), _ = jax.lax.scan(body, init, jax.random.split(k1, 48))
        return done, info

    done, info = jax.jit(jax.vmap(episode))(jax.random.split(jax.random.key(0), 32))
    csr = np.asarray(info["CSR"])
    soc, lb = np.asarray(info["SoC"]), np.asarray(info["lb_soc"])
    assert done.all()
    assert csr.mean() >= 0.9, f"the baseline solved only {csr.mean():.0%} of easy instances"
    solved = csr == 1
    assert (soc[solved] >= lb[solved]).all(), "SoC below the BFS lower bound"
    # On sparse maps with 4 agents the baseline is near-optimal.
    assert soc[solved].sum() / lb[solved].sum() < 1.5


def test_bfs_policy_is_registered_and_moves_towards_goals():
    env = alem.make("pathfinding-v0", num_agents=4, height=8)  # small: one BFS program to compile
    policy = make_player("bfs", env)
    keys = jax.random.split(jax.random.key(1), 4)
    state, ts = jax.jit(jax.vmap(env.reset, (0, None)))(keys, env.default_params)  # eager vmap: ~8 s
    turn = Turn(env, env.default_params, 2, state, ts, jnp.ones(4, bool), jnp.arange(4))
    acts = np.asarray(jax.jit(lambda k: policy.act(k, turn))(jax.random.key(2)))
    assert acts.shape == (4,) and ((acts >= 0) & (acts < 5)).all()
    # Each chosen move shortens agent 2's distance to its goal, or it waits.
    moves = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])
    from alem.envs.pathfinding import maps as M

    for b in range(4):
        obst = np.asarray(env.obstacles(jax.tree.map(lambda x, b=b: x[b], state)))
        d = M.bfs_distance_host(obst, tuple(np.asarray(state.goal[b, 2])))
        p = np.asarray(state.pos[b, 2])
        if acts[b]:
            assert d[tuple(p + moves[acts[b]])] == d[tuple(p)] - 1
