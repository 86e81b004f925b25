"""alem.training.runs: runs are pooled by seed only within one configuration, and a multirun's
summary has a row per job. The run directories are written by hand (the files alem.train writes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from alem.training.runs import group_by_configuration, main, read_runs, write_multirun_summary


def _run(d: Path, *, algo="mappo", num_envs=16, lr=0.0005, seeds=(0,), chunks=3, finished=True, sweep=None):
    """A run directory as alem.train leaves it (``sweep``: knob -> values of a vmapped sweep)."""
    d.mkdir(parents=True)
    config = {
        "env": {"id": "mpe/simple_spread-v0", "kwargs": {}},
        "algo": {"name": algo, "num_envs": num_envs, "lr": lr},
        "seed": seeds[0],
        "num_seeds": len(seeds),
        "output_dir": str(d),
        "chunk_updates": 10,
        "eval": {"num_steps": 256},
        "wandb": {"project": "alem"},
    }
    (d / "config.yaml").write_text(yaml.safe_dump(config))
    configs = (
        [None]
        if sweep is None
        else [dict(zip(sweep, v, strict=True)) for v in zip(*sweep.values(), strict=True)]
    )
    rows = [
        {
            "chunk": c,
            "seed": s,
            "env_steps": 1000 * (c + 1),
            "episode_return": -20.0 + c,
            **({} if k is None else {"config": k}),
        }
        for c in range(chunks)
        for k in ([None] if sweep is None else range(len(configs)))
        for s in seeds
    ]
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if finished:
        n = len(configs) * len(seeds)
        res = {
            "seeds": list(seeds),
            "num_seeds": len(seeds),
            "trained_return_per_seed": [[-10.0 - i, -12.0 - i] for i in range(n)],
            "random_return_per_seed": [[-26.0, -26.0]] * n,
        }
        if sweep is not None:
            res["sweep"] = {"knobs": sweep, "configurations": configs}
        (d / "results.json").write_text(json.dumps(res))
    return d


def test_runs_are_pooled_by_seed_only_within_one_configuration(tmp_path):
    """The notebook used to pool a vmapped sweep's learning rates and runs of another budget
    into one "mappo" curve, and a killed 64-env run with a 16-env run."""
    _run(tmp_path / "a", seeds=(0,))
    _run(tmp_path / "b", seeds=(1,))  # the same configuration, another seed: pooled
    _run(tmp_path / "killed", num_envs=64, seeds=(0,), finished=False, chunks=1)
    _run(tmp_path / "sweep", sweep={"lr": [0.001, 0.0003]}, seeds=(0, 1))
    _run(tmp_path / "ippo", algo="ippo")
    groups, separating = group_by_configuration(read_runs(tmp_path))
    labels = {g.label: g for g in groups}
    assert sorted(labels) == [
        "ippo",
        "mappo lr=0.0003 num_envs=16",
        "mappo lr=0.0005 num_envs=16",
        "mappo lr=0.0005 num_envs=64",
        "mappo lr=0.001 num_envs=16",
    ]
    assert (
        labels["mappo lr=0.0005 num_envs=16"].seeds == [0, 1]
        and len(labels["mappo lr=0.0005 num_envs=16"].members) == 2
    )
    assert (
        labels["mappo lr=0.0005 num_envs=64"].seeds == [0]
        and not labels["mappo lr=0.0005 num_envs=64"].members[0].finished
    )
    swept = labels["mappo lr=0.0003 num_envs=16"].members[0]  # the sweep's second configuration: rows 2 and 3
    assert (
        swept.sweep_row == 1
        and swept.trained == [-13.0, -14.0]
        and {r["config"] for r in swept.metrics} == {1}
    )
    assert separating == ["algo.lr", "algo.name", "algo.num_envs"]


def test_a_multirun_summary_has_a_row_per_job_and_names_what_separates_them(tmp_path, capsys):
    _run(tmp_path / "0", algo="ippo")
    _run(tmp_path / "1", algo="mappo", finished=False)
    (tmp_path / "2").mkdir()  # a job refused before it wrote anything
    path = write_multirun_summary(
        tmp_path, [{"dir": tmp_path / "2", "overrides": ["algo=dpo"], "status": "FAILED"}]
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["separating"] == ["algo.name"]
    assert [(j["job"], j["status"], j["options"]) for j in summary["jobs"]] == [
        ("0", "finished", {"algo.name": "ippo"}),
        ("1", "stopped", {"algo.name": "mappo"}),
        ("2", "failed", {}),
    ]
    assert summary["jobs"][0]["trained"] == pytest.approx(-11.0) and summary["jobs"][2]["overrides"] == [
        "algo=dpo"
    ]
    table = path.read_text().splitlines()
    assert "| 0 | ippo | finished | 1 | 3 | -11 | -26 |" in table
    # the command rewrites it from the files alone (a killed multirun never reached its end)
    assert main([str(tmp_path)]) == 0 and "| 1 | mappo | stopped |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "nowhere")])
    assert e.value.code == 2
