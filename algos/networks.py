"""Actor and critic networks: an MLP torso, an optional GRU, a linear head.

Every network is called on sequences, ``(hidden, x [T, B, D], resets [T, B]) ->
(hidden, out [T, B, out])``, so the same module serves the rollout (``T = 1``)
and the update (whole trajectories). ``resets[t]`` is True where ``x[t]`` is the
first observation of an episode; the GRU state is zeroed *before* that step, so
no memory leaks across episode boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Network"]

_ACTIVATIONS = {"tanh": nn.tanh, "relu": nn.relu}


class _GRU(nn.Module):
    width: int

    @nn.compact
    def __call__(self, h, xs, resets):
        cell = nn.GRUCell(self.width)

        def step(cell, h, inputs):
            x, reset = inputs
            h = jnp.where(reset[..., None], jnp.zeros_like(h), h)
            h, y = cell(h, x)
            return h, y

        scan = nn.scan(step, variable_broadcast="params", split_rngs={"params": False})
        return scan(cell, h, (xs, resets))


class Network(nn.Module):
    """MLP (+ GRU when ``recurrent > 0``) with a linear head of ``out_dim`` outputs."""

    out_dim: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "tanh"
    recurrent: int = 0
    head_scale: float = 1.0

    @nn.compact
    def __call__(self, h, x, resets):
        act = _ACTIVATIONS[self.activation]
        for width in self.hidden:
            x = act(nn.Dense(width, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
        if self.recurrent:
            h, x = _GRU(self.recurrent)(h, x, resets)
        out = nn.Dense(self.out_dim, kernel_init=nn.initializers.orthogonal(self.head_scale))(x)
        return h, out

    def initial_hidden(self, batch: tuple[int, ...]) -> jax.Array:
        """Zero GRU state of shape ``[*batch, recurrent]`` (zero-width when feed-forward)."""
        return jnp.zeros((*batch, self.recurrent), jnp.float32)
