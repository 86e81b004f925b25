"""GAE against a hand-worked example."""

import jax.numpy as jnp
import numpy as np

from alem.algos.gae import gae

R, V, BOOT = [1.0, 0.0, 2.0], [0.5, 0.4, 0.3], 0.2


def test_hand_worked_advantages():
    adv, targets = gae(jnp.array(R), jnp.array(V), jnp.zeros(3), jnp.array(BOOT), 0.9, 0.8)
    np.testing.assert_allclose(adv, [1.740992, 1.2236, 1.88], atol=1e-5)
    np.testing.assert_allclose(targets, np.array([1.740992, 1.2236, 1.88]) + V, atol=1e-5)


def test_done_stops_bootstrapping():
    adv, _ = gae(jnp.array(R), jnp.array(V), jnp.array([0.0, 1.0, 0.0]), jnp.array(BOOT), 0.9, 0.8)
    np.testing.assert_allclose(adv, [0.572, -0.4, 1.88], atol=1e-5)


def test_truncation_bootstraps_from_final_value():
    # Episode cut after t=1 at an observation worth 1.5: delta_1 = 0 + 0.9 * 1.5 - 0.4 = 0.95.
    adv, _ = gae(
        jnp.array(R),
        jnp.array(V),
        jnp.array([0.0, 1.0, 0.0]),
        jnp.array(BOOT),
        0.9,
        0.8,
        truncated=jnp.array([False, True, False]),
        final_values=jnp.array([0.0, 1.5, 0.0]),
    )
    np.testing.assert_allclose(adv[1:], [0.95, 1.88], atol=1e-5)
    np.testing.assert_allclose(adv[0], 1.0 + 0.9 * 0.4 - 0.5 + 0.9 * 0.8 * 0.95, atol=1e-5)


def test_batch_axes_are_independent():
    r = jnp.array([R, [0.0, 0.0, 0.0]]).T  # [T, 2]
    v = jnp.array([V, V]).T
    adv, _ = gae(r, v, jnp.zeros(3), jnp.array([BOOT, BOOT]), 0.9, 0.8)
    np.testing.assert_allclose(adv[:, 0], [1.740992, 1.2236, 1.88], atol=1e-5)
    assert not np.allclose(adv[:, 1], adv[:, 0])
