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

import functools
from typing import Any

import jax
import jax.numpy as jnp

from alem import struct
from alem.rollout import random_legal_actions
from alem.wrappers import BatchedAutoReset

__all__ = [
    "Pool",
    "init_pool",
    "fixed_pool",
    "filled_mask",
    "prioritised_weights",
    "opponent_weights",
    "meta_nash",
    "record_games",
    "add_snapshot",
    "set_payoffs",
    "SelfPlayMatches",
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


def fixed_pool(actors: Any) -> Pool:
    """A full pool of the given actors, stacked ``[K, R, ...]`` (trained partners: nothing is
    added to it during training)."""
    size = jax.tree.leaves(actors)[0].shape[0]
    pool = init_pool(jax.tree.map(lambda a: a[0], actors), size)
    return pool.replace(actor=actors, count=jnp.int32(size), latest=jnp.int32(size - 1))


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


class SelfPlayMatches:
    """The match mechanics of self-play, a mixin of the PPO core (:class:`alem.algos.ppo.Learner`,
    whose ``cfg``, ``n``, ``env``, ``act``, ``actor_net`` and ``uses_global_state`` it reads):
    who plays which seat against which pool slot, the opponents' actions, PSRO's meta-game row,
    and the snapshot taken after an update."""

    @property
    def matched(self) -> bool:
        """Each episode has a learner seat and an opponent or partner (a pool snapshot, a trained
        partner, the current self or the random player): ``selfplay != "off"``,
        ``selfplay_random > 0`` or ``partners``."""
        return self.has_pool or self.cfg.selfplay_random > 0

    @property
    def has_pool(self) -> bool:
        """The state holds a pool: past snapshots (``selfplay``) or trained partners (``partners``)."""
        return self.cfg.selfplay != "off" or self.cfg.partners is not None

    def match_step(self, match, pool, ts, done, batch, stats, key):
        """After one rollout step: the batch's seat weights, the learner's results in the episodes
        that ended (per opponent slot, and against the random player) added to ``stats``, and
        fresh matches for the envs whose episode ended. Returns ``(match, batch, stats)``."""
        c = self.cfg
        seat, slot = match["seat"], match["slot"]
        batch = batch.replace(seat_w=self.seat_weights(match))
        ended = ts.info["episode_done"]
        ret = jnp.take_along_axis(ts.info["episode_return"], seat[:, None], 1)[:, 0]
        score = (jnp.sign(ret) + 1) / 2
        if self.has_pool:
            w = jax.nn.one_hot(slot, c.pool_size, dtype=jnp.float32) * ended[:, None]
            stats = {**stats, "sp_games": w.sum(0), "sp_score": score @ w, "sp_return": ret @ w}
        if c.selfplay_random > 0:
            vs_random = ((slot == -2) & ended).astype(jnp.float32)
            stats = {**stats, "random_games": vs_random.sum(), "random_score": score @ vs_random}
        fresh = self._draw_matches(pool, key, c.num_envs)
        match = jax.tree.map(lambda new, old: jnp.where(done, new, old), fresh, match)
        return match, batch, stats

    def record_rollout(self, state: Any, roll: dict) -> tuple[Any, dict]:
        """Pop the rollout's match results from ``roll`` into the pool's statistics; returns the
        state and the update's self-play metrics."""
        c = self.cfg
        metrics = {}
        if self.has_pool:
            games, score, ret = roll.pop("sp_games"), roll.pop("sp_score"), roll.pop("sp_return")
            state = state.replace(pool=record_games(state.pool, games, score, ret, c.win_rate_ema))
            n_games = jnp.maximum(games.sum(), 1.0)
            metrics = {
                "selfplay_score": score.sum() / n_games,  # learner's score in this rollout's episodes
                "selfplay_return": ret.sum() / n_games,
                "pool_filled": jnp.minimum(state.pool.count, c.pool_size).astype(jnp.float32),
            }
        if c.selfplay_random > 0:
            games, score = roll.pop("random_games"), roll.pop("random_score")
            # NaN in an update without a finished game against the random player
            metrics["score_vs_random"] = jnp.where(games > 0, score / jnp.maximum(games, 1.0), jnp.nan)
        return state, metrics

    def _draw_matches(self, pool: Pool | None, key: jax.Array, num_envs: int) -> dict[str, jax.Array]:
        """Per env: the learner's seat (uniform over the two) and the opponent's pool slot
        (-1: the current parameters, with probability ``selfplay_current``, or always without a
        pool; -2: the uniform-random player, with probability ``selfplay_random``, the learner
        then in seat ``selfplay_random_seat`` if that is set)."""
        c = self.cfg
        k_seat, k_slot, k_who = jax.random.split(key, 3)
        if pool is None:
            slot = jnp.full((num_envs,), -1)
        else:
            # trained partners (algo.partners) are met uniformly
            w = opponent_weights(pool, "uniform" if c.partners else c.selfplay, c.pfsp_power)
            slot = jax.random.categorical(k_slot, jnp.log(w), shape=(num_envs,))
        if c.selfplay_current > 0 or c.selfplay_random > 0:
            u = jax.random.uniform(k_who, (num_envs,))
            slot = jnp.where(u < c.selfplay_current, -1, slot)
            slot = jnp.where(
                (u >= c.selfplay_current) & (u < c.selfplay_current + c.selfplay_random), -2, slot
            )
        seat = jax.random.randint(k_seat, (num_envs,), 0, self.n)
        if c.selfplay_random_seat >= 0:
            seat = jnp.where(slot == -2, c.selfplay_random_seat, seat)
        return {"seat": seat.astype(jnp.int32), "slot": slot.astype(jnp.int32)}

    def seat_weights(self, match: dict[str, jax.Array]) -> jax.Array:
        """float ``[B, N]``: 1 on the units the learner plays (both against its current self)."""
        mine = jnp.arange(self.n)[None] == match["seat"][:, None]
        return (mine | (match["slot"] == -1)[:, None]).astype(jnp.float32)

    def opponent_actions(self, pool_actor, slot, obs, gstate, mask, key) -> jax.Array:
        """Env actions ``[B, N]`` of every env's pool snapshot ``slot [B]`` (params gathered per env)."""
        b = slot.shape[0]
        per_env = jax.tree.map(lambda a: a[jnp.maximum(slot, 0)], pool_actor)
        h = self.actor_net.initial_hidden((1, self.n))

        def one(p, o, g, mk, k):
            _, act, _, _ = self.act({"actor": p}, h, o[None], g[None], mk[None], jnp.ones((1,), bool), k)
            return act[0]

        return jax.vmap(one)(per_env, obs, gstate, mask, jax.random.split(key, b))

    def match_actions(self, learner_act, pool_actor, match, obs, gstate, mask, key) -> jax.Array:
        """``learner_act [B, N]`` on each env's learner seat, its opponent's elsewhere: the pool
        snapshot's (``pool_actor``; None without a pool) or uniform-random legal moves (slot -2)."""
        if pool_actor is None:  # the current self (its actions are the learner's) or random
            opp = random_legal_actions(key, mask)
        elif self.cfg.selfplay_random == 0:  # pool snapshots only: the key stream of pool runs as before
            opp = self.opponent_actions(pool_actor, match["slot"], obs, gstate, mask, key)
        else:
            k_pool, k_rand = jax.random.split(key)
            from_pool = self.opponent_actions(pool_actor, match["slot"], obs, gstate, mask, k_pool)
            opp = jnp.where((match["slot"] == -2)[:, None], random_legal_actions(k_rand, mask), from_pool)
        mine = self.seat_weights(match) > 0
        return jnp.where(mine.reshape(mine.shape + (1,) * (opp.ndim - 2)), learner_act, opp)

    @functools.cached_property
    def _eval_batch(self) -> BatchedAutoReset:
        return BatchedAutoReset(self.env, self.cfg.pool_size * self.cfg.psro_eval_envs)

    def pool_payoffs(self, actor, pool: Pool, key: jax.Array, env_params: Any) -> jax.Array:
        """float32 ``[K]``: mean return of ``actor`` against each pool slot (PSRO's meta-game row).

        ``psro_eval_envs`` envs per slot, half with ``actor`` in each seat, ``psro_eval_steps``
        steps with auto-reset; every episode that ends counts (0 for a slot with none).
        """
        c = self.cfg
        k, m = c.pool_size, c.psro_eval_envs
        batch = self._eval_batch
        match = {"slot": jnp.repeat(jnp.arange(k, dtype=jnp.int32), m), "seat": jnp.arange(k * m) % self.n}
        params = {"actor": actor}
        h = self.actor_net.initial_hidden((k * m, self.n))
        k_reset, k_run = jax.random.split(key)
        env_state, ts = batch.reset(k_reset, env_params)

        def step(carry, key):
            env_state, ts, ret, n = carry
            k_act, k_opp, k_env = jax.random.split(key, 3)
            if self.uses_global_state:
                g = jax.vmap(self.env.global_state, in_axes=(0, None))(env_state, env_params)
            else:
                g = jnp.zeros((k * m, 0), jnp.float32)
            _, act, _, _ = self.act(params, h, ts.obs, g, ts.action_mask, jnp.ones((k * m,), bool), k_act)
            act = self.match_actions(act, pool.actor, match, ts.obs, g, ts.action_mask, k_opp)
            env_state, ts = batch.step(k_env, env_state, act, env_params)
            done = ts.info["episode_done"]
            r = jnp.take_along_axis(ts.info["episode_return"], match["seat"][:, None], 1)[:, 0]
            return (env_state, ts, ret + jnp.where(done, r, 0.0), n + done), None

        zeros = jnp.zeros((k * m,), jnp.float32)
        (_, _, ret, n), _ = jax.lax.scan(
            step, (env_state, ts, zeros, zeros), jax.random.split(k_run, c.psro_eval_steps)
        )
        return ret.reshape(k, m).sum(1) / jnp.maximum(n.reshape(k, m).sum(1), 1.0)

    def _after_update(self, state: Any, env_params: Any) -> Any:
        """Every ``snapshot_every`` updates: the actor into the pool (and, for PSRO, its meta-game
        row and a new meta-Nash mixture)."""
        c = self.cfg
        key, k_slot, k_eval = jax.random.split(state.key, 3)
        actor = state.params["actor"]

        def snapshot(pool):
            pool, slot = add_snapshot(pool, actor, k_slot, c.pool_replace)
            if c.selfplay == "psro":
                values = self.pool_payoffs(actor, pool, k_eval, env_params)
                pool = set_payoffs(pool, slot, values, c.psro_iters)
            return pool

        take = state.update % c.snapshot_every == 0
        pool = jax.lax.cond(take, snapshot, lambda pool: pool, state.pool)
        return state.replace(pool=pool, key=key)
