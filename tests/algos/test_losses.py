"""Loss terms: clipped surrogate, KL, DPO's penalties and beta adaptation, joint actions."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.algos import joint
from alem.algos.losses import (
    categorical_kl,
    clipped_surrogate,
    clipped_value_loss,
    dpo_surrogate,
    linear_coef,
    masked_log_softmax,
    update_dpo_betas,
)


@pytest.mark.parametrize(
    "ratio, adv, loss, grad",
    [
        (1.5, 1.0, -1.2, 0.0),  # clipped above: no gradient
        (0.5, -1.0, 0.8, 0.0),  # clipped below with negative advantage: no gradient
        (0.9, 1.0, -0.9, -1.0),  # inside the range
        (1.1, -1.0, 1.1, 1.0),  # inside the range, negative advantage
        (0.5, 1.0, -0.5, -1.0),  # below the range but improving: pessimistic bound is unclipped
    ],
)
def test_clipped_surrogate_values_and_gradients(ratio, adv, loss, grad):
    f = lambda r: clipped_surrogate(r, jnp.float32(adv), 0.2)
    assert float(f(jnp.float32(ratio))) == pytest.approx(loss, abs=1e-6)
    assert float(jax.grad(f)(jnp.float32(ratio))) == pytest.approx(grad, abs=1e-6)


def test_clipped_value_loss_takes_the_larger_error():
    # value moved from 0 to 1 toward target 2: clipped prediction 0.2 has the larger error.
    assert float(clipped_value_loss(jnp.float32(1.0), 0.0, 2.0, 0.2)) == pytest.approx(0.5 * 1.8**2)


def test_categorical_kl_known_value():
    p, q = jnp.log(jnp.array([0.5, 0.5])), jnp.log(jnp.array([0.9, 0.1]))
    assert float(categorical_kl(p, q)) == pytest.approx(0.5108, abs=1e-4)
    assert float(categorical_kl(p, p)) == pytest.approx(0.0, abs=1e-7)


def test_masked_log_softmax_gives_illegal_actions_zero_probability():
    logp = masked_log_softmax(jnp.array([3.0, 1.0, 0.0]), jnp.array([False, True, True]))
    p = np.exp(np.asarray(logp))
    assert p[0] == 0.0 and p.sum() == pytest.approx(1.0)
    # KL ignores outcomes that have zero probability under the first argument.
    assert np.isfinite(float(categorical_kl(logp, jnp.log(jnp.array([0.2, 0.4, 0.4])))))


def test_dpo_surrogate_has_finite_gradient_at_zero_kl():
    f = lambda kl: dpo_surrogate(jnp.float32(1.0), jnp.float32(1.0), kl, 1.0, 1.0)
    assert float(f(jnp.float32(0.0))) == pytest.approx(-1.0 + 1e-6, abs=1e-5)
    assert np.isfinite(float(jax.grad(f)(jnp.float32(0.0))))


def _betas(kl, target=0.01, b=(1.0, 1.0)):
    """beta1, beta2 after one adaptation from per-sample KL values (means as the learner takes them)."""
    kl = jnp.asarray(kl, jnp.float32)
    b1, b2 = update_dpo_betas(
        jnp.array([b[0]]), jnp.array([b[1]]), kl.mean()[None], jnp.sqrt(kl).mean()[None], target
    )
    return float(b1[0]), float(b2[0])


def test_dpo_beta_updates():
    assert _betas([0.005])[1] == 0.5  # KL below d/1.5 halves beta2
    assert _betas([0.02])[1] == 2.0  # KL above 1.5 d doubles it
    assert _betas([0.01]) == (1.0, 1.0)  # inside the band: unchanged
    assert _betas([0.03])[0] == 2.0  # sqrt(0.03) = 0.173 > 1.5 * sqrt(d) = 0.15
    assert _betas([1.0], b=(1e3, 1e3)) == (1e3, 1e3)  # clamped above
    b1, b2 = _betas([0.0], b=(1e-3, 1e-3))
    assert b1 == pytest.approx(1e-3) and b2 == pytest.approx(1e-3)  # clamped below


def test_dpo_beta1_follows_the_mean_of_sqrt_kl_that_the_loss_penalises():
    """Per-sample KL [0, 0, 0, 0.04], d = 0.01: mean sqrt(KL) = 0.05 < sqrt(d) / 1.5, so beta1 halves
    (sqrt of the mean KL, 0.1, would leave it unchanged); the mean KL (0.01) leaves beta2 as is."""
    assert _betas([0.0, 0.0, 0.0, 0.04]) == (0.5, 1.0)


def test_dpo_update_step_adapts_betas_from_its_own_kl():
    """Inside one real DPO update: beta1/beta2 move by the rule from the KL measured after it."""
    from alem.algos import make_config, make_learner

    env = alem.make("matching_pennies-v0")
    cfg = make_config(
        "dpo", num_envs=8, num_steps=8, total_steps=64, hidden=(8,), lr=0.05, dpo_target_kl=1e-6
    )
    learner = make_learner(env, cfg)
    state, metrics = jax.jit(learner.update)(jax.jit(learner.init)(jax.random.key(0)))
    assert float(metrics["kl_after_update"]) > 1.5e-6  # a big step against a tiny target
    np.testing.assert_allclose(np.asarray(state.betas), 2.0)  # both doubled, for every agent


def test_joint_action_round_trip_and_mask():
    n, a = 3, 4
    combos = np.array(list(itertools.product(range(a), repeat=n)))
    codes = joint.encode(jnp.asarray(combos), a)
    assert sorted(np.asarray(codes).tolist()) == list(range(a**n))
    np.testing.assert_array_equal(joint.decode(codes, n, a), combos)
    mask = np.ones((n, a), bool)
    mask[1, 2] = False
    legal = np.asarray(joint.joint_mask(jnp.asarray(mask)))
    np.testing.assert_array_equal(legal, combos[:, 1] != 2)


def test_joint_mask_pins_a_waiting_agent_to_action_zero():
    """Turn-based: the waiting player's row is all False; the legal joint actions are exactly the
    mover's legal moves, with the waiting component 0 (before: no joint action was legal)."""
    a = 9
    mask = np.zeros((2, a), bool)
    mask[1, [0, 4, 8]] = True  # player 1 moves; player 0 waits
    legal = np.asarray(joint.joint_mask(jnp.asarray(mask)))
    combos = np.asarray(joint.decode(jnp.arange(a * a), 2, a))
    assert legal.sum() == 3
    np.testing.assert_array_equal(np.sort(combos[legal][:, 1]), [0, 4, 8])
    assert (combos[legal][:, 0] == 0).all()


def test_joint_policy_samples_only_legal_moves_in_a_turn_based_game():
    """CPPO-joint's distribution (masked log-softmax over joint_mask) on real tic-tac-toe positions:
    every sampled joint action gives the mover a legal move (before the fix: 46 illegal in 128).
    CPPO itself refuses zero-sum games; the masking matters for turn-based cooperative ones."""
    from alem.rollout import random_rollout

    env = alem.make("tic_tac_toe-v0")
    state = jax.jit(random_rollout(env, 64, 5))(jax.random.key(0), env.default_params)[0]
    mask, acting = state.timestep.action_mask, state.timestep.acting  # [64, 2, 9], [64, 2]
    logits = jax.random.normal(jax.random.key(1), (64, 81)) * 3
    logp = masked_log_softmax(logits, joint.joint_mask(mask))
    picks = joint.decode(jax.random.categorical(jax.random.key(2), logp), 2, 9)  # [64, 2]
    mover = jnp.argmax(acting, -1)
    move = jnp.take_along_axis(picks, mover[:, None], 1)[:, 0]
    legal = jnp.take_along_axis(mask[jnp.arange(64), mover], move[:, None], 1)[:, 0]
    assert bool(acting.any(-1).all()) and bool(legal.all())


def test_happo_factor_counts_only_the_steps_where_the_agent_acted():
    """Factor of the 3rd agent in an order = product of the 1st and 2nd agents' ratios on the steps
    where each acted; a waiting agent's ratio counts as 1 (the old rule multiplied it in)."""
    from alem.algos.losses import happo_factor

    ratio1, acted1 = jnp.array([0.5, 3.0, 2.0, 1.5]), jnp.array([True, False, True, False])
    ratio2, acted2 = jnp.array([4.0, 0.25, 5.0, 2.0]), jnp.array([False, True, True, False])
    f = happo_factor(jnp.ones(4), ratio1, acted1)
    f = happo_factor(f, ratio2, acted2)
    np.testing.assert_allclose(np.asarray(f), [0.5, 0.25, 10.0, 1.0])
    grad = jax.grad(lambda r: happo_factor(jnp.ones(4), r, acted1).sum())(ratio1)
    np.testing.assert_array_equal(np.asarray(grad), 0.0)  # a weight, not a path for gradients


def test_linear_coef_goes_from_start_to_end_over_the_run_and_stays_constant_without_an_end():
    # 5 updates: 0 -> start, 4 (the last) -> end, in equal steps; later updates stay at end
    got = [float(linear_coef(jnp.int32(u), 0.2, 0.0, 5)) for u in range(6)]
    assert got == pytest.approx([0.2, 0.15, 0.1, 0.05, 0.0, 0.0], abs=1e-7)
    assert float(linear_coef(jnp.int32(3), 0.05, -1.0, 5)) == pytest.approx(0.05)  # end < 0: constant
    assert float(linear_coef(jnp.int32(0), 0.1, 0.3, 1)) == pytest.approx(0.1)  # one update: start
