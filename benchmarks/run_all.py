"""Every family against its reference in one run: JSON plus the markdown table of benchmarks/speed.md.

::

    python -m benchmarks.run_all                       # the full CPU table (about an hour on 2 cores)
    python -m benchmarks.run_all --quick               # a smoke run (tiny sizes; the test suite runs it)
    python -m benchmarks.run_all --device gpu          # the prepared GPU script: N = 65536 and 1M, < 8 min
    python -m benchmarks.run_all --only games mpe --jaxmarl-ippo JaxMARL/baselines/IPPO/ippo_ff_mpe.py

Each comparison is a *job*: one of the existing benchmark CLIs (``throughput.py`` with a
``--reference``, ``references/pogema.py``, ``train_throughput.py``) run in its own subprocess
with a time limit, writing its own JSON. A job that times out, crashes or whose reference is not
installed is recorded with the reason (``status``: ``ok``, ``skipped``, ``error``, ``timeout``)
and the run goes on: nothing hangs, nothing is silently left out. Inside each job alem and the
reference alternate repetitions (ABBA), so the ratios come from one run on one machine; the table
reports medians, compile times (alem's first call vs the reference's), the target of each ratio
and whether it is met, and the machine with its load average before and after.

Output (``--out-dir``, default ``benchmarks/results/run_all-<date>``): ``jobs/<name>.json`` per
job, ``results.json`` (every job's JSON, the table rows, the machine) and ``table.md``.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alem.cli import ArgumentParser, refuse_bad_args
from benchmarks.harness import machine
from benchmarks.jobs import GPU_TARGETS, TARGETS, Job, jobs_for

HERE = Path(__file__).resolve().parent


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _run_group(argv: list[str], limit: float) -> subprocess.CompletedProcess:
    """Run ``argv`` in its own process group; past ``limit`` seconds the whole group is killed
    (benchmark CLIs start worker processes of their own) and ``TimeoutExpired`` is raised."""
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE.parent,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run_job(
    job: Job, folder: Path, deadline: float | None = None, targets: dict[tuple[str, str], float] = TARGETS
) -> dict[str, Any]:
    """Run one job in a subprocess; never raises, never waits past its time limit."""
    out = folder / f"{job.name}.json"
    record: dict[str, Any] = {"name": job.name, "family": job.family, "reference": job.reference}
    if job.skip:
        return {**record, "status": "skipped", "reason": job.skip, "rows": []}
    limit = job.timeout_s
    if deadline is not None:
        left = deadline - time.monotonic()
        if left < 10:
            return {**record, "status": "skipped", "reason": "no time left in the run's budget", "rows": []}
        limit = min(limit, left)
    argv = [sys.executable, *(a.replace("{out}", str(out)) for a in job.argv)]
    start = time.monotonic()
    try:
        proc = _run_group(argv, limit)
    except subprocess.TimeoutExpired:
        return {
            **record,
            "status": "timeout",
            "reason": f"stopped after {limit:.0f} s (time limit)",
            "rows": [],
        }
    record["wall_s"] = round(time.monotonic() - start, 1)
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {
            **record,
            "status": "error",
            "reason": f"exit {proc.returncode}: {' | '.join(tail)}",
            "rows": [],
        }
    doc = json.loads(out.read_text())
    try:
        rows = job.rows(doc)
    except (KeyError, TypeError, ValueError) as e:
        return {**record, "status": "error", "reason": f"unreadable result: {e!r}", "rows": []}
    for row in rows:
        # The targets are set for full-size batches (N >= 1024); smoke runs and small N have none.
        target = (
            targets.get((row["family"], row["reference"]))
            if row["N"] >= 1024 or row["family"] == "train"
            else None
        )
        row["target"] = target
        row["met"] = None if target is None or row["ratio"] is None else bool(row["ratio"] >= target)
    return {**record, "status": "ok", "rows": rows}


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return f"{x:.{digits}g}" if abs(x) >= 1000 else f"{x:.2f}"
    return str(x)


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"Run {m['date']} on {m.get('cpu_model')} ({m.get('cpu_count_usable')} usable CPUs), JAX "
        f"{m['jax_version']} ({m['jax_backend']}, {m['device_kind']}), Python {m['python_version']}; "
        f"load average before {result['load_before']}, after {result['load_after']}; mode {result['mode']}.",
        "",
        "| family | env | N | alem env-steps/s | alem compile (s) | reference | reference env-steps/s "
        "| ref. first call (s) | ratio | target | met | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for job in result["jobs"]:
        for r in job["rows"]:
            met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
            lines.append(
                f"| {r['family']} | {r['env']} | {r['N']} | {_fmt(r['alem'])} | {_fmt(r['alem_compile_s'])} "
                f"| {r['reference']} | {_fmt(r['ref'])} | {_fmt(r['ref_first_call_s'])} | {_fmt(r['ratio'])} "
                f"| {_fmt(r['target'])} | {met} | {r['note']} |"
            )
        if job["status"] != "ok":
            lines.append(
                f"| {job['family']} | {job['name']} | - | - | - | {job['reference']} | - | - | - | - | - "
                f"| {job['status']}: {job['reason']} |"
            )
    return "\n".join(lines) + "\n"


def _python_ref_main(
    env_id: str, reference: str, ref_n: str, ns: str, steps: str, reps: str, out: str
) -> None:
    """Job body for Python-loop references: alem alone at every N, then alem vs the reference at ``ref_n``."""
    from benchmarks import throughput

    big = [n for n in (int(x) for x in ns.split(",") if x) if n != int(ref_n)]
    doc = throughput.run_benchmark(env_id, [int(ref_n)], int(steps), int(reps), reference)
    if big:
        alone = throughput.run_benchmark(env_id, big, int(steps), int(reps), "none")
        doc["results"] += alone["results"]
    Path(out).write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--_python-ref"]:
        _python_ref_main(*argv[1:])
        return {}
    p = ArgumentParser(prog="python -m benchmarks.run_all", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one repetition")
    p.add_argument(
        "--device", choices=["cpu", "gpu"], default="cpu", help="gpu: the large-N script (< 8 min)"
    )
    p.add_argument("--reps", type=int, default=5, help="alternating repetitions per comparison (default 5)")
    p.add_argument(
        "--only",
        nargs="+",
        choices=[
            "hlo",
            "games",
            "mpe",
            "lbf",
            "rware",
            "pathfinding",
            "train",
            "overcooked",
            "smax",
            "hanabi",
        ],
    )
    p.add_argument("--jaxmarl-ippo", type=Path, help="baselines/IPPO/ippo_ff_mpe.py of a JaxMARL checkout")
    p.add_argument(
        "--jaxmarl-pqn-vdn", type=Path, help="baselines/QLearning/pqn_vdn_ff.py of a JaxMARL checkout"
    )
    p.add_argument("--out-dir", type=Path, help="default: benchmarks/results/run_all-<UTC date and time>")
    p.add_argument("--budget-s", type=float, help="stop starting jobs after this many seconds (gpu: 450)")
    args = p.parse_args(argv)
    refuse_bad_args(
        p,
        [
            ("--reps", args.reps, args.reps >= 1, "an integer >= 1"),
            (
                "--budget-s",
                args.budget_s,
                args.budget_s is None or args.budget_s > 0,
                "a number of seconds > 0",
            ),
        ],
    )
    for option in ("jaxmarl_ippo", "jaxmarl_pqn_vdn"):
        path = getattr(args, option)
        if path is not None and not Path(path).is_file():
            p.error(f"argument --{option.replace('_', '-')}: no file {path}")

    if args.quick and args.device == "gpu":
        p.error("--quick and --device gpu are separate modes; pick one")
    if args.device == "gpu":
        import jax

        if jax.default_backend() != "gpu":
            p.error(
                f"--device gpu needs a GPU backend; JAX has {jax.default_backend()!r} (install jax[cuda12])"
            )
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    folder = args.out_dir or HERE / "results" / f"run_all-{stamp}"
    jobs_dir = folder / "jobs"
    # A run folder belongs to the run that made it: refuse any non-empty one before writing.
    existing = sorted(folder.iterdir()) if folder.is_dir() else []
    if existing or (folder.exists() and not folder.is_dir()):
        what = existing[0].name if existing else "a file"
        p.error(f"{folder} already holds results ({what}, ...); choose a new --out-dir")
    try:
        jobs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        p.error(f"cannot create {folder}: {e.strerror}")
    budget = args.budget_s or (450.0 if args.device == "gpu" else None)
    deadline = None if budget is None else time.monotonic() + budget
    mode = "quick" if args.quick else args.device
    result: dict[str, Any] = {"benchmark": "run_all", "mode": mode, "load_before": _load(), "jobs": []}
    for job in jobs_for(args):
        print(f"[run_all] {job.name} ...", file=sys.stderr, flush=True)
        rec = run_job(job, jobs_dir, deadline, GPU_TARGETS if args.device == "gpu" else TARGETS)
        print(f"[run_all] {job.name}: {rec['status']} {rec.get('reason', '')}", file=sys.stderr, flush=True)
        result["jobs"].append(rec)
    result["load_after"] = _load()
    result["machine"] = machine()
    (folder / "results.json").write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    table = markdown(result)
    (folder / "table.md").write_text(table)
    print(table)
    return result


if __name__ == "__main__":
    main()
