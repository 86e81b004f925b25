"""alem.envs.coordination.overcooked.fusion.fusion_boundary: the values it passes, and that the boundary survives compilation."""

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.overcooked.fusion import fusion_boundary


def _tree():
    return {
        "a": jnp.arange(6, dtype=jnp.int32).reshape(2, 3),
        "b": (jnp.float32(2.5), jnp.array([True, False])),
    }


def test_passes_the_tree_when_keep_and_zeros_otherwise():
    tree = _tree()
    kept = jax.jit(fusion_boundary)(tree, jnp.bool_(True))
    dropped = jax.jit(fusion_boundary)(tree, jnp.bool_(False))
    for got, want in zip(jax.tree.leaves(kept), jax.tree.leaves(tree), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    for got, want in zip(jax.tree.leaves(dropped), jax.tree.leaves(tree), strict=True):
        assert got.dtype == want.dtype and not np.asarray(got).any()


def test_vmap_over_the_tree_and_over_keep():
    xs = jnp.arange(12, dtype=jnp.int32).reshape(4, 3)
    same = jax.vmap(fusion_boundary, in_axes=(0, None))(xs, jnp.bool_(True))
    assert np.array_equal(same, xs)
    keep = jnp.array([True, False, True, False])
    mixed = jax.vmap(fusion_boundary)(xs, keep)  # a batched predicate: a select, same values
    assert np.array_equal(mixed, np.where(np.asarray(keep)[:, None], np.asarray(xs), 0))


def test_an_unbatched_runtime_predicate_stays_a_conditional_under_vmap():
    """The point of the helper: XLA keeps the conditional (a fusion boundary) in the compiled
    program when ``keep`` is a runtime value shared by the batch."""

    def f(x, limit):
        y = fusion_boundary(x * 3 + 1, limit > 0)
        return y[:, None] + jnp.arange(5)

    xs = jnp.ones((8, 4), jnp.int32)
    compiled = jax.jit(jax.vmap(f, in_axes=(0, None))).lower(xs, jnp.int32(7)).compile()
    assert "conditional(" in compiled.as_text()
    out = compiled(xs, jnp.int32(7))
    assert np.array_equal(out, 4 + np.arange(5) + np.zeros((8, 4, 1), np.int32))


def test_no_conditional_when_compiling_for_an_accelerator():
    """On a GPU a conditional waits for its predicate on the host: the boundary is CPU-only, and a
    program traced for a GPU (alem.backend.compiling_for) has none, with the same values."""
    from alem.backend import compiling_for

    def f(x, limit):
        return fusion_boundary(x * 3 + 1, limit > 0)[:, None] + jnp.arange(5)

    xs = jnp.ones((8, 4), jnp.int32)
    with compiling_for("gpu"):
        compiled = jax.jit(jax.vmap(f, in_axes=(0, None))).lower(xs, jnp.int32(7)).compile()
    assert "conditional(" not in compiled.as_text()
    assert np.array_equal(compiled(xs, jnp.int32(7)), 4 + np.arange(5) + np.zeros((8, 4, 1), np.int32))
