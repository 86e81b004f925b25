"""One-agent alem envs as Gymnasium envs: ``check_env``, episodes equal to plain alem, the vector env."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("gymnasium")

import gymnasium
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import alem
from alem.interop._common import episode_keys
from alem.interop.gymnasium import make_env, make_vector_env
from alem.wrappers import BatchedAutoReset

ONE_AGENT = sorted(id for id, spec in alem.registry().items() if spec.num_agents == 1)

#: Advice check_env prints that does not concern the adapter (the env has no gymnasium spec to
#: remake it in other render modes; pendulum's torque box is [-2, 2]; MPE positions are unbounded).
ADVISORY = (
    "Not able to test alternative render modes",
    "we recommend using a symmetric and normalized space",
    "observation space maximum value is infinity",
    "observation space minimum value is -infinity",
)


def _check(env: gymnasium.Env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    unexpected = {str(w.message) for w in caught if not any(a in str(w.message) for a in ADVISORY)}
    assert not unexpected, unexpected


def test_one_agent_ids():
    assert ONE_AGENT == ["gymnax/cartpole-v1", "gymnax/pendulum-v1", "mpe/simple-v0"]


@pytest.mark.parametrize("id", ["gymnax/cartpole-v1", "gymnax/pendulum-v1"])
def test_check_env(id, alem_env):
    _check(make_env(alem_env(id)))


@pytest.mark.exhaustive
@pytest.mark.parametrize("id", ONE_AGENT)
def test_check_env_sweep(id, alem_env):
    _check(make_env(alem_env(id)))
    if id.startswith("mpe/"):
        _check(make_env(alem_env(id), render_mode="rgb_array"))


def test_multi_agent_ids_are_refused():
    with pytest.raises(ValueError, match="has 2 agents"):
        make_env("prisoners_dilemma-v0")


def test_episode_equals_alem_rollout(alem_env):
    env = alem_env("gymnax/cartpole-v1")
    gym_env = make_env(env)
    rng = np.random.default_rng(0)
    obs, info = gym_env.reset(seed=11)
    assert info["action_mask"].tolist() == [1, 1]
    actions, rewards, observations = [], [], [obs]
    done = False
    while not done:
        actions.append(int(rng.integers(2)))
        obs, r, term, trunc, info = gym_env.step(actions[-1])
        rewards.append(r)
        observations.append(obs)
        done = term or trunc
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    keys = episode_keys(11)
    state, ts = reset(next(keys), env.default_params)
    np.testing.assert_array_equal(observations[0], ts.obs[0])
    for t, a in enumerate(actions):
        state, ts = step(next(keys), state, jnp.array([a], jnp.int32), env.default_params)
        np.testing.assert_array_equal(observations[t + 1], ts.obs[0])
        assert rewards[t] == float(ts.reward[0])
    assert bool(ts.terminated or ts.truncated)
    assert len(actions) < 500  # a random policy drops the pole long before the time limit


# ---------------------------------------------------------------------------- vector env
def test_vector_env_same_step_autoreset(alem_env):
    env = alem_env("gymnax/cartpole-v1")
    vec = make_vector_env(env, num_envs=4)
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert vec.observation_space.shape == (4, 4) and vec.action_space.shape == (4,)
    obs, info = vec.reset(seed=3)
    assert obs.shape == (4, 4) and obs in vec.observation_space
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 2, size=(60, 4))
    out = []
    for a in actions:
        out.append(vec.step(a))

    # plain alem: the adapter's key chain through BatchedAutoReset
    batch = BatchedAutoReset(env, 4)
    keys = episode_keys(3)
    state, ts = jax.jit(batch.reset)(next(keys), env.default_params)
    np.testing.assert_array_equal(obs, ts.obs[:, 0])
    step = jax.jit(batch.step)
    ended = 0
    for a, (o, r, term, trunc, info) in zip(actions, out, strict=True):
        state, ts = step(next(keys), state, jnp.asarray(a, jnp.int32)[:, None], env.default_params)
        np.testing.assert_array_equal(o, ts.obs[:, 0])
        np.testing.assert_array_equal(r, ts.reward[:, 0])
        np.testing.assert_array_equal(term, ts.terminated)
        np.testing.assert_array_equal(trunc, ts.truncated)
        done = term | trunc
        if done.any():
            ended += int(done.sum())
            np.testing.assert_array_equal(info["_final_obs"], done)
            for i in range(4):
                if done[i]:  # the final observation, and a fresh episode in obs
                    np.testing.assert_array_equal(info["final_obs"][i], ts.info["final_obs"][i, 0])
                    assert not np.array_equal(info["final_obs"][i], o[i])
                else:
                    assert info["final_obs"][i] is None
        else:
            assert "final_obs" not in info
    assert ended >= 4  # cartpole under random actions ends every ~20 steps


def test_vector_env_seeds_and_gymnasium_wrappers(alem_env):
    env = alem_env("gymnax/cartpole-v1")
    single = make_env(env)
    vec = make_vector_env(env, num_envs=3)
    obs, _ = vec.reset(seed=[5, 6, 7])  # each env from its own seed = the single env's reset
    for i, s in enumerate([5, 6, 7]):
        np.testing.assert_array_equal(obs[i], single.reset(seed=s)[0])
    a, _ = vec.reset(seed=9)
    b, _ = vec.reset(seed=9)
    np.testing.assert_array_equal(a, b)

    # gymnasium's own episode statistics read the SAME_STEP tag. Only each env's first episode is
    # compared: gymnasium <= 1.3's vector RecordEpisodeStatistics drops the first reward of later
    # episodes under SAME_STEP (Farama-Foundation/Gymnasium#1624 fixes it).
    stats = RecordEpisodeStatistics(make_vector_env(env, num_envs=3))
    stats.reset(seed=0)
    running, first = np.zeros(3), np.ones(3, bool)
    for _ in range(80):
        _, r, term, trunc, info = stats.step(stats.action_space.sample())
        running += r
        check = (term | trunc) & first
        if check.any():
            np.testing.assert_allclose(info["episode"]["r"][check], running[check])
        first &= ~(term | trunc)
    assert not first.any()


def test_vector_env_continuous_actions(alem_env):
    vec = make_vector_env(alem_env("gymnax/pendulum-v1"), num_envs=2)
    vec.reset(seed=0)
    obs, r, term, trunc, info = vec.step(np.zeros((2, 1), np.float32))
    assert obs.shape == (2, 3) and r.dtype == np.float32 and info == {}
    with pytest.raises(ValueError, match="has 2 agents"):
        make_vector_env("prisoners_dilemma-v0", num_envs=2)


@pytest.mark.parametrize("action", [2, -1, 1.0, np.array([0, 1]), "1"])
def test_an_action_outside_the_space_is_refused_by_name(action, alem_env, fault_report):
    """It used to be cast and stepped: 2 for cartpole's Discrete(2) became an illegal move played as 0."""
    env = make_env(alem_env("gymnax/cartpole-v1"))
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"gymnax/cartpole-v1: action .* is not in the action space Discrete\(2\)"
    ):
        env.step(action)
    env.step(np.int64(1))  # a NumPy integer inside the space is fine
    vec = make_vector_env(alem_env("gymnax/cartpole-v1"), num_envs=2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"vector of 2\): action .* is not in the action space"):
        vec.step(np.array([0, 2]))
    pendulum = make_env(alem_env("gymnax/pendulum-v1"))
    pendulum.reset(seed=0)
    for bad in (np.array([np.nan]), np.array([5.0]), np.array([0.0, 0.0])):
        with pytest.raises(ValueError, match="gymnax/pendulum-v1: action"):
            pendulum.step(bad)
    fault_report(faults=1)
