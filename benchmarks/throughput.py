"""Env-step throughput of alem against a reference implementation, in one run.

Measures env-steps/s of a jitted rollout of a uniformly random legal policy for any registered alem
id: ``jax.vmap`` over ``N`` envs, ``jax.lax.scan`` over ``T`` steps, auto-reset inside the scan. The
same rollout is then timed with a reference implementation (``--reference``, default ``numpy``),
repetitions of the two interleaved, and the result printed as one JSON document::

    python benchmarks/throughput.py --env prisoners_dilemma-v0 --num-envs 1 1024 16384 \\
        --steps 128 --reps 5 --reference numpy

One env step is one transition of one env (all its agents together): a rollout of ``N`` envs for ``T``
steps is ``N * T`` env steps, whatever the agent count.

References live in :data:`REFERENCES` (name -> :class:`Reference`). A reference declares which envs
it supports and, for a supported env, builds a *rollout*: a callable ``rollout(seed)`` that runs ``N``
envs for ``T`` steps from a fresh reset and returns the total reward. New families add their
runner (``openspiel``, ``jaxmarl``, ``pgx``, ...) with :func:`register_reference`, or as a plugin file
``benchmarks/references/<name>.py`` defining ``make_references(bench) -> list[Reference]`` (``bench`` is
this module); plugins are loaded when this module is, and import their reference package lazily.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import alem
from alem.core import MultiAgentEnv
from alem.rollout import random_actions
from alem.wrappers import BatchedAutoReset

__all__ = [
    "REFERENCES",
    "Reference",
    "register_reference",
    "make_alem_rollout",
    "alem_total_reward",
    "NumpyRepeatedGame",
    "numpy_matrix_rollout",
    "run_benchmark",
    "main",
]

UNIT = "env-steps/s"

# ---------------------------------------------------------------------------------------------- alem


def make_alem_rollout(
    env: MultiAgentEnv, num_envs: int, num_steps: int, resets_per_step: int | None = None
) -> Callable[..., Any]:
    """A jitted ``rollout(key, params) -> (total_reward, final_state, final_ts)``.

    ``num_envs`` envs are reset, then stepped ``num_steps`` times by a random legal policy with
    auto-reset (:class:`~alem.wrappers.BatchedAutoReset`: ``vmap`` over envs inside a ``lax.scan``
    over steps, fresh episodes computed only for the envs that ended). ``total_reward`` sums every
    agent's reward over all envs and steps. The final carry is returned so that nothing the env
    computes (observations included) is dead code for XLA.
    """

    batch = BatchedAutoReset(env, num_envs, resets_per_step)

    def rollout(key, params):
        key_reset, key_run = jax.random.split(key)
        state, ts = batch.reset(key_reset, params)

        def body(carry, step_key):
            state, ts, total = carry
            key_act, key_env = jax.random.split(step_key)
            actions = random_actions(env, key_act, ts)  # the whole batch in one draw
            state, ts = batch.step(key_env, state, actions, params)
            return (state, ts, total + ts.reward.sum()), None

        init = (state, ts, jnp.zeros((), jnp.float32))
        (state, ts, total), _ = jax.lax.scan(body, init, jax.random.split(key_run, num_steps))
        return total, state, ts

    return jax.jit(rollout)


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
    """

    name: str
    description: str
    supports: Callable[[str, MultiAgentEnv], str | None]
    prepare: Callable[[str, MultiAgentEnv, int, int], Rollout]

    def run(self, env_id: str, num_envs: int, num_steps: int, reps: int, seed: int = 0) -> list[float]:
        """Seconds of each of ``reps`` rollouts (after one untimed warm-up), reference alone."""
        env = alem.make(env_id)
        reason = self.supports(env_id, env)
        if reason is not None:
            raise ValueError(f"reference {self.name!r} does not support env {env_id!r}: {reason}")
        rollout = self.prepare(env_id, env, num_envs, num_steps)
        rollout(seed)
        return [_timed(rollout, seed + 1 + r)[0] for r in range(reps)]


#: name -> reference. Extend with :func:`register_reference`.
REFERENCES: dict[str, Reference] = {}


def register_reference(reference: Reference) -> Reference:
    """Add a reference (e.g. ``openspiel``, ``jaxmarl``, ``pgx``) to :data:`REFERENCES`."""
    if reference.name in REFERENCES:
        raise ValueError(f"reference {reference.name!r} is already registered")
    REFERENCES[reference.name] = reference
    return reference


class NumpyRepeatedGame:
    """A batch of ``B`` repeated matrix / public goods games in plain NumPy, with auto-reset.

    Mirrors :class:`alem.envs.games.matrix.RepeatedGame` (same payoff tensor, history, round
    counter, horizon, ``continue_prob`` stop, observation layout), vectorised over the batch: each
    :meth:`step` is a handful of array operations on ``[B, ...]`` arrays, no per-env Python loop.
    """

    def __init__(self, env: MultiAgentEnv, batch: int, rng: np.random.Generator):
        from alem.envs.games.matrix import MatrixGame, PublicGoodsGame

        params = env.default_params
        self.batch = batch
        self.rng = rng
        self.num_agents = n = env.num_agents
        self.num_actions = a = env.num_actions
        self.history_len = env.history_len
        self.num_rounds = int(params.num_rounds)
        self.continue_prob = float(params.continue_prob)
        self.truncate = bool(params.truncate_at_horizon)
        if isinstance(env, MatrixGame):
            # [A, ..., A, N]: table[a_0, ..., a_{N-1}] is every agent's payoff.
            self._table = np.moveaxis(np.asarray(params.payoffs, dtype=np.float32), 0, -1).copy()
            self._payoff = self._matrix_payoff
        elif isinstance(env, PublicGoodsGame):
            self._endowment = np.float32(params.endowment)
            self._multiplier = np.float32(params.multiplier)
            self._payoff = self._public_goods_payoff
        else:
            raise TypeError(f"NumpyRepeatedGame does not model {type(env).__name__}")
        # order[i]: whose action agent i sees in each slot (itself first when ego-centric).
        seats = np.arange(n)
        self._order = (seats[:, None] + seats[None, :]) % n if env.ego_centric else np.tile(seats, (n, 1))
        self._onehot = np.eye(a + 1, dtype=np.float32)
        self.reset()

    def _matrix_payoff(self, actions: np.ndarray) -> np.ndarray:
        return self._table[tuple(actions.T)]

    def _public_goods_payoff(self, actions: np.ndarray) -> np.ndarray:
        c = actions.astype(np.float32)
        pot = self._multiplier * self._endowment * c.sum(axis=1, keepdims=True)
        return self._endowment * (1.0 - c) + pot / np.float32(self.num_agents)

    def observe(self) -> np.ndarray:
        """``float32 [B, N, H * N * (A + 1)]``, the layout of ``RepeatedGame.observe``."""
        seen = self.history[:, :, self._order]  # [B, H, N(agent), N(slot)]
        onehot = self._onehot[seen + 1]  # [B, H, N, N, A+1]
        return np.moveaxis(onehot, 2, 1).reshape(self.batch, self.num_agents, -1)

    def reset(self) -> np.ndarray:
        b, n = self.batch, self.num_agents
        self.round = np.zeros(b, dtype=np.int32)
        self.history = np.full((b, self.history_len, n), -1, dtype=np.int32)
        self.returns = np.zeros((b, n), dtype=np.float32)
        return self.observe()

    def random_actions(self) -> np.ndarray:
        """Uniform actions ``[B, N]`` (every action of a matrix game is always legal)."""
        return self.rng.integers(0, self.num_actions, size=(self.batch, self.num_agents), dtype=np.int32)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One round of every game; ended games restart. Returns obs, reward, terminated, truncated."""
        reward = self._payoff(actions)
        if self.history_len > 1:
            self.history[:, 1:] = self.history[:, :-1]
        self.history[:, 0] = actions
        self.round += 1
        self.returns += reward
        horizon = self.round >= self.num_rounds
        if self.continue_prob < 1.0:
            stopped = self.rng.random(self.batch) >= self.continue_prob
            terminated = stopped | (horizon & (not self.truncate))
            truncated = horizon & self.truncate & ~stopped
        else:
            terminated = horizon & (not self.truncate)
            truncated = horizon & self.truncate
        done = terminated | truncated
        if done.any():
            self.history[done] = -1
            self.round[done] = 0
            self.returns[done] = 0.0
        return self.observe(), reward, terminated, truncated


def _numpy_supports(env_id: str, env: MultiAgentEnv) -> str | None:
    from alem.envs.games.matrix import MatrixGame, PublicGoodsGame

    if isinstance(env, MatrixGame | PublicGoodsGame):
        return None
    return (
        f"it is a {type(env).__name__}; the numpy reference covers MatrixGame and PublicGoodsGame "
        "(envs/games/matrix.py) only"
    )


def numpy_matrix_rollout(env: MultiAgentEnv, num_envs: int, num_steps: int) -> Rollout:
    """``rollout(seed) -> total reward``: a Python loop over steps, NumPy over the batch."""

    def rollout(seed: int) -> float:
        game = NumpyRepeatedGame(env, num_envs, np.random.default_rng(seed))
        total = np.float64(0.0)
        for _ in range(num_steps):
            _, reward, _, _ = game.step(game.random_actions())
            total += reward.sum(dtype=np.float64)
        return float(total)

    return rollout


register_reference(
    Reference(
        name="numpy",
        description="plain NumPy: Python loop over steps, each step vectorised over the batch of envs",
        supports=_numpy_supports,
        prepare=lambda env_id, env, n, t: numpy_matrix_rollout(env, n, t),
    )
)


# -------------------------------------------------------------------------------------------- harness


def _load_plugins() -> None:
    """Register the references of every ``benchmarks/references/*.py`` plugin."""
    import importlib.util
    import types
    from pathlib import Path

    folder = Path(__file__).resolve().parent / "references"
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"alem_benchmark_ref_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for ref in module.make_references(types.SimpleNamespace(**globals())):
            register_reference(ref)


_load_plugins()


def _timed(fn: Callable[[], Any] | Callable[[int], Any], *args: Any) -> tuple[float, Any]:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        return time.perf_counter() - start, out
    finally:
        if gc_was_enabled:
            gc.enable()


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _machine() -> dict[str, Any]:
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
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_count_usable": usable,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _rates(times: Sequence[float], steps: int) -> dict[str, Any]:
    rates = [steps / t for t in times]
    return {"steps_per_s": statistics.median(rates), "steps_per_s_reps": rates, "time_s_reps": list(times)}


def resolve_reference(name: str | None, env_id: str, env: MultiAgentEnv) -> Reference | None:
    """The reference called ``name`` (None or ``"none"``: no reference) after checking it fits ``env``."""
    if name is None or name == "none":
        return None
    if name not in REFERENCES:
        raise ValueError(f"unknown reference {name!r}; known references: {sorted(REFERENCES)} (or 'none')")
    ref = REFERENCES[name]
    reason = ref.supports(env_id, env)
    if reason is not None:
        raise ValueError(f"reference {name!r} does not support env {env_id!r}: {reason}")
    return ref


def run_benchmark(
    env_id: str,
    num_envs: Sequence[int],
    steps: int,
    reps: int,
    reference: str | None = "numpy",
    seed: int = 0,
) -> dict[str, Any]:
    """Measure alem (and ``reference``) at each batch size; returns the JSON-ready result."""
    if steps < 1 or reps < 1 or not num_envs or min(num_envs) < 1:
        got = f"steps={steps}, reps={reps}, num_envs={list(num_envs)}"
        raise ValueError(f"steps, reps and every num_envs must be >= 1; got {got}")
    env = alem.make(env_id)  # an unknown id raises the registry's error
    ref = resolve_reference(reference, env_id, env)
    params = env.default_params
    out: dict[str, Any] = {
        "benchmark": "throughput",
        "unit": UNIT,
        "unit_note": "one env step = one transition of one env (all its agents); N envs x T steps = N*T",
        "policy": "uniform random legal actions, auto-reset inside the scan",
        **_machine(),
        "env_id": env_id,
        "num_agents": env.num_agents,
        "T": steps,
        "reps": reps,
        "seed": seed,
        "reference": None if ref is None else ref.name,
        "reference_description": None if ref is None else ref.description,
        "results": [],
    }
    for n in num_envs:
        total_steps = n * steps
        rollout = make_alem_rollout(env, n, steps)
        compile_s, (total, _, _) = _timed(rollout, jax.random.key(seed), params)
        row: dict[str, Any] = {"N": n}
        alem_times, ref_times = [], []
        alem_reward = float(total)
        ref_reward = None
        if ref is not None:
            ref_rollout = ref.prepare(env_id, env, n, steps)
            warmup_s, ref_reward = _timed(ref_rollout, seed)  # untimed warm-up, as alem's compile call
        # Repetitions interleaved (ABBA order) so that machine noise hits both sides alike.
        for r in range(reps):
            runs = [(alem_times, rollout, (jax.random.key(seed + 1 + r), params))]
            if ref is not None:
                runs.append((ref_times, ref_rollout, (seed + 1 + r,)))
            for times, fn, args in runs[:: -1 if r % 2 else 1]:
                times.append(_timed(fn, *args)[0])
        norm = total_steps * env.num_agents
        row["alem"] = {
            "compile_s": compile_s,
            **_rates(alem_times, total_steps),
            "mean_reward_per_agent_step": alem_reward / norm,
        }
        if ref is not None:
            row["reference"] = {
                "first_call_s": warmup_s,
                **_rates(ref_times, total_steps),
                "mean_reward_per_agent_step": float(ref_reward) / norm,
            }
            row["ratio"] = row["alem"]["steps_per_s"] / row["reference"]["steps_per_s"]
        else:
            row["ratio"] = None
        out["results"].append(row)
    return out


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=f"Throughput ({UNIT}) of a random-policy alem rollout vs a reference implementation.",
    )
    p.add_argument("--env", required=True, help="registered alem id, e.g. prisoners_dilemma-v0")
    p.add_argument(
        "--num-envs",
        type=_positive_int,
        nargs="+",
        default=[1, 1024, 16384],
        metavar="N",
        help="batch sizes (parallel envs) to measure (default: 1 1024 16384)",
    )
    p.add_argument("--steps", type=_positive_int, default=128, metavar="T", help="scan length (default 128)")
    p.add_argument("--reps", type=_positive_int, default=5, help="timed repetitions per N (default 5)")
    p.add_argument(
        "--reference",
        default="numpy",
        help=f"reference implementation, one of {sorted(REFERENCES)} or 'none' (default numpy)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", metavar="FILE", help="also write the JSON document to FILE")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        env = alem.make(args.env)
        resolve_reference(args.reference, args.env, env)
    except (alem.AlemError, ValueError) as e:
        parser.error(str(e))
    result = run_benchmark(args.env, args.num_envs, args.steps, args.reps, args.reference, args.seed)
    text = json.dumps(result, indent=2, allow_nan=False)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
