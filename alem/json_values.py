"""NumPy and JAX values as plain JSON values, for every file alem writes (results, metrics,
episode records, ratings)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable"]


def jsonable(x: Any) -> Any:
    """``x`` as plain JSON values: NumPy/JAX scalars and arrays to numbers and lists, dicts
    and lists recursively, non-finite floats to None (JSON has no NaN)."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if x is None or isinstance(x, str | bool):
        return x
    arr = np.asarray(x)
    if arr.ndim:
        return [jsonable(v) for v in arr]
    v = arr.item()
    return None if isinstance(v, float) and not math.isfinite(v) else v
