"""Advantage estimators against answers worked out by hand (never by the code under test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alem.text.train.advantages import (
    RoleBaseline,
    discounted_returns,
    grpo_advantages,
    rae_advantages,
    turn_level_advantages,
)


def test_grpo_mean_centred_and_std_normalised_per_seed_group():
    # group 7: returns 1, 0, -1 -> mean 0, population std sqrt(2/3)
    # group 9: returns 2, 4 -> mean 3, std 1
    returns = [1.0, 2.0, 0.0, 4.0, -1.0]
    groups = [7, 9, 7, 9, 7]
    centred = grpo_advantages(returns, groups, scale=False)
    np.testing.assert_allclose(centred, [1.0, -1.0, 0.0, 1.0, -1.0])
    s = math.sqrt(2 / 3)
    scaled = grpo_advantages(returns, groups, eps=0.0)
    np.testing.assert_allclose(scaled, [1 / s, -1.0, 0.0, 1.0, -1 / s])
    # sample std (ddof=1) of group 9: sqrt(2)
    np.testing.assert_allclose(
        grpo_advantages(returns, groups, eps=0.0, ddof=1)[[1, 3]], [-1 / 2**0.5, 1 / 2**0.5]
    )


def test_grpo_degenerate_groups_give_zero():
    np.testing.assert_allclose(grpo_advantages([5.0, 3.0, 3.0], ["a", "b", "b"]), [0.0, 0.0, 0.0])


def test_rae_ema_baseline_per_game_and_role():
    # decay 0.5, baselines start at 0; taken in order:
    # (kuhn, 0) R=2: b = 0.5*0 + 0.5*2 = 1      -> A = 2 - 1 = 1
    # (kuhn, 1) R=-2: b = -1                     -> A = -2 - (-1) = -1
    # (kuhn, 0) R=-1: b = 0.5*1 + 0.5*(-1) = 0   -> A = -1 - 0 = -1
    # (ttt, 0)  R=1: b = 0.5                     -> A = 0.5
    games = ["kuhn", "kuhn", "kuhn", "ttt"]
    roles = [0, 1, 0, 0]
    returns = [2.0, -2.0, -1.0, 1.0]
    adv, table = rae_advantages(games, roles, returns, decay=0.5)
    np.testing.assert_allclose(adv, [1.0, -1.0, -1.0, 0.5])
    assert table == {("kuhn", 0): 0.0, ("kuhn", 1): -1.0, ("ttt", 0): 0.5}
    # the baseline from before each update: A = R - b_old -> 2, -2, -1 - 1 = -2, 1
    adv_old, _ = rae_advantages(games, roles, returns, decay=0.5, update_first=False)
    np.testing.assert_allclose(adv_old, [2.0, -2.0, -2.0, 1.0])


def test_role_baseline_keeps_state_across_batches_and_round_trips():
    rb = RoleBaseline(decay=0.5)
    np.testing.assert_allclose(rb.advantages(["g"], [1], [4.0]), [2.0])  # b = 2
    np.testing.assert_allclose(rb.advantages(["g"], [1], [0.0]), [-1.0])  # b = 0.5*2 + 0 = 1 -> A = -1
    other = RoleBaseline(decay=0.9)
    other.load_state_dict(rb.state_dict())
    assert other.decay == 0.5 and other.baselines == {("g", 1): 1.0}
    with pytest.raises(ValueError, match="decay"):
        RoleBaseline(decay=1.0)


def test_discounted_returns_by_hand():
    # gamma 0.5: G2 = 4, G1 = 2 + 0.5*4 = 4, G0 = 1 + 0.5*4 = 3
    np.testing.assert_allclose(discounted_returns([1.0, 2.0, 4.0], 0.5), [3.0, 4.0, 4.0])


def test_turn_level_advantages_per_agent_normalisation():
    # One episode, two agents interleaved (a, b, a, b), credited rewards 0, 0, 1, -1, gamma 0.5.
    # Agent a's turns: rewards [0, 1] -> G = [0 + 0.5*1, 1] = [0.5, 1]
    # Agent b's turns: rewards [0, -1] -> G = [-0.5, -1]
    rewards = [0.0, 0.0, 1.0, -1.0]
    episodes = [0, 0, 0, 0]
    agents = ["a", "b", "a", "b"]
    g = turn_level_advantages(rewards, episodes, agents, gamma=0.5, normalize="none")
    np.testing.assert_allclose(g, [0.5, -0.5, 1.0, -1.0])
    # per agent: a's mean 0.75, std 0.25 -> [-1, 1]; b's mean -0.75, std 0.25 -> [1, -1]
    adv = turn_level_advantages(rewards, episodes, agents, gamma=0.5, eps=0.0)
    np.testing.assert_allclose(adv, [-1.0, 1.0, 1.0, -1.0])
    # over the whole batch: mean 0, std sqrt((0.25 + 0.25 + 1 + 1) / 4) = sqrt(0.625)
    s = math.sqrt(0.625)
    batch = turn_level_advantages(rewards, episodes, agents, gamma=0.5, normalize="batch", eps=0.0)
    np.testing.assert_allclose(batch, [0.5 / s, -0.5 / s, 1 / s, -1 / s])


def test_turn_level_returns_stay_within_their_episode():
    # Two episodes of agent a: [1, 1] and [3]; gamma 1 -> G = [2, 1] and [3]
    g = turn_level_advantages([1.0, 1.0, 3.0], [0, 0, 1], ["a", "a", "a"], normalize="none")
    np.testing.assert_allclose(g, [2.0, 1.0, 3.0])
