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


def test_dpo_beta_updates():
    b = jnp.array([1.0]), jnp.array([1.0])
    _, b2 = update_dpo_betas(*b, jnp.array([0.005]), 0.01)
    assert float(b2[0]) == 0.5  # KL below d/1.5 halves beta2
    _, b2 = update_dpo_betas(*b, jnp.array([0.02]), 0.01)
    assert float(b2[0]) == 2.0  # KL above 1.5 d doubles it
    b1, b2 = update_dpo_betas(*b, jnp.array([0.01]), 0.01)
    assert float(b1[0]) == 1.0 and float(b2[0]) == 1.0  # inside the band: unchanged
    # beta1 follows sqrt(KL) against sqrt(d): sqrt(0.02) = 0.141 > 1.5 * 0.1
    b1, _ = update_dpo_betas(*b, jnp.array([0.03]), 0.01)
    assert float(b1[0]) == 2.0
    b1, b2 = update_dpo_betas(jnp.array([1e3]), jnp.array([1e3]), jnp.array([1.0]), 0.01)
    assert float(b1[0]) == 1e3 and float(b2[0]) == 1e3  # clamped above
    b1, b2 = update_dpo_betas(jnp.array([1e-3]), jnp.array([1e-3]), jnp.array([0.0]), 0.01)
    assert float(b1[0]) == pytest.approx(1e-3) and float(b2[0]) == pytest.approx(1e-3)  # clamped below


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


def test_cppo_joint_plays_only_legal_moves_in_a_turn_based_game():
    from alem.algos import make_config, make_learner

    env = alem.make("tic_tac_toe-v0")
    cfg = make_config("cppo_joint", num_envs=8, num_steps=16, total_steps=128, hidden=(16,))
    learner = make_learner(env, cfg)
    state = jax.jit(learner.init)(jax.random.key(0))
    _, metrics = jax.jit(lambda s: learner.run(s, 1))(state)
    assert int(metrics["illegal_actions"].sum()) == 0
