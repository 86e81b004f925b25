"""Every family against its reference in one run: JSON plus the markdown table of benchmarks/README.md.

::

    python benchmarks/run_all.py                       # the full CPU table (about an hour on 2 cores)
    python benchmarks/run_all.py --quick               # a smoke run (tiny sizes; the test suite runs it)
    python benchmarks/run_all.py --device gpu          # the prepared GPU script: N = 65536 and 1M, < 8 min
    python benchmarks/run_all.py --only games mpe --jaxmarl-ippo JaxMARL/baselines/IPPO/ippo_ff_mpe.py

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

import argparse
import dataclasses
import datetime
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: The targets of the hot-loop issue: (family, reference) -> minimum ratio alem / reference.
TARGETS = {
    ("games", "pgx"): 1.0,
    ("mpe", "jaxmarl"): 2.0,
    ("pathfinding-pool", "pogema"): 30.0,
    ("pathfinding-generated", "pogema"): 10.0,
    ("train", "jaxmarl"): 1.3,
}


@dataclasses.dataclass
class Job:
    """One comparison: a benchmark CLI run in a subprocess that writes JSON to ``{out}``."""

    name: str
    family: str
    reference: str
    argv: list[str]  # after ``python``; "{out}" is replaced by the job's JSON path
    rows: Callable[[dict[str, Any]], list[dict[str, Any]]]  # JSON -> table rows
    skip: str | None = None  # reason the job cannot run here (reference missing, ...)
    timeout_s: float = 900.0


# ------------------------------------------------------------------------------------ parsing results
def _throughput_rows(family: str, reference: str) -> Callable:
    """Rows of a ``throughput.py`` JSON, one per N. A Python-loop reference (cost linear in N) is
    measured at one small N only; the alem rows at other N are compared with that rate (noted)."""

    def rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
        measured = [r for r in doc["results"] if "reference" in r]
        out = []
        for r in doc["results"]:
            ref_row = r if "reference" in r else (measured[0] if measured else None)
            ref = None if ref_row is None else ref_row["reference"]
            row = {
                "family": family,
                "env": doc["env_id"],
                "N": r["N"],
                "alem": r["alem"]["steps_per_s"],
                "alem_compile_s": r["alem"]["compile_s"],
                "reference": reference,
                "ref": None if ref is None else ref["steps_per_s"],
                "ref_first_call_s": None if ref is None else ref.get("first_call_s"),
                "note": "" if ref_row in (None, r) else f"reference measured at N = {ref_row['N']}",
            }
            row["ratio"] = None if row["ref"] is None else row["alem"] / row["ref"]
            out.append(row)
        return out

    return rows


def _pogema_rows(family: str) -> Callable:
    def rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
        cfg = doc["config"]
        ref = doc.get("pogema")
        env = f"{cfg['size']}x{cfg['size']}, {cfg['agents']} agents, " + (
            f"pool of {cfg['map_pool']} maps" if cfg["map_pool"] else "maps generated in jit"
        )
        return [
            {
                "family": family,
                "env": env,
                "N": r["N"],
                "alem": r["alem_env_steps_per_s"],
                "alem_compile_s": r["alem_compile_s"],
                "reference": "pogema",
                "ref": None if ref is None else ref["env_steps_per_s"],
                "ref_first_call_s": None,
                "ratio": r.get("ratio_vs_pogema"),
                "note": f"POGEMA on {ref['num_envs']} envs, one at a time"
                if ref
                else doc.get("pogema_error") or "",
            }
            for r in doc["results"]
        ]

    return rows


def _train_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "family": "train",
            "env": f"IPPO on {doc['env']['alem']}",
            "N": doc["num_envs"],
            "alem": doc["alem"]["steps_per_cpu_s"],
            "alem_compile_s": doc["alem"]["compile_s"],
            "reference": "jaxmarl",
            "ref": doc["jaxmarl"]["steps_per_cpu_s"],
            "ref_first_call_s": doc["jaxmarl"]["compile_s"],
            "ratio": doc["ratio_cpu"],
            "note": (
                f"env-steps per CPU-second, {doc['seeds']} seeds x {doc['env_steps_per_seed']} steps; "
                f"wall ratio {doc['ratio']:.2f}; late return/agent alem "
                f"{doc['late_return_per_agent']['alem']:.2f}, JaxMARL {doc['late_return_per_agent']['jaxmarl']:.2f}"
            ),
        }
    ]


# ------------------------------------------------------------------------------------ the job lists
def _missing(module: str, pip: str) -> str | None:
    import importlib.util

    return None if importlib.util.find_spec(module) else f"{module} is not installed (pip install {pip})"


def _pogema_missing() -> str | None:
    sys.path.insert(0, str(HERE / "references"))
    try:
        import pogema as ref  # benchmarks/references/pogema.py, not the package
    finally:
        sys.path.pop(0)
    python = ref.pogema_python()
    return None if Path(python).exists() else f"no POGEMA venv at {python}: run scripts/pogema_fixtures.py"


def _throughput(
    name: str,
    family: str,
    env_id: str,
    ns: Sequence[int],
    steps: int,
    reps: int,
    reference: str,
    skip=None,
    timeout_s: float = 900.0,
) -> Job:
    """alem and a JAX reference (or none), interleaved at every N."""
    argv = [
        str(HERE / "throughput.py"),
        "--env",
        env_id,
        "--num-envs",
        *map(str, ns),
        "--steps",
        str(steps),
        "--reps",
        str(reps),
        "--reference",
        reference,
        "--out",
        "{out}",
    ]
    return Job(name, family, reference, argv, _throughput_rows(family, reference), skip, timeout_s)


def _python_ref_job(
    name: str,
    family: str,
    env_id: str,
    alem_ns: Sequence[int],
    ref_n: int,
    steps: int,
    reps: int,
    reference: str,
    skip=None,
    timeout_s: float = 900.0,
) -> Job:
    """A Python-loop reference (cost linear in N): interleaved with alem at ``ref_n``, then alem
    alone at ``alem_ns`` (compared with the reference's rate at ``ref_n``)."""
    argv = [
        str(HERE / "run_all.py"),
        "--_python-ref",
        env_id,
        reference,
        str(ref_n),
        ",".join(map(str, alem_ns)),
        str(steps),
        str(reps),
        "{out}",
    ]
    return Job(name, family, reference, argv, _throughput_rows(family, reference), skip, timeout_s)


def _pogema_job(
    name: str, family: str, pool: int, ns: Sequence[int], steps: int, reps: int, quick: bool
) -> Job:
    argv = [
        str(HERE / "references" / "pogema.py"),
        "--size",
        "8" if quick else "32",
        "--agents",
        "4" if quick else "64",
        "--num-envs",
        *map(str, ns),
        "--steps",
        str(steps),
        "--max-steps",  # episodes end (and reset) inside the timed rollout: half its length
        str(max(1, steps // 2)),
        "--reps",
        str(reps),
        "--pogema-envs",
        "1" if quick else "4",
        "--out",
        "{out}",
    ]
    if pool:
        argv += ["--map-pool", str(pool)]
    return Job(name, family, "pogema", argv, _pogema_rows(family), None, 1800.0)


def jobs_for(args: argparse.Namespace) -> list[Job]:
    """The jobs of a run: ``--quick`` (smoke), ``--device gpu`` (large N, alem-first) or the full CPU table."""
    pgx = _missing("pgx", "pgx==2.6.0")
    spiel = _missing("pyspiel", "open_spiel")
    jaxmarl = _missing("jaxmarl", "jaxmarl==0.2.0")
    mpe2 = _missing("mpe2", "mpe2")
    lbf = _missing("lbforaging", "lbforaging")
    pogema = _pogema_missing()
    r = args.reps
    jobs: list[Job] = []
    if args.quick:
        jobs += [
            _throughput("games-tic_tac_toe-pgx", "games", "tic_tac_toe-v0", [16], 8, 1, "pgx", pgx),
            _python_ref_job(
                "games-kuhn_poker-openspiel", "games", "kuhn_poker-v0", [16], 4, 8, 1, "openspiel", spiel
            ),
            _throughput(
                "mpe-simple_spread-jaxmarl", "mpe", "mpe/simple_spread-v0", [16], 8, 1, "jaxmarl", jaxmarl
            ),
            _python_ref_job(
                "mpe-simple_spread-mpe2", "mpe", "mpe/simple_spread-v0", [16], 2, 8, 1, "mpe2", mpe2
            ),
            _python_ref_job("lbf-lbf-lbforaging", "lbf", "lbf-v0", [16], 2, 8, 1, "lbforaging", lbf),
            # runs without POGEMA too (alem alone; the JSON says why the ratio is missing)
            _pogema_job("pathfinding-pool-pogema", "pathfinding-pool", 4, [4], 8, 1, quick=True),
        ]
    elif args.device == "gpu":
        big = [65536, 1 << 20]
        for env_id in ("tic_tac_toe-v0", "connect_four-v0", "kuhn_poker-v0", "leduc_holdem-v0"):
            jobs.append(
                _throughput(
                    f"games-{env_id[:-3]}-pgx", "games", env_id, big, 32, 3, "pgx", pgx, timeout_s=150
                )
            )
        jobs.append(
            _throughput("games-liars_dice", "games", "liars_dice-v0", big, 32, 3, "none", timeout_s=100)
        )
        jobs.append(
            _throughput(
                "mpe-simple_spread-jaxmarl",
                "mpe",
                "mpe/simple_spread-v0",
                big,
                32,
                3,
                "jaxmarl",
                jaxmarl,
                timeout_s=150,
            )
        )
        jobs.append(
            _throughput(
                "pathfinding-default", "pathfinding", "pathfinding-v0", big, 32, 3, "none", timeout_s=150
            )
        )
    else:
        for env_id in ("tic_tac_toe-v0", "connect_four-v0", "kuhn_poker-v0", "leduc_holdem-v0"):
            jobs.append(
                _throughput(f"games-{env_id[:-3]}-pgx", "games", env_id, [1024, 16384], 128, r, "pgx", pgx)
            )
        for env_id in (
            "tic_tac_toe-v0",
            "connect_four-v0",
            "kuhn_poker-v0",
            "leduc_holdem-v0",
            "liars_dice-v0",
        ):
            jobs.append(
                _python_ref_job(
                    f"games-{env_id[:-3]}-openspiel",
                    "games",
                    env_id,
                    [16384],
                    1024,
                    128,
                    max(3, r // 2),
                    "openspiel",
                    spiel,
                )
            )
        for env_id in ("mpe/simple_spread-v0", "mpe/simple_tag-v0"):
            jobs.append(
                _throughput(
                    f"mpe-{env_id[4:-3]}-jaxmarl", "mpe", env_id, [1024, 8192], 128, r, "jaxmarl", jaxmarl
                )
            )
            jobs.append(
                _python_ref_job(f"mpe-{env_id[4:-3]}-mpe2", "mpe", env_id, [8192], 64, 128, 3, "mpe2", mpe2)
            )
        jobs.append(
            _python_ref_job("lbf-lbf-lbforaging", "lbf", "lbf-v0", [16384], 64, 128, 3, "lbforaging", lbf)
        )
        jobs.append(
            _pogema_job("pathfinding-pool-pogema", "pathfinding-pool", 64, [1024], 128, r, quick=False)
        )
        jobs.append(
            _pogema_job(
                "pathfinding-generated-pogema", "pathfinding-generated", 0, [1024], 128, r, quick=False
            )
        )
        for job in jobs[-2:]:
            job.skip = pogema
    if args.jaxmarl_ippo or not args.quick and args.device != "gpu":
        script = args.jaxmarl_ippo
        skip = jaxmarl or (
            None if script else "no JaxMARL checkout: pass --jaxmarl-ippo baselines/IPPO/ippo_ff_mpe.py"
        )
        steps = 20480 if args.quick else 61440
        argv = [
            str(HERE / "train_throughput.py"),
            "--jaxmarl-ippo",
            str(script),
            "--total-steps",
            str(steps),
            "--seeds",
            "2",
            "--reps",
            str(1 if args.quick else r),
            "--timeout",
            "600",
            "--out",
            "{out}",
        ]
        jobs.append(Job("train-ippo-jaxmarl", "train", "jaxmarl", argv, _train_rows, skip, 3600.0))
    if args.only:
        jobs = [j for j in jobs if j.family.split("-")[0] in args.only]
    return jobs


# ------------------------------------------------------------------------------------ running
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


def run_job(job: Job, folder: Path, deadline: float | None = None) -> dict[str, Any]:
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
            TARGETS.get((row["family"], row["reference"]))
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
    sys.path.insert(0, str(HERE))
    import throughput

    big = [n for n in (int(x) for x in ns.split(",") if x) if n != int(ref_n)]
    doc = throughput.run_benchmark(env_id, [int(ref_n)], int(steps), int(reps), reference)
    if big:
        alone = throughput.run_benchmark(env_id, big, int(steps), int(reps), "none")
        doc["results"] += alone["results"]
    Path(out).write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")


def _machine() -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import throughput

    return throughput._machine()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--_python-ref"]:
        _python_ref_main(*argv[1:])
        return {}
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one repetition")
    p.add_argument(
        "--device", choices=["cpu", "gpu"], default="cpu", help="gpu: the large-N script (< 8 min)"
    )
    p.add_argument("--reps", type=int, default=5, help="alternating repetitions per comparison (default 5)")
    p.add_argument("--only", nargs="+", choices=["games", "mpe", "lbf", "pathfinding", "train"])
    p.add_argument("--jaxmarl-ippo", type=Path, help="baselines/IPPO/ippo_ff_mpe.py of a JaxMARL checkout")
    p.add_argument("--out-dir", type=Path, help="default: benchmarks/results/run_all-<UTC date and time>")
    p.add_argument("--budget-s", type=float, help="stop starting jobs after this many seconds (gpu: 450)")
    args = p.parse_args(argv)
    if args.reps < 1:
        p.error(f"--reps must be >= 1, got {args.reps}")
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
    jobs_dir.mkdir(parents=True, exist_ok=True)
    budget = args.budget_s or (450.0 if args.device == "gpu" else None)
    deadline = None if budget is None else time.monotonic() + budget
    mode = "quick" if args.quick else args.device
    result: dict[str, Any] = {"benchmark": "run_all", "mode": mode, "load_before": _load(), "jobs": []}
    for job in jobs_for(args):
        print(f"[run_all] {job.name} ...", file=sys.stderr, flush=True)
        rec = run_job(job, jobs_dir, deadline)
        print(f"[run_all] {job.name}: {rec['status']} {rec.get('reason', '')}", file=sys.stderr, flush=True)
        result["jobs"].append(rec)
    result["load_after"] = _load()
    result["machine"] = _machine()
    (folder / "results.json").write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    table = markdown(result)
    (folder / "table.md").write_text(table)
    print(table)
    return result


if __name__ == "__main__":
    main()
