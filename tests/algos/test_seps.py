"""SePS role discovery groups agents that behave alike."""

import jax
import numpy as np
import pytest

from alem.algos import make_config
from alem.algos.seps import discover_roles, kmeans
from alem.envs.games.matrix import MatrixGame


def test_kmeans_separates_two_clear_groups_deterministically():
    pts = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 4.9], [0.0, 0.2]])
    np.testing.assert_array_equal(kmeans(pts, 2), [0, 0, 1, 1, 0])


@pytest.mark.exhaustive  # trains to discover the roles
def test_discovers_two_agent_types_from_their_rewards():
    """4 players: players 0 and 1 are paid for action 0, players 2 and 3 for action 1."""
    env = _four_player_split_game()
    roles = discover_roles(env, make_config("seps", seps_roles=2), jax.random.key(0))
    np.testing.assert_array_equal(roles, [0, 0, 1, 1])


def _four_player_split_game() -> MatrixGame:
    """4 players with identical observations: players 0, 1 are paid for action 0, players 2, 3 for action 1."""
    pay = np.zeros((4, 2, 2, 2, 2), np.float32)
    for i in range(4):
        idx = [slice(None)] * 4
        idx[i] = 0 if i < 2 else 1
        pay[(i, *idx)] = 1.0
    return MatrixGame("custom", payoffs=pay)


@pytest.mark.exhaustive  # trains two role stacks
def test_discovered_roles_get_separate_parameter_stacks_that_train_apart():
    """Only separate parameters per discovered role can be optimal here: observations are identical,
    so one shared policy (IPPO without agent ids) plays the same action for everyone (return 0.5)."""
    import jax.numpy as jnp

    from alem.algos import make_learner

    env = _four_player_split_game()
    small = dict(
        num_envs=16, num_steps=4, num_minibatches=2, lr=3e-3, gamma=0.9, hidden=(16,), total_steps=16 * 4 * 60
    )
    returns = {}
    for algo in ("seps", "ippo"):
        learner = make_learner(env, make_config(algo, **small))
        state, metrics = jax.jit(lambda k, lr=learner: lr.run(lr.init(k), 60))(jax.random.key(0))
        late = metrics["return_sum"][-10:].sum(0) / metrics["episodes"][-10:].sum()
        returns[algo] = np.asarray(late)
        if algo == "seps":
            np.testing.assert_array_equal(learner.param_sets, [0, 0, 1, 1])
            leaves = jax.tree.leaves(state.params)
            assert learner.num_param_sets == 2 and all(x.shape[0] == 2 for x in leaves)
            # The two stacks started from different draws and were trained on different agents.
            assert any(not jnp.allclose(x[0], x[1]) for x in leaves)
    assert (returns["seps"] >= 0.9).all(), returns["seps"]  # every agent plays its own paid action
    assert returns["ippo"].mean() <= 0.6, returns["ippo"]
