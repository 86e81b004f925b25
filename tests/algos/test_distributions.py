"""Policy heads: known answers for the Gaussian's log-probability, entropy and KL, and its box mapping."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from alem.algos.distributions import CategoricalHead, GaussianHead
from alem.algos.losses import categorical_kl, masked_log_softmax

MEAN, LOG_STD = np.array([0.5, -1.0]), np.array([0.0, np.log(2.0)])
P = jnp.asarray(np.concatenate([MEAN, LOG_STD]), jnp.float32)
HEAD = GaussianHead(np.array([0.0, -2.0]), np.array([1.0, 2.0]))


def test_gaussian_log_prob_entropy_and_kl_match_their_formulas():
    a = np.array([1.0, 0.0])
    std = np.exp(LOG_STD)
    expected_logp = stats.norm.logpdf(a, MEAN, std).sum()
    np.testing.assert_allclose(HEAD.log_prob(P, jnp.asarray(a, jnp.float32)), expected_logp, rtol=1e-6)
    np.testing.assert_allclose(HEAD.entropy(P), stats.norm.entropy(MEAN, std).sum(), rtol=1e-6)
    mean2, std2 = np.array([0.0, 0.0]), np.array([0.5, 1.0])
    q = jnp.asarray(np.concatenate([mean2, np.log(std2)]), jnp.float32)
    kl = np.sum(np.log(std2 / std) + (std**2 + (MEAN - mean2) ** 2) / (2 * std2**2) - 0.5)
    np.testing.assert_allclose(HEAD.kl(P, q), kl, rtol=1e-5)
    assert float(HEAD.kl(P, P)) == 0.0  # never a rounding-negative KL under DPO's square root


def test_gaussian_samples_follow_the_distribution_and_map_into_the_box():
    x = jax.vmap(lambda k: HEAD.sample(k, P))(jax.random.split(jax.random.key(0), 20000))
    np.testing.assert_allclose(x.mean(0), MEAN, atol=0.05)
    np.testing.assert_allclose(x.std(0), np.exp(LOG_STD), rtol=0.03)
    np.testing.assert_array_equal(HEAD.mode(P), MEAN.astype(np.float32))
    # Normalised units: 0 is the box centre, +-1 its edges; beyond is clipped, never out of bounds.
    u = jnp.array([[0.0, 0.0], [1.0, -1.0], [3.0, -7.0], [-0.5, 0.5]])
    np.testing.assert_allclose(HEAD.to_env(u), [[0.5, 0.0], [1.0, -2.0], [1.0, -2.0], [0.25, 1.0]])


def test_categorical_head_is_the_masked_softmax_it_wraps():
    head = CategoricalHead(3)
    logits = jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    mask = jnp.array([[True, True, False], [True, True, True]])
    p = head.params(logits, mask)
    np.testing.assert_allclose(jnp.exp(p).sum(-1), 1.0, rtol=1e-6)
    assert float(jnp.exp(p[0, 2])) == 0.0
    np.testing.assert_allclose(head.log_prob(p, jnp.array([1, 2])), [p[0, 1], p[1, 2]])
    q = masked_log_softmax(jnp.zeros((2, 3)), mask)
    np.testing.assert_allclose(head.kl(p, q), categorical_kl(p, q))


@pytest.mark.parametrize("low, high", [([0.0], [np.inf]), ([1.0], [1.0])])
def test_gaussian_head_refuses_unbounded_or_empty_boxes(low, high):
    with pytest.raises(ValueError, match="finite bounds"):
        GaussianHead(np.array(low), np.array(high))


class GaussianHeadUnderTransforms(chex.TestCase):
    """The head's functions give the same answers eagerly, jitted and under vmap (chex variants)."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_log_prob_entropy_kl_are_transform_invariant(self):
        a = jnp.array([[1.0, 0.0], [0.2, -0.3]], jnp.float32)
        log_prob = self.variant(jax.vmap(HEAD.log_prob, in_axes=(None, 0)))
        entropy, kl = self.variant(HEAD.entropy), self.variant(HEAD.kl)
        expected = [float(HEAD.log_prob(P, a[0])), float(HEAD.log_prob(P, a[1]))]
        chex.assert_trees_all_close(log_prob(P, a), jnp.asarray(expected), rtol=1e-6)
        chex.assert_trees_all_close(entropy(P), HEAD.entropy(P), rtol=1e-6)
        chex.assert_trees_all_close(kl(P, P * 0.5), HEAD.kl(P, P * 0.5), rtol=1e-6)
        chex.assert_shape(log_prob(P, a), (2,))
