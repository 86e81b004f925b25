"""Scripted Level-Based Foraging players, after lbforaging's heuristic agents (written anew).

- ``nearest`` (lbforaging's H1): head for the food closest to oneself, load when next to it.
- ``centre`` (H2): head for the food closest to the centre of all agents, so that agents
  running it pick the same food (what cooperative food needs), load when next to it.

Both read positions from the state; they see what an agent with ``sight`` covering the grid sees
(the registered 8x8 ids), and more where sight is smaller. Device players: pure JAX, batched.
Distance is Manhattan; ties go to the lower food index. A move that the mask forbids (blocked) is
replaced by the other axis's move towards the target, else by a uniform legal action.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alem.envs.coordination.lbf.types import EAST, LOAD, NORTH, SOUTH, WEST
from alem.players import Player, Turn
from alem.rollout import random_legal_actions

__all__ = ["HeuristicPlayer", "nearest_player", "centre_player"]


class HeuristicPlayer(Player):
    """Go to a target food and load it; ``target="nearest"`` or ``"centre"`` (module docstring)."""

    def __init__(self, env, target: str = "nearest"):
        if target not in ("nearest", "centre"):
            raise ValueError(f"target must be 'nearest' or 'centre', got {target!r}")
        self.target, self.name = target, target

    def program_key(self) -> tuple:
        return type(self), self.target  # two players of one target act alike: one compiled step

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        s, i, mask = turn.state, turn.agent, jnp.asarray(turn.action_mask)
        me = s.agent_pos[:, i]  # [B, 2]
        origin = me if self.target == "nearest" else jnp.mean(s.agent_pos.astype(jnp.float32), axis=1)
        dist = jnp.abs(s.food_pos - origin[:, None, :]).sum(-1)  # [B, F]
        dist = jnp.where(s.food_level > 0, dist, jnp.inf)
        food = jnp.take_along_axis(s.food_pos, jnp.argmin(dist, axis=1)[:, None, None], axis=1)[:, 0]
        d = food - me  # [B, 2]: (rows, cols) to go
        adjacent = jnp.abs(d).sum(-1) == 1
        row_move = jnp.where(d[:, 0] < 0, NORTH, SOUTH)
        col_move = jnp.where(d[:, 1] < 0, WEST, EAST)
        rows_first = jnp.abs(d[:, 0]) >= jnp.abs(d[:, 1])
        first = jnp.where(rows_first, row_move, col_move)
        second = jnp.where(rows_first, col_move, row_move)
        second_helps = jnp.where(rows_first, d[:, 1] != 0, d[:, 0] != 0)

        def legal(a):
            return jnp.take_along_axis(mask, a[:, None], axis=1)[:, 0]

        fallback = random_legal_actions(key, mask)
        move = jnp.where(legal(first), first, jnp.where(second_helps & legal(second), second, fallback))
        any_food = jnp.isfinite(dist).any(-1)
        return jnp.where(any_food, jnp.where(adjacent, LOAD, move), fallback).astype(jnp.int32)


def nearest_player(env) -> HeuristicPlayer:
    return HeuristicPlayer(env, "nearest")


def centre_player(env) -> HeuristicPlayer:
    return HeuristicPlayer(env, "centre")
