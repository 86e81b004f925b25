"""Shared test set-up: CPU by default, JAX's persistent compilation cache, the slow marker."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import pytest

ROOT = Path(__file__).resolve().parents[1]

# Compiled programs are reused across test runs (and CI reruns on the same machine).
jax.config.update("jax_compilation_cache_dir", os.environ.get("ALEM_JAX_CACHE", str(ROOT / ".jax_cache")))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only with ALEM_SLOW=1 or when selected with ``-m slow``."""
    if os.environ.get("ALEM_SLOW") == "1" or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: set ALEM_SLOW=1 or run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
