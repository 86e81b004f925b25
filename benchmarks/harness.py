"""The benchmark harness every benchmark here shares: alem's timed rollout, the reference
registry (with its plugins in :mod:`benchmarks.references`), one timer, one machine record.

A *reference* declares which envs it supports and, for a supported env, builds a *rollout*: a
callable ``rollout(seed)`` that runs ``N`` envs for ``T`` steps from a fresh reset and returns
the total reward. Families add theirs with :func:`register_reference`, or as a plugin module
``benchmarks/references/<name>.py`` defining ``make_references(harness) -> list[Reference]``
(``harness`` is this module); plugins are loaded on first use of :data:`REFERENCES` through
:func:`references` and import their reference package lazily.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import importlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import alem
from alem.core import MultiAgentEnv
from alem.rollout import random_actions
from alem.wrappers import BatchedAutoReset

__all__ = [
    "UNIT",
    "Rollout",
    "StepProgram",
    "scan_program",
    "python_loop_rollout",
    "alem_step_program",
    "Reference",
    "REFERENCES",
    "register_reference",
    "references",
    "make_alem_rollout",
    "alem_total_reward",
    "timed",
    "machine",
    "rates",
    "positive_int",
]

UNIT = "env-steps/s"

# ---------------------------------------------------------------------------------------------- alem


@dataclasses.dataclass(frozen=True)
class StepProgram:
    """One step of a batch of envs as a pure function: what a rollout scans and what the HLO proxy
    (:mod:`benchmarks.hlo`) compiles on its own.

    ``init(key, *args) -> carry`` resets the batch; ``body(carry, key, *args) -> carry`` draws the
    actions and steps every env (auto-reset included). ``carry[total_index]`` is the running total
    reward; the rest of the carry (states, observations) is an output, so XLA cannot drop it.
    ``args`` are the extra jit arguments of both (alem: the env params).
    """

    init: Callable[..., Any]
    body: Callable[..., Any]
    args: tuple[Any, ...] = ()
    total_index: int = -1


def scan_program(program: StepProgram, num_steps: int) -> Callable[..., Any]:
    """Jitted ``run(key, *args) -> final carry``: ``init``, then ``body`` in a ``lax.scan`` of
    ``num_steps`` steps with one key per step."""

    def run(key, *args):
        key_reset, key_run = jax.random.split(key)
        carry = program.init(key_reset, *args)
        step = lambda c, k: (program.body(c, k, *args), None)
        return jax.lax.scan(step, carry, jax.random.split(key_run, num_steps))[0]

    return jax.jit(run)


def alem_step_program(
    env: MultiAgentEnv, num_envs: int, resets_per_step: int | None = None, params: Any = None
) -> StepProgram:
    """alem's step of ``num_envs`` envs: a random legal policy (one draw for the batch) and
    :class:`~alem.wrappers.BatchedAutoReset`; carry ``(state, ts, total_reward)``."""
    batch = BatchedAutoReset(env, num_envs, resets_per_step)

    def init(key, params):
        state, ts = batch.reset(key, params)
        return state, ts, jnp.zeros((), jnp.float32)

    def body(carry, step_key, params):
        state, ts, total = carry
        key_act, key_env = jax.random.split(step_key)
        actions = random_actions(env, key_act, ts)  # the whole batch in one draw
        state, ts = batch.step(key_env, state, actions, params)
        return state, ts, total + ts.reward.sum()

    return StepProgram(init, body, (env.default_params if params is None else params,))


def make_alem_rollout(
    env: MultiAgentEnv, num_envs: int, num_steps: int, resets_per_step: int | None = None
) -> Callable[..., Any]:
    """A jitted ``rollout(key, params) -> (total_reward, final_state, final_ts)``.

    ``num_envs`` envs are reset, then stepped ``num_steps`` times by a random legal policy with
    auto-reset (:func:`alem_step_program`: ``vmap`` over envs inside a ``lax.scan`` over steps,
    fresh episodes computed only for the envs that ended). ``total_reward`` sums every agent's
    reward over all envs and steps. The final carry is returned so that nothing the env computes
    (observations included) is dead code for XLA.
    """
    run = scan_program(alem_step_program(env, num_envs, resets_per_step), num_steps)

    def rollout(key, params):
        state, ts, total = run(key, params)
        return total, state, ts

    return rollout


def alem_total_reward(env_id: str, num_envs: int, num_steps: int, seed: int = 0) -> float:
    """Total reward (all agents, envs and steps) of one random-policy alem rollout."""
    env = alem.make(env_id)
    total, _, _ = make_alem_rollout(env, num_envs, num_steps)(jax.random.key(seed), env.default_params)
    return float(total)


# ----------------------------------------------------------------------------------------- references

#: A rollout built by a reference: ``rollout(seed) -> total reward`` of ``N`` envs for ``T`` steps.
Rollout = Callable[[int], float]


@dataclasses.dataclass(frozen=True)
class Reference:
    """A reference implementation to measure alem against.

    Attributes:
        name: the ``--reference`` name.
        description: one line for the JSON and for listings.
        supports: ``supports(env_id, env) -> None`` if the env is supported, else the reason it is not.
        prepare: ``prepare(env_id, env, N, T) -> rollout``; may do untimed setup (imports, compiling).
        step: ``step(env_id, env, N) -> StepProgram``, the one step its rollout scans (JAX
            references only; the HLO proxy compiles it), or None.
    """

    name: str
    description: str
    supports: Callable[[str, MultiAgentEnv], str | None]
    prepare: Callable[[str, MultiAgentEnv, int, int], Rollout]
    step: Callable[[str, MultiAgentEnv, int], StepProgram] | None = None

    def run(self, env_id: str, num_envs: int, num_steps: int, reps: int, seed: int = 0) -> list[float]:
        """Seconds of each of ``reps`` rollouts (after one untimed warm-up), reference alone."""
        env = alem.make(env_id)
        reason = self.supports(env_id, env)
        if reason is not None:
            raise ValueError(f"reference {self.name!r} does not support env {env_id!r}: {reason}")
        rollout = self.prepare(env_id, env, num_envs, num_steps)
        rollout(seed)
        return [timed(rollout, seed + 1 + r)[0] for r in range(reps)]


def python_loop_rollout(
    envs: Sequence[Any],
    num_steps: int,
    draw: Callable[[np.random.Generator], Sequence[Any]],
    step: Callable[[Any, Any], tuple[float, bool]],
) -> Rollout:
    """``rollout(seed)`` of a Python-loop reference: one object per env, stepped one at a time.

    Each rollout resets env ``i`` with seed ``seed * 100_003 + i``; each step ``draw(rng)`` gives
    every env's action (one draw for the batch, from ``numpy.random.default_rng(seed)``) and
    ``step(env, action) -> (reward summed over agents, episode over)``; an env whose episode is
    over is reset. Returns the total reward.
    """

    def rollout(seed: int) -> float:
        rng = np.random.default_rng(seed)
        for i, e in enumerate(envs):
            e.reset(seed=seed * 100_003 + i)
        total = 0.0
        for _ in range(num_steps):
            for e, action in zip(envs, draw(rng), strict=True):
                reward, done = step(e, action)
                total += reward
                if done:
                    e.reset()
        return total

    return rollout


#: name -> reference. Extend with :func:`register_reference`.
REFERENCES: dict[str, Reference] = {}


def register_reference(reference: Reference) -> Reference:
    """Add a reference (e.g. ``openspiel``, ``jaxmarl``, ``pgx``) to :data:`REFERENCES`."""
    if reference.name in REFERENCES:
        raise ValueError(f"reference {reference.name!r} is already registered")
    REFERENCES[reference.name] = reference
    return reference


# -------------------------------------------------------------------------------------------- harness


_plugins_loaded = False


def references() -> dict[str, Reference]:
    """:data:`REFERENCES` with every plugin of ``benchmarks/references/`` registered."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        folder = Path(__file__).resolve().parent / "references"
        for path in sorted(folder.glob("*.py")):
            if not path.name.startswith("_"):
                module = importlib.import_module(f"benchmarks.references.{path.stem}")
                for ref in module.make_references(sys.modules[__name__]):
                    register_reference(ref)
    return REFERENCES


def timed(fn: Callable[[], Any] | Callable[[int], Any], *args: Any) -> tuple[float, Any]:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        return time.perf_counter() - start, out
    finally:
        if gc_was_enabled:
            gc.enable()


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine() -> dict[str, Any]:
    device = jax.devices()[0]
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "alem_version": alem.__version__,
        "jax_version": jax.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "jax_backend": jax.default_backend(),
        "device_kind": device.device_kind,
        "num_devices": jax.device_count(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_count_usable": usable,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def rates(times: Sequence[float], steps: int) -> dict[str, Any]:
    rates = [steps / t for t in times]
    return {"steps_per_s": statistics.median(rates), "steps_per_s_reps": rates, "time_s_reps": list(times)}


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value
