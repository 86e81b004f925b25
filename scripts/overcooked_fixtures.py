"""Golden fixtures from overcooked-ai 1.1.0 for alem's Overcooked envs.

overcooked-ai 1.1.0 (``overcooked_ai_py``) needs an old gym, NumPy < 2 (it uses ``np.Inf``)
and SciPy (its motion planner, built by ``OvercookedEnv.step``), so it lives in a venv of its
own. This script builds that venv, then re-runs itself inside it to play seeded episodes and
write compact fixtures::

    python scripts/overcooked_fixtures.py                        # venv in ~/.cache/alem/overcooked-venv
    python scripts/overcooked_fixtures.py --venv /tmp/refvenv    # or anywhere else
    python scripts/overcooked_fixtures.py --python /tmp/refvenv/bin/python   # an existing venv

Output: ``tests/envs/coordination/fixtures/overcooked_golden.json.gz``. Per layout it records
the terrain (rows of ``X P O T D S`` and spaces), the start cells, the value and cooking
time of every soup (onions, tomatoes) as the reference prices it on that layout, and a few
episodes (``OvercookedGridworld.from_layout_name`` inside ``OvercookedEnv``, horizon 400)
played by a seeded policy that mixes uniformly random actions with a greedy cook (walk to
the nearest useful tile by BFS, face it, interact), at several mixing rates; two layouts
play the whole 400 steps. For every step it records the joint action, both players'
cells, orientations and held objects, every object on the grid (pots and counters: kind,
onions, tomatoes, cooking tick), the soups delivered so far, the sparse and shaped
rewards of each player, ``done``, and a digest (SHA-1 of the int16 bytes) of the
reference's ``lossless_state_encoding`` of both players. The script reads only
overcooked-ai and NumPy; it never imports alem, so the fixtures are independent of the
code they test.

Codes: actions follow ``Action.INDEX_TO_ACTION`` (0 north, 1 south, 2 east, 3 west,
4 stay, 5 interact); orientations ``Direction.INDEX_TO_DIRECTION`` (0 north, 1 south,
2 east, 3 west); objects 0 none, 1 onion, 2 tomato, 3 dish, 4 soup. Cells are ``(x, y)``
(x the column, y the row), as in overcooked-ai.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

from fixtures import ensure_venv, write_fixture

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "envs" / "coordination" / "fixtures" / "overcooked_golden.json.gz"
REQUIREMENTS = ["overcooked-ai==1.1.0", "numpy<2", "scipy"]
LAYOUTS = (
    "cramped_room",
    "asymmetric_advantages",
    "coordination_ring",
    "forced_coordination",
    "counter_circuit",
)
HORIZON = 400
# (share of random actions, steps) per episode; the first layouts in FULL play 400 steps.
EPISODES = ((0.15, 200), (0.4, 120), (1.0, 80))
FULL = ("cramped_room", "counter_circuit")
KIND = {None: 0, "onion": 1, "tomato": 2, "dish": 3, "soup": 4}


def _run_inside(args: argparse.Namespace) -> None:
    """Play every layout with overcooked-ai (runs inside its venv)."""
    import hashlib
    import warnings

    warnings.filterwarnings("ignore")
    import numpy as np
    from overcooked_ai_py.mdp.actions import Action, Direction
    from overcooked_ai_py.mdp.overcooked_env import OvercookedEnv
    from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld, Recipe

    dirs = Direction.INDEX_TO_DIRECTION  # (dx, dy) per orientation index

    def obj_row(obj):
        if obj is None:
            return [0, 0, 0, -1]
        if obj.name == "soup":
            ing = obj.ingredients
            return [4, ing.count("onion"), ing.count("tomato"), int(obj._cooking_tick)]
        return [KIND[obj.name], 0, 0, -1]

    def snapshot(env, state):
        enc = env.lossless_state_encoding_mdp(state)
        digest = hashlib.sha1(np.stack(enc).astype(np.int16).tobytes()).hexdigest()[:16]
        return {
            "pos": [list(p.position) for p in state.players],
            "ori": [Direction.DIRECTION_TO_INDEX[p.orientation] for p in state.players],
            "held": [obj_row(p.held_object)[:3] for p in state.players],
            "objects": sorted([*pos, *obj_row(obj)] for pos, obj in state.objects.items()),
            "delivered": int(sum(len(v) for v in env.game_stats["soup_delivery"])),
            "obs_sha1": digest,
        }

    def greedy(mdp, state, i, rng):
        """A cook: the action towards the nearest useful tile (None when there is none)."""
        terrain = mdp.terrain_mtx
        h, w = len(terrain), len(terrain[0])
        me = state.players[i]
        held = me.held_object.name if me.held_object else None
        pots = mdp.get_pot_states(state)
        ready = pots["ready"]
        cooking = pots["cooking"]
        full_idle = mdp.get_full_but_not_cooking_pots(pots)
        if mdp.get_tomato_dispenser_locations():  # start two-item soups too (onion + tomato is a bonus order)
            full_idle = full_idle + pots["2_items"]
            open_pots = pots["empty"] + pots["1_items"]
        open_pots = pots["empty"] + mdp.get_partially_full_pots(pots)
        counters = mdp.get_counter_locations()
        loose = [p for p in counters if state.has_object(p)]
        empty_counters = [p for p in counters if not state.has_object(p)]
        others_dish = any(
            p.held_object is not None and p.held_object.name == "dish"
            for j, p in enumerate(state.players)
            if j != i
        )
        if held == "soup":
            targets = [mdp.get_serving_locations()]
        elif held == "dish":
            targets = [ready, cooking, empty_counters]
        elif held in ("onion", "tomato"):
            lacking = [
                p for p in open_pots if not state.has_object(p) or held not in state.get_object(p).ingredients
            ]
            targets = [lacking, open_pots, empty_counters]
        else:
            disp = mdp.get_onion_dispenser_locations()
            if mdp.get_tomato_dispenser_locations():  # mix the soups: fetch what an open pot lacks
                inside = [state.get_object(p).ingredients for p in open_pots if state.has_object(p)]
                lacks_tomato = any("tomato" not in ing for ing in inside)
                if (lacks_tomato and rng.random() < 0.8) or (not inside and rng.random() < 0.4):
                    disp = mdp.get_tomato_dispenser_locations()
            first = full_idle + (
                [] if others_dish else mdp.get_dish_dispenser_locations() if ready + cooking else []
            )
            targets = [first, disp, loose]
        # BFS over floor cells from the player's cell.
        dist = {me.position: 0}
        first_move = {me.position: None}
        queue = deque([me.position])
        while queue:
            c = queue.popleft()
            for k in rng.permutation(4):
                dx, dy = dirs[k]
                n = (c[0] + dx, c[1] + dy)
                if 0 <= n[0] < w and 0 <= n[1] < h and terrain[n[1]][n[0]] == " " and n not in dist:
                    dist[n] = dist[c] + 1
                    first_move[n] = int(k) if first_move[c] is None else first_move[c]
                    queue.append(n)
        for group in targets:
            best = None
            for t in group:
                for k in range(4):
                    dx, dy = dirs[k]
                    stand = (t[0] - dx, t[1] - dy)  # facing direction k from `stand` looks at t
                    if stand in dist and (best is None or dist[stand] < best[0]):
                        best = (dist[stand], stand, k)
            if best is None:
                continue
            _, stand, k = best
            if stand == me.position:
                return 5 if dirs[k] == me.orientation else k  # a move into a tile only turns
            return first_move[stand]
        return None

    layouts = []
    for name in LAYOUTS:
        mdp = OvercookedGridworld.from_layout_name(name)  # configures Recipe for this layout
        env = OvercookedEnv.from_mdp(mdp, horizon=HORIZON, info_level=0)
        start = mdp.get_standard_start_state()
        values, times = {}, {}
        for o in range(4):
            for t in range(4 - o):
                if o + t == 0:
                    continue
                r = Recipe(["onion"] * o + ["tomato"] * t)
                values[f"{o},{t}"] = mdp.get_recipe_value(start, r)
                times[f"{o},{t}"] = r.time
        episodes = []
        for e, (eps, steps) in enumerate(EPISODES):
            steps = HORIZON if (e == 0 and name in FULL) else steps
            seed = 1000 * LAYOUTS.index(name) + e
            rng = np.random.default_rng(seed)
            env.reset()
            frames = [snapshot(env, env.state)]
            actions, sparse, shaped, dones = [], [], [], []
            for _ in range(steps):
                joint = []
                for i in range(mdp.num_players):
                    a = None if rng.random() < eps else greedy(mdp, env.state, i, rng)
                    joint.append(int(rng.integers(6)) if a is None else int(a))
                state, _, done, info = env.step(tuple(Action.INDEX_TO_ACTION[a] for a in joint))
                actions.append(joint)
                sparse.append([int(x) for x in info["sparse_r_by_agent"]])
                shaped.append([int(x) for x in info["shaped_r_by_agent"]])
                dones.append(bool(done))
                frames.append(snapshot(env, state))
                if done:
                    break
            episodes.append(
                {
                    "seed": seed,
                    "random_share": eps,
                    "actions": actions,
                    "frames": frames,
                    "sparse": sparse,
                    "shaped": shaped,
                    "done": dones,
                }
            )
            tot = sum(map(sum, sparse))
            print(f"{name} ep{e}: {len(actions)} steps, sparse {tot}, delivered {frames[-1]['delivered']}")
        layouts.append(
            {
                "name": name,
                "terrain": ["".join(row) for row in mdp.terrain_mtx],
                "start": [list(p) for p in mdp.start_player_positions],
                "recipe_value": values,
                "recipe_time": times,
                "shaping": dict(mdp.reward_shaping_params),
                "episodes": episodes,
            }
        )
    from importlib.metadata import version

    import overcooked_ai_py  # noqa: F401

    doc = {
        "generator": "scripts/overcooked_fixtures.py",
        "overcooked_ai_version": version("overcooked-ai"),
        "numpy_version": np.__version__,
        "horizon": HORIZON,
        "action_order": ["north", "south", "east", "west", "stay", "interact"],
        "layouts": layouts,
    }
    write_fixture(args.out, doc, f"{len(layouts)} layouts")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "alem" / "overcooked-venv")
    p.add_argument(
        "--python", type=Path, help="python of an existing venv with overcooked-ai 1.1.0 (skips --venv)"
    )
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.inside:
        _run_inside(args)
        return
    python = args.python or ensure_venv(
        args.venv, "overcooked_ai_py.mdp.overcooked_env", REQUIREMENTS, "overcooked-ai"
    )
    cmd = [os.fspath(python), "-W", "ignore", __file__, "--inside", "--out", os.fspath(args.out)]
    sys.exit(subprocess.run(cmd).returncode)


if __name__ == "__main__":
    main()
