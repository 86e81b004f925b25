"""SePS role discovery groups agents that behave alike."""

import jax
import numpy as np

from alem.algos import make_config
from alem.algos.seps import discover_roles, kmeans
from alem.envs.games.matrix import MatrixGame


def test_kmeans_separates_two_clear_groups_deterministically():
    pts = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 4.9], [0.0, 0.2]])
    np.testing.assert_array_equal(kmeans(pts, 2), [0, 0, 1, 1, 0])


def test_discovers_two_agent_types_from_their_rewards():
    """4 players: players 0 and 1 are paid for action 0, players 2 and 3 for action 1."""
    pay = np.zeros((4, 2, 2, 2, 2), np.float32)
    for i in range(4):
        idx = [slice(None)] * 4
        idx[i] = 0 if i < 2 else 1
        pay[(i, *idx)] = 1.0
    env = MatrixGame("custom", payoffs=pay)
    roles = discover_roles(env, make_config("seps", seps_roles=2), jax.random.key(0))
    np.testing.assert_array_equal(roles, [0, 0, 1, 1])
