"""SMAX unit motion and the arithmetic that must match JaxMARL's to the bit: move vectors, bodies
pushed apart, damage sums in order, the cooldown jitter."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["MOVE_VECTORS", "push_apart", "sum_in_order", "cooldown_jitter", "uniform_jitter"]


def _move_vectors() -> np.ndarray:
    """Unit movement directions of actions 0-4 (north, east, south, west, stop), float32 ``[5, 2]``.

    The reference turns the diagonal ``(+-c, +-c)`` (``c`` = float32 1/sqrt 2) by 45 degrees in a
    float32 2x2 product; its axis component is ``2 * fl(c*c)`` = 1 - 2**-24 on every backend and
    batch shape, and that is the value here. Its other component is 0 or, where XLA happens to
    fuse the product into multiply-adds (on CPU: depending on how many units one call decodes), the
    rounding error of ``c*c`` (about 1.27e-8); alem uses 0.
    """
    c = np.float32(1) / np.sqrt(np.float32(2))
    cc = np.float32(c * c)
    axis = np.float32(cc + cc)
    return np.array([[0.0, axis], [axis, 0.0], [0.0, -axis], [-axis, 0.0], [0.0, 0.0]], dtype=np.float32)


MOVE_VECTORS = _move_vectors()


def sum_in_order(x: jax.Array) -> jax.Array:
    """Sum of a vector, first to last (a plain ``jnp.sum`` may be vectorised into another order;
    the reference's damage sums come out in this one, so the rewards agree to the bit)."""
    total, _ = jax.lax.scan(lambda acc, v: (acc + v, None), jnp.zeros((), x.dtype), x)
    return total


def push_apart(pos: jax.Array, alive: jax.Array, radius: jax.Array) -> jax.Array:
    """Live units whose bodies overlap are pushed apart, each by half of every overlap."""
    delta = pos[:, None, :] - pos[None, :, :]
    gap = jnp.sqrt(jnp.sum(delta * delta, axis=-1)) + jnp.eye(pos.shape[0]) + 1e-6
    reach = radius[:, None] + radius[None, :]
    both = alive[:, None] & alive[None, :]
    overlap = jnp.where(both, jax.nn.relu(reach / gap - 1.0), 0.0)
    pushed = pos + jnp.sum(delta * overlap[:, :, None], axis=1) / 2
    return jnp.where(alive[:, None], pushed, pos)


def cooldown_jitter(key: jax.Array, ticks: int, num_units: int, dt: float) -> jax.Array:
    """float32 ``[ticks, U]`` cooldown jitter, uniform in ``[-dt, 2 dt)``; tick ``t`` uses the
    ``t``-th key handed out by a running split of ``key``, split once more per unit."""

    def hand_out(running, _):
        running, sub = jax.random.split(running)
        return running, sub

    _, tick_keys = jax.lax.scan(hand_out, key, None, length=ticks)
    unit_keys = jax.vmap(lambda k: jax.random.split(k, num_units))(tick_keys)
    return jax.vmap(jax.vmap(lambda k: uniform_jitter(k, dt)))(unit_keys)


def uniform_jitter(key: jax.Array, dt: float) -> jax.Array:
    """``jax.random.uniform(key, minval=-dt, maxval=2 dt)`` rounded once.

    The uniform is ``f * 3dt - dt`` for ``f = m / 2**23`` (``m``: the top 23 bits of the key's
    32 random bits). Whether XLA evaluates that as a fused multiply-add (one rounding, what
    the reference gets) or as a product and a sum (two) depends on the surrounding program and
    the backend's optimisation level. For a power-of-two ``dt`` the exact value is the integer
    ``3m - 2**23`` times a power of two, so converting that integer to float32 (one rounding)
    and scaling gives the fused result in every program; other ``dt`` use ``uniform`` as is.
    """
    mantissa, exponent = np.frexp(dt)
    if mantissa != 0.5 or not -100 < exponent < 100:
        return jax.random.uniform(key, minval=-dt, maxval=2 * dt)
    m = (jax.random.bits(key, (), jnp.uint32) >> 9).astype(jnp.int32)
    return (3 * m - (1 << 23)).astype(jnp.float32) * jnp.float32(dt * 2.0**-23)
