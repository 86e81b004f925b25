"""alem.algos.random: the uniform-random baseline behind the learner interface."""

from __future__ import annotations

import jax
import numpy as np

import alem
from alem.algos.random import RandomLearner


def test_random_learner_counts_every_episode_and_draws_fresh_actions_each_update():
    env = alem.make("prisoners_dilemma-v0")  # one-shot: every env step ends an episode
    learner = RandomLearner(env, num_envs=64, num_steps=4)
    state = jax.jit(learner.init)(jax.random.key(0))
    state, m = jax.jit(learner.run, static_argnums=1)(state, 3)
    m = jax.device_get(m)
    assert m["episodes"].tolist() == [256, 256, 256]
    assert m["length_sum"].tolist() == [256.0, 256.0, 256.0]
    assert m["illegal_actions"].tolist() == [0, 0, 0]
    assert m["return_sum"].shape == (3, 2)
    # Different keys per update: the three rollouts do not repeat each other.
    assert len({tuple(r) for r in m["return_sum"].tolist()}) == 3
    # Payoffs of the prisoner's dilemma are in {0, 1, 3, 5}: means stay inside that range.
    mean = m["return_sum"] / m["episodes"][:, None]
    assert np.all((mean > 0) & (mean < 5))
    # The state carries on: a second call continues with new draws.
    _, m2 = jax.jit(learner.run, static_argnums=1)(state, 1)
    assert tuple(jax.device_get(m2["return_sum"])[0]) not in {tuple(r) for r in m["return_sum"].tolist()}
