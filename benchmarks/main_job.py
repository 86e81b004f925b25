"""The sweep behind the default of ``python -m alem.train`` (MPE simple_spread).

Each candidate is a list of Hydra overrides of ``python -m alem.train``; it trains 3 seeds vmapped
in one run into ``<out>/<name>`` (a run whose ``results.json`` exists is kept, so an interrupted
sweep resumes), then the table reports the final evaluation per seed, the training curve's peak and
its last chunk (the IPPO "peak and dip"), and the wall time::

    python -m benchmarks.main_job --out runs/main_job [--only NAME ...]

The wall times of a 3-seed run are not the main command's (one seed); benchmarks/training.md times
the chosen default separately.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CANDIDATES: dict[str, list[str]] = {
    # the default before this sweep: IPPO, 64 envs x 128 steps, 2M steps, lr 5e-4
    "ippo_64x128_2M": ["algo=ippo", "algo.num_envs=64", "algo.total_steps=2000000", "algo.lr=0.0005"],
    # the budget of the reference table (16 envs x 128 steps, 614,400 steps)
    "ippo_16x128_614k": ["algo=ippo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.0005"],
    "ippo_16x128_614k_vnorm": [
        "algo=ippo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.0005", "algo.value_norm=true",
    ],
    "ippo_16x128_614k_noclipv": [
        "algo=ippo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.0005", "algo.clip_value=false",
    ],
    "ippo_16x128_614k_lr2.5e-4": ["algo=ippo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.00025"],
    "ippo_64x128_2M_vnorm": [
        "algo=ippo", "algo.num_envs=64", "algo.total_steps=2000000", "algo.lr=0.0005", "algo.value_norm=true",
    ],
    "mappo_16x128_614k_novnorm": [
        "algo=mappo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.0005", "algo.value_norm=false",
    ],
    "mappo_16x128_614k": ["algo=mappo", "algo.num_envs=16", "algo.total_steps=614400", "algo.lr=0.0005"],
    "mappo_16x128_1M": ["algo=mappo", "algo.num_envs=16", "algo.total_steps=1003520", "algo.lr=0.0005"],
    "mappo_32x128_1M": ["algo=mappo", "algo.num_envs=32", "algo.total_steps=1003520", "algo.lr=0.0005"],
}


def train(name: str, out: Path, seeds: int) -> None:
    run = out / name
    if (run / "results.json").exists():
        return
    cmd = [sys.executable, "-m", "alem.train", *CANDIDATES[name], f"num_seeds={seeds}", f"output_dir={run}"]
    print("$", " ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=True)


def row(name: str, out: Path) -> str:
    res = json.loads((out / name / "results.json").read_text())
    per_seed = [sum(s) / len(s) for s in res["trained_return_per_seed"]]
    by_step: dict[int, list[float]] = {}  # metrics.jsonl: one row per seed and chunk
    for line in (out / name / "metrics.jsonl").read_text().splitlines():
        m = json.loads(line)
        by_step.setdefault(m["env_steps"], []).append(m["episode_return"])
    curve = [(step, sum(v) / len(v)) for step, v in sorted(by_step.items())]
    peak_step, peak = max(curve, key=lambda c: c[1]) if curve else (0, float("nan"))
    last = curve[-1][1] if curve else float("nan")
    seeds = ", ".join(f"{r:.2f}" for r in per_seed)
    return (
        f"| {name} | {res['env_steps_per_seed']:,} | {res['trained_return_mean']:.2f} | {seeds} | "
        f"{peak:.2f} at {peak_step:,} | {last:.2f} | {res['random_return_mean']:.2f} | {res['wall_time_s']:.0f} |"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--only", nargs="+", choices=sorted(CANDIDATES))
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args(argv)
    names = args.only or list(CANDIDATES)
    for name in names:
        train(name, args.out, args.seeds)
    print("| candidate | env steps per seed | final eval (mean) | per seed | training curve peak | last chunk | random | wall s (3 seeds) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        print(row(name, args.out))


if __name__ == "__main__":
    main()
