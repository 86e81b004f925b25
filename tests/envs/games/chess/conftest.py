"""Shared compiled programs of the chess tests (one compile per session) and OpenSpiel helpers.

``chess_kit``: the board-observation env (the rules do not depend on the observation; its step is
the cheapest to compile), its jitted step, a vmapped step over fixed-size chunks (perft), and a
jitted scan that plays random games (lock-step). OpenSpiel numbers its players the other way round
(black = 0, white = 1): ``spiel_returns`` gives its returns in alem's seat order.
"""

from __future__ import annotations

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem.envs.games.chess import Chess
from alem.rollout import random_actions

CHUNK = 2048  # perft steps this many positions per call (one compiled shape)


def spiel_returns(spiel_state) -> list[float]:
    return list(spiel_state.returns())[::-1]


@functools.cache
def _kit():
    env = Chess(observation="board")
    step = jax.jit(env.step)
    vstep = jax.jit(jax.vmap(env.step))

    @functools.partial(jax.jit, static_argnums=(1, 2))
    def play(key, num_games: int, num_plies: int):
        """Random games from the start (no auto-reset: a finished game stays as it is)."""
        state, ts = jax.vmap(env.reset)(jax.random.split(key, num_games))

        def body(carry, k):
            state, ts = carry
            acts = random_actions(env, k, ts)
            new, nts = jax.vmap(env.step)(jax.random.split(k, num_games), state, acts)
            mover = jnp.where(state.player == 0, acts[:, 0], acts[:, 1])
            return (new, nts), (mover, new, nts.terminated, nts.reward)

        _, traj = jax.lax.scan(body, (state, ts), jax.random.split(key, num_plies))
        return state, traj

    return types.SimpleNamespace(env=env, step=step, vstep=vstep, play=play)


@pytest.fixture(scope="session")
def chess_kit():
    return _kit()


def expand(kit, states, count_only: bool):
    """Every legal move of a batch of positions: the number of moves, or the positions they reach."""
    legal = np.asarray(jax.vmap(kit.env.action_mask)(states).any(1))  # [B, 4674]
    # Checkmate and stalemate end a game with no move; any other ending would cut the count.
    ended = np.asarray(states.terminated) & np.asarray(states.legal).any(1)
    assert not ended.any(), "perft reached a drawn game that still had moves"
    if count_only:
        return int(legal.sum())
    rows, acts = np.nonzero(legal)
    out = []
    for i in range(0, len(rows), CHUNK):
        r, a = rows[i : i + CHUNK], acts[i : i + CHUNK]
        n = len(r)
        r, a = np.pad(r, (0, CHUNK - n)), np.pad(a, (0, CHUNK - n))
        batch = jax.tree.map(lambda x, r=r: x[r], states)
        keys = jax.random.split(jax.random.key(0), CHUNK)
        new, _ = kit.vstep(keys, batch, jnp.asarray(np.stack([a, a], 1), jnp.int32))
        out.append(jax.tree.map(lambda x, n=n: x[:n], new))
    return jax.tree.map(lambda *xs: jnp.concatenate(xs), *out)


def perft(kit, fen: str, depth: int) -> int:
    states = jax.tree.map(lambda x: x[None], kit.env.from_fen(fen))
    for _ in range(depth - 1):
        states = expand(kit, states, count_only=False)
    return expand(kit, states, count_only=True)
