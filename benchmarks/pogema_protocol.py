"""The POGEMA benchmark's protocol on alem: a policy over a whole evaluation configuration.

Each instance is a (map, agent count, seed) of the benchmark; its starts, goals and lifelong
goal sequences are POGEMA's own (:mod:`alem.envs.pathfinding.benchmark`, equal to the
benchmark's published scenarios), under POGEMA's ``soft`` collisions and observation radius 5.
All instances of one agent count run as one batch (maps padded to a common shape), each
for the configuration's episode length. The metrics are the env's POGEMA metrics (CSR, ISR,
SoC, makespan for MAPF; average throughput for lifelong MAPF), aggregated as the benchmark
does: a flat mean over the instances of an agent count, here with a Student-t 95% interval.
The published means of the benchmark's algorithms on the same instances sit beside them (only
for whole agent counts of a shipped set's own settings: ``--limit-maps`` and ``--config`` runs show none)
(``benchmarks/results/pogema_published.json``, from ``scripts/pogema_published.py``)::

    python -m benchmarks.pogema_protocol --set random --mode mapf --policy pibt bfs --out runs/pogema-random
    python -m benchmarks.pogema_protocol --set mazes --mode lmapf --policy pibt bfs --out runs/pogema-mazes-ll
    python -m benchmarks.pogema_protocol --maps my/maps.yaml --config my/eval.yaml --out runs/mine

``--set``/``--mode`` use the benchmark's settings for a shipped map set (:data:`PROTOCOL`);
``--maps``/``--config`` read any ``maps.yaml`` and evaluation YAML of the benchmark's format.
Policies (one or more per run, one table): ``pibt`` (:mod:`alem.envs.pathfinding.pibt`), ``bfs``
(:mod:`alem.envs.pathfinding.baseline`), both with BFS distances from a table built once per
map, ``random``, ``follow`` (the learned follower alem ships, an exported actor) and
``checkpoint:<run dir>``: the trained actor of a ``python -m alem.train`` run or of an exported
actor (IPPO with a shared actor, e.g. ``env=pathfinding_follow``), which plays every agent count
and map size from its local view; it samples its actions (greedy: ``checkpoint:<run dir>#greedy``,
``follow#greedy``) and gets the trained env's ``goal_direction`` channel
(:mod:`benchmarks.pogema_policies`). The output folder must not exist. Each block
(one policy on one agent count) is a flushed line of its ``blocks.jsonl`` as it ends, so a killed
run keeps its finished blocks; the same command with ``--resume`` runs only the rest (refused, one
line, if its settings differ from the saved ``settings.json``). ``instances.csv`` (one row per
instance), ``summary.csv`` and ``summary.json`` (per agent count, with the published means and the
machine) are written whole from all blocks at the end, and the table is printed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.algos.checkpoint_player import actor_actions, load_trained
from alem.cli import ArgumentParser, refuse_bad_args, refuse_unwritable
from alem.envs.pathfinding import baseline, pibt
from alem.envs.pathfinding import benchmark as B
from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding.env import PathfindingEnv
from alem.errors import AlemError, CorruptFileError
from alem.intervals import ci95
from alem.rundir import JsonlWriter, hold, read_jsonl, write_atomic
from benchmarks.pogema_policies import LEARNED, POLICIES, policy_label, policy_spec, trained_kwargs
from benchmarks.pogema_policies import digest as checkpoint_digest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "benchmarks" / "results" / "pogema_published.json"
#: (map set, mode) -> the benchmark's settings (its raw_data_{MAPF,LMAPF}/<set>/<set>.yaml).
PROTOCOL: dict[tuple[str, str], dict[str, Any]] = {
    ("random", "mapf"): {"max_steps": 128, "num_agents": [8, 16, 24, 32, 48, 64], "seeds": [0]},
    ("random", "lmapf"): {"max_steps": 256, "num_agents": [8, 16, 24, 32, 48, 64], "seeds": [0]},
    ("mazes", "mapf"): {"max_steps": 128, "num_agents": [8, 16, 24, 32, 48, 64], "seeds": [0]},
    ("mazes", "lmapf"): {"max_steps": 128, "num_agents": [8, 16, 24, 32, 48, 64], "seeds": [0]},
    ("puzzles", "mapf"): {"max_steps": 128, "num_agents": [2, 3, 4], "seeds": list(range(10))},
    ("puzzles", "lmapf"): {"max_steps": 256, "num_agents": [2, 3, 4], "seeds": list(range(10))},
}
#: Metrics per mode (the benchmark's), and the published algorithms shown beside alem's.
METRICS = {"mapf": ("CSR", "ISR", "SoC", "makespan"), "lmapf": ("avg_throughput",)}
COMPARED = {"mapf": ("LaCAM", "SCRIMP", "DCC"), "lmapf": ("RHCR", "Follower", "MATS-LP")}
#: The metrics the printed table compares (the benchmark's headline ones).
HEADLINE = {"mapf": ("CSR", "SoC"), "lmapf": ("avg_throughput",)}
OBS_RADIUS = 5  # POGEMA's default; no configuration of the benchmark sets another
#: In ``--out``: the run's settings (a resume must match them), and one flushed line per finished block.
SETTINGS_FILE, BLOCKS_FILE = "settings.json", "blocks.jsonl"


def instances_from_config(cfg: dict[str, Any], maps: dict[str, np.ndarray]) -> tuple[str, int, list[dict]]:
    """(mode, episode length, instances) of an evaluation YAML's ``environment`` block."""
    env_cfg = cfg["environment"]
    on_target = env_cfg.get("on_target", "nothing")
    if on_target not in ("nothing", "restart"):
        raise SystemExit(f"on_target {on_target!r}: the benchmark's modes are 'nothing' (MAPF) and 'restart'")
    if env_cfg.get("collision_system", "soft") != "soft":
        raise SystemExit("the benchmark uses collision_system 'soft'; this runner runs only that")
    mode = "mapf" if on_target == "nothing" else "lmapf"
    rows = B.expand_config(env_cfg)
    lengths = {int(r.get("max_episode_steps", 64)) for r in rows}
    if len(lengths) != 1:
        raise SystemExit(f"one episode length per configuration, got {sorted(lengths)}")
    out = []
    for r in rows:
        name = str(r.get("map_name"))
        if name not in maps:
            raise SystemExit(f"map {name!r} of the configuration is not in the map set")
        out.append({"map_name": name, "num_agents": int(r["num_agents"]), "seed": int(r.get("seed", 0))})
    return mode, lengths.pop(), out


def protocol_instances(map_set: str, mode: str, maps: dict[str, np.ndarray]) -> tuple[int, list[dict]]:
    spec = PROTOCOL[(map_set, mode)]
    rows = [
        {"map_name": name, "num_agents": n, "seed": s}
        for n in spec["num_agents"]
        for name in sorted(maps)
        for s in spec["seeds"]
    ]
    return spec["max_steps"], rows


def _stack(trees: list[Any]) -> Any:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def distance_table(obstacles: jax.Array) -> jax.Array:
    """int16 ``[H*W, H, W]``: BFS distances from every cell (rows of obstacle cells are unused)."""
    h, w = obstacles.shape
    cells = jnp.stack(jnp.divmod(jnp.arange(h * w), w), axis=1)
    return jnp.minimum(G.bfs_distances(~obstacles, cells), 32767).astype(jnp.int16)


def run_group(
    maps: dict[str, np.ndarray], rows: list[dict], mode: str, max_steps: int, policy: str, seed: int = 0
) -> list[dict[str, Any]]:
    """Every instance of ``rows`` (one agent count) as one batch; one metrics row per instance."""
    n = rows[0]["num_agents"]
    grids = [maps[r["map_name"]] for r in rows]
    env_mode = "lifelong" if mode == "lmapf" else "one_shot"
    # Each task once (lifelong goal sequences are built in Python): they size the env and fill its params.
    tasks = [B.instance_task(g, n, r["seed"], max_steps, env_mode) for g, r in zip(grids, rows, strict=True)]
    trained = trained_kwargs(policy) if policy.startswith("checkpoint:") else None
    env = _group_env(grids, tasks, n, env_mode, max_steps, trained)
    actor = None
    if trained is not None:
        learner, actor_params = load_trained(trained[0], env, transfer=True)
        actor = (learner, actor_params, trained[1])
    params = _stack(
        [
            B.instance_params(env, g, n, r["seed"], max_steps, task=t)
            for g, r, t in zip(grids, rows, tasks, strict=True)
        ]
    )
    keys = jax.random.split(jax.random.key(seed), len(rows))
    final = jax.jit(jax.vmap(lambda k, p: _episode(env, k, p, policy, max_steps, actor)))(keys, params)
    final = jax.device_get(final)
    out = []
    for i, r in enumerate(rows):
        out.append(
            {**r, **{m: float(final[m][i]) for m in METRICS[mode]}, "collisions": int(final["collisions"][i])}
        )
    return out


def _group_env(
    grids: list[np.ndarray], tasks: list[Any], n: int, env_mode: str, max_steps: int, trained: Any
) -> PathfindingEnv:
    """The env one batch runs in: the largest map's shape, long enough goal sequences."""
    height = max(g.shape[0] for g in grids)
    width = max(g.shape[1] for g in grids)
    return PathfindingEnv(
        num_agents=n,
        height=height,
        width=width,
        mode=env_mode,
        collision="soft",
        map_type="fixed",
        maps=B.pad_map(grids[0], height, width),
        max_steps=max_steps,
        obs_radius=OBS_RADIUS,
        lower_bounds=False,
        goal_sequence_len=max(g.shape[1] for _, g in tasks) if env_mode == "lifelong" else 1,
        goal_direction=bool(trained and trained[2].get("goal_direction", False)),
    )


def check_checkpoint(maps: dict[str, np.ndarray], row: dict, mode: str, max_steps: int, policy: str) -> None:
    """Raise :class:`AlemError` if a ``checkpoint:`` policy cannot play ``row`` (checked before any block)."""
    trained = trained_kwargs(policy)
    env_mode = "lifelong" if mode == "lmapf" else "one_shot"
    grid, n = maps[row["map_name"]], row["num_agents"]
    tasks = [B.instance_task(grid, n, row["seed"], max_steps, env_mode)]
    load_trained(trained[0], _group_env([grid], tasks, n, env_mode, max_steps, trained), transfer=True)


def _episode(
    env: PathfindingEnv, key: jax.Array, params: Any, policy: str, steps: int, actor: Any = None
) -> dict[str, jax.Array]:
    """The end-of-episode metrics (and collisions) of ``policy`` on one instance, over ``steps`` steps."""
    k_reset, k_ties, k_run = jax.random.split(key, 3)
    state, ts = env.reset(k_reset, params)
    table = distance_table(params.maps[0]) if policy in ("bfs", "pibt") else None
    w, n = env.width, env.num_agents
    ties = pibt.initial_priorities(k_ties, n)

    def goal_distances(state):  # [N, H, W], looked up rather than searched each step
        return table[state.goal[:, 0] * w + state.goal[:, 1]]

    def act(k, state, ts, priority):
        if actor is not None:  # the trained actor on every agent's own observation
            learner, actor_params, greedy = actor
            return actor_actions(learner, actor_params, ts.obs, ts.action_mask, k, greedy)
        if policy == "random":
            return jax.random.randint(k, (n,), 0, 5)
        if policy == "pibt":
            return pibt.joint_actions(
                k, env.obstacles(state), state.pos, goal_distances(state), priority, state.active
            )
        dist = goal_distances(state)
        keys = jax.random.split(k, n)
        return jax.vmap(lambda kk, i: baseline.action_from_distances(kk, env, state, i, dist[i]))(
            keys, jnp.arange(n)
        )

    names = ("CSR", "ISR", "SoC", "makespan", "avg_throughput", "collisions")
    blank = {m: jnp.zeros((), ts.info[m].dtype) for m in names}

    def body(carry, k):
        state, ts, priority, done, final = carry
        k_act, k_step = jax.random.split(k)
        state, ts2 = env.step(k_step, state, act(k_act, state, ts, priority), params)
        priority = pibt.next_priorities(priority, jnp.all(state.pos == state.goal, axis=1), ties)
        now = ts2.done & ~done  # the metrics of the episode's end (later steps are ignored)
        final = {m: jnp.where(now, ts2.info[m], final[m]) for m in names}
        return (state, ts2, priority, done | ts2.done, final), None

    (_, _, _, _, final), _ = jax.lax.scan(
        body, (state, ts, ties, jnp.bool_(False), blank), jax.random.split(k_run, steps)
    )
    return final


def summarise(rows: list[dict], mode: str, published: dict | None, map_set: str | None) -> list[dict]:
    table = []
    for n in sorted({r["num_agents"] for r in rows}):
        sub = [r for r in rows if r["num_agents"] == n]
        row: dict[str, Any] = {"num_agents": n, "instances": len(sub)}
        for m in METRICS[mode]:
            x = np.array([r[m] for r in sub], np.float64)
            row[m] = float(x.mean())
            row[f"{m}_ci95"] = ci95(x)
        if published and map_set:
            for algo in COMPARED[mode]:
                cell = (
                    published.get("MAPF" if mode == "mapf" else "LMAPF", {})
                    .get(map_set, {})
                    .get(algo, {})
                    .get(str(n))
                )
                # A mean over other instances is not a comparison: only the whole published set counts.
                same = cell is not None and cell.get("instances") == len(sub)
                for m in METRICS[mode]:
                    row[f"{algo}_{m}"] = cell.get(m) if same else None
        table.append(row)
    return table


def markdown(tables: dict[str, list[dict]], mode: str) -> str:
    """One row per agent count: each alem policy's headline metrics (with their 95% intervals),
    then the published algorithms' means on the same instances."""
    first = next(iter(tables.values()))
    algos = [a for a in COMPARED[mode] if any(r.get(f"{a}_{HEADLINE[mode][0]}") is not None for r in first)]
    head = [
        "agents",
        *(f"alem {p} {m}" for p in tables for m in HEADLINE[mode]),
        *(f"{a} {m}" for a in algos for m in HEADLINE[mode]),
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def fmt(v: Any, ci: Any = None) -> str:
        if v is None:
            return "-"
        s = f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
        return s + (f" ± {ci:.2g}" if ci is not None and not math.isnan(ci) else "")

    for i, r in enumerate(first):
        cells = [str(r["num_agents"])]
        cells += [fmt(t[i][m], t[i].get(f"{m}_ci95")) for t in tables.values() for m in HEADLINE[mode]]
        cells += [fmt(r.get(f"{a}_{m}")) for a in algos for m in HEADLINE[mode]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_settings(
    args: argparse.Namespace, labels: list[str], mode: str, max_steps: int, rows: list[dict], maps: dict
) -> dict[str, Any]:
    """Everything a run's results depend on (saved as ``settings.json``; a resume must match it)."""
    digest = hashlib.sha256()
    for name in sorted({r["map_name"] for r in rows}):  # the maps' cells, not only their names
        digest.update(f"{name}{maps[name].shape}".encode())
        digest.update(np.ascontiguousarray(maps[name]).tobytes())
    policies = []
    for policy, label in zip(args.policy, labels, strict=True):
        policies.append({"label": label, "checkpoint": checkpoint_digest(policy)})  # a label is only a folder name
    settings = dict(map_set=args.set, maps=digest.hexdigest(), mode=mode, max_steps=max_steps, seed=args.seed)
    settings.update(obs_radius=OBS_RADIUS, collision="soft", policies=policies, instances=rows)
    return json.loads(json.dumps(settings))  # as it reads back from the file


def check_resume(p: argparse.ArgumentParser, out: Path, settings: dict[str, Any]) -> None:
    """``p.error`` unless ``out`` holds a run of this command with the same ``settings``."""
    try:
        saved = json.loads((out / SETTINGS_FILE).read_text(encoding="utf-8"))
        if not isinstance(saved, dict):
            raise ValueError("not a JSON object")
    except FileNotFoundError:
        p.error(f"--resume: {out} holds no {SETTINGS_FILE}, so no run of this command; choose a new folder")
    except (OSError, ValueError) as e:
        p.error(f"--resume: {out}: its {SETTINGS_FILE} cannot be read ({e}); choose a new folder")
    differ = sorted(k for k in settings.keys() | saved.keys() if saved.get(k) != settings.get(k))
    if differ:  # never two settings' results in one table
        p.error(
            f"--resume: {out} holds a run of other settings (not the same: {', '.join(differ)}); "
            "a run folder belongs to the run that made it: resume it with its own settings, or choose a new folder"
        )


def finished_blocks(
    path: Path, labels: list[str], rows: list[dict], mode: str
) -> dict[tuple[str, int], dict]:
    """(policy, agent count) -> the record of each block finished in ``path`` (a torn last line is none).

    A record that is not a block of these settings raises :class:`CorruptFileError` (an edited file).
    """
    want = {(label, r["num_agents"]) for label in labels for r in rows}
    done = {}
    for record in read_jsonl(path):
        key = (record.get("policy"), record.get("num_agents"))
        got = record.get("instances")
        group = [(r["map_name"], r["seed"]) for r in rows if r["num_agents"] == key[1]]
        rows_ok = isinstance(got, list) and all(isinstance(r, dict) for r in got)
        if not (
            key in want
            and isinstance(record.get("seconds"), float)
            and rows_ok
            and [(r.get("map_name"), r.get("seed")) for r in got] == group
            and all(isinstance(r.get(m), float) for r in got for m in METRICS[mode])
        ):
            raise CorruptFileError(
                f"{path}: a line is not a block of this run ({str(record)[:60]}...); edited?"
            )
        done.setdefault(key, record)
    return done


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = ArgumentParser(prog="python -m benchmarks.pogema_protocol", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--set", choices=sorted(B.MAP_SETS), help="a shipped map set, with the benchmark's settings"
    )
    p.add_argument("--mode", choices=("mapf", "lmapf"), default="mapf")
    p.add_argument("--maps", type=Path, help="a maps.yaml (instead of --set)")
    p.add_argument("--config", type=Path, help="an evaluation YAML (with --maps; or with --set to override)")
    p.add_argument(
        "--policy",
        type=policy_spec,
        nargs="+",
        default=["pibt"],
        help=f"one or more, one table: {', '.join(POLICIES)}, {', '.join(LEARNED)} (shipped, learned), "
        "checkpoint:<run dir or exported actor>[#greedy]",
    )
    p.add_argument("--num-agents", type=int, nargs="*", help="only these agent counts")
    p.add_argument("--limit-maps", type=int, help="only the first K maps (by name): a quick look")
    p.add_argument("--seed", type=int, default=0, help="the policy's key (the instances are fixed)")
    p.add_argument(
        "--out", type=Path, required=True, help="a new folder for the results (refused if it exists)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out (same settings; a new run if none): keep its blocks, run the rest",
    )
    args = p.parse_args(argv)
    if (args.set is None) == (args.maps is None):
        p.error("give --set or --maps" if args.set is None else "give --set or --maps, not both")
    if args.maps is not None and args.config is None:
        p.error("--maps needs --config (the evaluation YAML)")
    for option, path in (("--maps", args.maps), ("--config", args.config)):
        if path is not None and not path.is_file():
            p.error(f"argument {option}: no file {path}")
    if args.out.exists() and not args.resume:
        p.error(
            f"{args.out} exists; results are never written over (continue the run there with --resume, "
            "or choose a new folder)"
        )
    if args.resume and args.out.exists() and not args.out.is_dir():
        p.error(f"--resume: {args.out} is a file, not a run folder")
    refuse_unwritable(p, args.out)
    counts = args.num_agents or []
    refuse_bad_args(
        p,
        [
            (
                "--limit-maps",
                args.limit_maps,
                args.limit_maps is None or args.limit_maps >= 1,
                "an integer >= 1",
            ),
            ("--num-agents", counts, all(n >= 1 for n in counts), "agent counts >= 1"),
            ("--seed", args.seed, args.seed >= 0, "an integer >= 0"),
        ],
    )
    maps = B.load_map_set(args.set or args.maps)
    if args.config is not None:
        mode, max_steps, rows = instances_from_config(B.load_config(args.config), maps)
    else:
        mode = args.mode
        max_steps, rows = protocol_instances(args.set, mode, maps)
    if args.limit_maps:
        keep = set(sorted({r["map_name"] for r in rows})[: args.limit_maps])
        rows = [r for r in rows if r["map_name"] in keep]
    if args.num_agents:
        rows = [r for r in rows if r["num_agents"] in set(args.num_agents)]
    if not rows:
        p.error("no instance left to run")
    labels = [policy_label(policy) for policy in args.policy]
    if len(set(labels)) != len(labels):
        p.error(f"two policies share a name in the tables: {labels}")
    settings = run_settings(args, labels, mode, max_steps, rows, maps)
    resumed = args.out.exists()
    if resumed:
        check_resume(p, args.out, settings)
    for policy, label in zip(args.policy, labels, strict=True):
        if policy.startswith("checkpoint:"):  # a checkpoint that cannot play here: nothing is written
            try:
                check_checkpoint(maps, rows[0], mode, max_steps, policy)
            except AlemError as e:
                p.error(f"{label}: {e}")
    try:
        if not resumed:
            args.out.mkdir()
        hold(args.out, what="--out ")
        if not resumed:
            write_atomic(args.out / SETTINGS_FILE, json.dumps(settings, indent=1) + "\n")
        # Read once held: no other process appends now.
        done = finished_blocks(args.out / BLOCKS_FILE, labels, rows, mode)
    except (AlemError, OSError) as e:  # in use by a resume going on, damaged, a folder made meanwhile
        p.error(f"--out {args.out}: {e}")
    results: list[dict] = []
    timings: dict[str, dict[int, float]] = {}
    counts = sorted({r["num_agents"] for r in rows})
    with JsonlWriter(args.out / BLOCKS_FILE) as blocks:  # cuts a torn last line first
        for policy, label in zip(args.policy, labels, strict=True):
            timings[label] = {}
            for n in counts:
                group = [r for r in rows if r["num_agents"] == n]
                block = done.get((label, n))
                if block is None:
                    t0 = time.perf_counter()
                    try:
                        group_rows = run_group(maps, group, mode, max_steps, policy, args.seed)
                    except AlemError as e:  # finished blocks stay; a resume runs the rest
                        raise SystemExit(
                            f"{label}, {n} agents: {e} [the finished blocks are kept in {args.out}; "
                            "continue with --resume]"
                        ) from None
                    block = {"policy": label, "num_agents": n, "seconds": time.perf_counter() - t0}
                    block["instances"] = group_rows
                    blocks.write(block)
                    said = f"in {block['seconds']:.1f} s (compile included)"
                else:
                    said = "kept from an earlier run"
                results += [{"policy": label, **r} for r in block["instances"]]
                timings[label][n] = block["seconds"]
                print(f"{label}, {n} agents: {len(group)} instances {said}", flush=True)
    published = json.loads(PUBLISHED.read_text())["results"] if PUBLISHED.is_file() else None
    shipped = args.set if args.config is None else None  # another configuration: other instances
    tables = {
        label: summarise([r for r in results if r["policy"] == label], mode, published, shipped)
        for label in labels
    }
    flat = [{"policy": policy, **row} for policy, table in tables.items() for row in table]
    write_atomic(args.out / "instances.csv", _csv(results))
    write_atomic(args.out / "summary.csv", _csv(flat))
    from benchmarks.harness import machine

    body = {
        "map_set": args.set or str(args.maps),
        "mode": mode,
        "policies": labels,
        "max_steps": max_steps,
        "obs_radius": OBS_RADIUS,
        "collision": "soft",
        "instances": len(results) // len(args.policy),
        "seconds_per_agent_count": timings,  # per policy, compile included (of the run that did the block)
        "published_source": None if published is None else json.loads(PUBLISHED.read_text())["commit"],
        "summary": tables,
        "machine": machine(),
    }
    write_atomic(args.out / "summary.json", json.dumps(body, indent=1) + "\n")
    print(markdown(tables, mode))
    print(f"results in {args.out}")
    return body


def _csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
