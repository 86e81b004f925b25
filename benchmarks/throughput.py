"""Env-step throughput of alem against a reference implementation, in one run.

Measures env-steps/s of a jitted rollout of a uniformly random legal policy for any registered alem
id: ``jax.vmap`` over ``N`` envs, ``jax.lax.scan`` over ``T`` steps, auto-reset inside the scan. The
same rollout is then timed with a reference implementation (``--reference``, default ``numpy``),
repetitions of the two interleaved, and the result printed as one JSON document::

    python -m benchmarks.throughput --env prisoners_dilemma-v0 --num-envs 1 1024 16384 \\
        --steps 128 --reps 5 --reference numpy

One env step is one transition of one env (all its agents together): a rollout of ``N`` envs for ``T``
steps is ``N * T`` env steps, whatever the agent count.

References (name -> :class:`~benchmarks.harness.Reference`) come from the harness
(:mod:`benchmarks.harness`): ``numpy`` is defined here, the others are the plugins of
:mod:`benchmarks.references` (``openspiel``, ``jaxmarl``, ``pgx``, ``mpe2``, ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import alem
from alem.core import MultiAgentEnv
from benchmarks.harness import (
    UNIT,
    Reference,
    Rollout,
    machine,
    make_alem_rollout,
    positive_int,
    rates,
    references,
    register_reference,
    timed,
)

__all__ = ["NumpyRepeatedGame", "numpy_matrix_rollout", "resolve_reference", "run_benchmark", "main"]


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


def resolve_reference(name: str | None, env_id: str, env: MultiAgentEnv) -> Reference | None:
    """The reference called ``name`` (None or ``"none"``: no reference) after checking it fits ``env``."""
    if name is None or name == "none":
        return None
    known = references()
    if name not in known:
        raise ValueError(f"unknown reference {name!r}; known references: {sorted(known)} (or 'none')")
    ref = known[name]
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
        **machine(),
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
        compile_s, (total, _, _) = timed(rollout, jax.random.key(seed), params)
        row: dict[str, Any] = {"N": n}
        alem_times, ref_times = [], []
        alem_reward = float(total)
        ref_reward = None
        if ref is not None:
            ref_rollout = ref.prepare(env_id, env, n, steps)
            warmup_s, ref_reward = timed(ref_rollout, seed)  # untimed warm-up, as alem's compile call
        # Repetitions interleaved (ABBA order) so that machine noise hits both sides alike.
        for r in range(reps):
            runs = [(alem_times, rollout, (jax.random.key(seed + 1 + r), params))]
            if ref is not None:
                runs.append((ref_times, ref_rollout, (seed + 1 + r,)))
            for times, fn, args in runs[:: -1 if r % 2 else 1]:
                times.append(timed(fn, *args)[0])
        norm = total_steps * env.num_agents
        row["alem"] = {
            "compile_s": compile_s,
            **rates(alem_times, total_steps),
            "mean_reward_per_agent_step": alem_reward / norm,
        }
        if ref is not None:
            row["reference"] = {
                "first_call_s": warmup_s,
                **rates(ref_times, total_steps),
                "mean_reward_per_agent_step": float(ref_reward) / norm,
            }
            row["ratio"] = row["alem"]["steps_per_s"] / row["reference"]["steps_per_s"]
        else:
            row["ratio"] = None
        out["results"].append(row)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=f"Throughput ({UNIT}) of a random-policy alem rollout vs a reference implementation.",
    )
    p.add_argument("--env", required=True, help="registered alem id, e.g. prisoners_dilemma-v0")
    p.add_argument(
        "--num-envs",
        type=positive_int,
        nargs="+",
        default=[1, 1024, 16384],
        metavar="N",
        help="batch sizes (parallel envs) to measure (default: 1 1024 16384)",
    )
    p.add_argument("--steps", type=positive_int, default=128, metavar="T", help="scan length (default 128)")
    p.add_argument("--reps", type=positive_int, default=5, help="timed repetitions per N (default 5)")
    p.add_argument(
        "--reference",
        default="numpy",
        help=f"reference implementation, one of {sorted(references())} or 'none' (default numpy)",
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
