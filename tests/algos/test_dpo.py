"""DPO (Su & Lu): its objective's defining behaviour, the beta rule over a sequence, and a real
update that stays finite when the KL at the old policy rounds below zero."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

import alem
from alem.algos import make_config, make_learner
from alem.algos.losses import categorical_kl, dpo_surrogate, masked_log_softmax, update_dpo_betas

# ------------------------------------------------------------------ the objective on a hand-made batch
# One state, three actions, an old policy and a batch of samples of each action with a known
# advantage. The mean DPO loss over the batch, as a function of the new policy's logits, is
#   -sum_a pi(a) A(a) + beta1 sqrt(KL(old || new)) + beta2 KL(old || new)
# (each action sampled in proportion to pi_old(a), so the ratio-weighted mean is the expectation).
OLD_P = np.array([0.5, 0.3, 0.2])
ADV = np.array([1.0, -0.5, -0.8])
COUNTS = np.array([5, 3, 2])  # samples per action, proportional to OLD_P


def _batch_loss(logits, beta1, beta2):
    old = jnp.log(jnp.asarray(OLD_P, jnp.float32))
    new = masked_log_softmax(logits, None)
    actions = jnp.repeat(jnp.arange(3), COUNTS)
    ratio = jnp.exp(new[actions] - old[actions])
    kl = jnp.broadcast_to(categorical_kl(old, new), actions.shape)
    return dpo_surrogate(ratio, jnp.asarray(ADV, jnp.float32)[actions], kl, beta1, beta2).mean()


def _optimum(beta1, beta2):
    """The new policy that minimises the batch loss (Nelder-Mead on two free logits: the sqrt(KL)
    term has a kink at the old policy, where gradient steps would only oscillate)."""
    loss = jax.jit(_batch_loss)
    f = lambda z: float(loss(jnp.asarray([0.0, *z], jnp.float32), beta1, beta2))
    z0 = np.log(OLD_P[1:] / OLD_P[0])
    z = minimize(f, z0, method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 5000}).x
    new = np.exp(np.r_[0.0, z]) / np.exp(np.r_[0.0, z]).sum()
    return new, float(np.sum(OLD_P * (np.log(OLD_P) - np.log(new))))


def _sqrt_threshold():
    """beta1 above which the sqrt(KL) term alone holds the policy at the old one: near it,
    sqrt(KL) ~ sqrt(d'F d / 2) for a logit step d, and the surrogate's slope is d'F (A - mean A),
    so the old policy is optimal iff beta1 >= sqrt(2 Var_old(A))."""
    mean = OLD_P @ ADV
    return float(np.sqrt(2 * OLD_P @ (ADV - mean) ** 2))


def test_dpo_moves_toward_the_positive_advantage_action_by_an_amount_bounded_by_the_penalty():
    gain0 = OLD_P @ ADV  # the surrogate at the old policy
    previous_kl = np.inf
    for beta in (0.05, 0.2, 0.5):
        new, kl = _optimum(beta, beta)
        assert new[0] > OLD_P[0] + 0.01, (beta, new)  # toward the one positive-advantage action
        assert new[2] < OLD_P[2]  # away from the worst
        # At the optimum the penalty is paid for by the surrogate's gain, which cannot exceed
        # max A - (its value at the old policy): so beta1 sqrt(KL) + beta2 KL <= 1.0 - gain0.
        assert beta * np.sqrt(kl) + beta * kl <= ADV.max() - gain0 + 1e-4
        assert kl < previous_kl  # a heavier penalty, a smaller step
        previous_kl = kl


def test_dpo_sqrt_kl_term_holds_the_policy_when_the_advantages_are_small_against_beta1():
    """The sqrt(KL) penalty acts like an L1 pull to the old policy: it cancels any advantage
    signal below a threshold instead of shrinking the step (a KL penalty alone never does)."""
    threshold = _sqrt_threshold()
    _, kl_held = _optimum(1.3 * threshold, 0.0)
    _, kl_moved = _optimum(0.7 * threshold, 0.0)
    _, kl_kl_only = _optimum(0.0, 10.0)
    assert kl_held < 1e-6  # float32 rounding and the 1e-12 inside sqrt leave ~5e-8
    assert kl_moved > 1e-2
    assert kl_kl_only > 1e-4  # even a heavy KL-only penalty moves a little


# ------------------------------------------------------------------ rounding below zero
def test_kl_of_one_policy_computed_twice_is_never_negative_and_the_loss_stays_finite():
    """Two log-prob tables of the same policy from different programs (the rollout's and the
    loss's) differ by rounding; their exact KL sum can come out around -1e-7. Before the fix
    that went into sqrt() and made every DPO loss NaN from the first update."""
    logits = jax.random.normal(jax.random.key(0), (4096, 6)) * 3
    a = jax.nn.log_softmax(logits, axis=-1)
    b = jax.nn.log_softmax(logits + 1e-6 * jax.random.normal(jax.random.key(1), logits.shape), axis=-1)
    raw = jnp.sum(jnp.exp(a) * (a - b), axis=-1)
    assert float(raw.min()) < 0  # the rounding this test is about does happen here
    kl = categorical_kl(a, b)
    assert float(kl.min()) >= 0.0
    loss = lambda bb: dpo_surrogate(jnp.ones(()), 1.0, categorical_kl(a, bb), 1.0, 1.0).mean()
    assert np.isfinite(float(loss(b)))
    assert np.isfinite(np.asarray(jax.grad(loss)(b))).all()
    # the surrogate itself counts a negative KL as 0
    assert np.isfinite(float(dpo_surrogate(1.0, 1.0, jnp.float32(-1e-7), 1.0, 1.0)))


@pytest.mark.exhaustive  # the default run's budget (a compile of the whole update, ~10 s)
def test_a_real_dpo_update_stays_finite():
    """The coordination game with the reference table's batch (16 envs x 128 steps): before the
    fix, some recomputed KLs at the old policy were below 0 and the first update made every
    parameter NaN. A NaN policy still acts (always the same action), which on this game and on
    the climbing game scored the optimum, so the learning tables did not show it."""
    env = alem.make("coordination-v0")
    cfg = make_config("dpo", num_envs=16, num_steps=128, total_steps=2 * 16 * 128, lr=5e-4)
    learner = make_learner(env, cfg)
    state, m = jax.jit(lambda k: learner.run(learner.init(k), 2))(jax.random.key(0))
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(state.params))
    assert np.isfinite(np.asarray(m["policy_loss"])).all()
    # Not "the policy moved": with beta1 = 1 the sqrt(KL) term holds the first updates at the old
    # policy (KL ~1e-7, rounding, sometimes exactly 0; docs/learners.md "DPO"). That DPO moves
    # toward positive advantages is the objective test above.


# ------------------------------------------------------------------ the beta rule over a sequence
def test_dpo_betas_follow_the_rule_over_a_known_sequence():
    """d = 0.01 (so sqrt(d) = 0.1), band 1.5, factor 2, bounds [1e-3, 1e3]; each row is the
    (mean KL, mean sqrt KL) after an iteration and the betas the rule gives after it."""
    d = 0.01
    rows = [  # kl, sqrt_kl, beta1, beta2
        (0.001, 0.02, 0.5, 0.5),  # both far below: halve
        (0.010, 0.10, 0.5, 0.5),  # on target: unchanged
        (0.016, 0.16, 1.0, 1.0),  # above 1.5x: double
        (0.014, 0.14, 1.0, 1.0),  # inside the band
        (0.016, 0.05, 0.5, 2.0),  # the two statistics disagree: each beta follows its own
        (0.000, 0.00, 0.25, 1.0),
    ]
    b1, b2 = jnp.ones((2,)), jnp.ones((2,))  # two units (agents), same statistics
    for kl, sq, want1, want2 in rows:
        b1, b2 = update_dpo_betas(b1, b2, jnp.full((2,), kl), jnp.full((2,), sq), d)
        np.testing.assert_allclose(np.asarray(b1), want1)
        np.testing.assert_allclose(np.asarray(b2), want2)
    lo = update_dpo_betas(jnp.full((1,), 1.5e-3), jnp.full((1,), 1.5e-3), jnp.zeros(1), jnp.zeros(1), d)
    hi = update_dpo_betas(jnp.full((1,), 900.0), jnp.full((1,), 900.0), jnp.ones(1), jnp.ones(1), d)
    assert [float(x[0]) for x in lo] == pytest.approx([1e-3, 1e-3])  # clamped at the bounds
    assert [float(x[0]) for x in hi] == pytest.approx([1e3, 1e3])


def test_dpo_betas_adapt_per_unit():
    """Each agent's betas follow its own statistics (Su & Lu adapt them per agent)."""
    b1, b2 = update_dpo_betas(
        jnp.ones(2), jnp.ones(2), jnp.array([0.001, 0.02]), jnp.array([0.02, 0.2]), 0.01
    )
    np.testing.assert_allclose(np.asarray(b1), [0.5, 2.0])
    np.testing.assert_allclose(np.asarray(b2), [0.5, 2.0])
