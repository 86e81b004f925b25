"""Self-play with opponent pools (``algo.selfplay``): train, then score the trained policy.

Trains ``python -m alem.train env.id=<env> algo=ippo algo.selfplay=<mode> ...`` once per seed,
then scores the final parameters (the ``checkpoint:<run dir>`` player, sampled and greedy):

- tic-tac-toe: against ``minimax`` from both seats (draw rate; perfect play draws every game)
  and against ``random`` from both seats (win rate), ``--episodes`` games each, with
  :func:`alem.arena.evaluation.evaluate` (the code of ``python -m alem.evaluate``);
- poker (kuhn_poker, leduc_holdem): exploitability in chips per game
  (:func:`alem.arena.exploitability.player_exploitability`, exact, from the player's
  action probabilities).

Writes ``<out>/runs/seed_<s>`` (the training runs), ``<out>/evals/...`` (arena runs) and
``<out>/summary.json``, and prints a Markdown table. Example (the README's numbers)::

    python -m benchmarks.selfplay --env tic_tac_toe-v0 --selfplay prioritised --seeds 0 1 2 \\
        --out /tmp/sp_ttt -- algo.num_envs=64 algo.num_steps=32 algo.lr=0.001 algo.total_steps=2000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def train(env_id: str, mode: str, seed: int, run_dir: Path, overrides: list[str]) -> float:
    if (run_dir / "results.json").is_file():
        return float("nan")  # already trained
    cmd = [
        sys.executable,
        "-m",
        "alem.train",
        f"env.id={env_id}",
        "algo=ippo",
        f"algo.selfplay={mode}",
        f"seed={seed}",
        f"output_dir={run_dir}",
        "chunk_updates=50",
        *overrides,
    ]
    t0 = time.perf_counter()
    subprocess.run(
        cmd, check=True, env={**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    )
    return time.perf_counter() - t0


def score_tictactoe(env, run_dir: Path, out: Path, episodes: int, greedy: bool) -> dict[str, float]:
    from alem.arena.evaluation import evaluate
    from alem.arena.players import build_player

    me = f"checkpoint:{run_dir}"
    scores = {}
    for opp in ("minimax", "random"):
        for seat in (0, 1):
            specs = [me, opp] if seat == 0 else [opp, me]
            players = [build_player(env, s, {"checkpoint": {"greedy": greedy}}) for s in specs]
            name = f"{run_dir.name}_{'greedy' if greedy else 'sampled'}_{opp}_{'X' if seat == 0 else 'O'}"
            res = evaluate(
                env, players, episodes=episodes, num_envs=50, seed=0, run_dir=out / name, progress=False
            )
            s = res["seats"][seat]
            tag = f"{'X' if seat == 0 else 'O'}_vs_{opp}"
            scores.update({f"{tag}_win": s["win"], f"{tag}_draw": s["draw"], f"{tag}_loss": s["loss"]})
    return scores


def pool_state(env, run_dir: Path):
    """The seed-0 pool of a self-play run: ``(filled slots, PSRO mixture [K] or None)``, or None."""
    import jax
    import jax.numpy as jnp

    from alem.algos.checkpoint_player import load_trained
    from alem.checkpoint import latest, restore

    learner, _ = load_trained(run_dir, env)
    if learner.cfg.selfplay == "off":
        return None
    template = jax.vmap(learner.init)(jax.vmap(jax.random.key)(jnp.arange(1)))
    pool = restore(latest(run_dir)[1], template).pool
    mix = np.asarray(pool.mix[0], np.float64) if learner.cfg.selfplay == "psro" else None
    return min(int(pool.count[0]), learner.cfg.pool_size), mix


def mixture_table(tree, tables: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """The behaviour strategy of a mixture of policies (Kuhn's theorem): at each information
    state the members' action probabilities weighted by ``weights`` times each member's own
    probability of reaching it (what FSP's average policy and PSRO's meta-strategy play)."""
    m, n = tree.num_nodes, tree.num_players
    reach = np.ones((len(tables), m, n))  # own reach of every player at every node
    for d in range(int(tree.depth.max()) + 1):
        for node in np.flatnonzero((tree.depth == d) & (tree.player >= 0)):
            p, i = tree.player[node], tree.infoset[node]
            for a in np.flatnonzero(tree.children[node] >= 0):
                child = tree.children[node, a]
                reach[:, child] = reach[:, node]
                reach[:, child, p] *= np.array([t[i, a] for t in tables])
    own = reach[:, tree.infoset_node, tree.infoset_player]  # [K, I]
    w = weights[:, None] * own
    avg = np.einsum("ki,kia->ia", w, np.stack(tables))
    total = w.sum(0)[:, None]
    return np.where(total > 0, avg / np.maximum(total, 1e-300), tables[-1])


def score_poker(env, run_dir: Path, greedy: bool) -> dict[str, float]:
    from alem.algos.checkpoint_player import CheckpointPlayer
    from alem.arena.exploitability import player_exploitability
    from alem.game_tree import exploitability, game_tree

    final = CheckpointPlayer(env, str(run_dir), greedy=greedy)
    scores = {"exploitability": float(player_exploitability(env, final))}
    pool = pool_state(env, run_dir)
    if pool is None or greedy:
        return scores
    filled, mix = pool
    tree = game_tree(env)
    obs, mask, seat = tree.infoset_obs, tree.infoset_mask, tree.infoset_player
    tables = []
    for k in range(filled):
        t = np.asarray(
            CheckpointPlayer(env, str(run_dir), snapshot=k).action_probs(obs, mask, seat), np.float64
        )
        tables.append(t / t.sum(1, keepdims=True))
    uniform = np.full(filled, 1.0 / filled)
    scores["pool_average_exploitability"] = float(exploitability(tree, mixture_table(tree, tables, uniform)))
    if mix is not None:
        w = mix[:filled] / max(mix[:filled].sum(), 1e-30)
        scores["meta_nash_exploitability"] = float(exploitability(tree, mixture_table(tree, tables, w)))
    return scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="tic_tac_toe-v0")
    ap.add_argument("--selfplay", default="prioritised")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("overrides", nargs="*", help="alem.train overrides, after --")
    args = ap.parse_args()

    import alem

    env = alem.make(args.env)
    rows = []
    for seed in args.seeds:
        run_dir = args.out / "runs" / f"seed_{seed}"
        seconds = train(args.env, args.selfplay, seed, run_dir, args.overrides)
        for greedy in (False, True):
            if args.env.startswith("tic_tac_toe"):
                scores = score_tictactoe(env, run_dir, args.out / "evals", args.episodes, greedy)
            else:
                scores = score_poker(env, run_dir, greedy)
            rows.append({"seed": seed, "greedy": greedy, "train_s": seconds, **scores})
            print(json.dumps(rows[-1]), flush=True)
    summary = {"env": args.env, "selfplay": args.selfplay, "overrides": args.overrides, "rows": rows}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    keys = list(dict.fromkeys(k for r in rows for k in r if k not in ("seed", "greedy", "train_s")))
    print("| policy | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for greedy in (False, True):
        sel = [r for r in rows if r["greedy"] == greedy]
        cells = []
        for k in keys:
            v = np.array([r[k] for r in sel if k in r], float)
            if not len(v):
                cells.append("-")
                continue
            cells.append(f"{v.mean():.3f}" + (f" ({v.min():.2f}-{v.max():.2f})" if len(v) > 1 else ""))
        print(f"| {'greedy' if greedy else 'sampled'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
