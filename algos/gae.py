"""Generalised advantage estimation (Schulman et al. 2016) by a reverse ``lax.scan``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

__all__ = ["gae"]


def gae(
    rewards: Float[Array, "T ..."],
    values: Float[Array, "T ..."],
    dones: Array,
    last_value: Float[Array, "*batch"],
    gamma: float,
    lam: float,
    truncated: Array | None = None,
    final_values: Array | None = None,
) -> tuple[Float[Array, "T ..."], Float[Array, "T ..."]]:
    """Advantages and value targets of a ``T``-step batch.

    ``rewards[t]`` and ``dones[t]`` belong to the transition from step ``t`` (value
    ``values[t]``) to step ``t + 1``; ``last_value`` is the value after the last step.
    A done stops bootstrapping. Where an episode was truncated (``truncated[t]``) the
    bootstrap uses ``final_values[t]``, the value of the observation it was cut at,
    instead of zero. Trailing axes (envs, agents) are batch axes; ``dones`` broadcasts.

    Returns:
        ``(advantages, targets)`` with ``targets = advantages + values``.
    """
    dones = jnp.broadcast_to(
        jnp.asarray(dones, jnp.float32).reshape(dones.shape + (1,) * (rewards.ndim - dones.ndim)),
        rewards.shape,
    )
    if truncated is None:
        boot = jnp.zeros_like(rewards)
    else:
        tr = jnp.asarray(truncated, jnp.float32)
        tr = jnp.broadcast_to(tr.reshape(tr.shape + (1,) * (rewards.ndim - tr.ndim)), rewards.shape)
        boot = tr * final_values

    def body(carry, xs):
        adv_next, value_next = carry
        r, v, d, b = xs
        delta = r + gamma * ((1.0 - d) * value_next + b) - v
        adv = delta + gamma * lam * (1.0 - d) * adv_next
        return (adv, v), adv

    init = (jnp.zeros_like(last_value), last_value)
    _, adv = jax.lax.scan(body, init, (rewards, values, dones, boot), reverse=True)
    return adv, adv + values
