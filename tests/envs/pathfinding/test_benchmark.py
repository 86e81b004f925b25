"""The POGEMA benchmark's instances (alem.envs.pathfinding.benchmark): the shipped map sets,
POGEMA's placement and lifelong goals against the benchmark's published scenarios, and whole
episodes against pogema-toolbox's metrics.

Fixtures: ``pogema_benchmark_scenarios.json`` (a sample of the published scenarios, see its
``source``) and ``pogema_protocol.json`` (``scripts/pogema_protocol_fixtures.py``: episodes the
toolbox built and scored, with the joint actions played).
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem.envs.pathfinding import benchmark as B
from alem.envs.pathfinding.env import PathfindingEnv
from alem.errors import EnvArgumentError, MapFormatError

FIXTURES = Path(__file__).parent / "fixtures"
SCENARIOS = json.loads((FIXTURES / "pogema_benchmark_scenarios.json").read_text())
EPISODES = json.loads((FIXTURES / "pogema_protocol.json").read_text())["cases"]
FILE_SET = {v: k for k, v in B.MAP_SETS.items()}


@pytest.fixture(scope="module")
def sets():
    return _SETS


def test_the_shipped_sets_are_the_benchmarks(sets):
    assert {k: len(v) for k, v in sets.items()} == {"random": 128, "mazes": 128, "puzzles": 16}
    sizes = {s for m in sets["random"].values() for s in m.shape}
    assert min(sizes) == 17 and max(sizes) == 21
    assert all(m.shape == (5, 5) for m in sets["puzzles"].values())
    assert sets["puzzles"]["puzzle-00"].dtype == bool and sets["puzzles"]["puzzle-00"].any()


@pytest.mark.parametrize("case", SCENARIOS["mapf"], ids=lambda c: f"{c['map_name']}-{c['seed']}")
def test_placement_equals_the_published_scenarios(sets, case):
    grid = sets[case["set"]][case["map_name"]]
    n = len(case["agents_xy"])
    starts, goals = B.pogema_task(grid, n, case["seed"])
    assert starts.tolist() == case["agents_xy"] and goals.tolist() == case["targets_xy"]
    # Fewer agents: the first ones of the same placement, as the benchmark uses them.
    few = min(8, n - 1)
    few_starts, few_goals = B.pogema_task(grid, few, case["seed"])
    assert few_starts.tolist() == case["agents_xy"][:few] and few_goals.tolist() == case["targets_xy"][:few]


@pytest.mark.parametrize("case", SCENARIOS["lmapf"], ids=lambda c: c["map_name"])
def test_lifelong_goal_sequences_equal_the_published_ones(sets, case):
    grid = sets[case["set"]][case["map_name"]]
    starts, goals = B.pogema_task(grid, len(case["agents_xy"]), case["seed"])
    seq = B.pogema_goal_sequences(grid, starts, goals, case["seed"], case["max_episode_steps"])
    for i, published in enumerate(case["targets_xy"]):
        assert seq[i, : len(published)].tolist() == published, f"agent {i}"
        assert all(
            (seq[i, k] != seq[i, k + 1]).any() for k in range(seq.shape[1] - 1)
        )  # never the same cell twice


def test_a_map_too_small_for_the_agents_is_refused(sets):
    with pytest.raises(EnvArgumentError, match="cannot hold 20 agents"):
        B.pogema_task(sets["puzzles"]["puzzle-00"], 20, 0)


def test_expand_config_is_the_product_of_the_grid_searches():
    env = {"on_target": "nothing", "seed": {"grid_search": [0, 1]}, "num_agents": {"grid_search": [2, 3]}}
    rows = B.expand_config(env)
    assert [(r["seed"], r["num_agents"]) for r in rows] == [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert all(r["on_target"] == "nothing" for r in rows)
    with pytest.raises(EnvArgumentError, match="environment.seed.grid_search"):
        B.expand_config({"seed": {"grid_search": []}})


def test_bad_map_files_name_what_is_wrong(tmp_path):
    restricted = tmp_path / "w.yaml"
    restricted.write_text("w1: |-\n  .@.\n  .$.\n")
    with pytest.raises(MapFormatError, match=r"w1.*restricts start/goal cells"):
        B.load_map_set(restricted)
    flat = tmp_path / "flat.yaml"
    flat.write_text("- just\n- a list\n")
    with pytest.raises(MapFormatError, match="mapping of map name"):
        B.load_map_set(flat)
    with pytest.raises(EnvArgumentError, match="neither a shipped map set"):
        B.load_map_set(tmp_path / "missing.yaml")


# ---------------------------------------------------------------- whole episodes vs pogema-toolbox
#: Every episode runs on a map padded to this shape (the largest of the sets in the fixture), with
#: one compiled program per agent count: mode, episode length and map are params.
SHAPE = (21, 21)
_SETS = {name: B.load_map_set(name) for name in B.MAP_SETS}
SEQ_LEN = max(
    B.instance_task(
        _SETS[FILE_SET[c["map_file"]]][c["map_name"]],
        c["num_agents"],
        c["seed"],
        c["max_episode_steps"],
        "lifelong",
    )[1].shape[1]
    for c in EPISODES
    if c["on_target"] == "restart"
)


@pytest.fixture(scope="module")
def programs():
    cache = {}

    def get(n):
        if n not in cache:
            env = PathfindingEnv(
                num_agents=n,
                height=SHAPE[0],
                width=SHAPE[1],
                mode="one_shot",
                map_type="fixed",
                maps=np.zeros(SHAPE, bool),
                lower_bounds=False,
                goal_sequence_len=SEQ_LEN,
                max_steps=64,
            )

            @jax.jit
            def run(params, actions):
                state, _ = env.reset(jax.random.key(0), params)

                def body(carry, a):
                    state, done, final = carry
                    state, ts = env.step(jax.random.key(1), state, a, params)
                    final = {k: jnp.where(ts.done & ~done, ts.info[k], v) for k, v in final.items()}
                    return (state, done | ts.done, final), None

                blank = {
                    k: jnp.zeros((), jnp.float32) for k in ("CSR", "ISR", "SoC", "makespan", "avg_throughput")
                }
                (_, done, final), _ = jax.lax.scan(body, (state, jnp.bool_(False), blank), actions)
                return state, done, final

            cache[n] = (env, run)
        return cache[n]

    return get


@pytest.mark.parametrize(
    "case", EPISODES, ids=lambda c: f"{c['map_name']}-{c['num_agents']}-{c['on_target']}"
)
def test_replayed_toolbox_episodes_give_the_toolbox_metrics(sets, programs, case):
    grid = sets[FILE_SET[case["map_file"]]][case["map_name"]]
    n, steps = case["num_agents"], case["max_episode_steps"]
    env, run = programs(n)
    mode = "lifelong" if case["on_target"] == "restart" else "one_shot"
    params = B.instance_params(env, grid, n, case["seed"], steps, mode=mode)
    assert np.asarray(params.starts[0]).tolist() == case["starts"]
    assert np.asarray(params.goals[0, :, 0]).tolist() == case["goals"]
    state, done, final = run(params, jnp.asarray(case["actions"], jnp.int32))
    assert bool(done), "the episode ended where the toolbox's did"
    for metric, expected in case["metrics"].items():
        assert float(final[metric]) == pytest.approx(expected), metric
