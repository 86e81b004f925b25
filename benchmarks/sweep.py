"""A vmapped sweep against the same configurations run one after another, wall time end to end.

``python -m alem.train ... sweep.lr=[v1,...,vK]`` (one compiled program, K x seeds rows) against K
runs of ``python -m alem.train ... algo.lr=vi``, each in this process one after the other as a
Hydra multirun would (each run compiles its own program). Both sides include everything a user
waits for: planning, compiling, training, the final evaluation and the run files::

    python -m benchmarks.sweep --configs 8 --env simple_spread --algo mappo --total-steps 40960 --out sweep.json

Sides alternate (sweep, sequential, sweep, ...) over ``--reps`` repetitions; the medians and their
ratio are printed and written (``--out``, which must not exist).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _cfg(overrides: list[str]):
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="config", overrides=overrides)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=8, help="configurations K (learning rates)")
    ap.add_argument("--env", default="simple_spread", help="a file of configs/env")
    ap.add_argument("--algo", default="mappo", help="a PPO-core preset")
    ap.add_argument("--total-steps", type=int, default=40960, help="env steps per configuration and seed")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="a JSON file to write (must not exist)")
    args = ap.parse_args(argv)
    if args.configs < 2 or args.reps < 1 or args.seeds < 1:
        ap.error("--configs must be >= 2, --reps and --seeds >= 1")
    if args.out is not None and args.out.exists():
        ap.error(f"--out {args.out} exists; a result file is never overwritten")
    if args.out is not None and not args.out.parent.is_dir():
        ap.error(f"--out {args.out}: the folder {args.out.parent} does not exist")

    from alem.training.command import run

    lrs = [float(x) for x in np.geomspace(1e-4, 3e-3, args.configs)]
    base = [
        f"env={args.env}",
        f"algo={args.algo}",
        f"algo.total_steps={args.total_steps}",
        f"num_seeds={args.seeds}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        runs = iter(range(10**6))

        def sweep() -> float:
            t = time.perf_counter()
            run(_cfg([*base, "sweep.lr=[" + ",".join(map(repr, lrs)) + "]"]), Path(tmp) / f"r{next(runs)}")
            return time.perf_counter() - t

        def sequential() -> float:
            t = time.perf_counter()
            for lr in lrs:
                run(_cfg([*base, f"algo.lr={lr!r}"]), Path(tmp) / f"r{next(runs)}")
            return time.perf_counter() - t

        times: dict[str, list[float]] = {"vmapped": [], "sequential": []}
        for _ in range(args.reps):
            times["vmapped"].append(sweep())
            times["sequential"].append(sequential())
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {
        "command": "python -m benchmarks.sweep " + " ".join(sys.argv[1:] if argv is None else argv),
        "env": args.env,
        "algo": args.algo,
        "configs": args.configs,
        "seeds": args.seeds,
        "total_steps": args.total_steps,
        "learning_rates": lrs,
        "wall_s": times,
        "median_s": med,
        "speedup": med["sequential"] / med["vmapped"],
        "machine": platform.machine(),
        "python": platform.python_version(),
    }
    print(
        f"{args.configs} configurations x {args.seeds} seed(s), {args.env} {args.algo}, {args.total_steps} steps: "
        f"vmapped {med['vmapped']:.1f} s, sequential {med['sequential']:.1f} s, speedup {out['speedup']:.2f}x"
    )
    if args.out is not None:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
