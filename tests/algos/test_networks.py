"""The networks' orthogonal initializer: orthogonal, flax's distribution, and no LAPACK call under vmap."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import alem
from alem.algos import make_config, make_learner
from alem.algos.networks import orthogonal


@pytest.mark.parametrize("shape", [(64, 64), (18, 64), (64, 5), (3, 4, 6)])
def test_columns_or_rows_are_orthonormal(shape):
    w = np.asarray(orthogonal(2.0)(jax.random.key(0), shape)).reshape(-1, shape[-1])
    small = min(w.shape)
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-4)


def test_same_distribution_as_flax():
    """Entries of alem's and flax's 8x8 orthogonal matrices (Haar) agree in distribution (KS test),
    per position: the sign convention is part of the distribution."""
    keys = jax.random.split(jax.random.key(1), 400)
    ours = np.asarray(jax.vmap(lambda k: orthogonal()(k, (8, 8)))(keys))
    flax = np.asarray(jax.vmap(lambda k: nn.initializers.orthogonal()(k, (8, 8)))(keys))
    for i, j in [(0, 0), (7, 7), (0, 7), (3, 5)]:
        assert stats.ks_2samp(ours[:, i, j], flax[:, i, j]).pvalue > 1e-3
    np.testing.assert_allclose((ours**2).mean(0), 1 / 8, atol=0.03)  # E[q_ij^2] = 1/n


def test_a_learner_initialised_under_vmap_calls_no_lapack_kernel():
    """Batched QR custom calls can deadlock jaxlib's CPU pool; the learner's init has none."""
    learner = make_learner(
        alem.make("mpe/simple_spread-v0"),
        make_config("mappo", num_envs=4, num_steps=4, total_steps=64, recurrent=8),
    )
    keys = jax.vmap(jax.random.key)(jnp.arange(2))
    hlo = jax.jit(jax.vmap(learner.init)).lower(keys).as_text()
    assert "lapack" not in hlo.lower() and "orgqr" not in hlo.lower() and "geqrf" not in hlo.lower()
