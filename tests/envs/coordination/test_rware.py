"""Multi-robot warehouse: step-for-step equality with rware 2.0.0, the collision edge cases, text and
rendering.

The reference runs in this venv (rware 2.0.0 installs beside current jax/numpy/gymnasium). Each episode
starts from one state given to both envs (ours injected into rware, or rware's reset read into ours);
both then take the same actions, and robots (cells, headings, loads, messages), shelves, request
queues, rewards, dones and observations must agree on every step. rware draws the shelf that replaces
a delivered one from its own generator; the harness swaps that generator for one that returns the
shelf alem drew (``env.request_draws`` of the step key), so the trajectories stay comparable.
"""

from __future__ import annotations

import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.coordination.rware import ACTION_NAMES, RwareState, Warehouse
from alem.envs.coordination.rware.collisions import ProbeTables, set_iteration_order

try:  # the reference; tests that need it are skipped without it, the hand-checked ones still run
    from rware import warehouse as rw
except ImportError:
    rw = None
needs_rware = pytest.mark.skipif(rw is None, reason="reference missing: pip install rware==2.0.0")

# Action weights for reference episodes: forward and toggle more often than uniform, so robots meet,
# queue, load and deliver.
ACTION_P = np.array([0.1, 0.45, 0.15, 0.15, 0.15])
OBS_TYPES = {"flattened": "FLATTENED", "image": "IMAGE", "image_dict": "IMAGE_DICT"}
REWARDS = {0: "GLOBAL", 1: "INDIVIDUAL", 2: "TWO_STAGE"}


# ---------------------------------------------------------------------------------------- harness
class _Draws:
    """Stands in for rware's ``np_random``: ``choice(candidates)`` returns the candidate alem picks for
    the goal being checked (read from rware's ``step`` frame), from the uniforms of the step key."""

    def __init__(self, goals):
        self.goals = [tuple(g) for g in goals]
        self.u = None
        self.calls = 0

    def choice(self, candidates):
        frame = sys._getframe(1)
        g = self.goals.index((frame.f_locals["y"], frame.f_locals["x"]))  # rware: `for y, x in goals`
        count = len(candidates)
        k = min(int(np.floor(np.float32(self.u[g]) * np.float32(count))), count - 1)
        self.calls += 1
        return candidates[k]


def make_ref(env: Warehouse, layout: str | None = None):
    """rware's env with the same configuration as ``env`` (and the draw stand-in)."""
    p = env.default_params
    kwargs = {}
    if env.observation_type != "flattened":
        kwargs["image_observation_layers"] = [rw.ImageLayer[name.upper()] for name in env.image_layers]
        kwargs["image_observation_directional"] = env.image_directional
    ref = rw.Warehouse(
        shelf_columns=3,
        column_height=8,
        shelf_rows=1,
        n_agents=env.num_agents,
        msg_bits=env.msg_bits,
        sensor_range=env.sensor_range,
        request_queue_size=env.request_queue_size,
        max_inactivity_steps=None
        if int(p.max_inactivity_steps) >= 2**31 - 1
        else int(p.max_inactivity_steps),
        max_steps=None if int(p.max_steps) >= 2**31 - 1 else int(p.max_steps),
        reward_type=rw.RewardType[REWARDS[int(p.reward_type)]],
        layout=layout_string(env),
        observation_type=rw.ObservationType[OBS_TYPES[env.observation_type]],
        normalised_coordinates=env.normalised_coordinates,
        **kwargs,
    )
    ref.reset(seed=0)
    ref._np_random = _Draws([(int(c), int(r)) for r, c in env.layout.goals])
    return ref


def layout_string(env: Warehouse) -> str:
    """The env's layout as an rware layout string (so every layout is built the same way in rware)."""
    chars = np.where(env.layout.highway, ".", "x").astype(object)
    for r, c in env.layout.goals:
        chars[r, c] = "g"
    return "\n".join("".join(row) for row in chars)


def inject(ref, s: dict) -> None:
    """Put one (host) alem state into rware."""
    for k, shelf in enumerate(ref.shelfs):
        shelf.y, shelf.x = (int(v) for v in s["shelf_pos"][k])
    for i, agent in enumerate(ref.agents):
        agent.y, agent.x = (int(v) for v in s["agent_pos"][i])
        agent.dir = rw.Direction(int(s["agent_dir"][i]))
        c = int(s["carrying"][i])
        agent.carrying_shelf = ref.shelfs[c] if c >= 0 else None
        agent.has_delivered = bool(s["has_delivered"][i])
        agent.message = np.asarray(s["message"][i], np.float64).copy()
    ref.request_queue = [ref.shelfs[int(q)] for q in s["request_queue"]]
    ref._cur_steps = int(s["step"])
    ref._cur_inactive_steps = int(s["inactive_steps"])
    ref._recalc_grid()


def read_ref(ref) -> dict:
    """rware's state as an (unbatched, host) alem state dict."""
    index = {id(shelf): k for k, shelf in enumerate(ref.shelfs)}
    msg = len(ref.agents[0].message)
    return dict(
        agent_pos=np.array([[a.y, a.x] for a in ref.agents], np.int32),
        agent_dir=np.array([a.dir.value for a in ref.agents], np.int32),
        carrying=np.array(
            [index[id(a.carrying_shelf)] if a.carrying_shelf else -1 for a in ref.agents], np.int32
        ),
        has_delivered=np.array([a.has_delivered for a in ref.agents], bool),
        message=np.array([a.message for a in ref.agents], np.float32).reshape(len(ref.agents), msg),
        shelf_pos=np.array([[s.y, s.x] for s in ref.shelfs], np.int32),
        request_queue=np.array([index[id(s)] for s in ref.request_queue], np.int32),
        step=np.int32(ref._cur_steps),
        inactive_steps=np.int32(ref._cur_inactive_steps),
    )


def ref_obs(ref) -> np.ndarray:
    obs = [ref._make_obs(a) for a in ref.agents]
    if isinstance(obs[0], dict):
        obs = [np.concatenate([o["image"].reshape(-1), o["features"]]) for o in obs]
    return np.stack(obs).astype(np.float32)


def stack_states(states: list[dict]) -> RwareState:
    return RwareState(**{k: jnp.asarray(np.stack([s[k] for s in states])) for k in states[0]})


@functools.cache
def runner(env: Warehouse):
    """Jitted: start states [B] + actions [T, B, N] + keys [T, B] -> our trajectory [B, T]."""
    params = env.default_params

    def one(s0, acts, keys):
        def body(s, inp):
            a, k = inp
            s2, ts = env.step(k, s, a, params)
            return s2, (s2, ts, env.request_draws(k))

        _, (states, tss, draws) = jax.lax.scan(body, s0, (acts, keys))
        return env.observe(s0, params), states, tss, draws

    return jax.jit(jax.vmap(one, (0, 1, 1)))


@functools.cache
def jit_step(env: Warehouse):
    return jax.jit(env.step)


@functools.cache
def batched_reset(env: Warehouse):
    return jax.jit(jax.vmap(env.reset, (0, None)))


STATE_KEYS = ("agent_pos", "agent_dir", "carrying", "has_delivered", "message", "shelf_pos", "request_queue")


def compare_episodes(env: Warehouse, starts: list[dict], seed: int, steps: int, action_p=ACTION_P) -> dict:
    """Run every start in both envs under the same random actions; assert equality each step."""
    rng = np.random.default_rng(seed)
    b, n = len(starts), env.num_agents
    moves = rng.choice(5, size=(steps, b, n), p=action_p)
    messages = rng.integers(0, 2**env.msg_bits, size=(steps, b, n))
    actions = (moves + 5 * messages).astype(np.int32)
    keys = jax.random.split(jax.random.key(seed), steps * b).reshape(steps, b)
    obs0, states, tss, draws = jax.device_get(runner(env)(stack_states(starts), jnp.asarray(actions), keys))
    ref = make_ref(env)
    stats = dict.fromkeys(("steps", "moves", "blocked", "deliveries", "pickups", "drops", "truncated"), 0)
    for e in range(b):
        inject(ref, starts[e])
        np.testing.assert_array_equal(obs0[e], ref_obs(ref), err_msg=f"reset obs, episode {e}")
        for t in range(steps):
            before = read_ref(ref)
            ref._np_random.u = draws[e, t]
            if env.msg_bits:
                bits = (messages[t, e][:, None] >> np.arange(env.msg_bits)) & 1
                ref_actions = [[int(m), *map(int, bb)] for m, bb in zip(moves[t, e], bits, strict=True)]
            else:
                ref_actions = [int(a) for a in actions[t, e]]
            nobs, rewards, done, truncated, _ = ref.step(ref_actions)
            got = read_ref(ref)
            where = f"episode {e} step {t + 1}"
            for k in STATE_KEYS:
                if not np.array_equal(getattr(states, k)[e, t], got[k]):
                    np.testing.assert_array_equal(
                        getattr(states, k)[e, t], got[k], err_msg=f"{k}, {where}, before {before}"
                    )
            assert int(states.step[e, t]) == got["step"]
            assert int(states.inactive_steps[e, t]) == got["inactive_steps"]
            np.testing.assert_array_equal(tss.reward[e, t], np.asarray(rewards, np.float32), err_msg=where)
            assert not truncated and not bool(tss.terminated[e, t])  # rware reports the limits as done
            assert bool(tss.truncated[e, t]) == done, where
            np.testing.assert_array_equal(tss.obs[e, t], ref_obs(ref), err_msg=f"obs, {where}")
            if isinstance(nobs[0], np.ndarray):
                np.testing.assert_array_equal(tss.obs[e, t], np.stack(nobs).astype(np.float32))
            fwd = moves[t, e] == 1
            moved = (got["agent_pos"] != before["agent_pos"]).any(-1)
            stats["steps"] += 1
            stats["moves"] += int(moved.sum())
            stats["blocked"] += int((fwd & ~moved).sum())
            stats["deliveries"] += int(ref._np_random.calls)
            ref._np_random.calls = 0
            stats["pickups"] += int(((before["carrying"] < 0) & (got["carrying"] >= 0)).sum())
            stats["drops"] += int(((before["carrying"] >= 0) & (got["carrying"] < 0)).sum())
            if done:
                stats["truncated"] += 1
                break
    return stats


def our_starts(env: Warehouse, seed: int, count: int) -> list[dict]:
    states, _ = jax.device_get(
        batched_reset(env)(jax.random.split(jax.random.key(seed), count), env.default_params)
    )
    return [jax.tree.map(lambda x, i=i: np.asarray(x[i]), states).__dict__ for i in range(count)]


def ref_starts(env: Warehouse, seed: int, count: int) -> list[dict]:
    ref = make_ref(env)
    out = []
    for k in range(count):
        draws = ref._np_random
        ref._np_random = None
        ref.reset(seed=seed * 100_000 + k)
        ref._np_random = draws
        out.append(read_ref(ref))
    return out


def state_dict(env: Warehouse, agents, queue=None) -> dict:
    """A host state: ``agents`` as ``(row, col, direction, carried shelf home (row, col) or None)``;
    a carried shelf sits on its robot, every other shelf at home."""
    homes = env.layout.shelf_home
    shelf_pos = homes.copy()
    carrying = []
    for r, c, _, shelf in agents:
        k = -1
        if shelf is not None:
            k = int(np.flatnonzero((homes == shelf).all(1))[0])
            shelf_pos[k] = (r, c)
        carrying.append(k)
    n = len(agents)
    q = list(range(env.request_queue_size)) if queue is None else list(queue)
    return dict(
        agent_pos=np.array([[r, c] for r, c, _, _ in agents], np.int32),
        agent_dir=np.array([d for _, _, d, _ in agents], np.int32),
        carrying=np.array(carrying, np.int32),
        has_delivered=np.zeros(n, bool),
        message=np.zeros((n, env.msg_bits), np.float32),
        shelf_pos=shelf_pos.astype(np.int32),
        request_queue=np.array(q, np.int32),
        step=np.int32(0),
        inactive_steps=np.int32(0),
    )


def step_both(env: Warehouse, s: dict, actions, key=0):
    """One step of ours and of rware from ``s``; asserts they agree; returns (state dict, reward)."""
    k = jax.random.key(key)
    ours, ts = jit_step(env)(
        k, RwareState(**{kk: jnp.asarray(v) for kk, v in s.items()}), jnp.asarray(actions, jnp.int32)
    )
    ours = jax.tree.map(np.asarray, ours).__dict__
    if rw is not None:
        ref = make_ref(env)
        inject(ref, s)
        ref._np_random.u = np.asarray(env.request_draws(k))
        _, rewards, _, _, _ = ref.step([int(a) for a in actions])
        got = read_ref(ref)
        for name in STATE_KEYS:
            np.testing.assert_array_equal(ours[name], got[name], err_msg=name)
        np.testing.assert_array_equal(np.asarray(ts.reward), np.asarray(rewards, np.float32))
        np.testing.assert_array_equal(np.asarray(ts.obs), ref_obs(ref))
    return ours, np.asarray(ts.reward)


def moved(before: dict, after: dict) -> list[bool]:
    return (before["agent_pos"] != after["agent_pos"]).any(-1).tolist()


# tiny: 11 x 10, corridors in columns 0, 3-6 and 9 and rows 0, 9 and 10; goals (10, 4) and (10, 5).
UP, DOWN, L, R = range(4)
N_, F, TL, TR, TOG = range(5)
OPEN = "x.....x\n.......\n.......\n.......\n.......\nx..g..x"  # an open floor, shelves in the corners


@functools.cache
def tiny(n: int, **kw) -> Warehouse:
    return Warehouse(num_agents=n, **kw)


# ------------------------------------------------------------------------------------- edge cases
def test_chain_follows_its_head_into_a_free_cell():
    env = tiny(3)
    s = state_dict(env, [(9, 1, R, None), (9, 2, R, None), (9, 3, R, None)])
    after, _ = step_both(env, s, [F, F, F])
    assert moved(s, after) == [True, True, True]
    np.testing.assert_array_equal(after["agent_pos"], [[9, 2], [9, 3], [9, 4]])


def test_chain_behind_a_robot_that_stays_stays():
    env = tiny(3)
    s = state_dict(env, [(9, 1, R, None), (9, 2, R, None), (9, 3, R, None)])
    after, _ = step_both(env, s, [F, F, N_])
    assert moved(s, after) == [False, False, False]


def test_two_robots_swapping_cells_both_stay():
    env = tiny(3)
    s = state_dict(env, [(9, 1, R, None), (9, 2, L, None), (9, 0, R, None)])
    after, _ = step_both(env, s, [F, F, F])  # robot 2 queues behind the swap
    assert moved(s, after) == [False, False, False]


def test_a_rotation_of_four_robots_turns():
    env = tiny(5)
    cycle = [(0, 1, R, None), (0, 2, DOWN, None), (1, 2, L, None), (1, 1, UP, None)]
    s = state_dict(env, [*cycle, (0, 0, R, None)])  # robot 4 queues behind the rotation
    after, _ = step_both(env, s, [F] * 5)
    assert moved(s, after) == [True, True, True, True, False]
    np.testing.assert_array_equal(after["agent_pos"][:4], [[0, 2], [1, 2], [1, 1], [0, 1]])


def test_two_robots_into_one_cell_exactly_one_enters():
    env = tiny(2)
    s = state_dict(env, [(9, 3, R, None), (8, 4, DOWN, None)])
    after, _ = step_both(env, s, [F, F])
    assert sum(moved(s, after)) == 1
    # A longer chain beats a single robot, whatever the order.
    env = tiny(3)
    s = state_dict(env, [(8, 4, DOWN, None), (9, 3, R, None), (9, 2, R, None)])
    after, _ = step_both(env, s, [F, F, F])
    assert moved(s, after) == [False, True, True]


def test_tie_in_a_small_component_follows_the_cpython_set_order():
    """Robots 2 and 3 drive into (4, 5); their component holds 3 of the graph's 7 nodes, so networkx
    lists it in the order of a CPython set, where robot 3 comes first (insertion order would pick 2)."""
    env = Warehouse(layout=OPEN, num_agents=4, request_queue_size=1)
    s = state_dict(env, [(0, 5, L, None), (0, 1, R, None), (4, 6, L, None), (5, 5, UP, None)], queue=[0])
    after, _ = step_both(env, s, [F] * 4)
    assert moved(s, after) == [True, True, False, True]


def test_set_iteration_order_matches_cpython():
    tables = ProbeTables.build(12, 12, 30)
    order = jax.jit(lambda seq, c: set_iteration_order(tables, seq, c))
    rng = np.random.default_rng(0)
    for m in (1, 3, 4, 5, 6, 12, 18, 19, 20, 27):
        cells = rng.choice(144, m, replace=False)
        python = set()
        for x in cells:
            python.add((int(x) % 12, int(x) // 12))  # rware's nodes are (x, y) tuples
        seq = np.full(30, -1, np.int32)
        seq[:m] = cells
        got = np.asarray(order(jnp.asarray(seq), m))
        np.testing.assert_array_equal(got[:m], [y * 12 + x for x, y in python])
        assert (got[m:] == -1).all()


def test_a_loaded_robot_cannot_enter_a_standing_shelf_but_follows_a_loaded_robot():
    env = tiny(4)
    s = state_dict(
        env,
        [
            (0, 2, DOWN, (1, 1)),  # loaded, facing the standing shelf at (1, 2): cancelled
            (0, 7, DOWN, None),  # unloaded: drives under the shelf at (1, 7)
            (0, 4, R, (1, 8)),  # loaded, drives on
            (0, 3, R, (2, 8)),  # loaded, follows the loaded robot
        ],
    )
    after, _ = step_both(env, s, [F, F, F, F])
    assert moved(s, after) == [False, True, True, True]
    # The carried shelves move with their robots.
    np.testing.assert_array_equal(after["shelf_pos"][after["carrying"][2:]], [[0, 5], [0, 4]])
    # Behind a loaded robot that stays, and into an empty shelf cell.
    s = state_dict(env, [(0, 4, R, (1, 8)), (0, 3, R, (2, 8)), (0, 1, DOWN, (1, 1)), (0, 8, L, None)])
    after, _ = step_both(env, s, [N_, F, F, N_])
    assert moved(s, after) == [False, False, True, False]


def test_load_unload_and_deliveries_for_every_reward_type():
    for reward_type in ("individual", "global", "two_stage"):
        env = tiny(2, reward_type=reward_type)
        s = state_dict(env, [(9, 4, DOWN, (1, 1)), (5, 1, UP, None)], queue=[0, 5])
        after, reward = step_both(env, s, [F, TOG], key=3)  # deliver shelf 0; robot 1 picks up
        expected = {"individual": [1, 0], "global": [1, 1], "two_stage": [0.5, 0]}[reward_type]
        np.testing.assert_array_equal(reward, expected)
        assert 0 not in after["request_queue"].tolist() and after["carrying"][1] >= 0
        assert after["inactive_steps"] == 0
        # Back to an empty shelf cell and put down: the second half of the two-stage reward.
        s = state_dict(env, [(1, 1, UP, (1, 1)), (0, 0, R, None)], queue=[3, 5])
        s["has_delivered"][0] = True
        after, reward = step_both(env, s, [TOG, TOG])
        np.testing.assert_array_equal(reward, [0.5 if reward_type == "two_stage" else 0, 0])
        assert after["carrying"][0] == -1 and not after["has_delivered"][0]
        # Not on a corridor: nothing happens.
        s = state_dict(env, [(0, 1, UP, (1, 1)), (0, 0, R, None)], queue=[3, 5])
        after, _ = step_both(env, s, [TOG, N_])
        assert after["carrying"][0] >= 0


# --------------------------------------------------------------------------- lockstep with rware
CROWDED = "x..x..x\n.......\n.x..x..\n.......\nx.g.g.x"  # 5 x 7, two goals, six shelves
# 10 x 10: rware writes the agent_direction and agent_load planes transposed, which only stays
# inside the grid when it is square.
SQUARE = "\n".join([".........."] + [".xx.xx.xx."] * 6 + [".........."] * 2 + ["....gg...."])
# Small crowded warehouses so queues, ties, rotations, loads and deliveries happen often. Each config
# is one compile of the runner, so the default set is small and each covers several options.
FAST_CONFIGS = {
    "crowded_msg_two_stage": dict(
        layout=CROWDED,
        num_agents=6,
        request_queue_size=3,
        msg_bits=1,
        sensor_range=2,
        reward_type="two_stage",
        max_inactivity_steps=25,
        normalised_coordinates=True,
    ),
    "square_8ag_image_global": dict(
        layout=SQUARE,
        num_agents=8,
        observation_type="image",
        image_observation_layers=(
            "shelves",
            "requests",
            "agents",
            "agent_direction",
            "agent_load",
            "goals",
            "accessible",
        ),
        reward_type="global",
        request_queue_size=6,
    ),
    "2x3_5ag_imagedict_undirected": dict(
        num_agents=5,
        column_height=3,
        shelf_rows=2,
        observation_type="image_dict",
        image_observation_directional=False,
        request_queue_size=3,
    ),
}
SLOW_CONFIGS = {
    **{
        f"preset_{k}": dict(size=k.split("_")[0], num_agents=int(k.split("_")[1]))
        for k in ("tiny_2", "tiny_4", "small_4", "medium_4", "large_4")
    },
    "tiny_4ag_hard_normalised": dict(
        num_agents=4, difficulty="hard", normalised_coordinates=True, max_steps=60
    ),
    "crowded_10ag_global": dict(layout=CROWDED, num_agents=10, request_queue_size=2, reward_type="global"),
    "open_12ag_msg2": dict(layout=OPEN, num_agents=12, request_queue_size=2, msg_bits=2),
}


@needs_rware
# the first config by default, the others in the exhaustive tier
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=() if i == 0 else pytest.mark.exhaustive) for i, n in enumerate(FAST_CONFIGS)],
)
def test_lockstep_with_rware(name):
    env = Warehouse(**FAST_CONFIGS[name])
    starts = our_starts(env, 0, 5) + ref_starts(env, 1, 5)
    stats = compare_episodes(env, starts, seed=0, steps=40)
    assert stats["blocked"] > 0 and stats["moves"] > 0
    assert stats["pickups"] > 0 and stats["drops"] > 0
    if "max_inactivity_steps" in FAST_CONFIGS[name]:
        assert stats["truncated"] > 0


@needs_rware
@pytest.mark.exhaustive  # the default run's budget (~9 s)
def test_lockstep_deliveries_happen():
    """Robots that start loaded next to the goals deliver (and the replacement draw is fed to rware)."""
    env = Warehouse(**FAST_CONFIGS["crowded_msg_two_stage"])
    base = our_starts(env, 5, 12)
    starts = []
    for k, s in enumerate(base):
        s = {key: np.array(v) for key, v in s.items()}
        queued = s["request_queue"]
        # Robot 0 carries a requested shelf; put it beside a goal, facing it.
        s["agent_pos"][0] = (3, 2 + 2 * (k % 2))
        others = (s["agent_pos"][1:] == s["agent_pos"][0]).all(-1)
        s["agent_pos"][1:][others] = (0, 1)
        if len({tuple(p) for p in s["agent_pos"]}) < env.num_agents:
            continue
        s["agent_dir"][0] = 1
        s["carrying"][0] = queued[0]
        s["shelf_pos"][queued[0]] = s["agent_pos"][0]
        starts.append(s)
    stats = compare_episodes(env, starts, seed=3, steps=25, action_p=np.array([0.05, 0.6, 0.1, 0.1, 0.15]))
    assert stats["deliveries"] > 0


@needs_rware
@pytest.mark.exhaustive
@pytest.mark.parametrize("name", list(FAST_CONFIGS) + list(SLOW_CONFIGS))
def test_lockstep_with_rware_many_episodes(name):
    env = Warehouse(**{**FAST_CONFIGS, **SLOW_CONFIGS}[name])
    starts = our_starts(env, 10, 30) + ref_starts(env, 11, 30)
    stats = compare_episodes(env, starts, seed=10, steps=150)
    assert stats["blocked"] > 0 and stats["pickups"] > 0


@needs_rware
@pytest.mark.parametrize("env_id", [k for k in alem.registry() if k.startswith("rware")])
def test_registered_ids_match_rwares_tasks(env_id):
    import gymnasium as gym

    env = alem.make(env_id)
    rware_id = alem.registry()[env_id].description.rsplit("(", 1)[1].rstrip(")")
    ref = gym.make(rware_id).unwrapped
    assert (env.rows, env.cols) == ref.grid_size
    assert env.num_agents == ref.n_agents
    assert env.request_queue_size == ref.request_queue_size
    assert int(env.default_params.max_steps) == ref.max_steps
    assert env.sensor_range == ref.sensor_range and env.msg_bits == ref.msg_bits
    np.testing.assert_array_equal(env.layout.highway, ref.highways.astype(bool))
    assert [(int(c), int(r)) for r, c in env.layout.goals] == [tuple(g) for g in ref.goals]
    assert env.observation_space(0).shape == ref.observation_space[0].shape


# ---------------------------------------------------------------------------------- reset, text
def test_reset_draws_distinct_cells_and_distinct_requests():
    env = tiny(4)
    states, ts = batched_reset(env)(jax.random.split(jax.random.key(0), 400), env.default_params)
    pos = np.asarray(states.agent_pos)
    flat = pos[..., 0] * env.cols + pos[..., 1]
    assert all(len(set(row)) == env.num_agents for row in flat)
    assert all(len(set(q)) == env.request_queue_size for q in np.asarray(states.request_queue))
    # Uniform over all cells (shelf cells included) and all headings.
    counts = np.bincount(flat.reshape(-1), minlength=env.rows * env.cols)
    assert counts.min() > 0 and (~env.layout.highway[pos[..., 0], pos[..., 1]]).mean() > 0.2
    assert set(np.asarray(states.agent_dir).reshape(-1).tolist()) == {0, 1, 2, 3}
    assert (np.asarray(states.carrying) == -1).all()


def test_text_hooks_and_rendering():
    env = alem.make("rware_tiny_4ag-v0")
    state, _ = jax.jit(env.reset)(jax.random.key(0))  # compiled: faster than op-by-op
    assert env.action_names() == list(ACTION_NAMES)
    for text, action in (
        ("forward", 1),
        ("Move forward.", 1),
        ("turn left", 2),
        ("I will turn right", 3),
        ("toggle load", 4),
        ("pick up", 4),
        ("put down", 4),
        ("noop", 0),
        ("wait", 0),
        ("4", 4),
    ):
        assert env.parse_action(text) == action, text
    assert env.parse_action("left or right") is None
    rules = env.rules_text(agent=1)
    assert "robot B" in rules and "500 steps" in rules
    view = env.render_text(state, agent=0)
    assert "You are robot A" in view and "G" in view
    img = env.render_rgb(state)
    assert img.shape == (env.rows * 24, env.cols * 24, 3) and img.dtype == np.uint8
    msg = Warehouse(msg_bits=2)
    names = msg.action_names()
    assert len(names) == msg.action_space(0).n == 20 and len(set(names)) == 20
    assert msg.parse_action(names[13]) == 13 and msg.parse_action("forward") == 1


def test_bad_options_raise():
    with pytest.raises(alem.EnvArgumentError, match="shelf_columns must be odd"):
        Warehouse(shelf_columns=2)
    with pytest.raises(alem.EnvArgumentError, match="request_queue_size"):
        Warehouse(request_queue_size=0)
    with pytest.raises(alem.EnvArgumentError, match="observation_type"):
        Warehouse(observation_type="pixels")
    with pytest.raises(alem.EnvArgumentError, match="num_agents or its alias"):
        Warehouse(num_agents=2, n_agents=2)
