"""Tests for alem.rollout: the uniform-random legal policy and the scanned rollout."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import alem
from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.rollout import random_legal_actions, random_rollout

MASK = np.array(
    [
        [True, False, True, False, True],
        [False, False, False, True, False],  # one legal action
        [True, True, True, True, True],
        [False, True, True, False, False],
    ]
)


def test_random_legal_actions_never_masked_and_uniform():
    draws = 20_000
    # one batched draw over [draws, N, A]: every row is an independent sample
    mask = jnp.broadcast_to(jnp.asarray(MASK), (draws, *MASK.shape))
    acts = np.asarray(random_legal_actions(jax.random.key(0), mask))
    assert acts.shape == (draws, MASK.shape[0]) and acts.dtype == np.int32
    for agent, row in enumerate(MASK):
        counts = np.bincount(acts[:, agent], minlength=row.size)
        assert counts[~row].sum() == 0, f"agent {agent} picked a masked action: {counts}"
        legal = counts[row]
        if legal.size > 1:
            # chi-square goodness of fit against uniform over the legal actions
            chi2 = ((legal - draws / legal.size) ** 2 / (draws / legal.size)).sum()
            assert chi2 < stats.chi2.ppf(1 - 1e-5, legal.size - 1), (agent, legal)
        else:
            assert legal[0] == draws


def test_random_legal_actions_unbatched_jit_and_empty_row():
    fn = jax.jit(random_legal_actions)
    acts = np.stack([np.asarray(fn(k, jnp.asarray(MASK))) for k in jax.random.split(jax.random.key(1), 8)])
    assert acts.shape == (8, MASK.shape[0]) and acts.dtype == np.int32
    assert MASK[np.arange(MASK.shape[0])[None, :], acts].all()
    assert len({tuple(r) for r in acts}) > 1  # the key matters
    none_legal = jnp.zeros((2, 3), bool)
    assert np.asarray(fn(jax.random.key(2), none_legal)).tolist() == [0, 0]



def test_random_legal_actions_long_rows_pick_the_kth_legal_entry():
    # Rows longer than a few blocks take the two-level search: it must pick exactly the k-th
    # legal entry of the flat rule (k = floor(u * count) from the same uniform draw).
    rng = np.random.default_rng(0)
    mask = rng.random((3, 5, 4674)) < 0.01
    mask[0, 0] = False  # no legal action: 0
    mask[0, 1] = False
    mask[0, 1, -1] = True  # only the last, in the padded block
    mask[0, 2] = True  # all legal
    key = jax.random.key(3)
    acts = np.asarray(jax.jit(random_legal_actions)(key, jnp.asarray(mask)))
    count = mask.sum(-1)
    u = np.asarray(jax.random.uniform(key, count.shape))
    k = np.minimum(np.floor(u * count.astype(np.float32)).astype(np.int64), np.maximum(count - 1, 0))
    expected = np.argmax(np.cumsum(mask, -1) > k[..., None], -1)
    np.testing.assert_array_equal(acts, expected)
    assert acts[0, 0] == 0 and acts[0, 1] == 4673 and acts.dtype == np.int32

def test_rollout_deterministic_and_seeds_differ():
    env = alem.make("prisoners_dilemma-v0")
    num_envs, num_steps = 32, 16
    rollout = random_rollout(env, num_envs, num_steps)
    run = jax.jit(jax.vmap(rollout, in_axes=(0, None)))
    keys = jax.vmap(jax.random.key)(jnp.arange(2))
    state_a, m_a = run(keys, env.default_params)
    state_b, m_b = run(keys, env.default_params)
    for x, y in zip(jax.tree.leaves((state_a, m_a)), jax.tree.leaves((state_b, m_b)), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    m = jax.device_get(m_a)
    # one-shot game: every step ends one episode of length 1
    np.testing.assert_array_equal(m["episodes"], [num_envs * num_steps] * 2)
    np.testing.assert_array_equal(m["episode_length"], [1.0, 1.0])
    np.testing.assert_array_equal(m["illegal_actions"], [0, 0])
    np.testing.assert_array_equal(m["env_steps"], [num_envs * num_steps] * 2)
    assert not np.array_equal(m["return_sum"][0], m["return_sum"][1])
    np.testing.assert_allclose(m["episode_return"], m["return_sum"] / m["episodes"][:, None], rtol=1e-6)


# --------------------------------------------------------------------------- toy envs
@struct.dataclass
class _ToyState:
    t: jax.Array


class _TurnTakingToy(MultiAgentEnv):
    """Two players alternate; legal actions are the even ones {0, 2} of 4; reward = action."""

    stochastic: ClassVar[bool] = False
    horizon = 6

    def __init__(self):
        super().__init__()
        self.agents = ("a", "b")
        self.agent_roles = np.zeros(2, np.int32)
        self.role_names = ("player",)

    def observation_space(self, agent=None):
        one = spaces.Box(0.0, 10.0, (1,))
        return one if agent is not None else spaces.stack([one] * 2)

    def action_space(self, agent=None):
        one = spaces.Discrete(4)
        return one if agent is not None else spaces.stack([one] * 2)

    @property
    def default_params(self):
        return EnvParams()

    def observe(self, state, params):
        return jnp.full((2, 1), state.t, jnp.float32)

    def acting(self, state, params):
        return jnp.array([state.t % 2 == 0, state.t % 2 == 1])

    def action_mask(self, state, params):
        # Non-acting rows are all False; the acting row allows 0 and 2 only.
        return self.acting(state, params)[:, None] & (jnp.arange(4) % 2 == 0)[None, :]

    def _ts(self, state, params, reward, done):
        return TimeStep(
            obs=self.observe(state, params),
            action_mask=self.action_mask(state, params),
            reward=reward,
            terminated=done,
            truncated=jnp.bool_(False),
            acting=self.acting(state, params),
        )

    def reset_env(self, key, params):
        s = _ToyState(t=jnp.int32(0))
        return s, self._ts(s, params, jnp.zeros(2, jnp.float32), jnp.bool_(False))

    def step_env(self, key, state, actions, params):
        reward = jnp.where(self.acting(state, params), actions, 0).astype(jnp.float32)
        s = _ToyState(t=state.t + 1)
        return s, self._ts(s, params, reward, s.t >= self.horizon)


class _ContinuousToy(_TurnTakingToy):
    """Two agents with Box([-1, 1]^2) actions; reward = -|a|^2; episodes of 5 steps."""

    continuous_actions: ClassVar[bool] = True
    horizon = 5

    def action_space(self, agent=None):
        one = spaces.Box(-1.0, 1.0, (2,))
        return one if agent is not None else spaces.stack([one] * 2)

    def acting(self, state, params):
        return jnp.ones(2, bool)

    def action_mask(self, state, params):
        return jnp.ones((2, 1), bool)

    def step_env(self, key, state, actions, params):
        s = _ToyState(t=state.t + 1)
        return s, self._ts(s, params, -(actions**2).sum(axis=1), s.t >= self.horizon)


def test_rollout_respects_state_dependent_masks():
    env = _TurnTakingToy()
    num_envs, num_steps = 1024, 12  # every env finishes exactly 2 episodes of 6 plies
    m = jax.device_get(
        jax.jit(random_rollout(env, num_envs, num_steps))(jax.random.key(3), env.default_params)[1]
    )
    assert int(m["illegal_actions"]) == 0
    assert int(m["episodes"]) == 2 * num_envs
    assert float(m["episode_length"]) == 6.0
    # each player moves 3 times, uniform over {0, 2}: mean return 3, sd sqrt(3) per episode
    tol = 6 * np.sqrt(3.0 / (2 * num_envs))
    np.testing.assert_allclose(m["episode_return"], [3.0, 3.0], atol=tol)


def test_rollout_continuous_actions_sample_the_box():
    env = _ContinuousToy()
    num_envs, num_steps = 512, 10
    m = jax.device_get(
        jax.jit(random_rollout(env, num_envs, num_steps))(jax.random.key(4), env.default_params)[1]
    )
    assert int(m["illegal_actions"]) == 0  # out-of-box actions would be flagged by the core
    assert int(m["episodes"]) == 2 * num_envs
    # uniform on [-1, 1]: E[a^2] = 1/3, Var[a^2] = 4/45; 5 steps x 2 dims per episode
    expected, sd = -5 * 2 / 3, np.sqrt(10 * 4 / 45)
    np.testing.assert_allclose(m["episode_return"], [expected, expected], atol=6 * sd / np.sqrt(2 * num_envs))


def test_random_rollout_rejects_bad_sizes():
    with pytest.raises(ValueError, match="num_envs"):
        random_rollout(alem.make("prisoners_dilemma-v0"), 0, 4)
