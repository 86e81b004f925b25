"""notebooks/training_analysis.ipynb reads tiny training runs and tables and plots them.

Needs nbclient and ipykernel (in the dev extra).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from scipy import stats

from alem.train import run

pytestmark = pytest.mark.integration  # executes a notebook

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "training_analysis.ipynb"

# The config of tests/test_train.py's PPO run, so the IPPO program comes from the compilation cache.
TINY = [
    "env.id=coordination-v0",
    "algo.num_envs=8",
    "algo.num_steps=4",
    "algo.num_minibatches=2",
    "algo.lr=0.003",
    "algo.hidden=[16]",
    "algo.total_steps=960",  # 30 updates in 3 chunks
    "chunk_updates=10",
    "num_seeds=2",
    "eval.num_steps=16",
]


def _train(algo: str, run_dir: Path, *extra: str) -> dict:
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config", overrides=[f"algo={algo}", *TINY, *extra])
    return json.loads(run(cfg, run_dir).read_text())


def test_notebook_tables_and_plots_training_runs(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    results = {algo: _train(algo, runs / algo) for algo in ("ippo", "mappo")}
    # Another configuration of IPPO: a line and a row of its own, never pooled with the first
    other = _train("ippo", runs / "ippo_lr", "algo.lr=0.01")
    # A run still in progress (no results.json yet) is plotted but has no final evaluation.
    (runs / "unfinished").mkdir()
    (runs / "unfinished" / "metrics.jsonl").write_text(
        (runs / "ippo" / "metrics.jsonl")
        .read_text()
        .replace('"seed": 0', '"seed": 5')
        .replace('"seed": 1', '"seed": 6')
    )
    (runs / "unfinished" / "config.yaml").write_text("env:\n  id: coordination-v0\nalgo:\n  name: dpo\n")
    fig, table_csv = tmp_path / "fig.png", tmp_path / "table.csv"
    monkeypatch.setenv("ALEM_RUNS", str(runs))
    monkeypatch.setenv("ALEM_REFERENCE", "")  # the reference-results section is tested below
    monkeypatch.setenv("ALEM_NOTEBOOK_FIG", str(fig))
    monkeypatch.setenv("ALEM_NOTEBOOK_TABLE", str(table_csv))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    table = pd.read_csv(table_csv).set_index("configuration")
    assert sorted(table.index) == ["dpo", "ippo lr=0.003", "ippo lr=0.01", "mappo"]
    assert set(table["env"]) == {"coordination-v0"}
    labels = {"ippo": "ippo lr=0.003", "mappo": "mappo"}
    lr01 = table.loc["ippo lr=0.01"]
    assert lr01["seeds"] == 2 and lr01["trained"] == pytest.approx(
        np.mean([np.mean(r) for r in other["trained_return_per_seed"]])
    )
    for algo, res in results.items():
        row = table.loc[labels[algo]]
        assert row["seeds"] == 2 and row["env_steps"] == 960
        per_seed = [float(np.mean(r)) for r in res["trained_return_per_seed"]]
        half = stats.t.ppf(0.975, 1) * np.std(per_seed, ddof=1) / math.sqrt(2)
        assert row["trained"] == pytest.approx(np.mean(per_seed))
        assert row["trained_ci95"] == pytest.approx(half)
        assert row["random"] == pytest.approx(np.mean([np.mean(r) for r in res["random_return_per_seed"]]))
        assert 0.0 <= row["random"] <= 1.0 and np.isfinite(row["trained"])
        rows = [json.loads(x) for x in (runs / algo / "metrics.jsonl").read_text().splitlines()]
        last = [r["episode_return"] for r in rows if r["env_steps"] == 960]
        assert row["last_curve"] == pytest.approx(np.mean(last))
    unfinished = table.loc["dpo"]
    assert unfinished["seeds"] == 2 and math.isnan(unfinished["trained"])
    assert unfinished["last_curve"] == pytest.approx(table.loc["ippo lr=0.003", "last_curve"])

    assert fig.stat().st_size > 5000
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1


REFERENCE = NOTEBOOK.parents[1] / "benchmarks" / "results" / "reference"


@pytest.mark.skipif(not (REFERENCE / "summary.json").is_file(), reason="no committed reference results")
def test_notebook_plots_the_committed_reference_results(tmp_path, monkeypatch):
    table_csv = tmp_path / "reference.csv"
    monkeypatch.setenv("ALEM_RUNS", str(tmp_path / "no-runs"))
    monkeypatch.setenv("ALEM_REFERENCE", str(REFERENCE))
    monkeypatch.setenv("ALEM_NOTEBOOK_REFERENCE_TABLE", str(table_csv))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    summary = json.loads((REFERENCE / "summary.json").read_text())
    table = pd.read_csv(table_csv).set_index(["task", "algo", "metric"])
    expected = {
        (task, algo, metric): est
        for metric in ("absolute", "final")
        for task, per_algo in summary["per_task"][metric].items()
        for algo, est in per_algo.items()
    }
    assert len(table) == len(expected) > 0
    for key, est in expected.items():
        assert table.loc[key, "iqm"] == pytest.approx(est["iqm"])
        assert table.loc[key, "ci_low"] == pytest.approx(est["ci_low"])
        assert table.loc[key, "ci_high"] == pytest.approx(est["ci_high"])
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # the (empty) learning curves, the reference IQM/CI panels, the probability of improvement and curves
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 3
