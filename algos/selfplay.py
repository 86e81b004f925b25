"""Opponent pools for self-play in two-player zero-sum games (``LearnerConfig.selfplay``).

The PPO core (:mod:`alem.algos.ppo`) keeps a :class:`Pool` of ``pool_size`` (``K``) past
snapshots of the learner's actor parameters inside its state, stacked ``[K, ...]``, so a
whole run stays one compiled program (and checkpoints hold the pool). Per env, at each
episode start, the learner's seat is drawn uniformly over the two seats and the opponent's
snapshot by the schedule:

- ``"latest"``: the most recent snapshot;
- ``"uniform"``: uniform over the filled slots: fictitious self-play (FSP) against the
  average of the past policies the pool holds;
- ``"prioritised"``: prioritised fictitious self-play (PFSP, AlphaStar): slot ``k`` with
  weight ``(1 - w_k)^p`` (:func:`prioritised_weights`), ``w_k`` the learner's running
  score against it (win 1, draw 1/2, loss 0), so snapshots that beat the learner are met
  more often;
- ``"psro"``: a small PSRO loop: a meta-game payoff matrix between the pool members
  (estimated when a snapshot is added, by a short vmapped evaluation of the new member
  against every slot, both seats) is solved for its symmetric meta-Nash mixture by
  fictitious play (:func:`meta_nash`), and opponents are drawn from that mixture.

Snapshots: the initial parameters fill slot 0, then one snapshot every ``snapshot_every``
updates. ``pool_replace="ring"`` overwrites the oldest slot (the pool is the last ``K``
snapshots); ``"reservoir"`` keeps a uniform sample of all snapshots taken so far
(reservoir sampling, as FSP's supervised buffer does), so "uniform" then averages over
the whole history.

Everything here is a pure JAX function of arrays; the learner calls them inside its update.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from alem import struct

__all__ = [
    "Pool",
    "init_pool",
    "filled_mask",
    "prioritised_weights",
    "opponent_weights",
    "meta_nash",
    "record_games",
    "add_snapshot",
    "set_payoffs",
]


@struct.dataclass
class Pool:
    """``K`` snapshots of the actor and the learner's statistics against each of them."""

    actor: Any  # actor parameters stacked [K, R, ...] (R: the learner's parameter sets, 1)
    count: jax.Array  # int32 []: snapshots taken so far (slots filled: min(count, K))
    latest: jax.Array  # int32 []: slot of the most recent snapshot kept
    score: jax.Array  # float32 [K]: learner's running score vs each slot (win 1, draw 1/2, loss 0)
    ret: jax.Array  # float32 [K]: learner's running mean return vs each slot
    games: jax.Array  # float32 [K]: finished episodes vs each slot since it was written
    payoff: jax.Array  # float32 [K, K]: PSRO meta-game, row member's mean return vs column
    mix: jax.Array  # float32 [K]: PSRO meta-Nash mixture over the slots


def init_pool(actor: Any, size: int) -> Pool:
    """A pool of ``size`` slots holding ``actor`` in slot 0 (one snapshot taken)."""
    stacked = jax.tree.map(lambda a: jnp.broadcast_to(a, (size, *a.shape)), actor)
    zeros = jnp.zeros((size,), jnp.float32)
    return Pool(
        actor=stacked,
        count=jnp.int32(1),
        latest=jnp.int32(0),
        score=jnp.full((size,), 0.5, jnp.float32),
        ret=zeros,
        games=zeros,
        payoff=jnp.zeros((size, size), jnp.float32),
        mix=jax.nn.one_hot(0, size, dtype=jnp.float32),
    )


def filled_mask(count: jax.Array, size: int) -> jax.Array:
    """bool ``[size]``: the slots that hold a snapshot (slots fill in order 0, 1, ...)."""
    return jnp.arange(size) < count


def prioritised_weights(win_rate: jax.Array, filled: jax.Array, power: float) -> jax.Array:
    """PFSP's "hard" weighting: ``(1 - win_rate)^power`` per filled slot, normalised.

    ``win_rate [K]`` is the learner's score against each slot. A floor of ``1e-3`` keeps
    every filled slot reachable (and gives uniform weights when the learner beats all).
    """
    w = jnp.where(filled, jnp.clip(1.0 - win_rate, 0.0, 1.0) ** power + 1e-3, 0.0)
    return w / jnp.maximum(w.sum(), 1e-30)


def opponent_weights(pool: Pool, mode: str, power: float = 2.0) -> jax.Array:
    """float32 ``[K]``: the probability of drawing each slot as the opponent (``mode`` static)."""
    size = pool.score.shape[0]
    filled = filled_mask(pool.count, size)
    if mode == "latest":
        return jax.nn.one_hot(pool.latest, size, dtype=jnp.float32)
    if mode == "uniform":
        w = filled.astype(jnp.float32)
    elif mode == "prioritised":
        return prioritised_weights(pool.score, filled, power)
    elif mode == "psro":
        w = jnp.where(filled, pool.mix, 0.0)
    else:
        raise ValueError(f"unknown selfplay mode {mode!r}")
    return w / jnp.maximum(w.sum(), 1e-30)


def meta_nash(payoff: jax.Array, valid: jax.Array | None = None, iters: int = 1000) -> jax.Array:
    """The symmetric meta-Nash mixture of a symmetric zero-sum meta-game, by fictitious play.

    ``payoff [K, K]``: the row strategy's payoff against the column strategy (made exactly
    antisymmetric, ``(M - M^T) / 2``); ``valid`` bool ``[K]`` the strategies that exist.
    Starting from uniform over the valid strategies, ``iters`` rounds of fictitious play
    (each round a best response to the running average, which moves towards it with step
    ``1 / (t + 2)``). The average converges to a Nash equilibrium of the zero-sum game
    (Robinson 1951); a strictly dominated strategy keeps only its share of the uniform start,
    ``1 / (K (iters + 1))``.
    """
    k = payoff.shape[0]
    valid = jnp.ones((k,), bool) if valid is None else valid
    a = 0.5 * (payoff - payoff.T)
    x0 = valid.astype(jnp.float32) / jnp.maximum(valid.sum(), 1)

    def body(t, x):
        gain = jnp.where(valid, a @ x, -jnp.inf)
        br = jax.nn.one_hot(jnp.argmax(gain), k, dtype=jnp.float32)
        return x + (br - x) / (t + 2.0)

    return jax.lax.fori_loop(0, iters, body, x0)


def record_games(pool: Pool, games: jax.Array, score_sum: jax.Array, ret_sum: jax.Array, ema: float) -> Pool:
    """Fold the episodes of one rollout into the running statistics per slot.

    ``games [K]`` finished episodes against each slot, ``score_sum``/``ret_sum [K]`` the
    learner's summed scores and returns in them. Each slot's average moves towards the batch
    mean with rate ``1 - (1 - ema)^n`` (``n`` episodes; an exponential average per episode),
    but at least ``n / (games so far + n)`` (a plain mean while a slot has few games).
    """
    n = games.astype(jnp.float32)
    total = pool.games + n
    rate = jnp.maximum(1.0 - (1.0 - ema) ** n, n / jnp.maximum(total, 1.0))
    rate = jnp.where(n > 0, rate, 0.0)
    mean = lambda s: s / jnp.maximum(n, 1.0)
    return pool.replace(
        score=pool.score + rate * (mean(score_sum) - pool.score),
        ret=pool.ret + rate * (mean(ret_sum) - pool.ret),
        games=total,
    )


def add_snapshot(pool: Pool, actor: Any, key: jax.Array, replace: str = "ring") -> tuple[Pool, jax.Array]:
    """Take a snapshot of ``actor``: ``(pool, slot)``, ``slot`` = -1 if a reservoir dropped it.

    ``"ring"`` writes slot ``count % K``; ``"reservoir"`` fills the slots in order, then keeps
    the ``c``-th snapshot (0-based) with probability ``K / (c + 1)`` in a uniformly drawn slot.
    A written slot's statistics start afresh.
    """
    size = pool.score.shape[0]
    c = pool.count
    if replace == "ring":
        slot = c % size
    else:
        j = jax.random.randint(key, (), 0, jnp.maximum(c + 1, 1))
        slot = jnp.where(c < size, c, jnp.where(j < size, j, -1))
    write = slot >= 0
    hot = jax.nn.one_hot(slot, size, dtype=bool) & write  # [K]

    def put(stack, new):
        return jnp.where(hot.reshape((-1,) + (1,) * new.ndim), new[None], stack)

    pool = pool.replace(
        actor=jax.tree.map(put, pool.actor, actor),
        count=c + 1,
        latest=jnp.where(write, slot, pool.latest),
        score=jnp.where(hot, 0.5, pool.score),
        ret=jnp.where(hot, 0.0, pool.ret),
        games=jnp.where(hot, 0.0, pool.games),
    )
    return pool, slot


def set_payoffs(pool: Pool, slot: jax.Array, values: jax.Array, iters: int) -> Pool:
    """PSRO: the written ``slot``'s row (``values [K]``, its mean return vs each slot) and column
    (their negatives) of the meta-game, and the meta-Nash mixture solved afresh."""
    size = pool.score.shape[0]
    filled = filled_mask(pool.count, size)
    hot = jax.nn.one_hot(slot, size, dtype=bool) & (slot >= 0)
    row = jnp.where(filled & ~hot, values, 0.0)
    m = jnp.where(hot[:, None], row[None, :], pool.payoff)
    m = jnp.where(hot[None, :], -row[:, None], m)
    return pool.replace(payoff=m, mix=meta_nash(m, filled, iters))
