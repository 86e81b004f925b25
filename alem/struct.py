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

__all__ = ["dataclass", "field"]

T = TypeVar("T")


def field(*, pytree_node: bool = True, **kwargs: Any) -> Any:
    """A :func:`dataclasses.field`; ``pytree_node=False`` makes it static (part of the treedef)."""
    metadata = {**kwargs.pop("metadata", {}), "pytree_node": pytree_node}
    return dataclasses.field(metadata=metadata, **kwargs)


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
