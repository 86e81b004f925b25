"""Learner configurations: what is refused and how the LR schedule counts optimiser steps."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import alem
from alem.algos import make_config, make_learner
from alem.algos.config import LearnerConfigError

SIZES = dict(num_envs=4, num_steps=4, total_steps=64, update_epochs=2, num_minibatches=2)


def test_sequential_update_with_a_role_shared_by_three_agents_decays_the_lr_over_all_their_turns():
    """simple_tag: 3 adversaries share role 0; under HAPPO its optimiser steps 3 times per minibatch."""
    env = alem.make("mpe/simple_tag-v0")
    learner = make_learner(env, make_config("happo", sharing="roles", **SIZES))
    base = learner.cfg.num_updates * 2 * 2
    assert learner.schedule_steps == 3 * base
    assert make_learner(env, make_config("happo", **SIZES)).schedule_steps == base  # one agent per role
    assert make_learner(env, make_config("ippo", sharing="roles", **SIZES)).schedule_steps == base


def test_sequential_update_with_a_single_parameter_set_is_refused():
    """simple_spread's agents share one env role: sharing=roles would be fully shared HAPPO."""
    with pytest.raises(LearnerConfigError, match="fully shared HAPPO"):
        make_learner(alem.make("mpe/simple_spread-v0"), make_config("happo", sharing="roles", **SIZES))


@pytest.mark.parametrize("env_id", ["tic_tac_toe-v0", "kuhn_poker-v0", "matching_pennies-v0"])
def test_centralised_ppo_on_a_zero_sum_game_is_refused(env_id):
    env = alem.make(env_id)
    assert env.zero_sum
    for algo in ("cppo", "cppo_joint"):
        with pytest.raises(LearnerConfigError, match="zero-sum"):
            make_learner(env, make_config(algo, **SIZES))


def test_centralised_ppo_on_a_common_payoff_game_is_allowed():
    env = alem.make("stag_hunt-v0")
    assert not env.zero_sum
    assert make_learner(env, make_config("cppo", **SIZES)).centralised


@pytest.mark.exhaustive  # the default run's budget (~11 s per learner)
@pytest.mark.parametrize("algo", ["ippo", "mappo"])
def test_truncations_are_bootstrapped_for_local_and_global_state_critics(algo):
    """simple_spread truncates every 25 steps; with bootstrap_truncation=True the value of the cut-off
    state is the bootstrap target for MAPPO's global-state critic too (before: silently 0 of 4)."""
    import jax
    import numpy as np

    env = alem.make("mpe/simple_spread-v0")
    for boot in (True, False):
        cfg = make_config(algo, num_envs=4, num_steps=30, total_steps=120, bootstrap_truncation=boot)
        learner = make_learner(env, cfg)
        state = jax.jit(learner.init)(jax.random.key(0))
        _, batch, _ = jax.jit(learner.rollout)(state, env.default_params)
        truncated, final_v = np.asarray(batch.truncated), np.asarray(batch.final_value)
        if boot:
            assert truncated.sum() == 4 and truncated[24].all()  # every env, at its 25th step
            assert np.all(final_v[truncated] != 0) and np.all(np.isfinite(final_v))
        else:
            assert not truncated.any() and not final_v.any()


@pytest.mark.exhaustive  # compiles two full HAPPO updates
def test_happo_weights_the_normalised_advantage_so_the_factor_matters(monkeypatch):
    """HARL normalises A, then weights it by the factor M. Normalising M*A per minibatch (the old
    rule) cancels a factor that is constant over it: doubling every factor then changed nothing."""
    import jax

    from alem.algos import happo

    env = alem.make("coordination-v0")
    learner = make_learner(env, make_config("happo", num_envs=4, num_steps=8, total_steps=32, hidden=(8,)))
    state = jax.jit(learner.init)(jax.random.key(0))
    plain = jax.jit(learner.update)(state)[0].params
    real = happo.happo_factor
    monkeypatch.setattr(happo, "happo_factor", lambda f, r, a: 2.0 * real(f, r, a))
    doubled = jax.jit(learner.update)(state)[0].params
    diffs = [
        float(abs(a - b).max()) for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(doubled), strict=True)
    ]
    assert max(diffs) > 1e-6


def test_value_norm_statistics_and_round_trip_on_a_known_sequence():
    """MAPPO's ValueNorm: debiased EMA of mean and second moment; normalise/denormalise invert."""
    import jax.numpy as jnp
    import numpy as np

    from alem.algos.state import ValueNorm

    vn = ValueNorm.create().update(jnp.array([1.0, 3.0]), jnp.ones(2), beta=0.5)
    mean, std = vn.stats()
    assert float(mean) == pytest.approx(2.0) and float(std) == pytest.approx(1.0)  # debiased: mean 2, var 5-4
    vn = vn.update(jnp.array([5.0, 5.0]), jnp.ones(2), beta=0.5)  # EMA: m = (0.25*2 + 0.5*5)/0.75 = 4
    mean, std = vn.stats()
    assert float(mean) == pytest.approx(4.0)
    assert float(std) == pytest.approx(np.sqrt((0.25 * 5 + 0.5 * 25) / 0.75 - 16.0))
    t = jnp.array([-3.0, 0.5, 7.0])
    np.testing.assert_allclose(np.asarray(((t - mean) / std) * std + mean), np.asarray(t), rtol=1e-6)


def test_policy_loss_ignores_the_samples_of_waiting_players():
    """Turn-based: changing a waiting player's action, old log-prob and advantage on its waiting
    steps changes neither the policy loss nor the entropy term."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    env = alem.make("tic_tac_toe-v0")
    learner = make_learner(env, make_config("ippo", num_envs=4, num_steps=8, total_steps=32, hidden=(8,)))
    state = jax.jit(learner.init)(jax.random.key(0))
    state, batch, roll = jax.jit(learner.rollout)(state, env.default_params)
    waiting = ~np.asarray(batch.acting)
    assert waiting.any() and (~waiting).any()
    adv = jax.random.normal(jax.random.key(1), batch.reward.shape)
    targets = jnp.zeros_like(adv)
    args = (roll["hidden0"], adv, targets, jnp.ones((2,)), state.betas, state.value_norm, 0.2)
    _, m1 = learner.loss(state.params, batch, *args)
    noisy = batch.replace(
        action=jnp.where(waiting, (batch.action + 3) % 9, batch.action),
        old_logp=jnp.where(waiting, batch.old_logp - 1.0, batch.old_logp),
    )
    adv2 = jnp.where(waiting, adv * 10 + 5, adv)
    _, m2 = learner.loss(state.params, noisy, roll["hidden0"], adv2, *args[2:])
    for k in ("policy_loss", "entropy", "approx_kl", "clip_frac"):
        assert float(m1[k]) == pytest.approx(float(m2[k]), abs=1e-6), k


@pytest.mark.exhaustive  # compiles a three-agent HAPPO update; the factor itself is tested by default
def test_happo_update_weights_each_agent_by_the_earlier_agents_ratios_on_their_active_steps(monkeypatch):
    """Inside real HAPPO updates: the k-th agent of the update's order gets the normalised advantage
    times the product of the earlier agents' new/old ratios, where each of them was active; its
    ratio counts as 1 where it was not (agents that reached their goal in pathfinding_disappear,
    whose ratio there is not 1). The order is drawn afresh for each update."""
    import jax
    import numpy as np

    from alem.algos.ppo import Learner

    env = alem.make("pathfinding_disappear-v0", num_agents=3, height=4, width=4, density=0.0, max_steps=12)
    cfg = make_config(
        "happo",
        num_envs=4,
        num_steps=12,
        num_minibatches=1,
        update_epochs=2,
        total_steps=48 * 3,
        hidden=(8,),
        lr=0.01,
    )
    learner = make_learner(env, cfg)
    calls = []
    real = Learner.optimise

    def spy(self, st, batch, hidden0, adv, targets, agent_w, set_mask, key, normalize=True):
        out = real(self, st, batch, hidden0, adv, targets, agent_w, set_mask, key, normalize)
        ratio, _ = self.unit_ratio_and_kl(out[0].params, batch, hidden0)  # after this agent's turn
        record = lambda *xs: calls.append([np.asarray(x) for x in xs])
        jax.debug.callback(record, agent_w, adv, ratio, batch.acting, ordered=True)
        return out

    monkeypatch.setattr(Learner, "optimise", spy)
    state = jax.jit(lambda k: learner.run(learner.init(k), 2)[0])(jax.random.key(0))
    jax.block_until_ready(state)
    assert len(calls) == 6
    orders, inactive_ratio_not_one = [], False
    for group in (calls[:3], calls[3:]):
        base, factor = group[0][1], 1.0
        for w, adv, ratio, acting in group:
            np.testing.assert_allclose(adv, base * factor, rtol=1e-5, atol=1e-7)
            u = int(w.argmax())
            inactive_ratio_not_one |= bool(np.any(np.abs(ratio[..., u][~acting[..., u]] - 1) > 1e-3))
            factor = factor * np.where(acting[..., u], ratio[..., u], 1.0)[..., None]
        orders.append(tuple(int(c[0].argmax()) for c in group))
    assert inactive_ratio_not_one  # so the old rule (every step's ratio) would have failed above
    assert orders[0] != orders[1] and all(sorted(o) == [0, 1, 2] for o in orders)


def test_cppo_joint_log_prob_is_the_sum_over_the_acting_agents():
    """CPPO with one head per agent: the team's log-probability, old log-probability and entropy
    are sums over the agents that act; a waiting agent's row contributes nothing."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    env = alem.make("coordination-v0")
    learner = make_learner(env, make_config("cppo", num_envs=4, num_steps=4, total_steps=16, hidden=(8,)))
    table = jax.nn.log_softmax(jax.random.normal(jax.random.key(0), (3, 2, 2)), -1)  # [B, N, A]
    actions = jnp.array([[0, 1], [1, 1], [1, 0]])
    acting = jnp.array([[True, True], [True, False], [False, True]])
    old = table.max(-1) - 0.1
    logp, old_logp, _, ent = learner.unit_terms(table, old, table[..., :0], actions, acting)
    per_agent = np.take_along_axis(np.asarray(table), np.asarray(actions)[..., None], -1)[..., 0]
    w = np.asarray(acting, np.float32)
    np.testing.assert_allclose(np.asarray(logp)[:, 0], (per_agent * w).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(old_logp)[:, 0], (np.asarray(old) * w).sum(-1), rtol=1e-6)
    agent_ent = -(np.exp(np.asarray(table)) * np.asarray(table)).sum(-1)
    np.testing.assert_allclose(np.asarray(ent)[:, 0], (agent_ent * w).sum(-1), rtol=1e-5)


@pytest.mark.exhaustive  # compiles a learner per schedule (tests/algos/test_losses.py covers linear_coef)
def test_entropy_bonus_follows_the_ent_coef_schedule():
    """``ent_coef_end >= 0``: the loss weights the entropy by the coefficient of the current update
    (``ent_coef`` at the first, ``ent_coef_end`` at the last); by default it stays ``ent_coef``."""
    import jax
    import jax.numpy as jnp

    env = alem.make("kuhn_poker-v0")
    cfg = make_config("ippo", **SIZES, ent_coef=0.3, ent_coef_end=0.1, hidden=(8,))
    learner = make_learner(env, cfg)
    assert cfg.num_updates == 4
    assert [float(learner.entropy_coef(jnp.int32(u))) for u in range(4)] == pytest.approx(
        [0.3, 0.2333333, 0.1666667, 0.1]
    )
    const = make_learner(env, make_config("ippo", **SIZES, ent_coef=0.3, hidden=(8,)))
    assert float(const.entropy_coef(jnp.int32(3))) == pytest.approx(0.3)

    state = jax.jit(learner.init)(jax.random.key(0))
    state, batch, roll = jax.jit(learner.rollout)(state, env.default_params)
    adv = jax.random.normal(jax.random.key(1), batch.reward.shape)
    args = (roll["hidden0"], adv, jnp.zeros_like(adv), jnp.ones((2,)), state.betas, state.value_norm, 0.2)
    total0, m = learner.loss(state.params, batch, *args, ent_coef=0.0)
    total1, _ = learner.loss(state.params, batch, *args, ent_coef=0.25)
    assert float(m["entropy"]) > 0.5  # a fresh policy over two actions
    assert float(total0 - total1) == pytest.approx(0.25 * float(m["entropy"]), rel=1e-5)

    # the update optimises with the scheduled coefficient: at the last update that is ent_coef_end
    seen = []
    real_loss = learner.loss

    def spy(*a, **kw):
        seen.append(kw["ent_coef"])
        return real_loss(*a, **kw)

    object.__setattr__(learner, "loss", spy)
    try:
        learner.update(state.replace(update=jnp.int32(3)))
    finally:
        object.__delattr__(learner, "loss")
    assert seen and float(seen[0]) == pytest.approx(0.1)


ANNEAL_SIZES = dict(num_envs=4, num_steps=4, total_steps=64, update_epochs=1, num_minibatches=1)


@pytest.mark.exhaustive  # compiles two learners (the refusals are tested by default)
def test_anneal_param_moves_an_env_param_linearly_and_the_rollout_uses_it():
    """public_goods' multiplier annealed to 0: 16 env steps per update, 64 in the run."""
    import jax
    import numpy as np

    env = alem.make("public_goods-v0")
    base = env.default_params
    m0 = float(base.multiplier)
    cfg = make_config("ippo", anneal_param="multiplier", anneal_param_end=0.0, **ANNEAL_SIZES)
    annealed = make_learner(env, cfg)
    values = [float(annealed.annealed_params(u, base).multiplier) for u in range(6)]
    np.testing.assert_allclose(values, [m0, 0.75 * m0, 0.5 * m0, 0.25 * m0, 0.0, 0.0], rtol=1e-6)
    short = make_learner(
        env, make_config("ippo", anneal_param="multiplier", anneal_param_steps=32, **ANNEAL_SIZES)
    )
    values = [float(short.annealed_params(u, base).multiplier) for u in range(4)]
    np.testing.assert_allclose(values, [m0, 0.5 * m0, 0.0, 0.0], rtol=1e-6)

    # An update under the schedule is the plain learner's update on the scheduled params.
    plain = make_learner(env, make_config("ippo", **ANNEAL_SIZES))
    state = jax.jit(annealed.init)(jax.random.key(0))
    state, _ = jax.jit(annealed.update)(state, base)  # update 0: the multiplier as given
    got_state, got = jax.jit(annealed.update)(state, base)  # update 1: 0.75 of it
    want_state, want = jax.jit(plain.update)(state, base.replace(multiplier=jnp.float32(0.75 * m0)))
    _, unannealed = jax.jit(plain.update)(state, base)
    assert float(got["anneal_value"]) == pytest.approx(0.75 * m0)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-6, err_msg=k)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6),
        got_state.params,
        want_state.params,
    )
    assert any(not np.allclose(unannealed[k], want[k]) for k in want)  # the multiplier matters here


def test_anneal_param_refusals():
    env = alem.make("public_goods-v0")
    with pytest.raises(LearnerConfigError, match="did you mean 'multiplier'"):
        make_learner(env, make_config("ippo", anneal_param="multipler", **ANNEAL_SIZES))
    with pytest.raises(LearnerConfigError, match="not a float scalar field"):
        make_learner(env, make_config("ippo", anneal_param="num_rounds", **ANNEAL_SIZES))
    with pytest.raises(LearnerConfigError, match="anneal_param_steps"):
        make_config("ippo", anneal_param="multiplier", anneal_param_steps=-1, **ANNEAL_SIZES)
    with pytest.raises(LearnerConfigError, match="anneal_param_end"):
        make_config("ippo", anneal_param="multiplier", anneal_param_end=float("nan"), **ANNEAL_SIZES)


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("lr", "abc", "algo.lr must be a number, got 'abc'"),
        ("num_envs", 2.5, "algo.num_envs must be an integer, got 2.5"),
        ("agent_id", 3, "algo.agent_id must be true or false, got 3"),
        ("actor", 1, "algo.actor must be a string, got 1"),
        ("partners", 3, "algo.partners must be a string (or null), got 3"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_option_and_the_type(option, value, said):
    with pytest.raises(LearnerConfigError) as e:
        make_config("ippo", **{option: value})
    assert str(e.value) == said
