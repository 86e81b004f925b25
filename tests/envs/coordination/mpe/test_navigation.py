"""simple and simple_spread: reset distributions and options (mpe2 exactness: test_mpe2_exactness.py)."""

from __future__ import annotations

import numpy as np


def test_spread_num_agents_and_local_ratio_match_mpe2(comparer):
    c = comparer("mpe/simple_spread-v0", False, num_agents=5, local_ratio=0.2)
    assert c.env.observation_space().shape == (5, 30)
    c.run(seeds=range(2), rng=np.random.default_rng(1))
