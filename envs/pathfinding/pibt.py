"""PIBT, Priority Inheritance with Backtracking (Okumura et al. 2022), in JAX: a classical
planner for one-shot and lifelong MAPF that decides every agent's next move at once.

Each step, agents are visited in order of priority. An agent tries its five options (the
four moves and waiting) from nearest to its goal to farthest (BFS distance; ties broken at
random) and takes the first cell that no agent has claimed and that is not the current cell
of the agent that pushed it. If another agent stands there and has not decided yet, that
agent inherits the priority and must move away first (recursively); if it cannot, it stays
and the pusher tries its next option. An agent whose options all fail stays. The plan has
no vertex or swap conflicts, so POGEMA's ``soft`` collision rule executes it unchanged.

Priorities (:func:`next_priorities`): an agent's priority grows by one each step it is off
its goal and drops back to its own random tie-breaker in ``[0, 1)`` when it is on it.

The recursion is an explicit stack in one ``lax.while_loop`` (each agent is pushed at most
once per step, so the loop is bounded by ``8 N`` iterations): jittable and ``vmap``-able over
instances. The BFS distances come from the caller (``dist[i]`` to agent ``i``'s goal), e.g.
a table of every cell's distances computed once per map.

:class:`PIBTPlayer` is the evaluator's scripted player ``"pibt"`` (``python -m alem.evaluate
env=pathfinding-v0 players=[pibt]``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import jax
import jax.numpy as jnp

from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding.env import PathfindingEnv
from alem.errors import ConfigError
from alem.players import Player, Turn

__all__ = ["joint_actions", "initial_priorities", "next_priorities", "PIBTPlayer"]

_FAR = jnp.int32(1 << 20)


def initial_priorities(key: jax.Array, num_agents: int) -> jax.Array:
    """float32 ``[N]`` distinct tie-breakers in ``[0, 1)``: the priorities at the start."""
    return jax.random.uniform(key, (num_agents,), jnp.float32)


def next_priorities(priority: jax.Array, on_goal: jax.Array, tie_breakers: jax.Array) -> jax.Array:
    """The next step's priorities: +1 for agents off their goal, the tie-breaker for those on it."""
    return jnp.where(on_goal, tie_breakers, jnp.floor(priority) + 1.0 + tie_breakers)


def joint_actions(
    key: jax.Array,
    obstacles: jax.Array,
    pos: jax.Array,
    dist: jax.Array,
    priority: jax.Array,
    active: jax.Array | None = None,
) -> jax.Array:
    """int32 ``[N]`` actions (POGEMA's order) of one PIBT step on one instance.

    Args:
        key: breaks ties between options at the same distance.
        obstacles: bool ``[H, W]``.
        pos: int ``[N, 2]`` current cells.
        dist: int ``[N, H, W]`` BFS distances to each agent's goal.
        priority: float ``[N]``, higher first (:func:`next_priorities`).
        active: bool ``[N]``; inactive agents wait and occupy no cell (default: all active).
    """
    h, w = obstacles.shape
    n = pos.shape[0]
    active = jnp.ones((n,), bool) if active is None else active
    moves = jnp.asarray(G.MOVES)
    tgt = pos[:, None, :] + moves[None]  # [N, 5, 2]
    inb = (tgt[..., 0] >= 0) & (tgt[..., 0] < h) & (tgt[..., 1] >= 0) & (tgt[..., 1] < w)
    r, c = jnp.clip(tgt[..., 0], 0, h - 1), jnp.clip(tgt[..., 1], 0, w - 1)
    valid = inb & ~obstacles[r, c]
    cell = jnp.where(valid, r * w + c, -1)
    d = jnp.where(valid, jnp.take_along_axis(dist.reshape(n, h * w), r * w + c, axis=1), _FAR)
    # Nearest first; a random fraction breaks ties between equal distances.
    rank = jnp.argsort(d.astype(jnp.float32) + 0.5 * jax.random.uniform(key, (n, 5)), axis=1)
    cand = jnp.take_along_axis(cell, rank, axis=1)  # [N, 5] cells, -1 where not a legal cell
    cur = pos[:, 0] * w + pos[:, 1]
    occ = (
        jnp.full((h * w,), -1, jnp.int32)
        .at[jnp.where(active, cur, h * w)]
        .set(jnp.arange(n, dtype=jnp.int32), mode="drop")
    )
    order = jnp.argsort(-jnp.where(active, priority, -jnp.inf))

    # carry: next root, stack depth, stack of (agent, option index), chosen option per agent
    # (-1: undecided), and which agent claimed each cell for the next step (-1: none).
    init = (
        jnp.int32(0),
        jnp.int32(0),
        jnp.zeros((n,), jnp.int32),
        jnp.zeros((n,), jnp.int32),
        jnp.where(active, -1, 0).astype(jnp.int32),  # inactive agents: decided (wait)
        jnp.full((h * w,), -1, jnp.int32),
        jnp.int32(0),
    )

    def cond(carry):
        root, sp, *_, it = carry
        return ((root < n) | (sp > 0)) & (it < 8 * n + 8)

    def start_root(carry):
        root, sp, agents, opts, choice, claimed, it = carry
        a = order[root]
        push = choice[a] < 0
        agents = agents.at[0].set(jnp.where(push, a, agents[0]))
        opts = opts.at[0].set(0)
        return root + 1, jnp.where(push, 1, 0), agents, opts, choice, claimed, it

    def fail(carry):  # the top agent has no option left: it stays; its pusher tries its next one
        root, sp, agents, opts, choice, claimed, it = carry
        a = agents[sp - 1]
        choice = choice.at[a].set(0)
        claimed = claimed.at[cur[a]].set(a)
        sp = sp - 1
        parent = agents[jnp.maximum(sp - 1, 0)]
        choice = jnp.where(sp > 0, choice.at[parent].set(-1), choice)
        opts = jnp.where(sp > 0, opts.at[sp - 1].add(1), opts)
        return root, sp, agents, opts, choice, claimed, it

    def try_option(carry):
        root, sp, agents, opts, choice, claimed, it = carry
        top = sp - 1
        a, k = agents[top], opts[top]
        v = cand[a, k]
        parent = jnp.where(top > 0, agents[jnp.maximum(top - 1, 0)], -1)
        taken = (
            (v < 0) | (claimed[jnp.maximum(v, 0)] >= 0) | ((parent >= 0) & (v == cur[jnp.maximum(parent, 0)]))
        )
        # Claim v (undone by the pusher's failure handling if the agent there cannot move).
        opt = rank[a, k]
        claimed2 = claimed.at[jnp.maximum(v, 0)].set(jnp.where(taken, claimed[jnp.maximum(v, 0)], a))
        choice2 = choice.at[a].set(jnp.where(taken, choice[a], opt))
        j = jnp.where(taken, -1, occ[jnp.maximum(v, 0)])
        push = (j >= 0) & (j != a) & (choice[jnp.maximum(j, 0)] < 0)
        done = ~taken & ~push  # the cell is free, or its agent has already moved on
        opts = jnp.where(taken, opts.at[top].add(1), opts)
        agents = jnp.where(push, agents.at[sp].set(j), agents)
        opts = jnp.where(push, opts.at[sp].set(0), opts)
        sp = jnp.where(push, sp + 1, jnp.where(done, 0, sp))  # success unwinds the whole chain
        return root, sp, agents, opts, choice2, claimed2, it

    def body(carry):
        root, sp, agents, opts, choice, claimed, it = carry
        branch = jnp.where(sp == 0, 0, jnp.where(opts[jnp.maximum(sp - 1, 0)] >= 5, 1, 2))
        out = jax.lax.switch(branch, (start_root, fail, try_option), carry)
        return (*out[:-1], it + 1)

    choice = jax.lax.while_loop(cond, body, init)[4]
    return jnp.maximum(choice, 0).astype(jnp.int32)


class PIBTPlayer(Player):
    """PIBT as an evaluator player (device policy), one per seat.

    Every seat computes the same joint plan and plays its own move of it: the plan's random
    tie-breaks come from ``(seed, episode, step)``, not from the seat's key, so the seats agree
    and the joint move is conflict-free. Priorities come from the state alone (a device player
    carries nothing between steps): an agent off its goal has ``t`` plus its tie-breaker, one on
    it its tie-breaker. That is :func:`next_priorities` from the start (the POGEMA protocol's
    PIBT) except for an agent pushed off its goal, which the protocol restarts at 1.
    Distances: one BFS per agent and step (the protocol looks them up in a table per map).
    """

    name = "pibt"

    def __init__(self, env: Any = None, seed: int = 0):
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
            raise ConfigError(f"pibt: seed must be an integer in [0, 2**32 - 1], got {seed!r}")
        self.seed = seed

    def program_key(self) -> Hashable:
        return (type(self), self.seed)  # act reads nothing else of self

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        env = turn.env
        if not isinstance(env, PathfindingEnv):
            raise TypeError(f"the pibt player plays pathfinding envs, not {type(env).__name__}")
        base = jax.random.key(self.seed)

        def one(state: Any, episode: jax.Array) -> jax.Array:
            k_episode = jax.random.fold_in(base, episode)
            ties = initial_priorities(k_episode, env.num_agents)
            on_goal = jnp.all(state.pos == state.goal, axis=1)
            priority = jnp.where(on_goal, ties, state.t.astype(jnp.float32) + ties)
            obstacles = env.obstacles(state)
            dist = G.bfs_distances(~obstacles, state.goal)
            k_step = jax.random.fold_in(k_episode, state.t + 1)  # + 1: apart from the tie-breakers' key
            plan = joint_actions(k_step, obstacles, state.pos, dist, priority, state.active)
            return plan[turn.agent]

        return jax.vmap(one)(turn.state, jnp.asarray(turn.episode))
