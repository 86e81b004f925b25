"""The pathfinding env: task sampling, modes, metrics, lower bounds, observations, bad input, text."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding import maps as M
from alem.envs.pathfinding import viewer
from alem.envs.pathfinding.env import PathfindingEnv
from alem.errors import EnvArgumentError

BATCH = 16


@pytest.fixture(scope="module")
def one_shot():
    env = alem.make("pathfinding-v0")
    reset = jax.jit(jax.vmap(env.reset, (0, None)))
    return env, reset


def test_reset_samples_valid_reachable_tasks_and_exact_lower_bounds(one_shot):
    env, reset = one_shot
    state, ts = reset(jax.random.split(jax.random.key(0), BATCH), env.default_params)
    obst = np.asarray(jax.vmap(env.obstacles)(state))
    pos, goal = np.asarray(state.pos), np.asarray(state.goal)
    assert len({o.tobytes() for o in obst}) == BATCH, "every key should give its own map"
    for b in range(BATCH):
        cells = {tuple(p) for p in pos[b]}
        goals = {tuple(g) for g in goal[b]}
        assert len(cells) == env.num_agents and len(goals) == env.num_agents
        assert not cells & goals, "a start coincides with a goal"
        dists = [
            M.bfs_distance_host(obst[b], tuple(g))[tuple(p)] for p, g in zip(pos[b], goal[b], strict=True)
        ]
        assert min(dists) > 0, "every goal must be reachable from its start"
        assert int(ts.info["lb_soc"][b]) == sum(dists)
        assert int(ts.info["lb_makespan"][b]) == max(dists)
    density = obst.mean()
    assert 0.2 < density < 0.4  # params.density = 0.3


def _run(env, params, actions_fn, steps, key=0):
    """Scan ``steps`` steps of one env; returns the stacked (state, ts)."""

    def run(key):
        k0, k1 = jax.random.split(key)
        state, ts = env.reset(k0, params)

        def body(state, k):
            ka, ks = jax.random.split(k)
            state, ts = env.step(ks, state, actions_fn(ka, state), params)
            return state, (state, ts)

        return jax.lax.scan(body, state, jax.random.split(k1, steps))[1]

    return jax.jit(run)(jax.random.key(key))


def _random_actions(env):
    return lambda k, s: jax.random.randint(k, (env.num_agents,), 0, 5)


def _corridor_env(mode: str, **kw) -> PathfindingEnv:
    # Two agents in a 1x5 corridor: agent 0 at the left end must reach the right end.
    return PathfindingEnv(
        2, 1, 5, mode=mode, maps=".....", starts=[[0, 0], [0, 4]], goals=[[0, 1], [0, 3]], **kw
    )


def test_one_shot_metrics_from_a_scripted_episode():
    env = _corridor_env("one_shot", max_steps=6)
    params = env.default_params
    state, ts = jax.jit(env.reset)(jax.random.key(0), params)
    step = jax.jit(env.step)
    # Step 1: agent 0 arrives, agent 1 waits. Step 2: agent 0 leaves, agent 1 arrives.
    # Step 3: agent 0 comes back: all on goal -> terminated, reward 1 for both.
    script = [[4, 0], [4, 3], [3, 0]]
    rewards = []
    for a in script:
        state, ts = step(jax.random.key(1), state, jnp.array(a), params)
        rewards.append(np.asarray(ts.reward))
    assert bool(ts.terminated) and not bool(ts.truncated)
    np.testing.assert_array_equal(rewards, [[0, 0], [0, 0], [1, 1]])
    assert float(ts.info["CSR"]) == 1.0 and float(ts.info["ISR"]) == 1.0
    # Arrival for good: agent 0 at step 3, agent 1 at step 2.
    assert int(ts.info["SoC"]) == 5 and int(ts.info["makespan"]) == 3
    assert int(ts.info["lb_soc"]) == 2 and int(ts.info["lb_makespan"]) == 1
    assert int(ts.info["ep_length"]) == 3


def test_disappear_agents_leave_and_stop_acting():
    env = PathfindingEnv(
        2, 1, 5, mode="disappear", maps=".....", starts=[[0, 0], [0, 4]], goals=[[0, 1], [0, 0]]
    )
    params = env.default_params
    state, ts = jax.jit(env.reset)(jax.random.key(0), params)
    step = jax.jit(env.step)
    state, ts = step(jax.random.key(1), state, jnp.array([4, 0]), params)
    np.testing.assert_array_equal(ts.acting, [False, True])
    np.testing.assert_array_equal(ts.reward, [1.0, 0.0])
    # Agent 1 walks through the cell where agent 0 disappeared.
    for _ in range(4):
        assert not bool(ts.terminated)
        state, ts = step(jax.random.key(1), state, jnp.array([0, 3]), params)
    np.testing.assert_array_equal(state.pos, [[0, 1], [0, 0]])
    assert bool(ts.terminated) and float(ts.info["CSR"]) == 1.0 and float(ts.info["ISR"]) == 1.0
    np.testing.assert_array_equal(ts.reward, [0.0, 1.0])
    assert float(ts.info["ep_length"]) == pytest.approx((1 + 5) / 2)
    assert int(ts.info["SoC"]) == 6 and int(ts.info["makespan"]) == 5


@pytest.mark.exhaustive  # its own compiled 200-step scan; explicit sequences are tested by default
def test_lifelong_random_goals_are_new_spawn_cells_and_throughput_counts():
    env = PathfindingEnv(4, 8, mode="lifelong", density=0.2, max_steps=200, lower_bounds=False)
    params = env.default_params
    states, ts = _run(env, params, _random_actions(env), 200)
    arrived = np.asarray(ts.info["on_goal"])
    assert arrived.sum() > 0
    goal = np.asarray(states.goal)
    pos = np.asarray(states.pos)
    obst = np.asarray(env.obstacles(jax.tree.map(lambda x: x[0], states)))
    for t in range(1, 200):
        for i in range(env.num_agents):
            if arrived[t, i]:
                assert tuple(goal[t, i]) != tuple(pos[t, i]), "a new goal must differ from the agent's cell"
                assert not obst[tuple(goal[t, i])]
            else:
                assert tuple(goal[t, i]) == tuple(goal[t - 1, i])
    assert float(ts.info["avg_throughput"][-1]) == pytest.approx(arrived.sum() / 200)
    assert bool(ts.truncated[-1]) and not bool(ts.terminated.any())


def test_lifelong_explicit_goal_sequences_cycle():
    env = PathfindingEnv(
        1, 1, 4, mode="lifelong", maps="....", starts=[[0, 0]], goals=[[[0, 1], [0, 3]]], max_steps=10
    )
    params = env.default_params
    state, _ = jax.jit(env.reset)(jax.random.key(0), params)
    step = jax.jit(env.step)
    seen = []
    for a in (4, 4, 4, 3, 3):
        state, ts = step(jax.random.key(0), state, jnp.array([a]), params)
        seen.append((tuple(np.asarray(state.goal[0])), float(ts.reward[0])))
    # Reach (0,1) -> next goal (0,3); reach it -> cycle back to (0,1).
    assert seen == [((0, 3), 1.0), ((0, 3), 0.0), ((0, 1), 1.0), ((0, 1), 0.0), ((0, 3), 1.0)]


def test_maps_batched_in_params_and_global_observation():
    a = M.parse_ascii_map("....\n.##.\n....").obstacles
    b = M.parse_ascii_map("..#.\n....\n.#..").obstacles
    env = PathfindingEnv(2, maps=[a, b], obs_type="global", lower_bounds=False)
    assert (env.height, env.width) == (3, 4)
    params = env.default_params
    assert params.maps.shape == (2, 3, 4)
    states, ts = jax.jit(jax.vmap(env.reset, (0, None)))(jax.random.split(jax.random.key(0), 32), params)
    obst = np.asarray(jax.vmap(env.obstacles)(states))
    kinds = {o.tobytes() for o in obst}
    assert kinds == {a.tobytes(), b.tobytes()}
    obs = np.asarray(ts.obs)
    assert obs.shape == (32, 2, 4, 3, 4)
    np.testing.assert_array_equal(obs[:, 0, 0], obst)
    for i in range(2):
        p, g = np.asarray(states.pos[:, i]), np.asarray(states.goal[:, i])
        np.testing.assert_array_equal(obs[np.arange(32), i, 2, p[:, 0], p[:, 1]], 1.0)
        np.testing.assert_array_equal(obs[np.arange(32), i, 3, g[:, 0], g[:, 1]], 1.0)
        assert obs[:, i, 2].sum() == 32 and obs[:, i, 1].sum() == 64


def test_local_observation_never_materialises_per_agent_maps():
    env = PathfindingEnv(16, 64, obs_radius=2, lower_bounds=False)
    state, _ = jax.eval_shape(env.reset, jax.random.key(0), env.default_params)
    jaxpr = jax.make_jaxpr(env.observe)(state, env.default_params)
    limit = env.num_agents * 64 * 64
    sizes = [int(np.prod(v.aval.shape)) for eqn in jaxpr.jaxpr.eqns for v in eqn.outvars]
    assert max(sizes) < limit, "observation extraction must slice windows, not copy the map per agent"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(maps="....\n.##.", starts=[[0, 0], [0, 0]], goals=[[1, 0], [1, 3]]),
            "agents 0 and 1 both start at",
        ),
        (
            dict(maps="..#.\n..#.", starts=[[0, 0]], goals=[[0, 3]]),
            r"agent 0's goal 0 \(0, 3\) is unreachable",
        ),
        (dict(maps="....\n.##.", starts=[[0, 0]], goals=[[1, 1]]), r"goal 0 \(1, 1\) is on an obstacle"),
        (dict(maps="....\n....", starts=[[5, 0]], goals=[[1, 1]]), r"start \(5, 0\) is off the 2x4 map"),
        (dict(num_agents=5, maps="....\n.##."), "5 agents need 10 distinct cells in one connected region"),
        (dict(num_agents=40, height=8), "40 agents need 80 distinct free cells"),
        (dict(mode="forever"), "mode='forever' is not supported"),
        (dict(collision="hard"), "collision='hard' is not supported"),
        (dict(map_type="fixed"), "needs maps="),
        (dict(maps=["....\n....", "...\n..."]), "map 1 is 2x3 but the env is 2x4"),
        (dict(maps="....\n....", starts=[[0, 0]]), "give both starts= and goals="),
    ],
)
def test_bad_input_raises_clear_errors(kwargs, match):
    with pytest.raises(EnvArgumentError, match=match):
        PathfindingEnv(**{"num_agents": 1, **kwargs})


@pytest.mark.parametrize(
    "change, match",
    [
        (
            dict(density=jnp.float32(2.0)),
            r"params\.density=2\.0 is out of range; it must be in \[0\.0, 1\.0\]",
        ),
        (dict(density=-0.5), r"params\.density=-0\.5 is out of range"),
        (dict(max_steps=jnp.int32(-1)), r"params\.max_steps=-1 is out of range; it must be >= 1"),
        (dict(mode=jnp.int32(7)), r"params\.mode=7 is out of range; it must be in \[0, 2\]"),
    ],
)
def test_replaced_params_out_of_range_are_rejected(one_shot, change, match):
    env, _ = one_shot
    bad = env.default_params.replace(**change)
    with pytest.raises(EnvArgumentError, match=match):
        env.check_params(bad)
    with pytest.raises(EnvArgumentError, match=match):
        env.reset(jax.random.key(0), bad)


@pytest.fixture(scope="module")
def corridor_with_a_wall():
    """A 1x5 map ``.#...``: agent 0 on its goal (0, 0), agent 1 at (0, 2) with its goal at (0, 4)."""
    env = PathfindingEnv(2, 1, 5, maps=".#...", starts=[[0, 0], [0, 2]], goals=[[0, 0], [0, 4]], obs_radius=1)
    state, _ = jax.jit(env.reset)(jax.random.key(0), env.default_params)
    return env, jax.device_get(state)


def test_text_hooks(corridor_with_a_wall):
    env, state = corridor_with_a_wall
    view = env.render_text(state, agent=1)
    lines = view.splitlines()
    assert "goal offset: +0 rows, +2 cols" in lines[0]
    assert lines[1:] == ["###", "#@.", "###"]
    full = env.render_text(state)
    assert full.splitlines()[-1] == "0#1.*"
    assert env.parse_action("I go east", 0) == 4 and env.parse_action("stay", 0) == 0
    assert env.parse_action("up", 0) == 1 and env.parse_action("left or right", 0) is None
    assert "agent 1 of 2" in env.rules_text(agent=1)


def test_render_rgb_draws_walls_agents_and_goals(corridor_with_a_wall):
    env, state = corridor_with_a_wall
    img = env.render_rgb(state)
    assert img.shape == (16, 80, 3) and img.dtype == np.uint8  # 16 px per cell
    c0, c1 = (tuple(int(v) for v in viewer.AGENT_COLOURS[i]) for i in (0, 1))
    assert c0 != c1

    def px(y, x):
        return tuple(int(v) for v in img[y, x])

    assert px(8, 24) == viewer.WALL_COLOUR  # (0, 1) is a wall
    assert px(8, 56) == viewer.FREE_COLOUR  # (0, 3) is free
    assert px(8, 40) == c1  # agent 1's disc at (0, 2)
    assert px(8, 65) == c1 and px(8, 72) == viewer.FREE_COLOUR  # its goal (0, 4): outline, hollow
    assert px(8, 8) == c0 and px(8, 1) == c0  # agent 0 on its goal: disc inside the outline
    # An agent that left the map (disappear mode) is drawn with neither its disc nor its goal.
    gone = env.render_rgb(state.replace(active=np.array([True, False])))
    assert tuple(gone[8, 40]) == tuple(gone[8, 65]) == viewer.FREE_COLOUR
    np.testing.assert_array_equal(gone[:, :32], img[:, :32])
    # Big maps get smaller cells; at 2 px a cell still shows the agent and its (pale) goal.
    assert viewer.cell_size(16, 16) == 16 and viewer.cell_size(64, 40) == 8 and viewer.cell_size(300, 9) == 2
    small = env.render_rgb(state, cell=2)
    assert (
        small.shape == (2, 10, 3)
        and tuple(small[0, 4]) == c1
        and tuple(small[0, 8]) not in (c1, viewer.FREE_COLOUR)
    )


# ---------------------------------------------------------------- learned-policy features
def _closer_cells(obst: np.ndarray, pos, goal, r: int) -> np.ndarray:
    """The window of cells closer to ``goal`` than ``pos`` is, from a host BFS (off-map: never)."""
    dist = M.bfs_distance_host(obst, tuple(int(x) for x in goal))
    here = dist[tuple(int(x) for x in pos)]
    size = 2 * r + 1
    out = np.zeros((size, size), bool)
    for i in range(size):
        for j in range(size):
            y, x = pos[0] - r + i, pos[1] - r + j
            if 0 <= y < obst.shape[0] and 0 <= x < obst.shape[1] and dist[y, x] >= 0:
                out[i, j] = dist[y, x] < here
    return out


@pytest.mark.parametrize("env_id", ["pathfinding-v0", "pathfinding_lifelong-v0"])
def test_goal_direction_marks_the_cells_closer_to_the_goal_and_progress_is_rewarded(env_id):
    """The fourth channel and the shaped reward against a host BFS, batched, over steps that (in
    lifelong mode) hand out new goals, so the distance maps must follow the goals."""
    env = alem.make(env_id, num_agents=6, height=10, goal_direction=True, progress_reward=0.25)
    base = alem.make(env_id, num_agents=6, height=10)
    assert env.observation_space(0).shape == (4, 11, 11) and base.observation_space(0).shape == (3, 11, 11)
    r = env.obs_radius
    reset = jax.jit(jax.vmap(env.reset, (0, None)))
    step = jax.jit(jax.vmap(env.step, (0, 0, 0, None)))
    keys = jax.random.split(jax.random.key(5), 4)
    state, ts = reset(keys, env.default_params)
    base_state, base_ts = jax.jit(jax.vmap(base.reset, (0, None)))(keys, base.default_params)
    np.testing.assert_array_equal(np.asarray(ts.obs[:, :, :3]), np.asarray(base_ts.obs))  # POGEMA's 3 kept
    renewed = 0
    for t in range(12):
        obst = np.asarray(jax.vmap(env.obstacles)(state))
        pos, goal, obs = np.asarray(state.pos), np.asarray(state.goal), np.asarray(ts.obs)
        for b in range(4):
            for i in range(env.num_agents):
                np.testing.assert_array_equal(obs[b, i, 3], _closer_cells(obst[b], pos[b, i], goal[b, i], r))
        # Mostly down the marked direction (so agents arrive and, in lifelong mode, get new goals).
        rng = np.random.default_rng(t)
        actions = np.zeros((4, env.num_agents), np.int32)
        for b in range(4):
            for i in range(env.num_agents):
                closer = [a for a in range(1, 5) if obs[b, i, 3][tuple(r + G.MOVES[a])]]
                actions[b, i] = rng.choice(closer) if closer and rng.random() < 0.8 else rng.integers(5)
        state, ts = step(jax.random.split(jax.random.key(t), 4), state, jnp.asarray(actions), env.default_params)
        new_pos, on_goal = np.asarray(state.pos), np.asarray(ts.info["on_goal"])
        for b in range(4):
            for i in range(env.num_agents):
                d = M.bfs_distance_host(obst[b], tuple(goal[b, i]))
                gained = d[tuple(pos[b, i])] - d[tuple(new_pos[b, i])]
                arrived = on_goal[b, i] if env_id == "pathfinding_lifelong-v0" else on_goal[b].all()
                assert float(ts.reward[b, i]) == pytest.approx(0.25 * gained + arrived)
        renewed += int((np.asarray(state.goal) != goal).any(-1).sum())
    if env_id == "pathfinding_lifelong-v0":
        assert renewed >= 3  # the channel was checked against goals handed out during the episode


def test_the_learned_policy_features_refuse_what_they_cannot_do():
    with pytest.raises(EnvArgumentError, match="goal_direction"):
        alem.make("pathfinding-v0", goal_direction=True, obs_type="global")
    with pytest.raises(EnvArgumentError, match="progress_reward"):
        alem.make("pathfinding-v0", progress_reward=float("nan"))


def test_modes_declare_pogemas_metrics_and_training_logs_their_means():
    """Each mode declares POGEMA's metrics of that mode: the evaluator reports them, and training's
    episode sums carry them, so metrics.jsonl and the final evaluation show CSR, ISR, SoC and
    makespan (lifelong: throughput) as means over the finished episodes, not shaped returns only."""
    from alem.metrics import episode_totals, summarize
    from alem.wrappers import EpisodeStats

    want = {
        "one_shot": ("CSR", "ISR", "SoC", "makespan"),
        "disappear": ("CSR", "ISR"),
        "lifelong": ("avg_throughput",),
    }
    for mode, metrics in want.items():
        assert PathfindingEnv(2, 4, mode=mode).episode_metrics == metrics, mode
    # One agent one step from its goal, a one-step horizon: moving right solves the episode
    # (cost 1), waiting does not; one env of each: CSR and ISR 1/2, SoC 1 and 1 ... mean 1.
    env = EpisodeStats(PathfindingEnv(map_type="fixed", maps="..", starts=[[0, 0]], goals=[[0, 1]], max_steps=1))
    keys = jax.random.split(jax.random.key(0), 2)
    state, _ = jax.vmap(env.reset)(keys)
    _, ts = jax.vmap(env.step)(keys, state, jnp.array([[4], [0]]))
    assert ts.done.all()
    m = summarize(episode_totals(ts.info), env_steps=2)
    assert int(m["episodes"]) == 2 and float(m["CSR"]) == 0.5 and float(m["ISR"]) == 0.5
    per_env = [float(x) for x in ts.info["SoC"]]
    assert float(m["SoC"]) == pytest.approx(sum(per_env) / 2) and float(m["makespan"]) == pytest.approx(
        float(ts.info["makespan"].mean())
    )
