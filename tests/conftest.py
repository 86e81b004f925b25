"""Shared test set-up: CPU by default, JAX's persistent compilation cache, the test tiers, and one
harness of compiled env programs per env id."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import pytest

import alem
from alem.rollout import random_actions
from alem.wrappers import AutoReset

ROOT = Path(__file__).resolve().parents[1]

# JAX's persistent compilation cache is opt-in: ALEM_JAX_CACHE=<dir> reuses compiled programs
# across runs and xdist workers. It is off by default because XLA's CPU executable
# (de)serialization segfaulted xdist workers a few times per suite run on 2026-12-01 (JAX 0.10.2,
# inside put_executable_and_time / get_executable_and_time), with fresh caches too. (The compiler
# itself also aborted a worker once without the cache: setup.cfg reruns crashed tests.)
if os.environ.get("ALEM_JAX_CACHE"):
    jax.config.update("jax_compilation_cache_dir", os.environ["ALEM_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)


# ---------------------------------------------------------------------------- tiers
# The default `python -m pytest` runs every unit and defining-behaviour test and a smoke of every
# env id; the marked tiers (tests/README.md lists each file's tier) run with `-m <tier>` or
# ALEM_TIERS=all, and .ci/run runs them all.
TIERS = ("integration", "exhaustive")


def _tiers_chosen(config) -> bool:
    return bool(config.getoption("-m")) or os.environ.get("ALEM_TIERS") == "all"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Items of one env id share its harness: xdist's loadgroup sends a group to one worker, which
    # runs its items back to back (this hook runs before xdist's, which reads the marks).
    for item in items:
        env_id = _item_env_id(item)
        if env_id is not None and env_id in alem.registry():
            item.add_marker(pytest.mark.xdist_group(env_id))
    if _tiers_chosen(config):
        return
    keep, tiered = [], []
    for item in items:
        (tiered if any(t in item.keywords for t in TIERS) else keep).append(item)
    if tiered:
        config.hook.pytest_deselected(items=tiered)
        items[:] = keep


# ---------------------------------------------------------------------------- compiled programs
# Every live XLA:CPU executable holds about six memory mappings (nine for an eager op), and a
# process may hold vm.max_map_count of them (65,530 by default). A worker that has compiled ~10,000
# programs (the per-id harnesses of a whole tier, plus every eager op's executable) reaches the
# limit, an mmap inside XLA's compiler fails, and the worker segfaults in backend_compile_and_load:
# the crash that hit a different test in each run. After each test, a worker past half the limit
# drops JAX's compiled programs (they recompile on next use) and the harnesses that hold them.
_MAPS_LIMIT = Path("/proc/sys/vm/max_map_count")


def _map_count() -> int:
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux
        return 0


def _map_budget() -> int:
    try:
        return int(_MAPS_LIMIT.read_text()) // 2
    except (OSError, ValueError):
        return 32_000


_MAP_BUDGET = _map_budget()


def _item_env_id(item) -> str | None:
    params = getattr(getattr(item, "callspec", None), "params", {})
    env_id = params.get("env_id", params.get("h"))
    return env_id if isinstance(env_id, str) else None


def pytest_collection_finish(session):
    """Refuse a pytest whose items xdist cannot group. xdist groups by renaming an item's nodeid
    to ``<nodeid>@<group>``; pytest 9 derives the nodeid from elsewhere and ignores the rename, so
    grouping silently stopped: every item went to any worker and recompiled its id's programs
    (the conformance tier took twice as long until 2026-12-02). The dev extra pins pytest < 9."""
    config = session.config
    if not getattr(config.option, "loadgroup", False):
        return
    for item in session.items:
        env_id = _item_env_id(item)
        if env_id is not None and item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest {pytest.__version__} ignores pytest-xdist's loadgroup rename ({item.nodeid} has "
                'no "@<group>" suffix), so items of one env id would not share a worker; install the '
                'dev extra\'s pytest (pip install -e ".[dev]") or run with -n 0'
            )


def pytest_runtest_teardown(item, nextitem):
    # An id's items run back to back on one worker (loadgroup): when the next item is another
    # id's, this id's harness (its compiled programs) is dead weight; dropping it keeps the
    # worker far from the limit, so the wholesale clear below (which recompiles the next
    # id's programs mid-way) rarely fires.
    env_id = _item_env_id(item)
    if env_id is not None and (nextitem is None or _item_env_id(nextitem) != env_id):
        _HARNESSES.pop(env_id, None)
    if _map_count() > _MAP_BUDGET:
        import gc

        _HARNESSES.clear()
        jax.clear_caches()
        gc.collect()
        log = os.environ.get("ALEM_MAPS_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {item.nodeid} cleared -> {_map_count()} maps\n")


# ---------------------------------------------------------------------------- env harnesses


class Harness:
    """Jitted reset/step/rollout for one env id, built once per session and worker (``harness``)."""

    NUM_ENVS = 6
    NUM_STEPS = 24

    def __init__(self, env_id: str):
        self.env = alem.make(env_id)
        self.auto = AutoReset(self.env)
        self.params = self.env.default_params
        env, auto = self.env, self.auto
        reset, step, auto_step = jax.jit(env.reset), jax.jit(env.step), jax.jit(auto.step)
        vreset, vstep = jax.jit(jax.vmap(env.reset, (0, None))), jax.jit(jax.vmap(env.step, (0, 0, 0, None)))
        self.reset = lambda key: reset(key, self.params)
        self.step = lambda key, state, acts: step(key, state, acts, self.params)
        self.auto_step = lambda key, state, acts: auto_step(key, state, acts, self.params)
        self.vreset = lambda keys: vreset(keys, self.params)
        self.vstep = lambda keys, state, acts: vstep(keys, state, acts, self.params)
        # Step-by-step tests draw their actions compiled too: an eager random_actions per step
        # dispatches a dozen ops, each of which also keeps an executable alive.
        self.random_actions = jax.jit(lambda key, ts: random_actions(env, key, ts))
        num_envs, num_steps = self.NUM_ENVS, self.NUM_STEPS

        # Params are passed as arguments (not closed over) so envs that differ only in
        # params compile to the same program.
        def rollout(key, params):
            k0, k1 = jax.random.split(key)
            state, ts = jax.vmap(auto.reset, (0, None))(jax.random.split(k0, num_envs), params)

            def body(carry, k):
                state, ts = carry
                ka, ks = jax.random.split(k)
                acts = random_actions(env, ka, ts)
                state, ts2 = jax.vmap(auto.step, (0, 0, 0, None))(
                    jax.random.split(ks, num_envs), state, acts, params
                )
                gs = jax.vmap(env.global_state, (0, None))(state, params)
                return (state, ts2), (ts2, gs, acts)

            _, traj = jax.lax.scan(body, (state, ts), jax.random.split(k1, num_steps))
            return ts, traj

        # The default tier's smoke: reset, random legal actions and one step of 2 envs, one program.
        def smoke(key, params):
            k0, k1, k2 = jax.random.split(key, 3)
            states, ts = jax.vmap(env.reset, (0, None))(jax.random.split(k0, 2), params)
            acts = jax.vmap(lambda k, t: random_actions(env, k, t))(jax.random.split(k1, 2), ts)
            states2, ts2 = jax.vmap(env.step, (0, 0, 0, None))(jax.random.split(k2, 2), states, acts, params)
            return states, ts, states2, ts2

        self.rollout = jax.jit(rollout)
        self.smoke = jax.jit(smoke)
        self._cache: dict[int, tuple] = {}

    def traj(self, seed: int):
        if seed not in self._cache:
            self._cache[seed] = jax.device_get(self.rollout(jax.random.key(seed), self.params))
        return self._cache[seed]


_HARNESSES: dict[str, Harness] = {}


@pytest.fixture(scope="session")
def harness():
    """``harness(env_id)``: the session's :class:`Harness` for that id (built on first use)."""

    def get(env_id: str) -> Harness:
        if env_id not in _HARNESSES:
            _HARNESSES[env_id] = Harness(env_id)
        return _HARNESSES[env_id]

    return get


# ---------------------------------------------------------------------------- fault suite summary
# Fault tests (tests/test_faults.py) report what they injected through the ``fault_report``
# fixture; xdist workers append to one file named in the environment, and the controller
# prints the totals at the end of the session.
FAULT_LOG_ENV = "ALEM_FAULT_LOG"


def pytest_configure(config):
    if not hasattr(config, "workerinput") and not _tiers_chosen(config):
        # The default run is compile-bound: LLVM at -O0 compiles its programs ~35% faster (XLA's
        # own HLO optimisations still run). Set in the controller, before xdist starts the workers,
        # which inherit it; the marked tiers (learning runs, long rollouts) keep XLA's default.
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_backend_optimization_level" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} --xla_backend_optimization_level=0".strip()
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        import tempfile

        fd, path = tempfile.mkstemp(prefix="alem-faults-", suffix=".jsonl")
        os.close(fd)
        os.environ[FAULT_LOG_ENV] = path
        config._alem_fault_log = path


@pytest.fixture(scope="session")
def tiny_grid_run(tmp_path_factory):
    """A tiny shared-actor IPPO run on 3-agent 6x6 pathfinding with the goal-direction channel (a
    training compile: for exhaustive-tier tests of checkpoint transfer and the POGEMA protocol)."""
    from tests.tiny_runs import train_tiny_run  # the repository's tests package (python -m pytest)

    overrides = ["env.id=pathfinding-v0", "+env.kwargs.num_agents=3", "+env.kwargs.height=6"]
    overrides += ["+env.kwargs.max_steps=8", "+env.kwargs.goal_direction=true"]
    return train_tiny_run(tmp_path_factory, "grid", overrides)


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
