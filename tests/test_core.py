"""Bad input to the env API gives clear errors or the documented behaviour."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.core import TimeStep


@pytest.fixture(scope="module")
def env():
    return alem.make("iterated_rock_paper_scissors-v0")


def test_timestep_done_combines_flags():
    ts = TimeStep(
        obs=jnp.zeros((1, 1)),
        action_mask=jnp.ones((1, 1), bool),
        reward=jnp.zeros(1),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(True),
        acting=jnp.ones(1, bool),
    )
    assert bool(ts.done)


def test_actions_from_python_lists_and_numpy_work(env):
    state, _ = env.reset(jax.random.key(0))
    _, a = env.step(jax.random.key(1), state, [0, 2])
    _, b = env.step(jax.random.key(1), state, np.array([0, 2], dtype=np.int64))
    np.testing.assert_array_equal(a.reward, b.reward)
    assert a.reward.tolist() == [1.0, -1.0]  # rock (player 0) beats scissors


def test_batched_actions_without_vmap_get_a_hint(env):
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(alem.ActionError, match=r"shape \(2,\).*got dtype int32 and shape \(4, 2\).*vmap"):
        env.step(jax.random.key(1), state, jnp.zeros((4, 2), jnp.int32))


def test_float_and_string_actions_rejected(env):
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(alem.ActionError, match="integer array"):
        env.step(jax.random.key(1), state, jnp.array([0.0, 1.0]))
    with pytest.raises(alem.ActionError):
        env.step(jax.random.key(1), state, ["rock", "paper"])


def test_bad_key_and_params_named(env):
    with pytest.raises(alem.EnvArgumentError, match="`key` must be a PRNG key"):
        env.reset(0)
    with pytest.raises(alem.EnvArgumentError, match="params must be a MatrixGameParams"):
        env.reset(jax.random.key(0), {"payoffs": 1})


def test_raw_uint32_keys_accepted(env):
    s1, t1 = env.reset(jax.random.PRNGKey(0))
    s2, t2 = env.reset(jax.random.key(0))
    np.testing.assert_array_equal(t1.obs, t2.obs)


def test_out_of_range_is_replaced_under_jit_and_vmap(env):
    state, _ = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), 3))
    acts = jnp.array([[0, 1], [99, 1], [0, -5]], jnp.int32)
    _, ts = jax.jit(jax.vmap(env.step))(jax.random.split(jax.random.key(1), 3), state, acts)
    assert ts.info["illegal_action"].tolist() == [[False, False], [True, False], [False, True]]
    # replaced by action 0 (rock): row 1 is rock vs paper, row 2 rock vs rock
    assert ts.reward.tolist() == [[-1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]]


def test_unsupported_illegal_action_mode(env):
    with pytest.raises(alem.EnvArgumentError, match="illegal_action='lose' is not supported"):
        alem.make("prisoners_dilemma-v0", illegal_action="lose")


def test_parse_action_variants(env):
    assert env.parse_action("Paper!") == 1
    assert env.parse_action("I choose scissors.") == 2
    assert env.parse_action("My move: rock") == 0
    assert env.parse_action("r") == 0
    assert env.parse_action("2") == 2
    assert env.parse_action("action 1") == 1
    assert env.parse_action("7") is None
    assert env.parse_action("rock or paper") is None, "ambiguous replies are not guessed"
    assert env.parse_action("") is None
