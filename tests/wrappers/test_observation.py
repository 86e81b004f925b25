import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.wrappers import AgentIdOneHot, AutoReset, FlattenObs, NormalizeObs


@pytest.fixture(scope="module")
def base():
    return alem.make("iterated_rock_paper_scissors-v0", history_len=2)


def test_agent_id_one_hot_appends_identity(base):
    env = AgentIdOneHot(AutoReset(base))
    state, ts = env.reset(jax.random.key(0))
    d = base.observation_space(0).shape[0]
    assert ts.obs.shape == (2, d + 2)
    np.testing.assert_array_equal(ts.obs[:, d:], np.eye(2))
    assert env.observation_space().shape == (2, d + 2)
    assert bool(env.observation_space().contains(ts.obs))
    _, ts = env.step(jax.random.key(1), state, jnp.array([0, 1]))
    np.testing.assert_array_equal(ts.info["final_obs"][:, d:], np.eye(2))


def test_agent_id_needs_flat_obs():
    class Fake:
        id = "fake-v0"

        def observation_space(self, agent=None):
            return alem.spaces.Box(0.0, 1.0, (2, 3, 3))

    with pytest.raises(alem.EnvArgumentError, match="FlattenObs"):
        AgentIdOneHot(Fake())


def test_flatten_keeps_values(base):
    env = FlattenObs(base)
    _, ts = env.reset(jax.random.key(0))
    _, raw = base.reset(jax.random.key(0))
    np.testing.assert_array_equal(ts.obs, raw.obs.reshape(2, -1))
    assert env.observation_space().shape == (2, raw.obs[0].size)


def test_normalize_tracks_running_moments(base):
    env = NormalizeObs(base)
    state, ts = env.reset(jax.random.key(0))
    seen = [np.asarray(base.reset(jax.random.key(0))[1].obs)]
    raw_state, _ = base.reset(jax.random.key(0))
    for t, a in enumerate([[0, 1], [2, 2], [1, 0]]):
        acts = jnp.array(a)
        state, ts = env.step(jax.random.key(t), state, acts)
        raw_state, raw = base.step(jax.random.key(t), raw_state, acts)
        seen.append(np.asarray(raw.obs))
    allobs = np.concatenate(seen)  # every agent's obs at every step so far
    np.testing.assert_allclose(state.mean, allobs.mean(0), atol=1e-6)
    np.testing.assert_allclose(state.var, allobs.var(0), atol=1e-6)
    z = (seen[-1] - allobs.mean(0)) / np.sqrt(allobs.var(0) + 1e-8)
    np.testing.assert_allclose(ts.obs, np.clip(z, -10, 10), atol=1e-4)


def test_normalize_pools_over_named_vmap_axis(base):
    env = NormalizeObs(base, axis_name="envs")
    keys = jax.random.split(jax.random.key(0), 4)
    acts = jnp.array([[0, 1], [1, 1], [2, 0], [0, 0]])

    @jax.jit
    def reset_and_step(keys, acts):
        state, _ = jax.vmap(env.reset, axis_name="envs")(keys)
        return jax.vmap(env.step, axis_name="envs")(keys, state, acts)[0]

    state = reset_and_step(keys, acts)
    # Identical statistics in every env, equal to the moments over all envs and agents.
    np.testing.assert_allclose(state.mean[0], state.mean[3])
    s, r0 = jax.jit(jax.vmap(base.reset))(keys)
    _, r1 = jax.jit(jax.vmap(base.step))(keys, s, acts)
    allobs = np.concatenate(
        [np.asarray(r0.obs).reshape(-1, r0.obs.shape[-1]), np.asarray(r1.obs).reshape(-1, r1.obs.shape[-1])]
    )
    np.testing.assert_allclose(state.mean[0], allobs.mean(0), atol=1e-6)
    np.testing.assert_allclose(state.var[0], allobs.var(0), atol=1e-6)
    assert float(state.count[0]) == allobs.shape[0]


def test_normalize_frozen_does_not_update(base):
    env = NormalizeObs(base, update=False)
    state, ts = env.reset(jax.random.key(0))
    state, ts = env.step(jax.random.key(1), state, jnp.array([1, 2]))
    assert float(state.count) == 0.0
    _, raw = base.step(jax.random.key(1), base.reset(jax.random.key(0))[0], jnp.array([1, 2]))
    np.testing.assert_allclose(ts.obs, raw.obs, atol=1e-6)
