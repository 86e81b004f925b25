"""Host cost of the text bridge's batched env (:class:`alem.text.train.pool.TextEnvPool`) per step.

A zero-latency stub answers every pending record with a random legal move name (as the JSON
answer format), so the time measured is the env side alone: parsing the replies, the jitted
lock-step (one ``device_get``), rendering every acting seat's view and building its prompt.
Episodes auto-reset from an endless seed stream, so every row is live in every step::

    python -m benchmarks.text_pool --env tic_tac_toe-v0 kuhn_poker-v0 hanabi-v0 --num-envs 256

Prints one JSON document: per env, ms per step (median over ``--reps`` repetitions of
``--steps`` steps each, after a warm-up that compiles), decisions per step, ms per decision,
and the split into parse / device step and transfer / render + prompts (the shares of the
same steps, scaled to the median). ``--llm-step-ms`` (default 1000, see
the docs) is an assumed duration of one batched LLM generation step for ``N`` prompts; the
env's share of a training step is ``env / (env + llm)``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import statistics
import sys
import time
from typing import Any

import jax

from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import answer


def stub(pending: list, rng: random.Random) -> list[str]:
    """A zero-latency model: a random legal move name per record, in the answer format."""
    return [answer(rng.choice(t.legal)) for t in pending]


def measure(env_id: str, num_envs: int, steps: int, reps: int, warmup: int, seed: int) -> dict[str, Any]:
    pool = TextEnvPool(env_id, num_envs, seed=seed)
    rng = random.Random(seed)
    pending = pool.reset(itertools.count())
    for _ in range(warmup):  # compile and warm caches
        pending = pool.step(stub(pending, rng)).pending
    # The parts of the same steps: parse (pool._read) and render + prompts (pool._make_pending)
    # are timed by wrapping the pool's own methods; the device step and transfer are the rest.
    parts = {"parse": 0.0, "render": 0.0}

    def timed(fn, part):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[part] += time.perf_counter() - t0

        return wrapper

    pool._read = timed(pool._read, "parse")
    pool._make_pending = timed(pool._make_pending, "render")
    per_rep, decisions = [], 0
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(steps):
            replies = stub(pending, rng)
            decisions += len(replies)
            pending = pool.step(replies).pending
        per_rep.append((time.perf_counter() - t0) / steps)
    total = sum(per_rep) * steps
    step_s = statistics.median(per_rep)
    share = {k: v / total for k, v in parts.items()}
    parts = {k: share[k] * step_s for k in share}
    parts["device"] = max(step_s - parts["parse"] - parts["render"], 0.0)
    per_step = decisions / (steps * reps)
    return {
        "env": env_id,
        "num_envs": num_envs,
        "ms_per_step": round(1e3 * step_s, 3),
        "ms_per_step_reps": [round(1e3 * s, 3) for s in per_rep],
        "decisions_per_step": round(per_step, 1),
        "us_per_decision": round(1e6 * step_s / per_step, 2),
        "ms_parse": round(1e3 * parts["parse"], 3),
        "ms_render_and_prompts": round(1e3 * parts["render"], 3),
        "ms_device_step_and_transfer": round(1e3 * parts["device"], 3),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", nargs="+", default=["tic_tac_toe-v0", "kuhn_poker-v0", "hanabi-v0"])
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--llm-step-ms",
        type=float,
        default=1000.0,
        help="assumed time of one batched LLM generation step for num_envs prompts (ms)",
    )
    args = ap.parse_args(argv)
    rows = []
    for env_id in args.env:
        row = measure(env_id, args.num_envs, args.steps, args.reps, args.warmup, args.seed)
        row["fraction_of_training_step"] = round(
            row["ms_per_step"] / (row["ms_per_step"] + args.llm_step_ms), 4
        )
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    doc = {
        "benchmark": "text_pool",
        "assumed_llm_step_ms": args.llm_step_ms,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "jax": jax.__version__,
            "backend": jax.default_backend(),
            "cpus": os.cpu_count(),
            "load_average_1m": os.getloadavg()[0],
        },
        "results": rows,
    }
    print(json.dumps(doc, indent=2))
    return doc


if __name__ == "__main__":
    main()
