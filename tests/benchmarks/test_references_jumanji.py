"""The Jumanji reference (benchmarks/references/jumanji.py): what it covers, and a rollout at the
alem env's sizes when jumanji is installed (it is not in the dev extra: the GPU script names the
install when it is missing)."""

from __future__ import annotations

import math

import jax
import pytest

import alem
from benchmarks import harness


def test_jumanji_reference_names_what_it_covers_and_what_is_missing(monkeypatch):
    """LBF and RWARE only, square LBF grids, known rware sizes; without the package, the install."""
    from benchmarks.references import jumanji as jm_ref

    (ref,) = jm_ref.make_references(harness)
    assert "covers LBF and RWARE" in ref.supports("kuhn_poker-v0", alem.make("kuhn_poker-v0"))
    monkeypatch.setattr(jm_ref, "jumanji_available", lambda: False)
    assert "pip install jumanji" in ref.supports("lbf-v0", alem.make("lbf-v0"))
    assert "pip install jumanji" in ref.supports("rware_tiny_4ag-v0", alem.make("rware_tiny_4ag-v0"))


def test_jumanji_rollout_plays_legal_moves_at_the_alem_envs_sizes():
    pytest.importorskip("jumanji")
    from benchmarks.references import jumanji as jm_ref

    env = alem.make("lbf-v0")
    jenv = jm_ref.make_jumanji_env("lbf-v0", env)
    _, ts = jenv.reset(jax.random.key(0))
    assert ts.observation.action_mask.shape == (env.num_agents, 6)
    assert (jenv.grid_size, jenv.num_food, jenv.fov, jenv.time_limit) == (env.rows, env.num_food, env.sight, 50)
    program = jm_ref.jumanji_step_program("rware_tiny_4ag-v0", alem.make("rware_tiny_4ag-v0"), 4)
    state, ts, total = harness.scan_program(program, 8)(jax.random.key(1))
    assert ts.observation.action_mask.shape == (4, 4, 5) and math.isfinite(float(total))
