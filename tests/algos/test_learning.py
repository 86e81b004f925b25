"""Small learning runs (CPU, seconds each): thresholds, determinism, recurrent resets.

Every learner is jitted once per config and shared by the tests through a cache.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.algos import VARIANTS, make_config, make_learner

SMALL = dict(num_envs=16, num_steps=8, update_epochs=4, num_minibatches=2, lr=3e-3, gamma=0.9, hidden=(32,))
UPDATES = 50
SEEDS = 2


@functools.cache
def _run(algo: str, env_id: str, updates: int = UPDATES, **overrides):
    env = alem.make(env_id)
    cfg = make_config(
        algo, **{**SMALL, "total_steps": SMALL["num_envs"] * SMALL["num_steps"] * updates, **overrides}
    )
    learner = make_learner(env, cfg)
    keys = jax.vmap(jax.random.key)(jnp.arange(SEEDS))
    run = jax.jit(jax.vmap(lambda k: learner.run(learner.init(k), updates)))
    state, metrics = run(keys)
    return learner, state, jax.device_get(metrics)


def _late_return(metrics, last: int = 10) -> np.ndarray:
    """Mean episode return per seed over the last ``last`` updates (mean over agents)."""
    ret = metrics["return_sum"][:, -last:].sum(1) / metrics["episodes"][:, -last:].sum(1)[:, None]
    return ret.mean(-1)


# Learning thresholds are the exhaustive tier; the default run keeps IPPO's as the defining one.


@pytest.mark.parametrize(
    "algo", [pytest.param(a, marks=() if a == "ippo" else pytest.mark.exhaustive) for a in sorted(VARIANTS)]
)
def test_every_learner_solves_the_coordination_game(algo):
    _, _, metrics = _run(algo, "coordination-v0")
    ret = _late_return(metrics)
    assert (ret >= 0.95).all(), f"{algo}: late return per seed {ret} (optimum 1, random 0.5)"
    assert metrics["illegal_actions"].sum() == 0


@pytest.mark.exhaustive  # a learning threshold
def test_joint_action_cppo_reaches_the_climbing_optimum():
    _, _, metrics = _run("cppo_joint", "climbing-v0", updates=80)
    ret = _late_return(metrics)
    assert (ret >= 10.5).all(), f"late return per seed {ret}; optimum 11"


@pytest.mark.exhaustive  # the default run's budget (test_vmapped_seeds_equal_separate_runs checks determinism too)
def test_same_seed_same_metrics():
    env = alem.make("iterated_stag_hunt-v0", num_rounds=5)
    learner = make_learner(env, make_config("mappo", **SMALL, total_steps=16 * 8 * 3))
    run = jax.jit(lambda k: learner.run(learner.init(k), 3))
    a, b = jax.device_get(run(jax.random.key(7))[1]), jax.device_get(run(jax.random.key(7))[1])
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    c = jax.device_get(run(jax.random.key(8))[1])
    assert not np.array_equal(a["policy_loss"], c["policy_loss"])


# Bit-for-bit equality of two different programs holds at XLA's default LLVM optimisation only; the
# default tier compiles at -O0 (tests/conftest.py), so this one runs in the exhaustive tier.
@pytest.mark.exhaustive
def test_vmapped_seeds_equal_separate_runs():
    learner, state, metrics = _run("ippo", "coordination-v0")
    single = jax.jit(lambda k: learner.run(learner.init(k), UPDATES))
    for s in range(SEEDS):
        st, m = single(jax.random.key(s))
        np.testing.assert_allclose(m["return_sum"], metrics["return_sum"][s], rtol=1e-5, atol=1e-5)
        seed_params = jax.tree.map(lambda x, s=s: x[s], state.params)
        for a, b in zip(jax.tree.leaves(st.params), jax.tree.leaves(seed_params), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_recurrent_policy_replays_its_rollout_exactly():
    """With hidden states reset at episode starts, the update recomputes the rollout's log-probs (ratio 1).

    Shifting the resets by one step (the classic off-by-one) breaks the equality, so the
    check is sensitive to the alignment.
    """
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)  # several episode starts per rollout
    learner = make_learner(env, make_config("ippo", **SMALL, total_steps=16 * 8, recurrent=8))
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    state, batch, roll = jax.jit(lambda s: learner.rollout(s, env.default_params))(state)
    assert bool(batch.resets[1:].any()), "the rollout must cross episode boundaries"
    ratio_and_kl = jax.jit(learner.unit_ratio_and_kl)  # one compile for both batches
    ratio, kl = ratio_and_kl(state.params, batch, roll["hidden0"])
    np.testing.assert_allclose(ratio, 1.0, atol=1e-5)
    shifted = batch.replace(resets=jnp.roll(batch.resets, 1, axis=0))
    bad_ratio, _ = ratio_and_kl(state.params, shifted, roll["hidden0"])
    assert np.abs(np.asarray(bad_ratio) - 1).max() > 1e-3


def test_turn_based_learner_respects_masks():
    """Turn-based envs: only the acting agent's samples enter the policy loss and no move is illegal."""
    ids = [i for i in ("tic_tac_toe-v0",) if i in alem.registry()]
    if not ids:
        pytest.skip("tic_tac_toe-v0 is not registered")
    _, _, metrics = _run("ippo", ids[0], updates=5)
    assert metrics["illegal_actions"].sum() == 0
    assert metrics["episodes"].sum() > 0


@pytest.mark.exhaustive  # a learning threshold
def test_ippo_beats_random_on_simple_spread():
    """IPPO on MPE simple_spread (3 agents), ~120k env steps: clearly above the random policy."""
    from alem.rollout import random_rollout

    env_id = "mpe/simple_spread-v0"
    if env_id not in alem.registry():
        pytest.skip(f"{env_id} is not registered")
    env = alem.make(env_id)
    updates = 60
    cfg = make_config("ippo", num_envs=16, num_steps=128, total_steps=16 * 128 * updates, lr=5e-4)
    learner = make_learner(env, cfg)
    _, metrics = jax.jit(lambda k: learner.run(learner.init(k), updates))(jax.random.key(0))
    late = np.asarray(metrics["return_sum"][-10:]).sum(0).mean() / np.asarray(metrics["episodes"][-10:]).sum()
    _, rnd = jax.jit(random_rollout(env, 64, 200))(jax.random.key(1), env.default_params)
    random_return = float(np.asarray(rnd["episode_return"]).mean())
    assert late > random_return + 2.0, f"IPPO {late:.2f} vs random {random_return:.2f} (per agent)"


@pytest.mark.exhaustive  # a learning threshold
def test_shared_critic_learns_the_first_movers_advantage():
    """Tic-tac-toe self-play, one shared critic: both players see the same empty board at the start,
    so without knowing whose move it is the critic gives both one value. With the side to move as
    an input it learns that X (who moves first, and wins more often under near-random play) is
    ahead: V(start, X) > V(start, O)."""
    learner, state, _ = _run("ippo", "tic_tac_toe-v0", updates=30)
    assert learner.critic_sees_turn
    env = learner.env
    s0, ts0 = env.reset(jax.random.key(0))
    gstate = jnp.zeros((0,), jnp.float32)
    _, c_in = learner.inputs(ts0.obs[None], gstate[None], ts0.acting[None])
    for seed in range(SEEDS):
        params = jax.tree.map(lambda x, seed=seed: x[seed], state.params)
        hidden = learner.critic_net.initial_hidden((1, learner.n))
        _, _, v = learner.values(params, hidden, c_in, jnp.ones((1,), bool), state.value_norm)
        v_x, v_o = np.asarray(v[0])
        assert v_x > v_o + 0.1, f"seed {seed}: V(start) X {v_x:.3f}, O {v_o:.3f}"


@pytest.mark.exhaustive  # a learning threshold
def test_ippo_with_a_gaussian_head_beats_random_on_continuous_simple_spread():
    """Continuous actions (a Gaussian policy head): 2 seeds x 64k env steps, against the uniform-random
    policy over the action box on the same env (measured about -24.9 per agent; IPPO about -22.3)."""
    from alem.rollout import random_rollout

    env = alem.make("mpe/simple_spread-v0", continuous_actions=True)
    updates = 80
    cfg = make_config(
        "ippo", num_envs=32, num_steps=25, num_minibatches=2, total_steps=32 * 25 * updates,
        lr=1e-3, ent_coef=0.0, log_std_init=-0.5, hidden=(64, 64),
    )  # fmt: skip
    learner = make_learner(env, cfg)
    keys = jax.vmap(jax.random.key)(jnp.arange(2))
    state, m = jax.jit(jax.vmap(lambda k: learner.run(learner.init(k), updates)))(keys)
    late = np.asarray(m["return_sum"][:, -15:].sum((1, 2)) / m["episodes"][:, -15:].sum(1)) / env.num_agents
    rollout = random_rollout(env, 64, 250)
    _, rnd = jax.jit(lambda k: rollout(k, env.default_params))(jax.random.key(1))
    random_return = float(np.asarray(rnd["return_sum"]).sum() / int(rnd["episodes"])) / env.num_agents
    assert int(m["illegal_actions"].sum()) == 0  # samples are clipped into the box before the env sees them
    assert (late >= random_return + 1.5).all(), f"late return per seed {late}, random {random_return:.2f}"
    assert np.isfinite(np.asarray(state.params["actor"]["params"]["log_std"])).all()


@pytest.mark.parametrize(
    "algo",
    [pytest.param(a, marks=pytest.mark.exhaustive) for a in ("dpo", "mappo", "happo")],
)
def test_gaussian_head_updates_stay_finite_for_every_decentralised_learner(algo):
    """DPO's exact Gaussian KL (under a square root), MAPPO's global critic, HAPPO's sequential
    ratios: a few updates on continuous actions move the policy and stay finite."""
    env = alem.make("mpe/simple_spread-v0", continuous_actions=True)
    cfg = make_config(algo, num_envs=8, num_steps=25, num_minibatches=2, total_steps=8 * 25 * 3, hidden=(16,))
    learner = make_learner(env, cfg)
    state0 = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    state, m = jax.jit(lambda s: learner.run(s, 3))(state0)
    chex.assert_tree_all_finite({k: m[k] for k in ("policy_loss", "value_loss", "entropy", "approx_kl")})
    chex.assert_tree_all_finite(state.params)
    before, after = state0.params["actor"]["params"], state.params["actor"]["params"]
    assert not np.allclose(before["log_std"], after["log_std"])
    assert int(m["illegal_actions"].sum()) == 0
