"""POGEMA reference for the pathfinding benchmark: ``--reference pogema``.

POGEMA 1.4.0 pins old NumPy/pydantic/gymnasium and cannot share alem's venv, so it runs in a
worker subprocess inside a separate venv (the one ``scripts/pogema_fixtures.py`` builds, by default
``~/.cache/alem/pogema-venv``; or set ``ALEM_POGEMA_PYTHON`` to that venv's python). The worker
builds ``N`` POGEMA envs with the alem env's settings (map size, density, agents, FOV radius,
episode length, ``on_target``, collision system), then on each ``run`` command plays ``T`` steps of
each env with uniformly random actions (NumPy ``Generator.integers``), resetting an env with a new
seed when its episode ends, and returns the total reward. POGEMA steps one env at a time in Python,
as its users do; its observations are computed on every step as in alem. Only the call is timed;
the worker's start-up and env construction happen in ``prepare``.

For shapes that are not registered ids (the issue's 32x32/64 agents and 64x64/256 agents), run this
file as a script; it times alem's jitted rollout (the harness's ``make_alem_rollout``) and POGEMA in
one run with interleaved repetitions and prints one JSON document::

    python -m benchmarks.references.pogema --size 32 --agents 64 --num-envs 1 1024 \\
        --pogema-envs 4 --steps 64 --reps 3

POGEMA's env-steps/s do not depend on the batch (one env after another), so it is measured with
``--pogema-envs`` envs and the ratio at every alem batch size uses that rate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DEFAULT_PYTHON = Path.home() / ".cache" / "alem" / "pogema-venv" / "bin" / "python"

WORKER = r"""
import json, sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
from pogema import GridConfig, pogema_v0

cfg = json.loads(sys.stdin.readline())
envs = []
for i in range(cfg["num_envs"]):
    gc = GridConfig(size=cfg["size"], density=cfg["density"], num_agents=cfg["num_agents"],
                    obs_radius=cfg["obs_radius"], max_episode_steps=cfg["max_steps"],
                    on_target=cfg["on_target"], collision_system=cfg["collision"], seed=i)
    env = pogema_v0(grid_config=gc)
    env.reset(seed=i)
    envs.append(env)
print(json.dumps({"ready": True}), flush=True)
n_agents = cfg["num_agents"]
for line in sys.stdin:
    seed = int(line)
    rng = np.random.default_rng(seed)
    total, episodes = 0.0, 0
    start = time.perf_counter()
    for t in range(cfg["num_steps"]):
        for j, env in enumerate(envs):
            obs, rew, term, trunc, info = env.step(rng.integers(5, size=n_agents).tolist())
            total += float(sum(rew))
            if all(term) or all(trunc):
                episodes += 1
                env.reset(seed=int(rng.integers(2**31)))
    elapsed = time.perf_counter() - start
    print(json.dumps({"total": total, "episodes": episodes, "elapsed": elapsed}), flush=True)
"""


def pogema_python() -> Path:
    return Path(os.environ.get("ALEM_POGEMA_PYTHON", DEFAULT_PYTHON))


class PogemaWorker:
    """A POGEMA subprocess holding ``num_envs`` envs; :meth:`run` plays ``num_steps`` steps of each."""

    def __init__(self, env: Any, num_envs: int, num_steps: int):
        from alem.envs.pathfinding.env import MODES, POGEMA_ON_TARGET

        params = env.default_params
        if env.height != env.width:
            raise ValueError(f"POGEMA random maps are square; this env is {env.height}x{env.width}")
        cfg = {
            "size": env.height,
            "density": float(params.density),
            "num_agents": env.num_agents,
            "obs_radius": env.obs_radius,
            "max_steps": int(params.max_steps),
            "on_target": POGEMA_ON_TARGET[MODES[int(params.mode)]],
            "collision": env.collision,
            "num_envs": num_envs,
            "num_steps": num_steps,
        }
        self.proc = subprocess.Popen(
            [os.fspath(pogema_python()), "-c", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send(json.dumps(cfg))
        self._read()

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the POGEMA worker ({pogema_python()}) exited; run it by hand to see why")
        return json.loads(line)

    def run(self, seed: int) -> dict:
        self._send(str(seed))
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _supports(env_id: str, env: Any) -> str | None:
    from alem.envs.pathfinding.env import PathfindingEnv

    if not isinstance(env, PathfindingEnv):
        return "POGEMA covers the pathfinding envs only"
    if env.map_type != "random" or env.obs_type != "local":
        return "the POGEMA reference runs random maps with the local observation"
    if env.height != env.width:
        return "POGEMA random maps are square"
    if not pogema_python().exists():
        return (
            f"no POGEMA venv at {pogema_python()}: run scripts/pogema_fixtures.py (or set ALEM_POGEMA_PYTHON)"
        )
    return None


def make_references(bench: Any) -> list:
    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        worker = PogemaWorker(env, num_envs, num_steps)
        return lambda seed: worker.run(seed)["total"]

    return [
        bench.Reference(
            name="pogema",
            description="POGEMA 1.4.0 in its own venv (subprocess), one env after another, random actions",
            supports=_supports,
            prepare=prepare,
        )
    ]


def main(argv: list[str] | None = None) -> dict:
    import argparse
    import statistics

    import jax

    from alem.envs.pathfinding.env import PathfindingEnv
    from benchmarks import harness as bench

    p = argparse.ArgumentParser(description="alem pathfinding vs POGEMA: env-steps/s and agent-steps/s")
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--agents", type=int, default=64)
    p.add_argument("--density", type=float, default=0.3)
    p.add_argument("--mode", default="one_shot")
    p.add_argument("--collision", default="soft")
    p.add_argument("--obs-radius", type=int, default=5)
    p.add_argument("--max-steps", type=int, default=128)
    p.add_argument("--lower-bounds", action="store_true", help="also compute BFS lower bounds at reset")
    p.add_argument(
        "--map-pool",
        type=int,
        default=0,
        metavar="M",
        help="alem draws each reset's map from M random maps generated once (map_type='fixed') "
        "instead of generating one in jit per reset (default 0: generate)",
    )
    p.add_argument("--num-envs", type=int, nargs="+", default=[1, 1024])
    p.add_argument("--pogema-envs", type=int, default=4)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out")
    args = p.parse_args(argv)
    kwargs = dict(
        mode=args.mode,
        collision=args.collision,
        density=args.density,
        obs_radius=args.obs_radius,
        max_steps=args.max_steps,
        lower_bounds=args.lower_bounds,
    )
    env = PathfindingEnv(args.agents, args.size, **kwargs)
    reason = _supports("", env)  # POGEMA is configured from the generating env
    if args.map_pool:
        from alem.envs.pathfinding.maps import random_map

        keys = jax.random.split(jax.random.key(12345), args.map_pool)
        pool = jax.vmap(lambda k: random_map(k, args.size, args.size, args.density))(keys)
        env = PathfindingEnv(args.agents, maps=list(jax.device_get(pool)), **kwargs)
    params = env.default_params
    worker = PogemaWorker(env, args.pogema_envs, args.steps) if reason is None else None
    out: dict[str, Any] = {
        "benchmark": "pathfinding throughput vs POGEMA",
        **bench.machine(),
        "config": vars(args),
        "policy": "uniform random actions, auto-reset; alem: jitted vmap+scan rollout",
        "pogema_error": reason,
        "results": [],
    }
    pogema_times: list[float] = []
    for r, n in enumerate(args.num_envs):
        rollout = bench.make_alem_rollout(env, n, args.steps)
        compile_s, _ = bench.timed(rollout, jax.random.key(0), params)
        times = []
        for rep in range(args.reps):
            # Interleave: one alem repetition, then (once per repetition overall) one POGEMA one.
            times.append(bench.timed(rollout, jax.random.key(rep + 1), params)[0])
            if worker is not None and len(pogema_times) < args.reps * (r + 1):
                res = worker.run(1000 * r + rep)
                pogema_times.append(res["elapsed"])
        rate = statistics.median(n * args.steps / t for t in times)
        out["results"].append(
            {
                "N": n,
                "alem_compile_s": compile_s,
                "alem_env_steps_per_s": rate,
                "alem_agent_steps_per_s": rate * args.agents,
                "alem_time_s_reps": times,
            }
        )
    if worker is not None:
        prate = statistics.median(args.pogema_envs * args.steps / t for t in pogema_times)
        out["pogema"] = {
            "num_envs": args.pogema_envs,
            "env_steps_per_s": prate,
            "agent_steps_per_s": prate * args.agents,
            "time_s_reps": pogema_times,
        }
        for row in out["results"]:
            row["ratio_vs_pogema"] = row["alem_env_steps_per_s"] / prate
        worker.close()
    import resource

    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
