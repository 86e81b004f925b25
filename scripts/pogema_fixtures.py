"""Golden fixtures from POGEMA 1.4.0 for alem's pathfinding envs.

POGEMA pins numpy<=1.26.4, pydantic<=1.9.1 and gymnasium==0.28.1, so it cannot share a
venv with current JAX. This script builds a separate venv with it, then re-runs itself
inside that venv to play seeded instances and write compact fixtures::

    python scripts/pogema_fixtures.py                      # venv in ~/.cache/alem/pogema-venv
    python scripts/pogema_fixtures.py --venv /tmp/pogema   # or anywhere else
    python scripts/pogema_fixtures.py --python /path/to/venv/bin/python   # an existing venv

Output: ``tests/envs/pathfinding/fixtures/pogema_golden.json.gz``. Each case records the
map (POGEMA ASCII, borders removed), starts, goals (goal sequences for lifelong), the
mode (``on_target``), collision system, observation radius, episode limit, the joint
actions played, every agent's cell after reset and after every step, rewards, episode
ends, POGEMA's final metrics, and the default observations (bit-packed) of every step,
with a flag per step telling whether POGEMA's own occupancy grid matched the agents'
true cells (its ``soft`` system can erase a lower-index agent that followed a higher
one from that grid, hence from the agents channel; alem observes the true cells).

Cases: micro-cases in the vocabulary of Stern et al. 2019 (swap, vertex contest,
following behind a lower / a higher index, 4-agent rotation, blocked chain) under each
collision system, and random instances (POGEMA's own random maps and placements for
seeds 0..K-1) played by a policy that mixes BFS shortest-path moves and random moves, in
each mode and collision system (5%, 30% and 60% random moves for seeds 0, 1, 2, and one sparse map played by BFS moves only). The script reads only POGEMA and NumPy; it never
imports alem, so the fixtures are independent of the code they test.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

from fixtures import ensure_venv, write_fixture

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "envs" / "pathfinding" / "fixtures" / "pogema_golden.json.gz"
POGEMA = "pogema==1.4.0"

# Shared shapes, so the tests compile one program per (mode, collision system).
RANDOM_SIZE, RANDOM_AGENTS, RANDOM_RADIUS, RANDOM_STEPS, SEQ_LEN = 10, 10, 3, 40, 6
MICRO_RADIUS = 2

# Micro-cases: 5x5 maps, 4 agents (extra agents wait out of the way), actions per step.
# Letters a-d are agents 0-3 (POGEMA's ASCII convention); each target is far from its start.
MICRO = {
    # 0 and 1 swap along a corridor.
    "swap": (["#####", "#ab.#", "#####", "c...d", "....."], [[4, 3, 0, 0]]),
    # 0 (left) and 1 (right) both enter the middle cell.
    "vertex_contest": (["#####", "#a.b#", "#####", "c...d", "....."], [[4, 3, 0, 0]]),
    # 1 follows 0 (leader has the lower index).
    "follow_lower_leader": (["#####", "#ba.#", "#####", "c...d", "....."], [[4, 4, 0, 0]]),
    # 0 follows 1 (leader has the higher index).
    "follow_higher_leader": (["#####", "#ab.#", "#####", "c...d", "....."], [[4, 4, 0, 0]]),
    # Four agents rotate clockwise in a 2x2 block.
    "rotation": ([".....", ".ab..", ".dc..", ".....", "....."], [[4, 2, 3, 1], [4, 2, 3, 1]]),
    # A chain 0 -> 1 -> 2 where 2 runs into a wall: everyone stays (soft/priority/block_both).
    "blocked_chain": (["#####", "abc##", "#####", "....d", "....."], [[4, 4, 4, 0]]),
    # A chain led by a lower index into free space, with a vertex contest at its tail.
    "chain_and_contest": ([".....", "cba..", "..d..", ".....", "....."], [[4, 4, 4, 1], [4, 4, 4, 0]]),
}


def _run_inside(args: argparse.Namespace) -> None:
    """Play every case with POGEMA (runs inside the POGEMA venv)."""
    import warnings

    import numpy as np
    from pogema import GridConfig, pogema_v0

    warnings.filterwarnings("ignore")
    moves = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])

    def bfs(obst, src):
        h, w = obst.shape
        d = np.full((h, w), -1)
        d[src] = 0
        q = deque([src])
        while q:
            r, c = q.popleft()
            for dr, dc in moves[1:]:
                nr, nc = r + dr, c + dc
                if 0 <= nr < h and 0 <= nc < w and not obst[nr, nc] and d[nr, nc] < 0:
                    d[nr, nc] = d[r, c] + 1
                    q.append((nr, nc))
        return d

    def ascii_rows(obst):
        return ["".join("#" if v else "." for v in row) for row in obst]

    def play(name, obst, starts, goals, on_target, collision, radius, max_steps, policy):
        cfg = GridConfig(
            map=[[int(v) for v in row] for row in obst],
            agents_xy=[list(map(int, s)) for s in starts],
            targets_xy=goals,
            on_target=on_target,
            collision_system=collision,
            obs_radius=radius,
            max_episode_steps=max_steps,
            seed=0,
        )
        env = pogema_v0(grid_config=cfg)
        obs, _ = env.reset(seed=0)
        inner = env.unwrapped
        r = radius

        def cells():
            return [[int(x) - r, int(y) - r] for x, y in inner.grid.positions_xy]

        def goals_now():
            return [[int(x) - r, int(y) - r] for x, y in inner.grid.finishes_xy]

        def occupancy_ok():
            # POGEMA's soft system writes its occupancy grid in index order, so a lower index
            # following a higher one is erased from it (and from the agents channel) until it
            # moves again. Record where the grid still matches the true cells.
            truth = np.zeros_like(inner.grid.positions)
            for i, (x, y) in enumerate(inner.grid.positions_xy):
                if inner.grid.is_active[i]:
                    truth[x, y] = 1
            return bool(np.array_equal(truth, inner.grid.positions))

        obs_all = [np.stack(obs)]
        consistent = [occupancy_ok()]
        positions, cur_goals, actions, rewards, terms, truncs = [cells()], [goals_now()], [], [], [], []
        metrics = None
        for t in range(max_steps):
            act = policy(t, cells(), goals_now(), [bool(inner.grid.is_active[i]) for i in range(len(starts))])
            obs, rew, term, trunc, infos = env.step(list(act))
            actions.append([int(a) for a in act])
            positions.append(cells())
            cur_goals.append(goals_now())
            rewards.append([float(x) for x in rew])
            terms.append(bool(all(term)))
            truncs.append(bool(all(trunc)))
            obs_all.append(np.stack(obs))
            consistent.append(occupancy_ok())
            if "metrics" in infos[0]:
                metrics = {k: float(v) for k, v in infos[0]["metrics"].items()}
            if all(term) or all(trunc):
                break
        bits = np.packbits(np.stack(obs_all).astype(bool).reshape(-1))
        return {
            "name": name,
            "on_target": on_target,
            "collision": collision,
            "obs_radius": radius,
            "max_steps": max_steps,
            "map": ascii_rows(obst),
            "starts": [list(map(int, s)) for s in starts],
            "goals": goals,
            "actions": actions,
            "positions": positions,
            "goals_seen": cur_goals,
            "rewards": rewards,
            "terminated": terms,
            "truncated": truncs,
            "metrics": metrics,
            "obs_shape": list(np.stack(obs_all).shape),
            "occupancy_consistent": consistent,
            "obs_bits": base64.b64encode(bits.tobytes()).decode(),
        }

    cases = []
    # ---- micro-cases (one-shot mode, targets parked so nobody finishes)
    for name, (rows, script) in MICRO.items():
        obst = np.array([[ch == "#" for ch in row] for row in rows])
        pos = {ch: (r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch.isalpha()}
        starts = [pos[ch] for ch in "abcd"]
        # Each target is the reachable cell farthest from the start (last in row-major order on ties).
        goals = []
        for s in starts:
            d = bfs(obst, s)
            far = np.argwhere(d == d.max())[-1]
            goals.append([int(far[0]), int(far[1])])
        for collision in ("soft", "priority", "block_both"):

            def policy(t, _cells, _goals, _active, script=script):
                return script[t] if t < len(script) else [0, 0, 0, 0]

            cases.append(
                play(
                    f"micro/{name}",
                    obst,
                    starts,
                    goals,
                    "nothing",
                    collision,
                    MICRO_RADIUS,
                    len(script),
                    policy,
                )
            )

    # ---- random instances from POGEMA's own generator
    for seed in range(args.seeds + 1):
        density = 0.3 if seed < args.seeds else 0.05  # the last instance is easy: one-shot solves
        gen = GridConfig(
            size=RANDOM_SIZE, density=density, num_agents=RANDOM_AGENTS, seed=seed, obs_radius=RANDOM_RADIUS
        )
        probe = pogema_v0(grid_config=gen)
        probe.reset(seed=seed)
        g = probe.unwrapped.grid
        obst = g.get_obstacles(ignore_borders=True).astype(bool)
        starts = [tuple(int(v) for v in p) for p in g.get_agents_xy(ignore_borders=True)]
        targets = [tuple(int(v) for v in p) for p in g.get_targets_xy(ignore_borders=True)]
        rng = np.random.default_rng(1000 + seed)
        seqs = []
        for s, tgt in zip(starts, targets, strict=True):
            reach = np.argwhere(bfs(obst, s) >= 0)
            seq = [list(tgt)]
            while len(seq) < SEQ_LEN:
                c = [int(v) for v in reach[rng.integers(len(reach))]]
                if c != seq[-1]:
                    seq.append(c)
            seqs.append(seq)
        for on_target in ("nothing", "restart", "finish"):
            for collision in ("soft", "priority", "block_both"):
                prng = np.random.default_rng(seed * 100 + len(cases))
                eps = 0.0 if seed == args.seeds else (0.05, 0.3, 0.6)[seed % 3]  # share of random moves
                dist_cache = {}

                def policy(t, cells, goals, active, prng=prng, dist_cache=dist_cache, obst=obst, eps=eps):
                    out = []
                    for cell, goal in zip(cells, goals, strict=True):
                        if prng.random() < eps:
                            out.append(int(prng.integers(5)))
                            continue
                        key = tuple(goal)
                        if key not in dist_cache:
                            dist_cache[key] = bfs(obst, key)
                        d = dist_cache[key]
                        best, best_a = d[tuple(cell)], 0
                        for a in prng.permutation(5):
                            r, c = cell[0] + moves[a][0], cell[1] + moves[a][1]
                            if 0 <= r < obst.shape[0] and 0 <= c < obst.shape[1] and 0 <= d[r, c] < best:
                                best, best_a = d[r, c], int(a)
                        out.append(best_a)
                    return out

                goals = seqs if on_target == "restart" else [list(t) for t in targets]
                cases.append(
                    play(
                        f"random/seed{seed}",
                        obst,
                        starts,
                        goals,
                        on_target,
                        collision,
                        RANDOM_RADIUS,
                        RANDOM_STEPS,
                        policy,
                    )
                )
    import pogema

    doc = {
        "generator": "scripts/pogema_fixtures.py",
        "pogema_version": pogema.__version__,
        "numpy_version": np.__version__,
        "action_order": ["wait", "up", "down", "left", "right"],
        "cases": cases,
    }
    write_fixture(args.out, doc, f"{len(cases)} cases")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "alem" / "pogema-venv")
    p.add_argument("--python", type=Path, help="python of an existing venv with pogema 1.4.0 (skips --venv)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--seeds", type=int, default=3, help="random instances per mode and collision system")
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.inside:
        _run_inside(args)
        return
    python = args.python or ensure_venv(args.venv, "pogema", [POGEMA], "POGEMA")
    cmd = [os.fspath(python), __file__, "--inside", "--out", os.fspath(args.out), "--seeds", str(args.seeds)]
    sys.exit(subprocess.run(cmd).returncode)


if __name__ == "__main__":
    main()
