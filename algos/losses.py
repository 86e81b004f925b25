"""Policy-gradient loss terms: PPO's clipped surrogate, value loss, exact KL, DPO's surrogate.

All functions are elementwise over a batch and return per-sample terms; the
learner averages them under the acting mask.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

__all__ = [
    "clipped_surrogate",
    "clipped_value_loss",
    "categorical_kl",
    "categorical_entropy",
    "masked_log_softmax",
    "dpo_surrogate",
    "update_dpo_betas",
    "happo_factor",
    "linear_coef",
    "weighted_mean",
    "normalized",
]

_NEG = -1e9  # logit of an illegal action: exp() underflows to exactly 0


def masked_log_softmax(logits: Float[Array, "*batch A"], mask: Array | None) -> Float[Array, "*batch A"]:
    """Log-probabilities with illegal actions removed (a row with no legal action stays uniform)."""
    if mask is not None:
        any_legal = mask.any(axis=-1, keepdims=True)
        logits = jnp.where(mask | ~any_legal, logits, _NEG)
    return jax.nn.log_softmax(logits, axis=-1)


def categorical_kl(logp: Float[Array, "*batch A"], logq: Float[Array, "*batch A"]) -> Float[Array, "*batch"]:
    """Exact ``KL(p || q)`` from log-probabilities (terms with ``p = 0`` contribute 0).

    Clamped at 0: two tables of the same policy computed by different programs (the rollout's and
    the loss's) differ by rounding, and the sum then comes out around -1e-7, which DPO's square
    root would turn into NaN."""
    p = jnp.exp(logp)
    return jnp.maximum(jnp.sum(jnp.where(p > 0, p * (logp - logq), 0.0), axis=-1), 0.0)


def categorical_entropy(logp: Float[Array, "*batch A"]) -> Float[Array, "*batch"]:
    p = jnp.exp(logp)
    return -jnp.sum(jnp.where(p > 0, p * logp, 0.0), axis=-1)


def clipped_surrogate(ratio: Array, advantage: Array, clip_eps: float | Array) -> Array:
    """PPO's per-sample loss ``-min(r A, clip(r, 1-eps, 1+eps) A)`` (to minimise)."""
    unclipped = ratio * advantage
    clipped = jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantage
    return -jnp.minimum(unclipped, clipped)


def clipped_value_loss(value: Array, old_value: Array, target: Array, clip_eps: float | Array) -> Array:
    """``0.5 * max((v - R)^2, (v_clipped - R)^2)`` with ``v`` kept within ``eps`` of the old value."""
    v_clipped = old_value + jnp.clip(value - old_value, -clip_eps, clip_eps)
    return 0.5 * jnp.maximum(jnp.square(value - target), jnp.square(v_clipped - target))


def dpo_surrogate(ratio: Array, advantage: Array, kl: Array, beta1: Array, beta2: Array) -> Array:
    """DPO's per-sample loss ``-r A + beta1 sqrt(KL(old||new)) + beta2 KL(old||new)`` (Su & Lu).

    No ratio clipping; the two KL penalties keep the update close to the old policy.
    ``sqrt`` gets a tiny offset so its gradient is finite where the KL is exactly 0, and a KL
    below 0 (rounding; a true KL never is) counts as 0 rather than making the loss NaN.
    """
    kl = jnp.maximum(kl, 0.0)
    return -ratio * advantage + beta1 * jnp.sqrt(kl + 1e-12) + beta2 * kl


def update_dpo_betas(
    beta1: Array,
    beta2: Array,
    kl: Array,
    sqrt_kl: Array,
    target: float,
    band: float = 1.5,
    factor: float = 2.0,
    bounds: tuple[float, float] = (1e-3, 1e3),
) -> tuple[Array, Array]:
    """Adapt DPO's penalty weights after an iteration from the statistics its loss penalises.

    ``beta2`` (on the KL) doubles when the mean KL(old||new) exceeds ``band * target`` and halves
    below ``target / band``; ``beta1`` (on sqrt(KL)) does the same with the mean of the
    per-sample ``sqrt(KL)`` against ``sqrt(target)`` (as the DPO reference code does; the square
    root of the mean KL would overstate it whenever the KL is uneven across samples). Both stay
    within ``bounds``.
    """
    lo, hi = bounds

    def adapt(beta, value, goal):
        beta = jnp.where(value > band * goal, beta * factor, beta)
        beta = jnp.where(value < goal / band, beta / factor, beta)
        return jnp.clip(beta, lo, hi)

    return adapt(beta1, sqrt_kl, jnp.sqrt(target)), adapt(beta2, kl, target)


def happo_factor(factor: Array, ratio: Array, acting: Array) -> Array:
    """HAPPO's advantage weight after one more agent's update: ``factor`` times that agent's
    new/old probability ratio, on the steps where it acted. Where it did not act (a waiting
    player, an agent that left the map) its action changed nothing and counts as ratio 1."""
    return factor * jax.lax.stop_gradient(jnp.where(acting, ratio, 1.0))


def linear_coef(update: Array, start: float, end: float, num_updates: int) -> Array:
    """A coefficient moved linearly from ``start`` (update 0) to ``end`` (the last of
    ``num_updates`` updates); ``end < 0`` keeps it at ``start``. The entropy bonus's schedule
    (``algo.ent_coef`` -> ``algo.ent_coef_end``)."""
    if end < 0:
        return jnp.float32(start)
    frac = jnp.clip(jnp.asarray(update, jnp.float32) / max(num_updates - 1, 1), 0.0, 1.0)
    return jnp.float32(start) + (end - start) * frac


def weighted_mean(x: Array, w: Array) -> Array:
    """The mean of ``x`` weighted by ``w`` (broadcast to ``x``); 0 where every weight is 0."""
    w = jnp.broadcast_to(w, x.shape).astype(jnp.float32)
    return (x * w).sum() / jnp.maximum(w.sum(), 1.0)


def normalized(adv: Array, w: Array) -> Array:
    """Advantages standardised by their ``w``-weighted mean and standard deviation."""
    mu = weighted_mean(adv, w)
    return (adv - mu) / jnp.sqrt(weighted_mean((adv - mu) ** 2, w) + 1e-8)
