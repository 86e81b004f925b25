"""benchmarks/reference_results.py: the evaluation protocol (Gorsane et al. 2022) and its outputs."""

from __future__ import annotations

import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.integration  # the reference-results script end to end

pytest.importorskip("rliable")  # the benchmarks extra

ROOT = Path(__file__).resolve().parents[2]


from benchmarks import reference_results as rr  # noqa: E402  (after the importorskip)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    summary = rr.main(["--quick", "--out", str(out)])
    return out, summary


def test_quick_run_writes_marl_eval_json_matching_the_per_seed_results(quick):
    out, summary = quick
    doc = json.loads((out / "marl_eval.json").read_text())
    records = rr.load_records(out)
    assert [(r["task"], r["algo"]) for r in records] == [("simple_spread", "ippo"), ("simple_spread", "qmix")]
    r, q = records
    # the value-based cell: its own options, evaluated at the same env steps as the PPO one
    assert q["learner"]["replay"] is True and q["learner"]["mixer"] == "qmix"
    assert q["checkpoint_steps"] == r["checkpoint_steps"]
    assert all(np.isfinite(v) for v in q["absolute_return_per_seed"])
    assert sorted(doc["mpe"]["simple_spread"]) == ["ippo", "qmix"]
    assert list(doc) == ["mpe"] and list(doc["mpe"]) == ["simple_spread"]
    runs = doc["mpe"]["simple_spread"]["ippo"]
    assert sorted(runs) == ["seed_0", "seed_1"] == [f"seed_{i}" for i in range(len(r["seeds"]))]
    num_checkpoints = len(r["checkpoint_steps"])
    assert num_checkpoints == 3  # step 0 and after each of the 2 chunks
    for s, name in enumerate(sorted(runs)):
        run = runs[name]
        assert sorted(run) == sorted([f"step_{c}" for c in range(num_checkpoints)] + ["absolute_metrics"])
        for c in range(num_checkpoints):
            step = run[f"step_{c}"]
            assert step["step_count"] == r["checkpoint_steps"][c]
            assert step["return"] == [r["checkpoint_return_per_seed"][s][c]]
        assert run[f"step_{num_checkpoints - 1}"]["return"] == [r["final_return_per_seed"][s]]
        assert run["absolute_metrics"]["return"] == [r["absolute_return_per_seed"][s]]
        assert np.isfinite(r["absolute_return_per_seed"][s])
        # the best checkpoint is the first highest evaluation return of that seed
        curve = np.asarray(r["checkpoint_return_per_seed"][s], dtype=float)
        assert r["best_checkpoint_per_seed"][s] == int(np.nanargmax(curve))
        assert r["best_checkpoint_return_per_seed"][s] == pytest.approx(np.nanmax(curve))
    assert r["checkpoint_steps"][-1] == r["env_steps_per_seed"] == 512
    assert r["absolute_eval_steps"] == 10 * r["eval_steps"]
    assert min(r["absolute_episodes_per_seed"]) >= 10 * min(min(e) for e in r["checkpoint_episodes_per_seed"])
    # summary: the per-task IQM of 2 seeds is their mean (IQM trims nothing from 2 values)
    per_task = summary["per_task"]["absolute"]["simple_spread"]["ippo"]
    assert per_task["iqm"] == pytest.approx(np.mean(r["absolute_return_per_seed"]))
    assert per_task["ci_low"] <= per_task["iqm"] <= per_task["ci_high"]
    saved = json.loads((out / "summary.json").read_text())
    assert saved["quick"] is True and saved["machine"]["cpu_count"] >= 1
    assert saved["cells_wall_time_s"] == pytest.approx(r["wall_time_s"] + q["wall_time_s"])
    # two cells one after the other: their span (the total is stored rounded to the microsecond)
    both = r["wall_time_s"] + q["wall_time_s"]
    assert both - 1e-5 <= saved["total_wall_time_s"] <= both + 5
    assert "| mpe/simple_spread-v0 | ippo | 512 | 2 |" in (out / "table.md").read_text()


def test_a_second_run_keeps_finished_cells(quick, capsys):
    out, _ = quick
    before = (out / "runs" / "simple_spread" / "ippo.json").read_text()
    rr.main(["--quick", "--out", str(out)])
    assert "exists, kept" in capsys.readouterr().out
    assert (out / "runs" / "simple_spread" / "ippo.json").read_text() == before


def test_iqm_is_the_mean_of_the_middle_half():
    assert rr.iqm(np.arange(1, 9)) == pytest.approx(4.5)
    assert rr.iqm(np.array([0.0, 1, 2, 3, 4, 5, 6, 1000])) == pytest.approx(3.5)  # an outlier is trimmed
    est = rr.iqm_with_ci({"a": np.arange(1.0, 9).reshape(8, 1), "b": np.full((8, 1), 2.0)}, reps=300)
    assert est["a"]["iqm"] == pytest.approx(4.5)
    assert est["a"]["ci_low"] < 4.5 < est["a"]["ci_high"]
    assert est["b"] == {"iqm": 2.0, "ci_low": 2.0, "ci_high": 2.0}


def test_probability_of_improvement_of_separated_and_equal_scores():
    low, high = np.arange(5.0).reshape(5, 1), np.arange(5.0).reshape(5, 1) + 10
    poi = rr.probability_of_improvement({"low": low, "high": high, "same": high.copy()}, reps=200)
    assert poi["high,low"]["p"] == 1.0 and poi["low,high"]["p"] == 0.0
    assert poi["high,same"]["p"] == pytest.approx(0.5)  # ties count one half


def test_absolute_metric_keeps_the_best_checkpoint_not_the_final_one():
    params = lambda c: {"w": jnp.arange(2.0)[:, None] * jnp.ones((2, 3)) + 10 * c}
    best = rr.BestCheckpoint(params(0), num_seeds=2)
    returns = [[0.0, 5.0], [3.0, np.nan], [1.0, 2.0]]  # seed 0 peaks at checkpoint 1, seed 1 at 0
    for c, ret in enumerate(returns):
        best.update(c, params(c), np.asarray(ret))
    assert best.index.tolist() == [1, 0]
    assert best.value.tolist() == [3.0, 5.0]
    np.testing.assert_array_equal(best.params["w"][0], params(1)["w"][0])
    np.testing.assert_array_equal(best.params["w"][1], params(0)["w"][1])
    final = params(len(returns) - 1)["w"]
    assert not np.array_equal(best.params["w"], final)


def test_normalised_scores_span_zero_to_one_per_task():
    records = [
        {"task": "t", "algo": "a", "final_return_per_seed": [-30.0, -20.0]},
        {"task": "t", "algo": "b", "final_return_per_seed": [-10.0, None]},
    ]
    norm = rr.normalise(records, "final_return_per_seed")
    assert norm[("a", "t")] == [0.0, 0.5]
    assert norm[("b", "t")][0] == 1.0 and np.isnan(norm[("b", "t")][1])


def test_every_algorithm_of_a_task_is_evaluated_at_the_same_env_steps():
    """The frozen task configs: PPO and value-based cells have updates of different sizes, yet
    their checkpoints (and budgets) fall on the same env steps, so their curves compare."""
    for path in sorted(rr.CONFIGS.glob("*.yaml")):
        task = rr.load_task(path.stem)
        spans = {}
        for algo in rr.ALGOS:
            options, interval = rr.learner_options(task, algo)
            spans[algo] = (interval * options["num_envs"] * options["num_steps"], options["total_steps"])
        assert len(set(spans.values())) == 1, (path.stem, spans)


def test_win_rates_are_summarised_and_tabled_for_the_tasks_that_report_them():
    """A task whose env declares a won outcome (SMAX) gets a win-rate table; a task without none."""

    def record(task, algo, won=None):
        r = {
            "task": task,
            "algo": algo,
            "env_id": f"{task}-v0",
            "env_steps_per_seed": 100,
            "seeds": [0, 1, 2, 3],
            "final_return_per_seed": [1.0, 2.0, 3.0, 4.0],
            "absolute_return_per_seed": [1.0, 2.0, 3.0, 4.0],
            "random_return_per_seed": [0.0] * 4,
        }
        if won is not None:
            r |= {
                "final_won_rate_per_seed": won,
                "absolute_won_rate_per_seed": won,
                "random_won_rate_mean": 0.0,
            }
        return r

    records = [
        record("smax_x", "ippo", [0.0, 0.5, 0.5, 1.0]),
        record("smax_x", "mappo", [1.0, 1.0, 1.0, 1.0]),
        record("plain", "ippo"),
        record("plain", "mappo"),
    ]
    summary = rr.summarize(records, reps=50)
    won = summary["per_task_won_rate"]["final"]
    assert set(won) == {"smax_x"}
    assert won["smax_x"]["ippo"]["iqm"] == pytest.approx(0.5)  # the middle half: 0.5, 0.5
    assert won["smax_x"]["mappo"]["iqm"] == pytest.approx(1.0)
    table = rr.table_md(summary, records)
    assert "| smax_x-v0 | mappo | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] | 0.00 |" in table
    assert "plain-v0 | ippo | 1.00" not in table.split("Win rates")[1]
