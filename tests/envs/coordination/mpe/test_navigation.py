"""simple and simple_spread: step-for-step equal to mpe2, reset distributions, options."""

from __future__ import annotations

import numpy as np
import pytest

IDS = ["mpe/simple-v0", "mpe/simple_spread-v0"]


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("env_id", IDS)
def test_matches_mpe2(comparer, env_id, continuous):
    c = comparer(env_id, continuous)
    assert c.run(seeds=range(3), rng=np.random.default_rng(0)) == 25


@pytest.mark.slow
@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("env_id", IDS)
def test_matches_mpe2_many_episodes(comparer, env_id, continuous):
    c = comparer(env_id, continuous)
    for chunk in range(10):
        c.run(seeds=range(100 + 20 * chunk, 120 + 20 * chunk), rng=np.random.default_rng(chunk))


def test_spread_num_agents_and_local_ratio_match_mpe2(comparer):
    c = comparer("mpe/simple_spread-v0", False, num_agents=5, local_ratio=0.2)
    assert c.env.observation_space().shape == (5, 30)
    c.run(seeds=range(2), rng=np.random.default_rng(1))
