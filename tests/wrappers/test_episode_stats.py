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
    state, ts = jax.jit(jax.vmap(env.reset))(keys)

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


class DecidedGame(AlternatingGame):
    """AlternatingGame whose episode is won when the last mover (p0, at ply 5) plays action 1."""

    outcomes = ("won",)

    def _ts(self, state, reward, done, won=False):
        ts = super()._ts(state, reward, done)
        return ts.replace(info={"won": jnp.asarray(won) & done})

    def reset_env(self, key, params):
        s = _S(jnp.int32(0))
        return s, self._ts(s, jnp.zeros(2), jnp.bool_(False))

    def step_env(self, key, state, actions, params):
        s, ts = super().step_env(key, state, actions, params)
        return s, ts.replace(info={"won": ts.terminated & (actions[0] == 1)})


def test_outcomes_are_counted_per_finished_episode_and_reported_as_rates():
    """Four envs, two 5-ply episodes each; p0 always plays its env's action, so envs 0, 2 and 3
    win both episodes and env 1 none: 6 wins of 8 finished episodes, whatever the step count."""
    from alem.metrics import episode_totals, summarize

    env = EpisodeStats(AutoReset(DecidedGame()))
    assert env.outcomes == ("won",)  # wrappers forward the declaration
    p0 = jnp.array([1, 0, 1, 1])
    actions = jnp.stack([p0, jnp.zeros(4, jnp.int32)], axis=1)
    keys = jax.random.split(jax.random.key(0), 4)
    state, ts = jax.jit(jax.vmap(env.reset))(keys)
    assert not ts.info["episode_outcomes"]["won"].any()  # no episode ended at the reset

    @jax.jit
    def run(state):
        def body(state, k):
            state, ts = jax.vmap(env.step)(jax.random.split(k, 4), state, actions)
            return state, episode_totals(ts.info)

        return jax.lax.scan(body, state, jax.random.split(jax.random.key(1), 12))[1]

    per_step = run(state)
    # Ply 5 of each episode ends it; the won flag is counted there only (not on the other steps).
    assert per_step["outcome_won"].tolist() == [0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0]
    totals = summarize(jax.tree.map(lambda x: x.sum(0), per_step), env_steps=48)
    assert int(totals["episodes"]) == 8 and int(totals["outcome_won"]) == 6
    assert float(totals["won_rate"]) == 0.75
    # An env with no outcomes adds nothing.
    plain = EpisodeStats(AlternatingGame())
    _, ts = plain.reset(jax.random.key(0))
    assert ts.info["episode_outcomes"] == {} and not any(
        k.startswith("outcome_") for k in episode_totals(jax.tree.map(lambda x: x[None], ts.info))
    )
