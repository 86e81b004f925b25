"""Jittable observation/action spaces.

Spaces describe one agent (``env.observation_space(i)``) or all agents stacked
along a leading axis (``env.observation_space()``); :func:`stack` builds the
second from the first. ``sample`` and ``contains`` are pure JAX functions, so
they work under ``jit`` and ``vmap``. Bounds and sizes are kept as NumPy arrays
so that spaces stay static (hashable by identity) and never become tracers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Space", "Discrete", "MultiDiscrete", "Box", "stack"]


class Space:
    """Base class: a static description of an array's shape, dtype and range."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def sample(self, key: jax.Array) -> jax.Array:
        raise NotImplementedError

    def contains(self, x: Any) -> jax.Array:
        """Scalar bool: ``x`` has this space's shape and every entry is in range."""
        raise NotImplementedError

    def _shape_ok(self, x: Any) -> bool:
        return tuple(jnp.shape(x)) == tuple(self.shape)


def _integers_below(x: Any, shape: tuple[int, ...], bound: Any) -> jax.Array:
    """Scalar bool: ``x`` is an integer array of ``shape`` with ``0 <= x < bound``."""
    if tuple(jnp.shape(x)) != tuple(shape):
        return jnp.asarray(False)
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.asarray(False)
    return jnp.all((x >= 0) & (x < jnp.asarray(bound)))


class Discrete(Space):
    """Integers ``0 .. n-1`` (shape ``()``)."""

    def __init__(self, n: int, dtype: Any = jnp.int32):
        if int(n) < 1:
            raise ValueError(f"Discrete space needs n >= 1, got n={n}")
        self.n = int(n)
        self.shape = ()
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"Discrete({self.n})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Discrete) and other.n == self.n and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("Discrete", self.n, str(self.dtype)))

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self.n, dtype=self.dtype)

    def contains(self, x: Any) -> jax.Array:
        return _integers_below(x, self.shape, self.n)


class MultiDiscrete(Space):
    """An integer array where entry ``j`` lies in ``0 .. nvec[j]-1``."""

    def __init__(self, nvec: Sequence[int] | np.ndarray, dtype: Any = jnp.int32):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        if self.nvec.size == 0 or (self.nvec < 1).any():
            raise ValueError(f"MultiDiscrete needs a non-empty nvec with entries >= 1, got {nvec}")
        self.shape = tuple(self.nvec.shape)
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"MultiDiscrete({self.nvec.tolist()})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MultiDiscrete)
            and other.shape == self.shape
            and bool((other.nvec == self.nvec).all())
            and other.dtype == self.dtype
        )

    def __hash__(self) -> int:
        return hash(("MultiDiscrete", self.nvec.tobytes(), self.shape))

    def sample(self, key: jax.Array) -> jax.Array:
        u = jax.random.uniform(key, self.shape)
        return jnp.floor(u * jnp.asarray(self.nvec, jnp.float32)).astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        return _integers_below(x, self.shape, self.nvec)


class Box(Space):
    """A real-valued (or integer) array with elementwise bounds ``[low, high]``."""

    def __init__(
        self,
        low: float | np.ndarray,
        high: float | np.ndarray,
        shape: Sequence[int] | None = None,
        dtype: Any = jnp.float32,
    ):
        if shape is None:
            shape = np.broadcast_shapes(np.shape(low), np.shape(high))
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=np.float64), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=np.float64), self.shape).copy()
        if (self.low > self.high).any():
            raise ValueError("Box needs low <= high everywhere")

    def __repr__(self) -> str:
        lo, hi = self.low.min(initial=0.0), self.high.max(initial=0.0)
        return f"Box(low={lo:g}, high={hi:g}, shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and other.shape == self.shape
            and other.dtype == self.dtype
            and bool(np.array_equal(other.low, self.low))
            and bool(np.array_equal(other.high, self.high))
        )

    def __hash__(self) -> int:
        return hash(("Box", self.shape, str(self.dtype), self.low.tobytes(), self.high.tobytes()))

    @property
    def bounded(self) -> bool:
        return bool(np.isfinite(self.low).all() and np.isfinite(self.high).all())

    def sample(self, key: jax.Array) -> jax.Array:
        # Unbounded dimensions are sampled from a standard normal around the finite bound.
        low, high = jnp.asarray(self.low, jnp.float32), jnp.asarray(self.high, jnp.float32)
        k1, k2 = jax.random.split(key)
        u = jax.random.uniform(k1, self.shape)
        n = jax.random.normal(k2, self.shape)
        lo_f, hi_f = jnp.isfinite(low), jnp.isfinite(high)
        x = jnp.where(
            lo_f & hi_f,
            low + u * (high - low),
            jnp.where(lo_f, low + jnp.abs(n), jnp.where(hi_f, high - jnp.abs(n), n)),
        )
        if jnp.issubdtype(self.dtype, jnp.integer):
            x = jnp.floor(x)
        return x.astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        if not self._shape_ok(x):
            return jnp.asarray(False)
        # NaN compares False on both sides, so it is never contained.
        x = jnp.asarray(x).astype(jnp.float32)
        low = jnp.asarray(self.low, jnp.float32)
        high = jnp.asarray(self.high, jnp.float32)
        return jnp.all((x >= low) & (x <= high))


def stack(spaces: Sequence[Space]) -> Space:
    """Stack per-agent spaces along a new leading axis.

    Discrete spaces become a ``MultiDiscrete`` of their sizes; MultiDiscrete and
    Box spaces of one shape become one space with a leading ``[N]`` axis and
    per-agent bounds.
    """
    spaces = list(spaces)
    if not spaces:
        raise ValueError("stack() needs at least one space")
    kinds = {type(s) for s in spaces}
    if len(kinds) != 1:
        raise TypeError(f"stack() needs spaces of one kind, got {sorted(k.__name__ for k in kinds)}")
    first = spaces[0]
    if isinstance(first, Discrete):
        return MultiDiscrete([s.n for s in spaces], dtype=first.dtype)
    shapes = {s.shape for s in spaces}
    if len(shapes) != 1:
        raise ValueError(f"stack() needs spaces of one shape (pad them first), got {sorted(shapes)}")
    if isinstance(first, MultiDiscrete):
        return MultiDiscrete(np.stack([s.nvec for s in spaces]), dtype=first.dtype)
    if isinstance(first, Box):
        return Box(
            np.stack([s.low for s in spaces]),
            np.stack([s.high for s in spaces]),
            dtype=first.dtype,
        )
    raise TypeError(f"stack() does not know how to stack {type(first).__name__}")
