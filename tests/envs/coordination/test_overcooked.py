"""Overcooked against overcooked-ai 1.1.0 golden fixtures (scripts/overcooked_fixtures.py).

Every fixture episode is replayed through alem's env (one compiled replay per layout,
vmapped over its episodes): both cooks' cells, orientations and held objects, every object
on the grid (pots with their ingredients and cooking ticks, counters), soups delivered,
sparse and shaped rewards per player, ``done``, and a digest of the reference's lossless
observation, after reset and after every step. The edge cases (a soup cooked and delivered,
blocked and swapping cooks, an interact with every kind of tile) are shown to occur in the
fixtures, and the collision rules are also checked on states built directly.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from functools import cache
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.coordination.overcooked import Overcooked
from alem.envs.coordination.overcooked.layouts import LAYOUTS, compile_layout
from alem.envs.coordination.overcooked.types import CHANNEL_NAMES, DIRECTIONS, TILE_CHARS

FIXTURE = Path(__file__).parent / "fixtures" / "overcooked_golden.json.gz"
with gzip.open(FIXTURE, "rt") as _f:
    DOC = json.load(_f)
BY_NAME = {layout["name"]: layout for layout in DOC["layouts"]}
IDS = [f"overcooked_{name}-v0" for name in LAYOUTS]


@cache
def replay(name: str) -> tuple[dict, list[dict]]:
    """Replay every episode of a layout (shaping weight 1); host arrays ``[E, T + 1, ...]``."""
    layout = BY_NAME[name]
    env = Overcooked(name, reward_shaping=True)
    params = env.default_params
    episodes = layout["episodes"]
    steps = max(len(e["actions"]) for e in episodes)
    actions = np.full((len(episodes), steps, 2), 4, np.int32)  # padded with "stay"
    for k, e in enumerate(episodes):
        actions[k, : len(e["actions"])] = e["actions"]

    def record(state, ts):
        return {
            "pos": state.pos,
            "dir": state.dir,
            "held": state.held,
            "held_soup": state.held_soup,
            "obj": state.obj,
            "soup": state.soup,
            "tick": state.tick,
            "delivered": state.delivered,
            "time": state.time,
            "obs": ts.obs,
            "reward": ts.reward,
            "sparse": ts.info["sparse_reward"],
            "shaped": ts.info["shaped_reward"],
            "done": ts.done,
        }

    def run(acts):
        state, ts = env.reset(jax.random.key(0), params)

        def body(state, a):
            state, ts = env.step(jax.random.key(0), state, a, params)
            return state, record(state, ts)

        _, traj = jax.lax.scan(body, state, acts)
        first = record(state, ts)
        return jax.tree.map(lambda x0, xs: jnp.concatenate([x0[None], xs]), first, traj)

    out = jax.device_get(jax.jit(jax.vmap(run))(jnp.asarray(actions)))
    return out, episodes


def objects_at(rec: dict, k: int, t: int) -> list[list[int]]:
    obj = rec["obj"][k, t]
    rows = []
    for y, x in zip(*np.nonzero(obj), strict=True):
        kind = int(obj[y, x])
        o, to = (int(v) for v in rec["soup"][k, t, y, x]) if kind == 4 else (0, 0)
        tick = int(rec["tick"][k, t, y, x]) if kind == 4 else -1
        rows.append([int(x), int(y), kind, o, to, tick])
    return sorted(rows)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layout_matches_reference(name):
    layout = BY_NAME[name]
    compiled = compile_layout(LAYOUTS[name])
    terrain = ["".join(TILE_CHARS[t] for t in row) for row in compiled.terrain]
    assert terrain == layout["terrain"]
    assert compiled.start.tolist() == layout["start"]
    for key, value in layout["recipe_value"].items():
        o, t = map(int, key.split(","))
        assert compiled.recipe_value[o, t] == value, (key, value)
        assert compiled.cook_time[o, t] == layout["recipe_time"][key], key
    shaping = Overcooked(name).default_params
    assert float(shaping.placement_in_pot_rew) == layout["shaping"]["PLACEMENT_IN_POT_REW"]
    assert float(shaping.dish_pickup_rew) == layout["shaping"]["DISH_PICKUP_REWARD"]
    assert float(shaping.soup_pickup_rew) == layout["shaping"]["SOUP_PICKUP_REWARD"]


# cramped_room by default, the other layouts in the exhaustive tier
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n == "cramped_room" else pytest.mark.exhaustive) for n in LAYOUTS]
)
def test_replay_matches_reference_step_by_step(name):
    rec, episodes = replay(name)
    for k, e in enumerate(episodes):
        for t, frame in enumerate(e["frames"]):
            where = f"{name} episode {k} step {t}"
            assert rec["pos"][k, t].tolist() == frame["pos"], where
            assert rec["dir"][k, t].tolist() == frame["ori"], where
            held = [[int(rec["held"][k, t, i]), *map(int, rec["held_soup"][k, t, i])] for i in range(2)]
            assert held == frame["held"], where
            assert objects_at(rec, k, t) == frame["objects"], where
            assert int(rec["delivered"][k, t]) == frame["delivered"], where
            assert int(rec["time"][k, t]) == t, where
            digest = hashlib.sha1(rec["obs"][k, t].astype(np.int16).tobytes()).hexdigest()[:16]
            assert digest == frame["obs_sha1"], f"{where}: lossless observation differs"
            if t == 0:
                continue
            sparse, shaped = e["sparse"][t - 1], e["shaped"][t - 1]
            assert rec["sparse"][k, t].tolist() == sparse, where
            assert rec["shaped"][k, t].tolist() == shaped, where
            np.testing.assert_allclose(rec["reward"][k, t], sum(sparse) + np.asarray(shaped), err_msg=where)
            assert bool(rec["done"][k, t]) == e["done"][t - 1], where


def _events() -> Counter:
    """What the fixtures exercise: interacts by tile and effect, collisions, deliveries."""
    seen: Counter = Counter()
    for name, layout in BY_NAME.items():
        terrain = layout["terrain"]
        for e in layout["episodes"]:
            for t, acts in enumerate(e["actions"]):
                before, after = e["frames"][t], e["frames"][t + 1]
                pots = {(o[0], o[1]): o for o in before["objects"]}
                pots_after = {(o[0], o[1]): o for o in after["objects"]}
                intended = []
                for i, a in enumerate(acts):
                    x, y = before["pos"][i]
                    if a < 4:
                        dx, dy = DIRECTIONS[a]
                        cell = (x + dx, y + dy)
                        intended.append(cell if terrain[cell[1]][cell[0]] == " " else (x, y))
                    else:
                        intended.append((x, y))
                    if a != 5:
                        continue
                    dx, dy = DIRECTIONS[before["ori"][i]]
                    fx, fy = x + dx, y + dy
                    tile = terrain[fy][fx]
                    h0, h1 = before["held"][i][0], after["held"][i][0]
                    if tile == "X" and h0 and not h1:
                        seen["counter_place"] += 1
                    elif tile == "X" and not h0 and h1:
                        seen["counter_take"] += 1
                    elif tile in "OTD" and not h0 and h1:
                        seen[f"dispenser_{tile}"] += 1
                    elif tile == "P" and h0 in (1, 2) and not h1:
                        seen["pot_add"] += 1
                    elif tile == "P" and h0 == 3 and h1 == 4:
                        seen["pot_scoop"] += 1
                    elif tile == "P" and not h0 and pots.get((fx, fy), [0] * 6)[5] < 0:
                        if pots_after.get((fx, fy), [0] * 6)[5] >= 0:
                            seen["pot_start"] += 1
                    elif tile == "S" and h0 == 4 and not h1:
                        seen["serve"] += 1
                    elif h0 == h1:
                        seen[f"interact_no_effect_{tile}"] += 1
                p0, p1 = (tuple(p) for p in before["pos"])
                moved = [tuple(p) for p in after["pos"]] != [p0, p1]
                if intended[0] == intended[1]:
                    seen["vertex_block"] += 1
                    assert not moved
                elif intended[0] == p1 and intended[1] == p0:
                    seen["swap_block"] += 1
                    assert not moved
                elif intended[0] == p1 and intended[1] != p1 or intended[1] == p0 and intended[0] != p0:
                    seen["follow"] += 1
                if sum(e["sparse"][t]) > 0:
                    seen[f"paid_delivery_{name}"] += 1
    return seen


def test_fixtures_cover_the_edge_cases():
    seen = _events()
    for event in (
        "counter_place",
        "counter_take",
        "dispenser_O",
        "dispenser_T",
        "dispenser_D",
        "pot_add",
        "pot_start",
        "pot_scoop",
        "serve",
        "vertex_block",
        "swap_block",
        "follow",
        "interact_no_effect_ ",
        *(f"paid_delivery_{name}" for name in LAYOUTS),
    ):
        assert seen[event] > 0, (event, seen)
    # The 1.1.0 counter_circuit bonus order: onion + tomato pays 2 * (21 + 13).
    assert any(68 in map(sum, e["sparse"]) for e in BY_NAME["counter_circuit"]["episodes"])


def _state_with(env, pos, dirs=(0, 0)):
    state = env.initial_state()
    return state.replace(pos=jnp.asarray(pos, jnp.int32), dir=jnp.asarray(dirs, jnp.int32))


def test_blocked_and_swapping_cooks_stay_but_turn():
    env = Overcooked("cramped_room")
    step = jax.jit(env.step)
    key = jax.random.key(0)
    # Swap along row 1: (1,1) -> east, (2,1) -> west.
    state, _ = step(key, _state_with(env, [[1, 1], [2, 1]]), jnp.array([2, 3]))
    assert state.pos.tolist() == [[1, 1], [2, 1]] and state.dir.tolist() == [2, 3]
    # Both into (2,1) from (1,1) and (3,1).
    state, _ = step(key, _state_with(env, [[1, 1], [3, 1]]), jnp.array([2, 3]))
    assert state.pos.tolist() == [[1, 1], [3, 1]]
    # Into the cell of a cook who stays.
    state, _ = step(key, _state_with(env, [[1, 1], [2, 1]]), jnp.array([2, 4]))
    assert state.pos.tolist() == [[1, 1], [2, 1]] and state.dir.tolist() == [2, 0]
    # Following: 0 steps into the cell 1 leaves.
    state, _ = step(key, _state_with(env, [[1, 1], [2, 1]]), jnp.array([2, 2]))
    assert state.pos.tolist() == [[2, 1], [3, 1]]
    # A move into a counter only turns.
    state, _ = step(key, _state_with(env, [[1, 2], [3, 1]]), jnp.array([3, 0]))
    assert state.pos.tolist() == [[1, 2], [3, 1]] and state.dir.tolist() == [3, 0]


def test_full_pot_waits_for_an_interact_and_then_cooks_20_steps():
    env = Overcooked("cramped_room")
    step = jax.jit(env.step)
    key = jax.random.key(0)
    # Cook A below the pot (2,0) at (2,1) facing north with an onion; pot has 2 onions.
    state = _state_with(env, [[2, 1], [1, 2]])
    state = state.replace(
        held=jnp.array([1, 0]),
        obj=state.obj.at[0, 2].set(4),
        soup=state.soup.at[0, 2].set(jnp.array([2, 0])),
    )
    state, ts = step(key, state, jnp.array([5, 4]))
    assert int(state.soup[0, 2, 0]) == 3 and int(state.tick[0, 2]) == -1
    assert ts.info["shaped_reward"].tolist() == [3.0, 0.0]
    for _ in range(5):  # a full pot does not start by itself
        state, _ = step(key, state, jnp.array([4, 4]))
    assert int(state.tick[0, 2]) == -1
    state, _ = step(key, state, jnp.array([5, 4]))
    assert int(state.tick[0, 2]) == 1
    for _ in range(25):
        state, _ = step(key, state, jnp.array([4, 4]))
    assert int(state.tick[0, 2]) == 20  # stops at the cooking time


@pytest.mark.parametrize("env_id", IDS)
def test_registered_ids(env_id):
    env = alem.make(env_id)
    spec = alem.registry()[env_id]
    assert spec.family == "coordination" and spec.text and spec.reference == "overcooked-ai 1.1.0"
    assert env.observation_space(0).shape == (env.width, env.height, len(CHANNEL_NAMES))
    shaped = alem.make(env_id, reward_shaping=True, max_steps=50)
    assert float(shaped.default_params.shaping_factor) == 1.0 and int(shaped.default_params.max_steps) == 50


def test_text_and_rgb():
    env = alem.make("overcooked_counter_circuit-v0")
    state, _ = jax.jit(env.reset)(jax.random.key(0))  # compiled: faster than op-by-op
    text = env.render_text(state, 0)
    assert "facing north" in text and "Pot at column 3, row 0: empty." in text
    assert (
        env.parse_action("go left") == 3
        and env.parse_action("interact") == 5
        and env.parse_action("wait") == 4
    )
    assert "tomato" in env.rules_text()
    img = env.render_rgb(state)
    assert img.shape == (5 * 32, 9 * 32, 3) and img.dtype == np.uint8
