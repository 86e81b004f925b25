"""TrainedActor: a trained run's actor, recurrent or not, as a one-env policy (alem.render)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.algos.checkpoint_player import CheckpointPlayer, TrainedActor, actor_actions, load_trained
from tests.tiny_runs import train_tiny_run

ENV = "iterated_prisoners_dilemma-v0"

# Trains a run (a compile of its own): the exhaustive tier; one worker builds the run once.
pytestmark = [pytest.mark.exhaustive, pytest.mark.xdist_group("tiny_grid_run")]


@pytest.fixture(scope="module")
def gru_run(tmp_path_factory):
    """A tiny recurrent IPPO run: the GRU state has something to remember (the rounds so far)."""
    overrides = [f"env.id={ENV}", "+env.kwargs.num_rounds=4", "algo.recurrent=8"]
    run_dir = train_tiny_run(tmp_path_factory, "gru", overrides)
    return run_dir, alem.make(ENV, num_rounds=4)


def test_the_actor_carries_its_gru_state_and_reset_zeroes_it(gru_run):
    run_dir, env = gru_run
    actor = TrainedActor(run_dir, env, greedy=True)
    _, ts = jax.jit(env.reset)(jax.random.key(0))
    zero = np.asarray(actor._hidden)
    assert not zero.any()
    first = actor(jax.random.key(1), ts)
    after_one = np.asarray(actor._hidden)
    actor(jax.random.key(1), ts)
    after_two = np.asarray(actor._hidden)
    assert after_one.any() and not np.allclose(after_one, after_two)  # the state moves on
    actor.reset()
    again = actor(jax.random.key(1), ts)
    np.testing.assert_array_equal(np.asarray(actor._hidden), after_one)  # zeroed, then the same step
    np.testing.assert_array_equal(np.asarray(again), np.asarray(first))
    assert np.asarray(first).shape == (env.num_agents,)


def test_its_first_greedy_move_is_the_learners_own(gru_run):
    """From a zero state both apply the same actor to the same observation."""
    run_dir, env = gru_run
    actor = TrainedActor(run_dir, env, greedy=True)
    _, ts = jax.jit(env.reset)(jax.random.key(3))
    want = actor_actions(actor.learner, actor.params, ts.obs, ts.action_mask, jax.random.key(0), greedy=True)
    np.testing.assert_array_equal(np.asarray(actor(jax.random.key(9), ts)), np.asarray(want))


def test_the_arena_player_still_refuses_a_recurrent_run(gru_run):
    run_dir, env = gru_run
    with pytest.raises(alem.AlemError, match="recurrent checkpoints cannot be played by the evaluator"):
        CheckpointPlayer(env, str(run_dir))


def test_a_shared_actor_transfers_to_another_team_size_and_map(tiny_grid_run):
    """transfer=True: restored for the trained 3-agent 6x6 env, played by 5 agents on 9x9; the actions
    are the trained network's own (applied by hand to each agent's observation)."""
    big = alem.make("pathfinding_lifelong-v0", num_agents=5, height=9, goal_direction=True)
    with pytest.raises(alem.AlemError, match="trained on 'pathfinding-v0'"):
        load_trained(tiny_grid_run, big)
    learner, params = load_trained(tiny_grid_run, big, transfer=True)
    assert learner.n == 5
    _, ts = jax.jit(big.reset)(jax.random.key(2))
    actions = actor_actions(learner, params, ts.obs, ts.action_mask, jax.random.key(0), greedy=True)
    x = ts.obs.reshape(5, -1).astype(jnp.float32)
    first = params["actor"]["params"]
    first = jax.tree.map(lambda a: a[0], first)  # one shared role
    h = jnp.tanh(x @ first["Dense_0"]["kernel"] + first["Dense_0"]["bias"])
    logits = h @ first["Dense_1"]["kernel"] + first["Dense_1"]["bias"]
    np.testing.assert_array_equal(np.asarray(actions), np.asarray(jnp.argmax(logits, -1)))
    # Without the channel the observation differs: refused, naming the spaces.
    with pytest.raises(alem.AlemError, match="observation space"):
        load_trained(tiny_grid_run, alem.make("pathfinding-v0", num_agents=5, height=9), transfer=True)
