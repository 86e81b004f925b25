"""Episode statistics, including a turn-based game where only one player acts per step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import alem
from alem import spaces, struct
from alem.core import MultiAgentEnv, TimeStep
from alem.wrappers import AutoReset, EpisodeStats


@struct.dataclass
class _S:
    t: jax.Array


class AlternatingGame(MultiAgentEnv):
    """Test env: players alternate for 5 plies; each move scores +1 for the mover; at the end
    the player who did NOT move last gets a terminal payoff of 10."""

    stochastic = False

    def __init__(self):
        super().__init__()
        self.agents = ("p0", "p1")
        self.agent_roles = np.zeros(2, np.int32)
        self.role_names = ("player",)

    default_params = property(lambda self: alem.EnvParams())

    def observation_space(self, agent=None):
        one = spaces.Box(0.0, 10.0, (1,))
        return one if agent is not None else spaces.stack([one, one])

    def action_space(self, agent=None):
        one = spaces.Discrete(2)
        return one if agent is not None else spaces.stack([one, one])

    def acting(self, state, params):
        return jnp.arange(2) == state.t % 2

    def _ts(self, state, reward, done):
        return TimeStep(
            obs=jnp.full((2, 1), state.t, jnp.float32),
            action_mask=jnp.ones((2, 2), bool),
            reward=reward,
            terminated=done,
            truncated=jnp.bool_(False),
            acting=self.acting(state, None),
        )

    def reset_env(self, key, params):
        s = _S(jnp.int32(0))
        return s, self._ts(s, jnp.zeros(2), jnp.bool_(False))

    def step_env(self, key, state, actions, params):
        mover = self.acting(state, params).astype(jnp.float32)
        s = _S(state.t + 1)
        done = s.t >= 5
        reward = mover + jnp.where(done, 10.0 * (1.0 - mover), 0.0)
        return s, self._ts(s, reward, done)


def test_turn_based_returns_lengths_and_decisions():
    env = EpisodeStats(AutoReset(AlternatingGame()))
    state, ts = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    seen = []
    for t in range(12):
        state, ts = step(jax.random.key(t), state, jnp.zeros(2, jnp.int32))
        seen.append(bool(ts.info["episode_done"]))
        if t == 4:
            # p0 moved at plies 0,2,4 (3 points), p1 at 1,3 (2 points) + terminal 10
            assert ts.info["episode_return"].tolist() == [3.0, 12.0]
            assert int(ts.info["episode_length"]) == 5
            assert ts.info["episode_decisions"].tolist() == [3, 2]
    assert seen == [False] * 4 + [True] + [False] * 4 + [True] + [False] * 2
    # The second episode is identical, and the counters restarted cleanly after it.
    assert ts.info["episode_return"].tolist() == [3.0, 12.0]
    assert int(state.length) == 2


def test_stats_are_vmappable_and_average_with_done_weights():
    env = EpisodeStats(AutoReset(alem.make("iterated_prisoners_dilemma-v0", num_rounds=4)))
    keys = jax.random.split(jax.random.key(0), 8)
    state, ts = jax.vmap(env.reset)(keys)

    def body(state, k):
        state, ts = jax.vmap(env.step)(jax.random.split(k, 8), state, jnp.ones((8, 2), jnp.int32))
        return state, ts.info

    _, info = jax.lax.scan(body, state, jax.random.split(jax.random.key(1), 8))
    done = info["episode_done"]
    assert int(done.sum()) == 16  # two 4-round episodes per env
    mean = (info["episode_return"] * done[..., None]).sum((0, 1)) / done.sum()
    assert mean.tolist() == [4.0, 4.0]  # mutual defection pays 1 per round


def test_stats_wrapper_forwards_state_readers():
    env = EpisodeStats(AutoReset(alem.make("iterated_prisoners_dilemma-v0")))
    state, _ = env.reset(jax.random.key(0))
    assert "Round 1 of 20" in env.render_text(state, 0)
    assert env.global_state(state).shape == env.global_state_space().shape
    assert env.action_mask(state, env.default_params).shape == (2, 2)
