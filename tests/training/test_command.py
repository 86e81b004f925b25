"""``python -m alem.train`` (alem/training/command.py) as an unlucky user meets it: two resumes of
one run at once, an empty ``resume=``, a run on a read-only filesystem, a torn ``config.yaml``.
Each case was a lost file or a traceback once; each is one line and exit status 2 now."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from alem.errors import TrainingInterrupted
from tests.tiny_runs import TINY_RUN

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("test_command")]  # CLI processes

CPU = {**os.environ, "JAX_PLATFORMS": "cpu", "HYDRA_FULL_ERROR": "0"}
#: 16 chunks of one update: long enough that two resumes started together overlap.
RUN = ["env=coordination", *TINY_RUN, "algo.total_steps=512", "chunk_updates=1"]


def _cli(prog: str, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", prog, *args], cwd=cwd, capture_output=True, text=True, env=CPU, timeout=timeout
    )


def _one_line(proc: subprocess.CompletedProcess, *words: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-3000:]
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory) -> Path:
    """A run stopped after chunk 2 of 16 (as a kill after a checkpoint leaves it)."""
    from alem.train import run

    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config", overrides=[*RUN, "stop_after_chunks=2"])
    run_dir = tmp_path_factory.mktemp("stopped") / "run"
    with pytest.raises(TrainingInterrupted):
        run(cfg, run_dir)
    return run_dir


def _copy(run_dir: Path, to: Path) -> Path:
    shutil.copytree(run_dir, to, symlinks=True)
    return to


def test_two_resumes_of_one_run_at_once_one_finishes_it_the_other_is_refused(
    stopped_run, tmp_path, fault_report
):
    run_dir = _copy(stopped_run, tmp_path / "run")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "alem.train", f"resume={run_dir}"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=CPU,
        )
        for _ in range(2)
    ]
    done = [subprocess.CompletedProcess(p.args, p.wait(300), *p.communicate()) for p in procs]
    assert sorted(p.returncode for p in done) == [0, 2], [p.stderr[-2000:] for p in done]
    _one_line(next(p for p in done if p.returncode == 2), f"resume={run_dir}", "in use by another process")
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["chunk"] for r in rows] == list(range(16))  # every chunk's row, once
    assert json.loads((run_dir / "results.json").read_text())["resumed_from_chunk"] == 2
    fault_report(faults=1)


@pytest.mark.parametrize("prog", ["alem.train", "alem.evaluate"])
def test_an_empty_resume_or_output_dir_is_refused_not_a_new_run(prog, tmp_path, fault_report):
    """``resume=$RUN`` with RUN unset used to start a new full run (a new evaluation)."""
    for arg in ("resume=", "output_dir="):
        _one_line(_cli(prog, arg, cwd=tmp_path, timeout=120), f"{arg} is empty")
    assert not any(tmp_path.iterdir())  # no outputs/ folder
    fault_report(faults=2)


def test_a_resume_on_a_read_only_filesystem_is_one_line_and_changes_nothing(
    stopped_run, tmp_path, fault_report
):
    run_dir = _copy(stopped_run, tmp_path / "run")
    probe = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            f"mount --bind {tmp_path} {tmp_path} && mount -o remount,bind,ro {tmp_path}",
        ],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"no read-only bind mount here (unshare -rm: {probe.stderr.decode()[:200]})")
    before = _snapshot(run_dir)
    mount = f"mount --bind {run_dir} {run_dir} && mount -o remount,bind,ro {run_dir} && "
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount + f"exec {sys.executable} -m alem.train resume={run_dir}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=CPU,
        timeout=300,
    )
    _one_line(proc, f"resume={run_dir} cannot be written (a read-only filesystem)")
    assert _snapshot(run_dir) == before
    fault_report(faults=1)


@pytest.mark.parametrize(
    ("cut", "words"),
    [
        (
            lambda text: text[: text.index("tags: []") + 7],
            ("its config.yaml cannot be read, torn",),
        ),  # mid-line
        (lambda text: "\n".join(text.splitlines()[:3]) + "\n", ("its config.yaml has no",)),  # whole lines
    ],
)
def test_a_torn_config_yaml_is_one_line_on_resume(stopped_run, tmp_path, cut, words, fault_report):
    run_dir = _copy(stopped_run, tmp_path / "run")
    config = run_dir / "config.yaml"
    config.write_text(cut(config.read_text()))
    before = _snapshot(run_dir)
    _one_line(_cli("alem.train", f"resume={run_dir}", cwd=tmp_path), f"resume={run_dir}", *words)
    assert _snapshot(run_dir) == before
    fault_report(faults=1)


def test_a_multirun_writes_a_summary_with_a_row_per_job(tmp_path):
    sweep_dir = tmp_path / "sweep"
    proc = _cli(
        "alem.train",
        "-m",
        "env=coordination",
        *(a for a in TINY_RUN if not a.startswith("algo=")),
        "algo=ippo,mappo",
        f"hydra.sweep.dir={sweep_dir}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Multirun summary written to {sweep_dir / 'summary.md'}" in proc.stdout
    summary = json.loads((sweep_dir / "summary.json").read_text())
    assert summary["separating"] == ["algo.name"]
    assert [(j["job"], j["options"]["algo.name"], j["status"]) for j in summary["jobs"]] == [
        ("0", "ippo", "finished"),
        ("1", "mappo", "finished"),
    ]
    for job in summary["jobs"]:
        res = json.loads((sweep_dir / job["job"] / "results.json").read_text())
        assert job["trained"] == pytest.approx(sum(map(sum, res["trained_return_per_seed"])) / 2)


def test_a_pathfinding_run_logs_pogemas_metrics_not_only_shaped_returns(tmp_path):
    """Training logs and the final evaluation used to show only the shaped return on pathfinding:
    they carry CSR, ISR, SoC and makespan as means over finished episodes (the env's metrics)."""
    run_dir = tmp_path / "run"
    proc = _cli(
        "alem.train",
        "env=pathfinding_follow",
        "env.kwargs.max_steps=16",
        *(a for a in TINY_RUN if not a.startswith(("algo.num_steps", "eval.num_steps"))),
        "algo.num_steps=16",
        "eval.num_steps=16",
        f"output_dir={run_dir}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    for row in rows:
        assert (
            0 <= row["CSR"] <= row["ISR"] <= 1 and 16 <= row["SoC"] <= 16 * 16 and 1 <= row["makespan"] <= 16
        )
    res = json.loads((run_dir / "results.json").read_text())
    for name in ("CSR", "ISR", "SoC", "makespan"):
        assert f"trained_{name}_mean" in res and f"random_{name}_mean" in res
        assert f"  {name}: trained " in proc.stdout
