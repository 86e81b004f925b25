"""Frozen dataclasses that are JAX pytrees: the state, params and timestep containers of every env.

``@struct.dataclass`` makes a frozen :func:`dataclasses.dataclass`, registers it with
:func:`jax.tree_util.register_dataclass` (fields are leaves unless declared with
``struct.field(pytree_node=False)``, which makes them static metadata) and adds ``replace``.
It keeps the env core on jax alone: flax's ``struct`` does the same job but brings flax, orbax and
tensorstore into a plain ``pip install alem``. Subclasses of a struct dataclass are decorated again,
as with flax.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import jax

__all__ = ["dataclass", "field", "zeros_like"]

T = TypeVar("T")


def field(*, pytree_node: bool = True, **kwargs: Any) -> Any:
    """A :func:`dataclasses.field`; ``pytree_node=False`` makes it static (part of the treedef)."""
    metadata = {**kwargs.pop("metadata", {}), "pytree_node": pytree_node}
    return dataclasses.field(metadata=metadata, **kwargs)


def zeros_like(shapes: Any) -> Any:
    """Concrete zeros with the shapes and dtypes of a pytree of arrays or
    :class:`jax.ShapeDtypeStruct` (:func:`jax.eval_shape`'s output); PRNG-key leaves get keys
    split from ``key(0)``. A template built this way costs no computation of the real values."""
    import jax.numpy as jnp

    def one(x: Any) -> Any:
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return jax.random.split(jax.random.key(0), x.shape)
        return jnp.zeros(x.shape, x.dtype)

    return jax.tree.map(one, shapes)


def _replace(self: T, **changes: Any) -> T:
    return dataclasses.replace(self, **changes)


def dataclass(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen dataclass registered as a pytree, with ``replace(**changes)``."""
    if "replace" not in cls.__dict__:
        cls.replace = _replace  # type: ignore[attr-defined]
    cls = dataclasses.dataclass(frozen=True)(cls)
    data, meta = [], []
    for f in dataclasses.fields(cls):
        (data if f.metadata.get("pytree_node", True) else meta).append(f.name)
    jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)
    return cls
