"""The comparisons of :mod:`benchmarks.run_all`, declared as data: one table of job specs per
mode (``quick``, ``cpu``, ``gpu``), and the kinds of job they name.

A *kind* says which benchmark CLI runs the comparison and how its JSON becomes table rows:

- ``throughput``: :mod:`benchmarks.throughput` with a JAX reference (or ``none``), alem and the
  reference interleaved at every N;
- ``python_ref``: a Python-loop reference (cost linear in N), interleaved with alem at ``ref_n``
  only, then alem alone at ``ns`` (compared with the reference's rate at ``ref_n``);
- ``pogema``: :mod:`benchmarks.references.pogema` (alem pathfinding vs POGEMA);
- ``train``: :mod:`benchmarks.train_throughput` (IPPO or PQN-VDN, alem vs JaxMARL's script);
- ``hlo``: :mod:`benchmarks.hlo`, the compiled programs' counts on this machine's backend (its JSON
  only: no table rows).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Job", "Spec", "TABLES", "TARGETS", "GPU_TARGETS", "jobs_for"]

#: The targets of the hot-loop issue: (family, reference) -> minimum ratio alem / reference.
TARGETS = {
    ("games", "pgx"): 1.0,
    ("mpe", "jaxmarl"): 2.0,
    ("pathfinding-pool", "pogema"): 30.0,
    ("pathfinding-generated", "pogema"): 10.0,
    ("train", "jaxmarl"): 1.3,
    ("smax", "jaxmarl"): 1.5,
}

#: The GPU issue's targets (``--device gpu``): alem >= 1.5x the reference at every N.
GPU_TARGETS = {
    ("games", "pgx"): 1.5,
    ("mpe", "jaxmarl"): 1.5,
    ("train", "jaxmarl"): 1.5,
}

#: reference -> (module to find, what to pip install) for the "not installed" reasons.
REFERENCE_PACKAGES = {
    "pgx": ("pgx", "pgx==2.6.0"),
    "openspiel": ("pyspiel", "open_spiel"),
    "jaxmarl": ("jaxmarl", "jaxmarl==0.2.0"),
    "mpe2": ("mpe2", "mpe2"),
    "lbforaging": ("lbforaging", "lbforaging"),
    "jumanji": ("jumanji", "jumanji==1.1.2"),
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


@dataclasses.dataclass(frozen=True)
class Spec:
    """One row of a job table. ``reps``: a count, ``"R"`` (``--reps``) or ``"R/2"`` (half of it, at
    least 3); ``name`` defaults to ``<family>-<env>-<reference>``."""

    kind: str  # throughput | python_ref | pogema | hlo
    family: str
    env_id: str
    reference: str
    ns: tuple[int, ...]
    steps: int
    reps: int | str = "R"
    ref_n: int = 0  # python_ref: the N of the interleaved comparison
    map_pool: int = 0  # pogema: maps drawn from a pool of this many (0: generated in jit)
    quick: bool = False  # pogema: smoke sizes, and run without POGEMA (alem alone)
    timeout_s: float = 900.0
    name: str = ""


def _short(env_id: str) -> str:
    return env_id.split("/")[-1].rsplit("-v", 1)[0]


GAMES = ("tic_tac_toe-v0", "connect_four-v0", "kuhn_poker-v0", "leduc_holdem-v0")
BIG = (65536, 1 << 20)
GPU_NS = (4096, *BIG)  # the GPU issue's sizes: 4,096 is where a step is bound by launches and syncs
SMAX_IDS = ("smax_2s3z-v0", "smax_smacv2_10_units-v0")

#: mode -> the comparisons of a run in that mode, in order.
TABLES: dict[str, list[Spec]] = {
    "quick": [
        Spec("throughput", "games", "tic_tac_toe-v0", "pgx", (16,), 8, 1),
        Spec("python_ref", "games", "kuhn_poker-v0", "openspiel", (16,), 8, 1, ref_n=4),
        Spec("throughput", "mpe", "mpe/simple_spread-v0", "jaxmarl", (16,), 8, 1),
        Spec("python_ref", "mpe", "mpe/simple_spread-v0", "mpe2", (16,), 8, 1, ref_n=2),
        Spec("python_ref", "lbf", "lbf-v0", "lbforaging", (16,), 8, 1, ref_n=2),
        Spec("pogema", "pathfinding-pool", "", "pogema", (4,), 8, 1, map_pool=4, quick=True),
    ],
    # In priority order: jobs that would start after the run's budget are skipped. The training
    # comparisons (given their JaxMARL scripts) come after the MPE rows (jobs_for).
    "gpu": [
        Spec("hlo", "hlo", "", "auto", (4096,), 1, 1, timeout_s=120, name="hlo-gpu"),
        *(Spec("throughput", "games", e, "pgx", GPU_NS, 32, 3, timeout_s=120) for e in GAMES),
        # chess holds ~50 KB per env (mask, planes): 1M envs would not fit, 65,536 does
        Spec("throughput", "games", "chess-v0", "pgx", GPU_NS[:2], 16, 3, timeout_s=90),
        *(
            Spec("throughput", "mpe", e, "jaxmarl", GPU_NS, 32, 3, timeout_s=120)
            for e in ("mpe/simple_spread-v0", "mpe/simple_tag-v0")
        ),
        Spec(
            "throughput",
            "overcooked",
            "overcooked_cramped_room-v0",
            "jaxmarl",
            GPU_NS[:2],
            32,
            3,
            timeout_s=90,
        ),
        Spec("throughput", "smax", "smax_2s3z-v0", "jaxmarl", GPU_NS[:2], 32, 3, timeout_s=90),
        Spec("throughput", "hanabi", "hanabi-v0", "jaxmarl", GPU_NS[:2], 32, 3, timeout_s=90),
        Spec("throughput", "lbf", "lbf-v0", "jumanji", GPU_NS[:2], 32, 3, timeout_s=90),
        Spec("throughput", "rware", "rware_tiny_4ag-v0", "jumanji", GPU_NS[:2], 32, 3, timeout_s=90),
        Spec(
            "throughput", "games", "liars_dice-v0", "none", BIG, 32, 3, timeout_s=60, name="games-liars_dice"
        ),
        Spec(
            "throughput",
            "pathfinding",
            "pathfinding-v0",
            "none",
            BIG[:1],
            32,
            3,
            timeout_s=60,
            name="pathfinding-default",
        ),
    ],
    "cpu": [
        *(Spec("throughput", "games", e, "pgx", (1024, 16384), 128) for e in GAMES),
        Spec("throughput", "games", "chess-v0", "pgx", (1024, 16384), 16, 3),
        *(
            Spec("python_ref", "games", e, "openspiel", (16384,), 128, "R/2", ref_n=1024)
            for e in (*GAMES, "liars_dice-v0")
        ),
        *(
            s
            for e in ("mpe/simple_spread-v0", "mpe/simple_tag-v0")
            for s in (
                Spec("throughput", "mpe", e, "jaxmarl", (1024, 8192), 128),
                Spec("python_ref", "mpe", e, "mpe2", (8192,), 128, 3, ref_n=64),
            )
        ),
        *(Spec("throughput", "smax", e, "jaxmarl", (1, 1024, 16384), 128) for e in SMAX_IDS),
        Spec("python_ref", "lbf", "lbf-v0", "lbforaging", (16384,), 128, 3, ref_n=64),
        Spec("pogema", "pathfinding-pool", "", "pogema", (1024,), 128, map_pool=64),
        Spec("pogema", "pathfinding-generated", "", "pogema", (1024,), 128),
    ],
}


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
    """On a GPU the ratio is of wall time (the device does the work); on CPU of env steps per
    CPU-second, the steadier measure on a shared machine."""
    gpu = doc.get("machine", {}).get("jax_backend") == "gpu"
    rate, ratio = ("steps_per_s", doc["ratio"]) if gpu else ("steps_per_cpu_s", doc["ratio_cpu"])
    late = doc["late_return_per_agent"]
    unit = "env-steps/s (wall)" if gpu else "env-steps per CPU-second"
    other = f"CPU-second ratio {doc['ratio_cpu']:.2f}" if gpu else f"wall ratio {doc['ratio']:.2f}"
    return [
        {
            "family": "train",
            "env": f"{doc.get('algo', 'ippo').upper().replace('_', '-')} on {doc['env']['alem']}",
            "N": doc["num_envs"],
            "alem": doc["alem"][rate],
            "alem_compile_s": doc["alem"]["compile_s"],
            "reference": "jaxmarl",
            "ref": doc["jaxmarl"][rate],
            "ref_first_call_s": doc["jaxmarl"]["compile_s"],
            "ratio": ratio,
            "note": (
                f"{unit}, {doc['seeds']} seeds x {doc['env_steps_per_seed']} steps; {other}; late return/agent "
                f"alem {late['alem']:.2f}, JaxMARL {late['jaxmarl']:.2f}"
            ),
        }
    ]


# ------------------------------------------------------------------------------------ specs -> jobs
def _missing(reference: str) -> str | None:
    """Why ``reference`` cannot run here (its package is not installed, no POGEMA venv), or None."""
    if reference == "pogema":
        from benchmarks.references import pogema

        python = pogema.pogema_python()
        return (
            None if Path(python).exists() else f"no POGEMA venv at {python}: run scripts/pogema_fixtures.py"
        )
    if reference not in REFERENCE_PACKAGES:
        return None
    module, pip = REFERENCE_PACKAGES[reference]
    return None if importlib.util.find_spec(module) else f"{module} is not installed (pip install {pip})"


def _reps(spec: Spec, reps: int) -> int:
    return {"R": reps, "R/2": max(3, reps // 2)}.get(spec.reps, spec.reps)  # type: ignore[arg-type]


def _job(spec: Spec, reps: int) -> Job:
    """The subprocess (argv after ``python``) and row parser of one spec."""
    r = str(_reps(spec, reps))
    name = spec.name or "-".join(
        [spec.family, _short(spec.env_id) if spec.env_id else "", spec.reference]
    ).replace("--", "-")
    ns = [str(n) for n in spec.ns]
    if spec.kind == "throughput":
        argv = ["-m", "benchmarks.throughput", "--env", spec.env_id, "--num-envs", *ns]
        argv += ["--steps", str(spec.steps), "--reps", r, "--reference", spec.reference, "--out", "{out}"]
        rows = _throughput_rows(spec.family, spec.reference)
    elif spec.kind == "python_ref":
        argv = ["-m", "benchmarks.run_all", "--_python-ref", spec.env_id, spec.reference, str(spec.ref_n)]
        argv += [",".join(ns), str(spec.steps), r, "{out}"]
        rows = _throughput_rows(spec.family, spec.reference)
    elif spec.kind == "hlo":  # the proxy's counts, compiled by this machine's backend (no table rows)
        argv = ["-m", "benchmarks.hlo", "--num-envs", *ns, "--out", "{out}"]  # its default envs
        rows = lambda doc: []
    elif spec.kind == "pogema":
        q = spec.quick
        argv = [
            "-m",
            "benchmarks.references.pogema",
            "--size",
            "8" if q else "32",
            "--agents",
            "4" if q else "64",
        ]
        argv += ["--num-envs", *ns, "--steps", str(spec.steps)]
        # episodes end (and reset) inside the timed rollout: half its length
        argv += ["--max-steps", str(max(1, spec.steps // 2)), "--reps", r, "--pogema-envs", "1" if q else "4"]
        argv += ["--out", "{out}"] + (["--map-pool", str(spec.map_pool)] if spec.map_pool else [])
        rows = _pogema_rows(spec.family)
    else:
        raise ValueError(f"unknown job kind {spec.kind!r}")
    if spec.kind == "hlo":  # its references: pgx for the games, jaxmarl for MPE
        skip = _missing("pgx") or _missing("jaxmarl")
    else:
        skip = None if spec.kind == "pogema" and spec.quick else _missing(spec.reference)
    timeout = 1800.0 if spec.kind == "pogema" else spec.timeout_s
    return Job(name, spec.family, spec.reference, argv, rows, skip, timeout)


def jobs_for(args: argparse.Namespace) -> list[Job]:
    """The jobs of a run: ``--quick`` (smoke), ``--device gpu`` (large N, alem-first) or the full CPU table,
    plus the IPPO training comparison (full CPU table, or wherever ``--jaxmarl-ippo`` is given)."""
    mode = "quick" if args.quick else args.device
    jobs = [_job(spec, args.reps) for spec in TABLES[mode]]
    gpu = mode == "gpu"
    train = []
    pqn_vdn = getattr(args, "jaxmarl_pqn_vdn", None)
    for algo, script, hint in (
        ("ippo", args.jaxmarl_ippo, "--jaxmarl-ippo baselines/IPPO/ippo_ff_mpe.py"),
        ("pqn_vdn", pqn_vdn, "--jaxmarl-pqn-vdn baselines/QLearning/pqn_vdn_ff.py"),
    ):
        if not (script or (mode == "cpu" and algo == "ippo") or gpu):
            continue
        skip = _missing("jaxmarl") or (None if script else f"no JaxMARL checkout: pass {hint}")
        argv = ["-m", "benchmarks.train_throughput", "--algo", algo, "--jaxmarl-script", str(script)]
        # GPU: the baselines' own batch sizes, long enough runs that the step dominates compile.
        steps = "20480" if args.quick else ("1228800" if gpu else "61440")
        argv += ["--total-steps", steps, "--seeds", "2"]
        reps = 1 if args.quick else (3 if gpu else args.reps)
        argv += ["--reps", str(reps), "--timeout", "240" if gpu else "600", "--out", "{out}"]
        timeout = 240.0 if gpu else 3600.0
        train.append(Job(f"train-{algo}-jaxmarl", "train", "jaxmarl", argv, _train_rows, skip, timeout))
    # GPU: the training rows right after the MPE rows (within the budget); elsewhere at the end.
    at = next((i for i, j in enumerate(jobs) if gpu and j.family not in ("hlo", "games", "mpe")), len(jobs))
    jobs[at:at] = train
    if args.only:
        jobs = [j for j in jobs if j.family.split("-")[0] in args.only]
    return jobs
