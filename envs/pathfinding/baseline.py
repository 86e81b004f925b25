"""A classical baseline for the pathfinding envs: BFS shortest paths with a simple yielding rule.

Each agent follows a shortest path to its current goal on the obstacle map (a BFS
distance field from the goal; other agents are ignored by the BFS):

1. On its goal: wait, except that with probability ``side_step`` it yields (steps to a
   random free, unoccupied neighbour) when a neighbouring agent is not on its own goal,
   so a parked agent does not block a corridor forever. After leaving the map: wait.
2. Among the moves that shorten the distance, pick one at random whose target cell no
   other agent occupies now; the env's collision system settles the rest.
3. If every shortening move is blocked by an agent, side-step with probability
   ``side_step`` to a random free, unoccupied neighbour (this breaks most head-on
   deadlocks in corridors), else wait.

Pure JAX: usable in a jitted rollout (:func:`joint_actions`, every agent at once) and as
the evaluator's scripted player ``"bfs"`` (:class:`BFSPlayer`; one BFS per seat and
step). It is a sanity number without learning, not a MAPF solver: it gives no
completeness or optimality guarantee.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding.env import PathfindingEnv, PathfindingState
from alem.players import Player, Turn

__all__ = ["agent_action", "action_from_distances", "joint_actions", "BFSPlayer"]


def agent_action(
    key: jax.Array,
    env: PathfindingEnv,
    state: PathfindingState,
    agent: jax.Array | int,
    side_step: float = 0.2,
) -> jax.Array:
    """int32 ``[]`` action of ``agent`` in one (unbatched) ``state``."""
    goal = state.goal[agent]
    dist = G.bfs_distances(~env.obstacles(state), goal[None])[0]
    return action_from_distances(key, env, state, agent, dist, side_step)


def action_from_distances(
    key: jax.Array,
    env: PathfindingEnv,
    state: PathfindingState,
    agent: jax.Array | int,
    dist: jax.Array,
    side_step: float = 0.2,
) -> jax.Array:
    """:func:`agent_action` given ``dist``, the int ``[H, W]`` BFS distances to the agent's
    goal (callers on fixed maps look them up in a table instead of running a BFS per step)."""
    h, w = env.height, env.width
    free = ~env.obstacles(state)
    pos = state.pos[agent]
    goal = state.goal[agent]
    tgt = pos[None] + jnp.asarray(G.MOVES)[1:]
    inb = (tgt[:, 0] >= 0) & (tgt[:, 0] < h) & (tgt[:, 1] >= 0) & (tgt[:, 1] < w)
    r, c = jnp.clip(tgt[:, 0], 0, h - 1), jnp.clip(tgt[:, 1], 0, w - 1)
    ok = inb & free[r, c]
    others = state.active & (jnp.arange(env.num_agents) != agent)
    occupied = jnp.any(others[None] & jnp.all(state.pos[None] == tgt[:, None], axis=-1), axis=1)
    better = ok & (dist[r, c] < dist[pos[0], pos[1]])
    k_pick, k_side, k_coin = jax.random.split(key, 3)

    def pick(k, mask):  # uniform among True entries of mask (4 moves) -> action 1..4, or 0
        score = jnp.where(mask, jax.random.uniform(k, (4,)), -1.0)
        return jnp.where(mask.any(), jnp.argmax(score) + 1, 0).astype(jnp.int32)

    go = pick(k_pick, better & ~occupied)
    side = pick(k_side, ok & ~occupied)
    blocked = ~(better & ~occupied).any() & better.any()
    side_ok = blocked & (jax.random.uniform(k_coin) < side_step)
    action = jnp.where(go > 0, go, jnp.where(side_ok, side, 0))
    on_goal = jnp.all(pos == goal)
    near = others & (jnp.abs(state.pos - pos[None]).sum(-1) == 1) & ~jnp.all(state.pos == state.goal, -1)
    yield_ = on_goal & near.any() & (jax.random.uniform(k_coin) < side_step)
    action = jnp.where(on_goal, jnp.where(yield_, side, 0), action)
    return jnp.where(state.active[agent], action, 0).astype(jnp.int32)


def joint_actions(
    key: jax.Array, env: PathfindingEnv, state: PathfindingState, side_step: float = 0.2
) -> jax.Array:
    """int32 ``[N]``: every agent's baseline action in one (unbatched) ``state``."""
    keys = jax.random.split(key, env.num_agents)
    return jax.vmap(lambda k, i: agent_action(k, env, state, i, side_step))(keys, jnp.arange(env.num_agents))


class BFSPlayer(Player):
    """The baseline as an evaluator player (device policy); ``side_step`` as above."""

    name = "bfs"

    def __init__(self, env: Any = None, side_step: float = 0.2):
        self.side_step = float(side_step)

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        env = turn.env
        if not isinstance(env, PathfindingEnv):
            raise TypeError(f"the bfs policy plays pathfinding envs, not {type(env).__name__}")
        batch = turn.timestep.reward.shape[0]
        keys = jax.random.split(key, batch)
        return jax.vmap(lambda k, s: agent_action(k, env, s, turn.agent, self.side_step))(keys, turn.state)
