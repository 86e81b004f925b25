"""notebooks/llm_vs_marl.ipynb runs on tiny evaluations and shows their numbers.

Needs nbclient and ipykernel (in the dev extra).
"""

from __future__ import annotations

import os
from pathlib import Path

import jax.numpy as jnp
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import FunctionPlayer, make_player
from alem.text.llm.player import LLMPlayer

pytestmark = pytest.mark.integration  # executes a notebook

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "llm_vs_marl.ipynb"


def const(a: int) -> FunctionPlayer:
    return FunctionPlayer(lambda key, turn: jnp.full(turn.active.shape, a, jnp.int32), "const")


def test_notebook_tables_and_plots_evaluation_runs(tmp_path, monkeypatch):
    # The same programs as tests/test_evaluate.py (shared through the compilation cache).
    pd_env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)  # cooperate vs defect: 0 and 15
    llm = LLMPlayer(pd_env, backend="scripted", script="first")
    evaluate(
        pd_env,
        [llm, const(1)],
        episodes=4,
        num_envs=2,
        run_dir=tmp_path / "pd",
        labels=["llm:first", "defect"],
    )
    kuhn = alem.make("kuhn_poker-v0")
    players = [make_player("random", kuhn), make_player("random", kuhn)]
    kuhn_res = evaluate(kuhn, players, episodes=7, num_envs=7, seed=2, run_dir=tmp_path / "kuhn")
    fig, table_csv = tmp_path / "fig.png", tmp_path / "table.csv"
    monkeypatch.setenv("ALEM_EVAL_RUNS", os.pathsep.join([str(tmp_path / "pd"), str(tmp_path / "kuhn")]))
    monkeypatch.setenv("ALEM_NOTEBOOK_FIG", str(fig))
    monkeypatch.setenv("ALEM_NOTEBOOK_TABLE", str(table_csv))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()

    table = pd.read_csv(table_csv)
    assert len(table) == 4 and set(table["env"]) == {"iterated_prisoners_dilemma-v0", "kuhn_poker-v0"}
    pd_rows = table[table["env"] == "iterated_prisoners_dilemma-v0"].set_index("player")
    assert pd_rows.loc["llm:first", "return"] == 0.0 and pd_rows.loc["defect", "return"] == 15.0
    assert pd_rows.loc["llm:first", "kind"] == "LLM" and pd_rows.loc["llm:first", "invalid_rate"] == 0.0
    assert pd_rows["win"].isna().all()  # not zero-sum: no W/D/L
    k = table[table["env"] == "kuhn_poker-v0"].reset_index()
    for i, seat in enumerate(kuhn_res["seats"]):
        assert k.loc[i, "return"] == pytest.approx(seat["return_mean"])
        assert k.loc[i, "ci95"] == pytest.approx(seat["return_ci95"])
        assert (k.loc[i, "win"], k.loc[i, "loss"]) == pytest.approx((seat["win"], seat["loss"]))
    assert fig.stat().st_size > 5000
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2  # return bars and W/D/L bars
