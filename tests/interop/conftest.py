"""Shared fixtures of the interop tests: one alem env object per (id, kwargs) and session.

The adapters jit reset and step once per alem env object, so handing every test the same
object compiles each env once per test process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import alem


@pytest.fixture(scope="session")
def alem_env() -> Callable[..., alem.MultiAgentEnv]:
    """``alem_env(id, **kwargs)``: a cached ``alem.make(id, **kwargs)``."""
    cache: dict[tuple[str, str], alem.MultiAgentEnv] = {}

    def get(id: str, **kwargs: Any) -> alem.MultiAgentEnv:
        key = (id, repr(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = alem.make(id, **kwargs)
        return cache[key]

    return get
