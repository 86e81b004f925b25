"""The learner results sweep behind the tables of benchmarks/training.md.

Trains every learner with ``alem.train.run`` (the code path of ``python -m alem.train``; each run
is also given below as its CLI command) into ``<out>/<group>/<env>/<algo>``, skipping runs that
already have a ``results.json``; then plays the tic-tac-toe self-play runs against the random and
minimax players with ``alem.evaluate.evaluate`` (trained policy in either seat, every seed)::

    python -m benchmarks.train_results --out runs [--groups matrix spread tictactoe overcooked overcooked_anneal rware] [--dry-run]

The Overcooked runs train on the shaped reward; :func:`score_sparse` then scores each seed's final
parameters on the sparse reward (``<run dir>/sparse_eval.json``), the number published results use.

Summaries come from the training-analysis notebook (one mechanism for the table)::

    ALEM_RUNS=runs/matrix ALEM_NOTEBOOK_TABLE=matrix.csv \\
        jupyter nbconvert --to notebook --execute notebooks/training_analysis.ipynb --output executed.ipynb

and the tic-tac-toe scores are printed here and written to ``<out>/tictactoe/scores.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

#: group -> (envs, learners, overrides shared by the group's runs)
MATRIX = [
    "algo.num_envs=16",
    "algo.num_steps=8",
    "algo.num_minibatches=2",
    "algo.lr=0.003",
    "algo.gamma=0.9",
    "algo.hidden=[32]",
    "algo.total_steps=12800",  # 100 updates
    "chunk_updates=10",
    "num_seeds=5",
    "eval.num_steps=64",
]
SPREAD = [  # JaxMARL's IPPO-FF config (16 envs x 128 steps, 4 x 4), a 768k-step budget
    "algo.num_envs=16",
    "algo.num_steps=128",
    "algo.total_steps=768000",  # 375 updates
    "chunk_updates=25",
    "num_seeds=3",
    "eval.num_steps=256",
]
TICTACTOE = [  # self-play: both seats play one shared policy
    "algo.num_envs=64",
    "algo.num_steps=32",
    "algo.lr=0.001",
    "algo.total_steps=1024000",  # 500 updates
    "chunk_updates=50",
    "num_seeds=3",
    "eval.num_steps=64",
]
OVERCOOKED = [  # JaxMARL's IPPO-FF Overcooked shape (16 envs x 128 steps) with 64 envs; shaped reward
    "algo.num_envs=64",
    "algo.num_steps=128",
    "algo.lr=0.0005",
    "algo.hidden=[128,128]",
    "algo.total_steps=3014656",  # 368 updates
    "+env.kwargs.reward_shaping=true",  # training only: OVERCOOKED_EVAL scores deliveries alone
    "chunk_updates=23",
    "num_seeds=3",
    "eval.num_steps=800",
]
RWARE = [  # sparse: a delivery is worth 1 to the robot that made it (individual rewards)
    "algo.num_envs=64",
    "algo.num_steps=128",
    "algo.lr=0.0005",
    "algo.hidden=[128,128]",
    "algo.total_steps=4194304",  # 512 updates
    "chunk_updates=32",
    "num_seeds=3",
    "eval.num_steps=1000",
]
# JaxMARL's recipe: the shaped terms' weight annealed 1 -> 0 over the first half of the run
OVERCOOKED_ANNEAL = [
    *OVERCOOKED,
    "algo.anneal_param=shaping_factor",
    "algo.anneal_param_end=0",
    "algo.anneal_param_steps=1507328",  # 184 updates
]
LEARNERS = ["ippo", "mappo", "cppo", "cppo_joint", "dpo", "happo", "role", "seps"]
GROUPS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "matrix": (["coordination-v0", "climbing-v0"], LEARNERS, MATRIX),
    "spread": (["mpe/simple_spread-v0"], ["ippo", "mappo"], SPREAD),
    "tictactoe": (["tic_tac_toe-v0"], ["ippo"], TICTACTOE),
    "overcooked": (["overcooked_cramped_room-v0"], ["ippo", "mappo"], OVERCOOKED),
    "overcooked_anneal": (["overcooked_cramped_room-v0"], ["ippo", "mappo"], OVERCOOKED_ANNEAL),
    "rware": (["rware_tiny_2ag-v0"], ["ippo", "mappo"], RWARE),
}
OVERCOOKED_EVAL = 2000  # env steps per eval env (5 episodes of 400) with the sparse reward
TTT_OPPONENTS = ("random", "minimax")
TTT_EPISODES = 100  # per seed, seat and opponent


def run_dir(out: Path, group: str, env_id: str, algo: str) -> Path:
    return out / group / env_id.replace("/", "_") / algo


def overrides(group: str, env_id: str, algo: str) -> list[str]:
    return [f"env.id={env_id}", f"algo={algo}", *GROUPS[group][2]]


def train(group: str, env_id: str, algo: str, out: Path, dry_run: bool) -> None:
    d = run_dir(out, group, env_id, algo)
    args = overrides(group, env_id, algo)
    print(f"python -m alem.train {' '.join(args)} output_dir={d}", flush=True)
    if dry_run or (d / "results.json").exists():
        return
    from hydra import compose, initialize_config_module

    from alem.train import run

    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config", overrides=args)
    t0 = time.perf_counter()
    res = json.loads(run(cfg, d).read_text())
    print(
        f"  {time.perf_counter() - t0:.0f} s | trained {res['trained_return_mean']:.4g} "
        f"random {res['random_return_mean']:.4g}",
        flush=True,
    )


def score_sparse(out: Path, group: str, env_id: str, algo: str, dry_run: bool) -> dict[str, Any] | None:
    """Overcooked runs train on the shaped reward; score each seed's final parameters on the env's
    own sparse reward (20 per soup delivered, the same for both cooks), the number JaxMARL and
    Carroll et al. report. 64 envs x ``OVERCOOKED_EVAL`` steps per seed, fresh keys."""
    d = run_dir(out, group, env_id, algo)
    if dry_run:
        return None
    import jax
    import jax.numpy as jnp

    import alem
    from alem.algos.checkpoint_player import load_trained
    from alem.arena.stats import ci95
    from alem.training.evaluation import policy_evaluator

    env = alem.make(env_id)  # reward_shaping off
    seeds = json.loads((d / "results.json").read_text())["num_seeds"]
    loaded = [load_trained(d, env, seed_index=s) for s in range(seeds)]
    learner = loaded[0][0]
    params = jax.tree.map(lambda *x: jnp.stack(x), *(p for _, p in loaded))
    keys = jax.vmap(jax.random.key)(jnp.arange(seeds) + 10_000)
    episodes, ret, _ = policy_evaluator(env, learner, OVERCOOKED_EVAL)(keys, params)
    per_seed = np.asarray(ret).mean(1)  # the cooks share the sparse reward
    row = {
        "env_id": env_id,
        "algo": algo,
        "sparse_return_per_seed": per_seed.tolist(),
        "sparse_return_mean": float(per_seed.mean()),
        "sparse_return_ci95": ci95(per_seed),
        "episodes_per_seed": int(np.min(episodes)),
    }
    print(
        f"{env_id} {algo}: sparse return {row['sparse_return_mean']:.1f} per seed {per_seed.round(1)}",
        flush=True,
    )
    (d / "sparse_eval.json").write_text(json.dumps(row, indent=2) + "\n")
    return row


def score_tictactoe(out: Path, dry_run: bool) -> dict[str, Any] | None:
    """Win/draw/loss of each trained seed in each seat against each scripted opponent."""
    env_id = "tic_tac_toe-v0"
    d = run_dir(out, "tictactoe", env_id, "ippo")
    if dry_run:
        return None
    import alem
    from alem.arena.stats import ci95
    from alem.evaluate import evaluate
    from alem.players import make_player

    env = alem.make(env_id)
    seeds = json.loads((d / "results.json").read_text())["num_seeds"]
    scores: dict[str, Any] = {"episodes_per_game": TTT_EPISODES, "games": []}
    for opponent in TTT_OPPONENTS:
        for seat in (0, 1):
            for s in range(seeds):
                trained = make_player("checkpoint", env, spec=str(d), seed_index=s)
                other = make_player(opponent, env)
                players = [trained, other] if seat == 0 else [other, trained]
                labels = ["trained", opponent] if seat == 0 else [opponent, "trained"]
                res = evaluate(
                    env,
                    players,
                    episodes=TTT_EPISODES,
                    num_envs=TTT_EPISODES,
                    seed=s,
                    run_dir=out / "tictactoe" / "eval" / f"{opponent}_seat{seat}_seed{s}",
                    labels=labels,
                    progress=False,
                )
                row = res["seats"][seat]
                scores["games"].append(
                    {
                        "opponent": opponent,
                        "seat": seat,
                        "seed": s,
                        **{k: row[k] for k in ("win", "draw", "loss")},
                    }
                )
    summary = []
    for opponent in TTT_OPPONENTS:
        for seat in (0, 1):
            g = [x for x in scores["games"] if x["opponent"] == opponent and x["seat"] == seat]
            row = {"opponent": opponent, "seat": seat, "seeds": len(g)}
            for k in ("win", "draw", "loss"):
                v = np.array([x[k] for x in g])
                row[k] = float(v.mean())
                row[f"{k}_ci95"] = ci95(v)  # None below 2 seeds
            summary.append(row)
            print(
                f"trained as {env.agents[seat]} vs {opponent}: "
                + " ".join(
                    f"{k} {row[k]:.3f}±{row[f'{k}_ci95'] or math.nan:.3f}" for k in ("win", "draw", "loss")
                ),
                flush=True,
            )
    scores["summary"] = summary
    (out / "tictactoe" / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
    return scores


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("runs"), help="folder for the run directories")
    p.add_argument("--groups", nargs="+", choices=sorted(GROUPS), default=list(GROUPS))
    p.add_argument("--dry-run", action="store_true", help="print the CLI commands only")
    args = p.parse_args(argv)
    for group in args.groups:
        envs, learners, _ = GROUPS[group]
        for env_id in envs:
            for algo in learners:
                train(group, env_id, algo, args.out, args.dry_run)
        if group == "tictactoe":
            score_tictactoe(args.out, args.dry_run)
        if group.startswith("overcooked"):
            for env_id in envs:
                for algo in learners:
                    score_sparse(args.out, group, env_id, algo, args.dry_run)


if __name__ == "__main__":
    main()
