"""Fixtures from pogema-toolbox for alem's POGEMA-benchmark protocol (tests/envs/pathfinding/test_benchmark.py).

Runs inside the POGEMA venv (``scripts/pogema_fixtures.py`` builds it; add
``pip install pogema-toolbox==0.1.1`` there), and never imports alem::

    ~/.cache/alem/pogema-venv/bin/python scripts/pogema_protocol_fixtures.py

For a few instances of the benchmark's shipped map sets (map, agent count, seed, mode), the
toolbox builds the env as its evaluator does (``create_env_base`` of an ``Environment``
config: the map looked up by name, POGEMA's own start and goal placement for the seed), a
seeded policy plays it (shortest-path moves with some random ones, so that some agents
arrive and some do not), and the toolbox's ``ResultsHolder`` collects the final metrics.
The fixture keeps the joint actions, the starts and first goals POGEMA placed, and those
metrics. Output: ``tests/envs/pathfinding/fixtures/pogema_protocol.json``.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import yaml
from fixtures import write_fixture

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "envs" / "pathfinding" / "data" / "pogema_benchmark"
OUT = ROOT / "tests" / "envs" / "pathfinding" / "fixtures" / "pogema_protocol.json"
#: (map file, map name, agents, seed, on_target, episode length, share of random moves)
CASES = [
    ("05-puzzles.yaml", "puzzle-00", 3, 0, "nothing", 32, 0.2),
    ("05-puzzles.yaml", "puzzle-05", 4, 3, "nothing", 32, 0.2),
    ("05-puzzles.yaml", "puzzle-09", 2, 7, "restart", 48, 0.1),
    ("01-random.yaml", "validation-random-seed-000", 16, 0, "nothing", 48, 0.1),
    ("01-random.yaml", "validation-random-seed-017", 24, 0, "nothing", 48, 0.3),
    ("01-random.yaml", "validation-random-seed-003", 16, 0, "restart", 64, 0.1),
    ("02-mazes.yaml", "validation-mazes-seed-000", 8, 0, "nothing", 64, 0.05),
    ("01-random.yaml", "validation-random-seed-010", 4, 0, "nothing", 64, 0.0),
    ("05-puzzles.yaml", "puzzle-12", 2, 4, "nothing", 32, 0.0),
    ("02-mazes.yaml", "validation-mazes-seed-005", 16, 0, "restart", 64, 0.1),
]
MOVES = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]


def _bfs(obstacles: np.ndarray, goal: tuple[int, int]) -> np.ndarray:
    h, w = obstacles.shape
    dist = np.full((h, w), -1, np.int64)
    dist[goal] = 0
    queue = deque([goal])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES[1:]:
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and not obstacles[nr, nc] and dist[nr, nc] < 0:
                dist[nr, nc] = dist[r, c] + 1
                queue.append((nr, nc))
    return dist


def main() -> None:
    import warnings

    from pogema_toolbox.create_env import Environment, create_env_base
    from pogema_toolbox.registry import ToolboxRegistry
    from pogema_toolbox.results_holder import ResultsHolder

    warnings.filterwarnings("ignore")
    cases = []
    for i, (file, name, n, seed, on_target, steps, noise) in enumerate(CASES):
        maps = yaml.safe_load((DATA / file).read_text())
        ToolboxRegistry.register_maps({name: maps[name]})
        cfg = Environment(
            map_name=name,
            num_agents=n,
            seed=seed,
            max_episode_steps=steps,
            on_target=on_target,
            observation_type="MAPF",
            collision_system="soft",
        )
        env = create_env_base(cfg)
        env.reset(seed=cfg.seed)
        grid = env.unwrapped.grid
        r = env.unwrapped.grid_config.obs_radius
        obstacles = np.asarray(grid.obstacles, bool)  # padded by r with obstacles
        starts = [[x - r, y - r] for x, y in grid.positions_xy]
        first_goals = [[x - r, y - r] for x, y in grid.finishes_xy]
        rng = np.random.default_rng(1000 + i)
        holder = ResultsHolder()
        actions = []
        while True:
            joint = []
            for a in range(n):
                pos = tuple(grid.positions_xy[a])
                dist = _bfs(obstacles, tuple(grid.finishes_xy[a]))
                best = [
                    k
                    for k, (dr, dc) in enumerate(MOVES)
                    if k and 0 <= dist[pos[0] + dr, pos[1] + dc] < dist[pos]
                ]
                if rng.random() < noise or not best:
                    joint.append(int(rng.integers(5)))
                else:
                    joint.append(int(best[int(rng.integers(len(best)))]))
            actions.append(joint)
            _, _, terminated, truncated, infos = env.step(joint)
            holder.after_step(infos)
            if all(terminated) or all(truncated):
                break
        metrics = {
            k: v
            for k, v in holder.get_final().items()
            if k in ("CSR", "ISR", "SoC", "makespan", "avg_throughput")
        }
        cases.append(
            {
                "map_file": file,
                "map_name": name,
                "num_agents": n,
                "seed": seed,
                "on_target": on_target,
                "max_episode_steps": steps,
                "starts": starts,
                "goals": first_goals,
                "actions": actions,
                "metrics": metrics,
            }
        )
        print(name, n, on_target, metrics, len(actions), "steps")
    import pogema
    import pogema_toolbox

    body = {
        "made_by": "scripts/pogema_protocol_fixtures.py",
        "pogema": pogema.__version__,
        "pogema_toolbox": getattr(pogema_toolbox, "__version__", "0.1.1"),
        "cases": cases,
    }
    write_fixture(OUT, body, f"{len(cases)} cases")


if __name__ == "__main__":
    main()
