"""Temporal-difference pieces of the value-based learners (:mod:`alem.algos.qlearning`): masked
greedy choices, epsilon-greedy exploration and its schedule, Q(lambda) returns, and the target
network's updates. Pure functions of arrays; the learner vmaps and scans them."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

__all__ = [
    "masked_argmax",
    "masked_max",
    "epsilon_greedy",
    "linear_epsilon",
    "q_lambda_returns",
    "polyak",
]

_NEG = -1e30


def masked_argmax(q: jax.Array, mask: jax.Array) -> jax.Array:
    """The legal action with the largest value ``[...]`` (an agent without a legal action: 0)."""
    return jnp.argmax(jnp.where(mask, q, _NEG), axis=-1)


def masked_max(q: jax.Array, mask: jax.Array) -> jax.Array:
    """The largest legal value ``[...]``; 0 where no action is legal (an agent that does not act
    has no value to bootstrap from)."""
    best = jnp.max(jnp.where(mask, q, _NEG), axis=-1)
    return jnp.where(mask.any(-1), best, 0.0)


def epsilon_greedy(key: jax.Array, q: jax.Array, mask: jax.Array, epsilon: jax.Array) -> jax.Array:
    """With probability ``epsilon`` a uniformly random legal action, else the masked argmax;
    independently for every leading index of ``q [..., A]``."""
    k_explore, k_pick = jax.random.split(key)
    greedy = masked_argmax(q, mask)
    legal = mask | ~mask.any(-1, keepdims=True)  # no legal action: uniform over all (then unused)
    logits = jnp.where(legal, 0.0, -jnp.inf)
    random = jax.random.categorical(k_pick, logits, axis=-1)
    explore = jax.random.uniform(k_explore, greedy.shape) < epsilon
    return jnp.where(explore, random, greedy)


def linear_epsilon(step: jax.Array, start: float, end: float, decay_steps: int) -> jax.Array:
    """``start`` at step 0, moved linearly to ``end`` at ``decay_steps``, constant afterwards."""
    frac = jnp.clip(jnp.asarray(step, jnp.float32) / max(decay_steps, 1), 0.0, 1.0)
    return jnp.float32(start) + (end - start) * frac


def q_lambda_returns(
    reward: jax.Array,
    done: jax.Array,
    next_max_q: jax.Array,
    next_acts: jax.Array,
    gamma: float,
    lam: float,
) -> jax.Array:
    """Peng's Q(lambda) returns of a rollout, time-major ``[T, ...]``, by a reverse scan.

    ``reward[t]``, ``done[t]``: after the action at ``t``; ``next_max_q[t]`` is
    ``max_a Q(s_{t+1}, a)`` over the legal actions (the last one: of the state after the
    rollout); ``next_acts[t]``: whether the unit acts in ``s_{t+1}``.

    ``G_t = r_t + gamma (1 - d_t) [lam G_{t+1} + (1 - lam) max Q(s_{t+1})]`` where the unit acts
    at ``t+1``, and ``r_t + gamma (1 - d_t) G_{t+1}`` where it waits (a turn-based game's other
    player moves: nothing of its own to bootstrap from). The last step bootstraps fully,
    ``G_{T-1} = r + gamma (1 - d) max Q(s_T)``.
    """
    not_done = 1.0 - done.astype(jnp.float32)
    acts = next_acts.astype(jnp.float32)

    def back(g_next, xs):
        r, nd, mq, a = xs
        mix = lam * g_next + (1.0 - lam) * mq
        boot = a * mix + (1.0 - a) * g_next
        g = r + gamma * nd * boot
        return g, g

    last = reward[-1] + gamma * not_done[-1] * next_max_q[-1]
    _, g = jax.lax.scan(back, last, (reward[:-1], not_done[:-1], next_max_q[:-1], acts[:-1]), reverse=True)
    return jnp.concatenate([g, last[None]], 0)


def polyak(target: Any, online: Any, tau: float | jax.Array) -> Any:
    """``tau * online + (1 - tau) * target`` leaf by leaf (``tau = 1``: a hard copy)."""
    return jax.tree.map(lambda t, o: tau * o + (1.0 - tau) * t, target, online)
