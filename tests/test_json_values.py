"""alem.json_values: NumPy/JAX values as plain JSON."""

from __future__ import annotations

import json
import math

import jax.numpy as jnp
import numpy as np

from alem.json_values import jsonable


def test_jsonable_gives_plain_json_with_nan_as_null():
    value = {
        "a": np.float32(1.5),
        "b": np.array([[1, 2], [3, 4]], np.int64),
        "c": [np.nan, np.inf, 2.0],
        "d": jnp.asarray([0.25, jnp.nan]),
        "e": (np.bool_(True), "text", None),
    }
    out = jsonable(value)
    assert json.loads(json.dumps(out, allow_nan=False)) == {
        "a": 1.5,
        "b": [[1, 2], [3, 4]],
        "c": [None, None, 2.0],
        "d": [0.25, None],
        "e": [True, "text", None],
    }
    assert jsonable(float("nan")) is None and jsonable(3) == 3 and not math.isnan(jsonable(1e300))
