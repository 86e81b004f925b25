"""benchmarks/run_all.py: the smoke run gives well-formed results; jobs never hang; the GPU script's sizes."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # benchmark scripts in subprocesses

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "benchmarks.run_all"]  # run from ROOT


def _module():
    from benchmarks import run_all

    return run_all


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("run_all")
    proc = subprocess.run(
        [*COMMAND, "--quick", "--out-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads((out / "results.json").read_text())


def test_quick_run_covers_every_family_with_well_formed_rows(quick):
    out, result = quick
    assert result["mode"] == "quick"
    assert {"jax_version", "cpu_model", "date", "jax_backend"} <= set(result["machine"])
    assert result["load_before"] is not None and len(result["load_before"]) == 3
    families = {j["family"].split("-")[0] for j in result["jobs"]}
    assert families >= {"games", "mpe", "lbf", "pathfinding"}
    for job in result["jobs"]:
        assert job["status"] in ("ok", "skipped"), f"{job['name']}: {job['status']}: {job.get('reason')}"
        if job["status"] == "skipped":
            assert "not installed" in job["reason"] or "pass --jaxmarl-ippo" in job["reason"], job
            continue
        assert job["rows"], job["name"]
        assert (out / "jobs" / f"{job['name']}.json").is_file()
        for row in job["rows"]:
            assert row["alem"] > 0 and math.isfinite(row["alem"]) and row["alem_compile_s"] > 0
            if row["ref"] is not None:
                assert row["ratio"] == pytest.approx(row["alem"] / row["ref"])
                assert row["met"] == (None if row["target"] is None else row["ratio"] >= row["target"])
            else:
                assert row["ratio"] is None and row["met"] is None
    # dev-extra references run in the smoke test (pgx, OpenSpiel, mpe2, lbforaging)
    ok = {j["name"] for j in result["jobs"] if j["status"] == "ok"}
    assert {"games-tic_tac_toe-pgx", "games-kuhn_poker-openspiel", "lbf-lbf-lbforaging"} <= ok
    table = (out / "table.md").read_text()
    rows = [r for j in result["jobs"] for r in j["rows"]]
    assert len([ln for ln in table.splitlines() if ln.startswith("| ") and "---" not in ln]) >= len(rows) + 1
    assert "load average" in table


def test_a_second_run_never_overwrites_the_first(quick):
    out, _ = quick
    before = (out / "results.json").read_bytes()
    proc = subprocess.run(
        [*COMMAND, "--quick", "--out-dir", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0 and "already holds results" in proc.stderr
    assert (out / "results.json").read_bytes() == before


def test_a_folder_with_anything_in_it_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "notes.txt").write_text("another run's")
    proc = subprocess.run(
        [*COMMAND, "--quick", "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0 and "already holds results" in proc.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["notes.txt"]


def test_a_job_past_its_time_limit_is_stopped_and_reported(tmp_path):
    ra = _module()
    # the sleeper starts a grandchild that must die with it (a benchmark's worker process)
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    job = ra.Job("sleeper", "games", "none", ["-c", code], lambda d: [], None, 3.0)
    rec = ra.run_job(job, tmp_path)
    assert rec["status"] == "timeout" and "3 s" in rec["reason"] and rec["rows"] == []
    grandchild = int((tmp_path / "pid").read_text())
    time.sleep(0.5)
    assert (
        not Path(f"/proc/{grandchild}").exists() or "zombie" in Path(f"/proc/{grandchild}/status").read_text()
    )
    crash = ra.Job("crash", "games", "none", ["-c", "raise SystemExit('boom')"], lambda d: [], None, 30.0)
    rec = ra.run_job(crash, tmp_path)
    assert rec["status"] == "error" and "boom" in rec["reason"]


def test_gpu_script_measures_the_issues_sizes_and_the_training_comparisons_in_its_budget():
    """The GPU issue's sizes (4,096, 65,536 and a million envs for the Pgx games and MPE), the
    other families at least at 65,536, the proxy, and both training comparisons (skipped with the
    flag to pass when no JaxMARL checkout is given) before the optional families."""
    ra = _module()
    args = argparse.Namespace(quick=False, device="gpu", reps=5, only=None, jaxmarl_ippo=None)
    jobs = ra.jobs_for(args)
    sizes = {}
    for job in jobs:
        if "--num-envs" not in job.argv:
            continue
        i = job.argv.index("--num-envs")
        ns = [int(x) for x in job.argv[i + 1 :] if x.isdigit()][:3]
        sizes.setdefault(job.family, set()).update(ns)
    for family in ("games", "mpe"):
        assert sizes[family] >= {4096, 65536, 1 << 20}, family
    for family in ("pathfinding", "overcooked", "smax", "hanabi"):
        assert 65536 in sizes[family], family
    names = [j.name for j in jobs]
    assert names[0] == "hlo-gpu"
    train = [j for j in jobs if j.family == "train"]
    assert [j.name for j in train] == ["train-ippo-jaxmarl", "train-pqn_vdn-jaxmarl"]
    assert "--jaxmarl-ippo" in train[0].skip and "--jaxmarl-pqn-vdn" in train[1].skip
    assert names.index("train-ippo-jaxmarl") < names.index("overcooked-overcooked_cramped_room-jaxmarl")
    assert sum(j.timeout_s for j in jobs if j.family in ("hlo", "games", "mpe")) < 1000


def test_gpu_training_rows_compare_wall_time():
    """On a GPU the device does the work: the training ratio is of wall time, not CPU-seconds."""
    from benchmarks.jobs import _train_rows

    doc = {
        "algo": "pqn_vdn",
        "env": {"alem": "mpe/simple_spread-v0"},
        "num_envs": 128,
        "seeds": 2,
        "env_steps_per_seed": 100,
        "ratio": 2.0,
        "ratio_cpu": 0.5,
        "late_return_per_agent": {"alem": -20.0, "jaxmarl": -21.0},
        "alem": {"steps_per_s": 4.0, "steps_per_cpu_s": 1.0, "compile_s": 1.0},
        "jaxmarl": {"steps_per_s": 2.0, "steps_per_cpu_s": 2.0, "compile_s": 1.0},
    }
    [gpu] = _train_rows({**doc, "machine": {"jax_backend": "gpu"}})
    [cpu] = _train_rows({**doc, "machine": {"jax_backend": "cpu"}})
    assert (gpu["ratio"], gpu["alem"], gpu["env"]) == (2.0, 4.0, "PQN-VDN on mpe/simple_spread-v0")
    assert (cpu["ratio"], cpu["alem"]) == (0.5, 1.0)


def test_no_job_runs_past_the_runs_budget(tmp_path, monkeypatch):
    """The GPU script has 450 s: each job's limit is cut to what is left, none starts with < 10 s."""
    import time

    ra = _module()
    seen = []

    def fake_run(argv, limit):
        seen.append(limit)
        raise subprocess.TimeoutExpired(argv, limit)

    monkeypatch.setattr(ra, "_run_group", fake_run)
    job = ra.Job("long", "games", "none", ["-c", "pass"], lambda d: [], None, 900.0)
    rec = ra.run_job(job, tmp_path, deadline=time.monotonic() + 100)
    assert rec["status"] == "timeout" and 90 < seen[0] <= 100
    rec = ra.run_job(job, tmp_path, deadline=time.monotonic() + 5)
    assert rec["status"] == "skipped" and "budget" in rec["reason"] and len(seen) == 1


def test_gpu_mode_refuses_a_machine_without_gpu(tmp_path):
    proc = subprocess.run(
        [*COMMAND, "--device", "gpu", "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"JAX_PLATFORMS": "cpu", "PATH": ""},
    )
    assert proc.returncode != 0 and "needs a GPU backend" in proc.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--reps", "0"], "argument --reps: must be an integer >= 1, got 0"),
        (["--budget-s", "-5"], "argument --budget-s: must be a number of seconds > 0, got -5.0"),
        (["--jaxmarl-ippo", "{tmp}/none.py"], "argument --jaxmarl-ippo: no file {tmp}/none.py"),
        (
            ["--out-dir", "/proc/alem-none/out"],
            "cannot create /proc/alem-none/out: No such file or directory",
        ),
    ],
)
def test_bad_arguments_are_one_line_before_any_job(tmp_path, capsys, args, said):
    from benchmarks import run_all

    with pytest.raises(SystemExit) as e:
        run_all.main(["--quick", "--only", "hlo", *(a.format(tmp=tmp_path) for a in args)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2 and err.endswith(f"error: {said.format(tmp=tmp_path)}")
    assert list(tmp_path.iterdir()) == []
