"""PIBT (alem.envs.pathfinding.pibt): conflict-free plans, priority inheritance in a corridor,
and the priority rule."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding import pibt
from alem.envs.pathfinding.maps import parse_ascii_map


def _dist(obstacles, goals):
    return G.bfs_distances(~obstacles, goals)


def _next(pos, actions):
    return np.asarray(pos) + G.MOVES[np.asarray(actions)]


def test_a_pushed_agent_steps_into_the_pocket_so_the_other_passes():
    # Agent 0 (left) must go right along the corridor; agent 1 sits in it, its goal where it
    # is. The only way: 1 moves into the pocket above, 0 passes, 1 returns.
    grid = parse_ascii_map("#.###\n.....\n#####").obstacles
    obst = jnp.asarray(grid)
    pos = jnp.array([[1, 0], [1, 1]])
    goals = jnp.array([[1, 4], [1, 1]])
    dist = _dist(obst, goals)
    ties = jnp.array([0.9, 0.1])
    priority = jnp.array([5.9, 0.1])  # agent 0 has waited; agent 1 is on its goal
    act = jax.jit(pibt.joint_actions)
    trail, key = [np.asarray(pos)], jax.random.key(0)
    for _ in range(8):
        key, k = jax.random.split(key)
        a = act(k, obst, pos, dist, priority)
        nxt = _next(pos, a)
        assert len({tuple(p) for p in nxt}) == 2 and not grid[tuple(nxt[0])] and not grid[tuple(nxt[1])]
        pos = jnp.asarray(nxt)
        priority = pibt.next_priorities(priority, jnp.all(pos == goals, axis=1), ties)
        trail.append(nxt)
    assert [1, 1] in [t[1].tolist() for t in trail] and [0, 1] in [t[1].tolist() for t in trail]  # 1 gave way
    assert trail[-1].tolist() == [[1, 4], [1, 1]], trail  # both on their goals


def test_plans_have_no_vertex_or_swap_conflicts_on_random_crowded_instances():
    h = w = 8
    n = 24
    keys = jax.random.split(jax.random.key(3), 64)

    def one(key):
        k_map, k_cells, k_goals, k_pri, k_act = jax.random.split(key, 5)
        obst = jax.random.bernoulli(k_map, 0.2, (h, w))
        perm = jax.random.permutation(k_cells, h * w)
        # Free cells first, in random order: n distinct free cells (when the map has n).
        pick = perm[jnp.argsort(obst.reshape(-1)[perm], stable=True)][:n]
        pos = jnp.stack([pick // w, pick % w], axis=1)
        goals = pos[jax.random.permutation(k_goals, n)]
        dist = _dist(obst, goals)
        pri = jax.random.uniform(k_pri, (n,)) * 10
        return obst, pos, pibt.joint_actions(k_act, obst, pos, dist, pri)

    obst, pos, actions = jax.jit(jax.vmap(one))(keys)
    obst, pos, actions = map(np.asarray, (obst, pos, actions))
    for b in range(len(keys)):
        if (~obst[b]).sum() < n:
            continue
        nxt = _next(pos[b], actions[b])
        assert ((nxt >= 0) & (nxt < h)).all() and not obst[b][nxt[:, 0], nxt[:, 1]].any()
        cells = [tuple(p) for p in nxt]
        assert len(set(cells)) == n, f"instance {b}: two agents in one cell"
        now = {tuple(p): i for i, p in enumerate(pos[b])}
        for i, p in enumerate(nxt):
            j = now.get(tuple(p))
            assert j is None or j == i or tuple(nxt[j]) != tuple(pos[b][i]), (
                f"instance {b}: agents {i} and {j} swap"
            )
    assert (actions != 0).mean() > 0.3  # most agents move: the plans are not all waits


def test_priorities_grow_off_goal_and_reset_on_it():
    ties = jnp.array([0.25, 0.5])
    p = pibt.next_priorities(jnp.array([3.25, 7.5]), jnp.array([False, True]), ties)
    assert p.tolist() == [4.25, 0.5]


def test_the_pibt_player_seats_agree_on_one_conflict_free_plan():
    """``make_player("pibt", env)`` per seat, each with its own key: their moves are one PIBT plan
    (the protocol's priorities at the start), so their joint move is conflict-free."""
    import alem
    from alem.players import Turn, make_player

    env = alem.make("pathfinding-v0", num_agents=6, height=5, density=0.2, max_steps=16)
    players = [make_player("pibt", env) for _ in env.agents]
    params, b = env.default_params, 4
    episodes = jnp.arange(b) + 7

    def acts(key, state, ts):
        keys = jax.random.split(key, env.num_agents)  # a key per seat, as the evaluator gives
        return jnp.stack(
            [
                p.act(keys[i], Turn(env, params, i, state, ts, ts.acting[:, i], episodes))
                for i, p in enumerate(players)
            ],
            axis=1,
        )

    @jax.jit
    def run(key):
        state, ts = jax.vmap(env.reset, (0, None))(jax.random.split(key, b), params)
        first = acts(jax.random.key(5), state, ts)
        # The plan of the first step, computed once for the whole team.
        ties = jax.vmap(lambda e: pibt.initial_priorities(jax.random.fold_in(jax.random.key(0), e), 6))(episodes)
        plan = jax.vmap(
            lambda s, e, t: pibt.joint_actions(
                jax.random.fold_in(jax.random.fold_in(jax.random.key(0), e), 1),
                env.obstacles(s), s.pos, _dist(env.obstacles(s), s.goal), t, s.active,
            )
        )(state, episodes, ties)
        return first, plan

    first, plan = run(jax.random.key(1))
    np.testing.assert_array_equal(first, plan)  # conflict-free: test_plans_have_no_vertex_or_swap...
    assert (np.asarray(first) != 0).any()
