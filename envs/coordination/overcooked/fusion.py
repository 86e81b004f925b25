"""XLA fusion control for env code: :func:`fusion_boundary`.

XLA:CPU fuses cheap elementwise producers into every consumer and recomputes them there. In a
vmapped grid env that means per-env scalars (what an agent holds, the tile it faces, ...) are
recomputed for every cell of every grid that reads them; when a long chain of such scalars feeds
several per-cell updates, the recomputation can cost more than the step itself.
``jax.lax.optimization_barrier`` does not help: the CPU pipeline removes it before fusion. A
``lax.cond`` whose predicate is not batched survives ``vmap`` as a conditional, and XLA
materialises a conditional's results once, so it is a fusion boundary.
"""

from __future__ import annotations

from typing import TypeVar

import jax
import jax.numpy as jnp

from alem.backend import target_backend

__all__ = ["fusion_boundary"]

T = TypeVar("T")


def fusion_boundary(tree: T, keep: jax.Array) -> T:
    """``tree`` when ``keep`` is true, its zeros otherwise; computed once, not fused onwards.

    ``keep`` must be a scalar bool that is true for every valid input and unknown to the compiler
    (a traced params field such as ``params.max_steps > 0``): a compile-time constant lets XLA
    drop the conditional, and then the boundary is gone (the result is the same). The false branch
    returns zeros rather than ``tree`` because XLA also removes a conditional whose branches are
    identical. Under a ``vmap`` that batches ``keep`` the conditional becomes a select: same
    result, no boundary.

    Only for CPU (:func:`~alem.backend.target_backend`): on a GPU or TPU a conditional waits for its
    predicate on the host, and their fusion heuristics differ, so ``tree`` is returned as it is.
    """
    if target_backend() != "cpu":
        return tree
    return jax.lax.cond(keep, lambda t: t, lambda t: jax.tree.map(jnp.zeros_like, t), tree)
