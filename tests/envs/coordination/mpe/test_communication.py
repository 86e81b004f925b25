"""simple_reference, simple_speaker_listener, simple_crypto: step-for-step equal to mpe2, roles, masks."""

from __future__ import annotations

import numpy as np
import pytest

IDS = ["mpe/simple_reference-v0", "mpe/simple_speaker_listener-v0", "mpe/simple_crypto-v0"]


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
