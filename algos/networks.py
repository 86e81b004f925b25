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

__all__ = ["Network", "orthogonal", "apply_per_param_set"]

_ACTIVATIONS = {"tanh": nn.tanh, "relu": nn.relu}


def orthogonal(scale: float = 1.0):
    """Orthogonal initializer (Saxe et al.), as ``flax.linen.initializers.orthogonal``, without LAPACK.

    Draws the same distribution as flax's (a Gaussian matrix orthonormalised, with the signs
    that make it Haar-distributed) by Gram-Schmidt, applied twice for stability, in a
    ``fori_loop`` of matrix-vector products. Flax's QR is a LAPACK custom call that, batched
    under ``vmap`` (seeds, parameter sets), parallelises over jaxlib's CPU thread pool from inside that
    pool: on a 2-core machine two such calls can wait on each other for ever (seen with
    jax 0.10.2: every thread asleep in ``lapack_sorgqr_ffi`` -> ``ParallelBatchMap``).
    """

    def init(key: jax.Array, shape: Sequence[int], dtype=jnp.float32) -> jax.Array:
        rows, cols = int(np.prod(shape[:-1])), int(shape[-1])
        n, m = max(rows, cols), min(rows, cols)
        a = jax.random.normal(key, (n, m), jnp.float32)
        before = jnp.arange(m)

        def column(j, q):
            v = a[:, j]
            for _ in range(2):  # classical Gram-Schmidt, twice
                v = v - q @ (jnp.where(before < j, q.T @ v, 0.0))
            return q.at[:, j].set(v / jnp.linalg.norm(v))

        q = jax.lax.fori_loop(0, m, column, jnp.zeros((n, m), jnp.float32))
        q = q.T if rows < cols else q
        return (scale * q).reshape(shape).astype(dtype)

    return init


class _GRU(nn.Module):
    width: int

    @nn.compact
    def __call__(self, h, xs, resets):
        cell = nn.GRUCell(self.width, recurrent_kernel_init=orthogonal())

        def step(cell, h, inputs):
            x, reset = inputs
            h = jnp.where(reset[..., None], jnp.zeros_like(h), h)
            h, y = cell(h, x)
            return h, y

        scan = nn.scan(step, variable_broadcast="params", split_rngs={"params": False})
        return scan(cell, h, (xs, resets))


class Network(nn.Module):
    """MLP (+ GRU when ``recurrent > 0``) with a linear head of ``out_dim`` outputs.

    ``log_std=(D, init)`` adds a learned, state-independent vector ``log_std`` (``D``
    values, initially ``init``) appended to every output: a Gaussian policy head's spread.
    ``layer_norm`` normalises every hidden layer before its activation (PQN's Q-network: it is
    what keeps Q-learning stable without a target network, Gallici et al. 2024).
    """

    out_dim: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "tanh"
    recurrent: int = 0
    head_scale: float = 1.0
    log_std: tuple[int, float] | None = None
    layer_norm: bool = False

    @nn.compact
    def __call__(self, h, x, resets):
        act = _ACTIVATIONS[self.activation]
        for width in self.hidden:
            x = nn.Dense(width, kernel_init=orthogonal(np.sqrt(2)))(x)
            x = act(nn.LayerNorm()(x) if self.layer_norm else x)
        if self.recurrent:
            h, x = _GRU(self.recurrent)(h, x, resets)
        out = nn.Dense(self.out_dim, kernel_init=orthogonal(self.head_scale))(x)
        if self.log_std is not None:
            dims, init = self.log_std
            log_std = self.param("log_std", nn.initializers.constant(init), (dims,))
            out = jnp.concatenate([out, jnp.broadcast_to(log_std, (*out.shape[:-1], dims))], -1)
        return h, out

    def initial_hidden(self, batch: tuple[int, ...]) -> jax.Array:
        """Zero GRU state of shape ``[*batch, recurrent]`` (zero-width when feed-forward)."""
        return jnp.zeros((*batch, self.recurrent), jnp.float32)


def apply_per_param_set(net: Network, params, h, x, resets, param_sets: np.ndarray, num_param_sets: int):
    """Apply ``net`` per unit with that unit's parameter set (``params`` stacked ``[K, ...]``).

    ``h [B, U, H]``, ``x [T, B, U, D]``, ``resets [T, B]`` -> ``h [B, U, H]``, ``out [T, B, U, O]``.
    """
    f = lambda p, h_u, x_u: net.apply(p, h_u, x_u, resets)
    if num_param_sets == 1 and not net.recurrent:
        # One feed-forward network for every unit: fold the units into the batch (one
        # matmul per layer, no transposes in and out of a vmap over units).
        p = jax.tree.map(lambda a: a[0], params)
        t, b, u = x.shape[:3]
        _, out = net.apply(p, h.reshape(b * u, -1), x.reshape(t, b * u, -1), jnp.repeat(resets, u, axis=1))
        return h, out.reshape(t, b, u, -1)
    if num_param_sets == 1:
        p = jax.tree.map(lambda a: a[0], params)
        return jax.vmap(f, in_axes=(None, 1, 2), out_axes=(1, 2))(p, h, x)
    p = jax.tree.map(lambda a: a[param_sets], params)
    return jax.vmap(f, in_axes=(0, 1, 2), out_axes=(1, 2))(p, h, x)
