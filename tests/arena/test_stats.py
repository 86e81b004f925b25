"""alem.arena.stats and table: per-seat results of a run directory from its files alone."""

from __future__ import annotations

import math

import pytest

import alem
from alem.arena import EPISODES_FILE, EpisodeRecord, ci95, format_table, summarize_run, write_results
from alem.rundir import JsonlWriter


def test_summary_of_hand_written_episodes(tmp_path):
    env = alem.make("kuhn_poker-v0")
    returns = [(1.0, -1.0), (-2.0, 2.0), (0.0, 0.0), (1.0, -1.0), (9.0, -9.0)]
    with JsonlWriter(tmp_path / EPISODES_FILE) as f:
        for e, r in enumerate(returns):
            f.write(EpisodeRecord(e, r, 2 + e, e != 3, False, (1, 1), (0, int(e == 0))).to_json())
    res = summarize_run(tmp_path, env=env, labels=["a", "b"], episodes=4)  # episode 4 is not counted
    s0, s1 = res["seats"]
    assert res["episodes"] == 4 and res["zero_sum"] and res["episodes_cut"] == 1
    assert res["episode_length_mean"] == 3.5
    assert s0["return_mean"] == 0.0 and (s0["win"], s0["draw"], s0["loss"]) == (0.5, 0.25, 0.25)
    sd = math.sqrt(sum(x * x for x in (1, -2, 0, 1)) / 3)
    assert s0["return_ci95"] == pytest.approx(3.182446305 * sd / 2) == ci95([1.0, -2.0, 0.0, 1.0])
    assert s1["env_illegal"] == 1 and s1["env_illegal_rate"] == 0.25 and "invalid_rate" not in s1
    assert ci95([1.0]) is None

    write_results(tmp_path, res)
    csv = (tmp_path / "results.csv").read_text().splitlines()
    assert csv[0].startswith("env_id,seat,agent,player") and csv[1].startswith("kuhn_poker-v0,0,")
    table = format_table(res)
    assert "kuhn_poker-v0: 4 episodes" in table and "0.50/0.25/0.25" in table
