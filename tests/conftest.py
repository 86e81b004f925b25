"""Shared test set-up: CPU by default, JAX's persistent compilation cache, the slow marker."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import pytest

ROOT = Path(__file__).resolve().parents[1]

# JAX's persistent compilation cache is opt-in: ALEM_JAX_CACHE=<dir> reuses compiled programs
# across runs and xdist workers. It is off by default because XLA's CPU executable
# (de)serialization segfaulted xdist workers a few times per suite run on 2026-12-01 (JAX 0.10.2,
# inside put_executable_and_time / get_executable_and_time), with fresh caches too. (The compiler
# itself also aborted a worker once without the cache: setup.cfg reruns crashed tests.)
if os.environ.get("ALEM_JAX_CACHE"):
    jax.config.update("jax_compilation_cache_dir", os.environ["ALEM_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only with ALEM_SLOW=1 or when selected with ``-m slow``."""
    if os.environ.get("ALEM_SLOW") == "1" or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: set ALEM_SLOW=1 or run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# ---------------------------------------------------------------------------- fault suite summary
# Fault tests (tests/test_faults.py) report what they injected through the ``fault_report``
# fixture; xdist workers append to one file named in the environment, and the controller
# prints the totals at the end of the session.
FAULT_LOG_ENV = "ALEM_FAULT_LOG"


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        import tempfile

        fd, path = tempfile.mkstemp(prefix="alem-faults-", suffix=".jsonl")
        os.close(fd)
        os.environ[FAULT_LOG_ENV] = path
        config._alem_fault_log = path


@pytest.fixture
def fault_report():
    """``fault_report(faults=, killed=, lost=, duplicates=)``: add to the session's fault summary."""

    def report(**counts: int) -> None:
        path = os.environ.get(FAULT_LOG_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(counts) + "\n")

    return report


def pytest_terminal_summary(terminalreporter, config):
    path = getattr(config, "_alem_fault_log", None)
    if not path or not os.path.exists(path):
        return
    totals = {"faults": 0, "killed": 0, "lost": 0, "duplicates": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                for k, v in json.loads(line).items():
                    totals[k] = totals.get(k, 0) + v
    os.unlink(path)
    if any(totals.values()):
        terminalreporter.write_line(
            f"fault suite: {totals['faults']} faults injected, {totals['killed']} runs killed, "
            f"episodes lost: {totals['lost']}, duplicates: {totals['duplicates']}"
        )
