"""simple_tag, simple_adversary, simple_push, simple_world_comm: options and team sizes vs mpe2."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("mpe/simple_tag-v0", {"num_good": 2, "num_adversaries": 2, "num_obstacles": 1}),
        ("mpe/simple_adversary-v0", {"num_good": 3}),
        ("mpe/simple_world_comm-v0", {"num_good": 3, "num_adversaries": 2, "num_food": 1, "num_forests": 1}),
    ],
)
def test_team_sizes_match_mpe2(comparer, env_id, kwargs):
    comparer(env_id, False, **kwargs).run(seeds=range(2), rng=np.random.default_rng(3))
