"""Evaluation arena: ``python -m alem.evaluate env=<id> players=[llm,random] episodes=100``.

Plays any mix of players (random, scripted, trained checkpoints, LLMs; see
:mod:`alem.policies`) in the seats of an env for ``episodes`` episodes and
writes one results table.

The loop is lock-step over ``num_envs`` envs: a jitted, vmapped step that also
runs the device policies and resets finished envs. Per step the batch comes to
the host once; host policies (LLMs) answer for their active rows (async
fan-out across rows and seats); envs whose episodes are over are not queried.
Episode ``e`` always gets the same env and policy keys (derived from ``seed``
and ``e``, not from the batch layout), so results do not depend on
``num_envs``, on resuming, or on which players sit at the table: a trained
policy and an LLM are scored on the same deals.

A run directory holds ``config.yaml``, ``episodes.jsonl`` (one flushed line per
finished episode), ``transcripts.jsonl`` (one flushed line per LLM decision),
``results.json`` and ``results.csv``. ``resume=<run dir>`` finishes an
interrupted run: completed episodes are kept, transcripts of unfinished ones
are dropped and those episodes are replayed, so nothing is lost or counted twice.

Results per seat: mean return with a 95% confidence interval (Student t),
win/draw/loss rates for two-player zero-sum games, the env's illegal-action
rate, and for LLM seats the invalid-reply rate (unparseable + illegal replies),
fallbacks, API errors, tokens in/out, latency and cost (when prices are set).

Players are given as specs: ``name`` or ``name:ARG`` (``ARG`` is passed to the
policy as ``spec=ARG``, e.g. ``llm:<model>``, ``checkpoint:<run dir>``); one
spec fills every seat, otherwise one per seat. ``player_kwargs.<name>`` are
extra constructor keywords (``player_kwargs.llm`` is the ``llm`` config group).
``env=<registered id>`` is shorthand for ``env.id=<id>``; ``env=<name>`` picks
``configs/env/<name>.yaml`` as in ``alem.train``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hydra
import jax
import jax.numpy as jnp
import numpy as np
from omegaconf import DictConfig, OmegaConf

import alem
from alem.cli import hydra_overrides, hydra_run_dir, override_key, plain
from alem.core import MultiAgentEnv, TimeStep
from alem.errors import AlemError, ConfigError, EvaluationStopped
from alem.policies import Policy, Turn, host_view, make_policy
from alem.rundir import (
    JsonlWriter,
    claim,
    foreign_entries,
    read_jsonl,
    read_run_config,
    rewrite_jsonl,
    write_atomic,
)
from alem.text.backends import gather_or_cancel, redact_url, run_sync
from alem.text.policy import COUNTERS, decision_counts

__all__ = [
    "ConfigError",
    "EvaluationStopped",
    "evaluate",
    "summarize_run",
    "format_table",
    "build_players",
    "main",
]

EPISODES_FILE = "episodes.jsonl"
TRANSCRIPTS_FILE = "transcripts.jsonl"
#: Player settings that only affect transport, not play; they may change on resume.
RESUME_FREE = frozenset(
    [
        "base_url",
        "api_key_env",
        "timeout_s",
        "max_retries",
        "backoff_s",
        "backoff_cap_s",
        "max_reply_bytes",
        "max_consecutive_failures",
        "max_failure_rate",
        "min_decisions",
        "max_concurrency",
        "cache",
        "cache_mode",
        "threads",
        "parallel",
        "price_in_per_mtok",
        "price_out_per_mtok",
    ]
)


#: Seats whose fallback rate is above this are marked in the table and in ``results.json``.
HIGH_FALLBACK_RATE = 0.1




# ---------------------------------------------------------------------------- players
def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"name"`` or ``"name:ARG"`` -> ``(name, ARG or None)``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"a player spec must be a non-empty string like 'random' or 'llm:<model>', got {spec!r}"
        )
    name, _, arg = spec.strip().partition(":")
    return name, (arg or None)


def build_players(
    env: MultiAgentEnv, specs: Sequence[str], player_kwargs: dict[str, dict] | None = None
) -> list[Policy]:
    """One policy per seat from player specs (one spec fills every seat)."""
    specs = list(specs)
    n = env.num_agents
    if len(specs) == 1:
        specs = specs * n
    if len(specs) != n:
        raise ConfigError(
            f"{env.id} has {n} seats {list(env.agents)}; give one player spec per seat or one for all, "
            f"got {len(specs)}: {specs}"
        )
    players = []
    for spec in specs:
        name, arg = parse_spec(spec)
        kwargs = dict((player_kwargs or {}).get(name) or {})
        if arg is not None:
            kwargs["spec"] = arg
        try:
            policy = make_policy(name, env, **kwargs)
        except TypeError as e:
            raise ConfigError(f"player {spec!r}: {e}") from None
        policy.label = spec  # how the seat is shown in the table
        players.append(policy)
    return players


# ---------------------------------------------------------------------------- the loop
def _select(mask: jax.Array, a: Any, b: Any) -> Any:
    """Per-row ``where(mask, a, b)`` over two batched pytrees."""
    return jax.tree.map(lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y), a, b)


def _expand(tree: Any) -> Any:
    return jax.tree.map(lambda x: x[None], tree)


def _episode_key(k_env: jax.Array, episode: jax.Array, t: jax.Array) -> jax.Array:
    """Key of step ``t`` of ``episode`` (``t = 0``: the reset); one place, so resets and steps agree."""
    return jax.random.fold_in(jax.random.fold_in(k_env, episode), t)


class _Program:
    """The jitted pieces of the loop: reset rows and one lock-step advance.

    Keys: step ``t`` of episode ``e`` uses ``fold_in(fold_in(key(seed), e), t + 1)``, split
    into the env's key and one key per device seat. The key is an argument, not a
    constant, so runs with different seeds share one compiled program (and JAX's
    persistent compilation cache).
    """

    def __init__(self, env: MultiAgentEnv, params: Any, players: Sequence[Policy], max_steps: int | None):
        self.num_agents = env.num_agents
        device_seats = [i for i, p in enumerate(players) if not p.host]
        n_keys = 1 + len(device_seats)
        limit = max_steps

        def reset_rows(k_env, episodes):
            keys = jax.vmap(_episode_key, in_axes=(None, 0, None))(k_env, episodes, 0)
            return jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def device_act(key, i, policy, state, ts, active, episodes):
            def one(k, e, st, tstep, act):
                turn = Turn(env, params, i, _expand(st), _expand(tstep), act[None], e[None])
                return jnp.asarray(policy.act(k, turn)).reshape(-1)[0].astype(jnp.int32)

            return jax.vmap(one)(key, episodes, state, ts, active)

        def advance(k_env, state, ts, host_actions, episodes, t, next_episodes, running, force_reset):
            keys = jax.vmap(lambda e, tt: jax.random.split(_episode_key(k_env, e, tt + 1), n_keys))(
                episodes, t
            )
            actions = host_actions
            active = ts.acting & running[:, None]
            for j, i in enumerate(device_seats):  # static: one traced call per device seat
                a = device_act(keys[:, 1 + j], i, players[i], state, ts, active[:, i], episodes)
                actions = actions.at[:, i].set(a)
            state, step_ts = jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys[:, 0], state, actions, params)
            done = step_ts.done
            if limit is not None:
                done = done | (t + 1 >= limit)
            fresh_state, fresh_ts = reset_rows(k_env, jnp.maximum(next_episodes, 0))
            renew = (done | force_reset) & (next_episodes >= 0)
            out = {
                "reward": step_ts.reward,
                "terminated": step_ts.terminated,
                "truncated": step_ts.truncated,
                "done": done,
                "illegal": step_ts.info["illegal_action"],
                "actions": actions,
            }
            return _select(renew, fresh_state, state), _select(renew, fresh_ts, step_ts), out

        self.advance = jax.jit(advance)
        self._reset_shapes = jax.eval_shape(reset_rows, jax.random.key(0), jnp.zeros((1,), jnp.int32))

    def blank(self, b: int) -> tuple[Any, TimeStep]:
        """Zero state and timestep for ``b`` rows (shapes only; replaced by the first advance)."""

        def zeros(x):
            shape = (b, *x.shape[1:])
            if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
                return jax.random.split(jax.random.key(0), shape)
            return jnp.zeros(shape, x.dtype)

        return jax.tree.map(zeros, self._reset_shapes)

    def reset(self, k_env: jax.Array, episodes: np.ndarray) -> tuple[Any, TimeStep]:
        """Reset every row to the start of ``episodes[row]`` through :meth:`advance` (one compiled program)."""
        b = len(episodes)
        state, ts = self.blank(b)
        zeros = jnp.zeros((b,), jnp.int32)
        eps = jnp.asarray(episodes, jnp.int32)
        no_actions = jnp.zeros((b, self.num_agents), jnp.int32)
        ones = jnp.ones((b,), bool)
        state, ts, _ = self.advance(k_env, state, ts, no_actions, eps, zeros, eps, ~ones, ones)
        return state, ts


async def _host_moves(players, turns: dict[int, Turn], keys: dict[int, jax.Array]) -> dict[int, np.ndarray]:
    """All host seats at once: LLM seats fan out over rows and seats concurrently."""

    async def one(i: int) -> np.ndarray:
        p = players[i]
        if hasattr(p, "act_async"):
            return np.asarray(await p.act_async(keys[i], turns[i]))
        return np.asarray(p.act(keys[i], turns[i]))

    seats = list(turns)
    moves = await gather_or_cancel(*(one(i) for i in seats))
    return dict(zip(seats, moves, strict=True))


def evaluate(
    env: MultiAgentEnv,
    players: Sequence[Policy],
    *,
    episodes: int,
    num_envs: int = 8,
    seed: int = 0,
    max_steps: int | None = None,
    params: Any = None,
    run_dir: str | Path,
    labels: Sequence[str] | None = None,
    config: dict | None = None,
    resume: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Play ``episodes`` episodes with ``players[i]`` in seat ``i``; write and return the results.

    A new run (``resume=False``) needs a ``run_dir`` that holds nothing yet
    (:func:`alem.rundir.claim`); ``resume=True`` keeps the episodes already in
    ``run_dir/episodes.jsonl`` and plays the rest. Players are started (LLM health
    checks) before anything is written; ``config`` is saved as ``config.yaml``.
    Returns the dict written to ``results.json`` (see :func:`summarize_run`).
    """
    _check_args(env, players, episodes, num_envs, max_steps)
    params = env.default_params if params is None else params
    labels = list(labels) if labels is not None else [getattr(p, "label", p.name) for p in players]
    run_dir = Path(run_dir).resolve()
    if not resume and foreign_entries(run_dir):
        claim(run_dir, cli="alem.evaluate")  # raises, naming what is there

    # Resume: keep finished episodes (read only until every check has passed).
    done_eps = {int(r["episode"]) for r in read_jsonl(run_dir / EPISODES_FILE) if r.get("type") == "episode"}
    todo = deque(e for e in range(episodes) if e not in done_eps)
    if progress:
        skipped = f", {len(done_eps)} already done" if done_eps else ""
        print(
            f"alem.evaluate: env={env.id} players={labels} episodes={episodes}{skipped} num_envs={num_envs}",
            flush=True,
        )

    t_start = time.perf_counter()
    begun: list[Policy] = []
    ep_log = transcript = None
    try:
        if todo:  # nothing to play: no servers to start or check
            for i, p in enumerate(players):
                p.begin(env, params, i)  # health checks: a dead endpoint fails before any write
                begun.append(p)
        run_dir = run_dir if resume else claim(run_dir, cli="alem.evaluate")
        run_dir.mkdir(parents=True, exist_ok=True)
        if config is not None:
            write_atomic(run_dir / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(config)))
        # Drop a torn line and the transcripts of unfinished episodes (they are replayed).
        rewrite_jsonl(run_dir / EPISODES_FILE, lambda r: r.get("type") == "episode")
        rewrite_jsonl(run_dir / TRANSCRIPTS_FILE, lambda r: int(r.get("episode", -1)) in done_eps)
        ep_log = JsonlWriter(run_dir / EPISODES_FILE)
        transcript = JsonlWriter(run_dir / TRANSCRIPTS_FILE)
        for p in players:
            if hasattr(p, "transcript"):
                p.transcript = transcript
        if todo:
            try:
                _play(env, params, players, todo, num_envs, seed, max_steps, ep_log, progress)
            except AlemError as e:
                raise EvaluationStopped(
                    f"{e} [{ep_log.count + len(done_eps)} of {episodes} episodes are finished and kept in "
                    f"{run_dir}; continue with `python -m alem.evaluate resume={run_dir}`]"
                ) from e
    finally:
        for p in begun:
            p.close()
        for f in (ep_log, transcript):
            if f is not None:
                f.close()
    wall = time.perf_counter() - t_start

    results = summarize_run(run_dir, env=env, labels=labels, episodes=episodes)
    results["wall_time_s"] = wall
    results["players_info"] = [
        p.describe() if hasattr(p, "describe") else {"player": labels[i]} for i, p in enumerate(players)
    ]
    results["config"] = config
    _write_results(run_dir, results)
    return results


def _check_args(env: MultiAgentEnv, players: Sequence[Policy], episodes, num_envs, max_steps) -> None:
    if len(players) != env.num_agents:
        raise ConfigError(f"{env.id} needs {env.num_agents} players, got {len(players)}")
    for key, value in (("episodes", episodes), ("num_envs", num_envs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{key} must be an integer >= 1, got {value!r}")
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1
    ):
        raise ConfigError(f"max_steps must be null or an integer >= 1, got {max_steps!r}")
    if env.continuous_actions:
        raise ConfigError(f"{env.id} has continuous actions; the evaluator plays discrete-action envs")


def _play(env, params, players, todo: deque, num_envs, seed, max_steps, ep_log, progress) -> None:
    n = env.num_agents
    b = min(num_envs, len(todo))
    prog = _Program(env, params, players, max_steps)
    k_env = jax.random.key(seed)
    host_seats = [i for i, p in enumerate(players) if p.host]
    row_ep = np.array([todo.popleft() if todo else -1 for _ in range(b)], np.int32)
    row_next = np.array([todo.popleft() if todo else -1 for _ in range(b)], np.int32)
    t = np.zeros(b, np.int32)
    returns = np.zeros((b, n), np.float64)
    decisions = np.zeros((b, n), np.int64)
    illegal = np.zeros((b, n), np.int64)
    state, ts = prog.reset(k_env, np.maximum(row_ep, 0))
    h_state, h_ts = host_view((state, ts)) if host_seats else (None, host_view(ts))
    total = len(todo) + int((row_ep >= 0).sum() + (row_next >= 0).sum())
    finished, step_index, last_print = 0, 0, time.perf_counter()
    host_base = jax.random.fold_in(jax.random.key(seed), 2**31)  # host seats' keys (LLMs ignore them)
    while (row_ep >= 0).any():
        running = row_ep >= 0
        acting = np.asarray(h_ts.acting, bool) & running[:, None]
        host_actions = np.zeros((b, n), np.int32)
        turns = {
            i: Turn(env, params, i, h_state, h_ts, acting[:, i], row_ep.copy())
            for i in host_seats
            if acting[:, i].any()
        }
        if turns:
            keys = {i: jax.random.fold_in(jax.random.fold_in(host_base, i), step_index) for i in turns}
            for i, moves in run_sync(_host_moves(players, turns, keys)).items():
                host_actions[:, i] = np.where(acting[:, i], moves, 0)
        decisions += acting
        state, ts, out = prog.advance(
            k_env,
            state,
            ts,
            jnp.asarray(host_actions),
            jnp.asarray(np.maximum(row_ep, 0)),
            jnp.asarray(t),
            jnp.asarray(row_next),
            jnp.asarray(running),
            jnp.zeros((b,), bool),
        )
        # The one device-to-host transfer of this step.
        if host_seats:
            h_state, h_ts, h_out = host_view((state, ts, out))
        else:
            h_ts, h_out = host_view((ts, out))
        step_index += 1
        returns[running] += h_out["reward"][running]
        illegal += np.asarray(h_out["illegal"], bool) & acting
        t[running] += 1
        for r in np.flatnonzero(np.asarray(h_out["done"]) & running):
            ep = int(row_ep[r])
            ep_log.write(
                {
                    "type": "episode",
                    "episode": ep,
                    "returns": returns[r].tolist(),
                    "length": int(t[r]),
                    "terminated": bool(h_out["terminated"][r]),
                    "truncated": bool(h_out["truncated"][r]),
                    "cut": bool(not h_out["terminated"][r] and not h_out["truncated"][r]),
                    "decisions": decisions[r].tolist(),
                    "env_illegal": illegal[r].tolist(),
                }
            )
            for p in players:
                p.end_episode(ep)
            finished += 1
            row_ep[r], row_next[r] = row_next[r], (todo.popleft() if todo else -1)
            t[r], returns[r], decisions[r], illegal[r] = 0, 0.0, 0, 0
        if progress and (time.perf_counter() - last_print > 5.0 or not (row_ep >= 0).any()):
            last_print = time.perf_counter()
            print(f"  episodes {finished}/{total}", flush=True)


# ---------------------------------------------------------------------------- results
def _ci95(x: np.ndarray) -> float | None:
    """Half-width of the Student-t 95% confidence interval of the mean (None below 2 samples)."""
    if len(x) < 2:
        return None
    from scipy import stats

    return float(stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x)))


def _num(x: Any) -> Any:
    if isinstance(x, float | np.floating):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def summarize_run(
    run_dir: str | Path, *, env: MultiAgentEnv, labels: Sequence[str], episodes: int | None = None
) -> dict[str, Any]:
    """Results of a run directory, from its episode and transcript files alone."""
    run_dir = Path(run_dir)
    eps: dict[int, dict] = {}
    for r in read_jsonl(run_dir / EPISODES_FILE):
        if r.get("type") == "episode" and (episodes is None or r["episode"] < episodes):
            eps.setdefault(int(r["episode"]), r)
    ids = sorted(eps)
    n = env.num_agents
    returns = np.array([eps[e]["returns"] for e in ids], np.float64).reshape(len(ids), n)
    dec = np.array([eps[e]["decisions"] for e in ids], np.float64).reshape(len(ids), n)
    bad = np.array([eps[e]["env_illegal"] for e in ids], np.float64).reshape(len(ids), n)
    zero_sum = bool(
        n == 2 and len(ids) > 0 and np.all(np.abs(returns.sum(axis=1)) <= 1e-6 * (1 + np.abs(returns).max()))
    )
    llm = {i: dict.fromkeys(COUNTERS, 0.0) for i in range(n)}
    latencies: dict[int, list[float]] = {i: [] for i in range(n)}
    has_llm = set()
    for rec in read_jsonl(run_dir / TRANSCRIPTS_FILE):
        if rec.get("type") != "decision" or int(rec["episode"]) not in eps:
            continue
        seat = int(rec["seat"])
        has_llm.add(seat)
        for k, v in decision_counts(rec).items():
            llm[seat][k] += v
        latencies[seat] += [
            a["latency_s"] for a in rec["attempts"] if a.get("latency_s") and not a.get("cached")
        ]
    prices = _prices(run_dir)
    seats = []
    for i in range(n):
        r = returns[:, i]
        row: dict[str, Any] = {
            "seat": i,
            "agent": env.agents[i],
            "player": labels[i],
            "episodes": len(ids),
            "return_mean": _num(r.mean()) if len(r) else None,
            "return_ci95": _ci95(r),
            "return_std": _num(r.std(ddof=1)) if len(r) > 1 else None,
            "decisions": int(dec[:, i].sum()),
            "env_illegal": int(bad[:, i].sum()),
            "env_illegal_rate": _num(bad[:, i].sum() / dec[:, i].sum()) if dec[:, i].sum() else None,
        }
        if zero_sum:
            other = returns[:, 1 - i]
            row.update(
                win=_num(np.mean(r > other)), draw=_num(np.mean(r == other)), loss=_num(np.mean(r < other))
            )
        if i in has_llm:
            c = llm[i]
            replies, decs = c["replies"], c["decisions"]
            row.update({f"llm_{k}": _num(v) for k, v in c.items()})
            row["invalid_rate"] = _num((c["unparseable"] + c["illegal"]) / replies) if replies else None
            row["fallback_rate"] = _num(c["fallbacks"] / decs) if decs else None
            # Above this, the seat's numbers describe the fallback policy as much as the model.
            row["fallback_warning"] = bool(decs and c["fallbacks"] / decs > HIGH_FALLBACK_RATE)
            row["tokens_in_per_decision"] = _num(c["tokens_in"] / decs) if decs else None
            row["tokens_out_per_decision"] = _num(c["tokens_out"] / decs) if decs else None
            lat = np.array(latencies[i])
            row["latency_mean_s"] = _num(lat.mean()) if len(lat) else None
            row["latency_p95_s"] = _num(np.percentile(lat, 95)) if len(lat) else None
            p_in, p_out = prices.get(i, (None, None))
            if p_in is not None and p_out is not None:
                row["cost"] = _num((c["tokens_in"] * p_in + c["tokens_out"] * p_out) / 1e6)
        seats.append(row)
    return {
        "env_id": env.id,
        "agents": list(env.agents),
        "players": list(labels),
        "episodes": len(ids),
        "episodes_requested": episodes,
        "zero_sum": zero_sum,
        "episode_length_mean": _num(np.mean([eps[e]["length"] for e in ids])) if ids else None,
        "episodes_cut": int(sum(eps[e]["cut"] for e in ids)),
        "seats": seats,
        "alem_version": alem.__version__,
        "jax_version": jax.__version__,
    }


def _prices(run_dir: Path) -> dict[int, tuple]:
    """Per-seat token prices from the run's config (``player_kwargs.llm.price_*_per_mtok``)."""
    path = run_dir / "config.yaml"
    if not path.exists():
        return {}
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    out = {}
    for i, spec in enumerate(cfg.get("players_resolved") or []):
        kw = (cfg.get("player_kwargs") or {}).get(parse_spec(spec)[0]) or {}
        if isinstance(kw, dict):
            out[i] = (kw.get("price_in_per_mtok"), kw.get("price_out_per_mtok"))
    return out


CSV_COLUMNS = [
    "seat",
    "agent",
    "player",
    "episodes",
    "return_mean",
    "return_ci95",
    "win",
    "draw",
    "loss",
    "env_illegal_rate",
    "invalid_rate",
    "fallback_rate",
    "llm_unparseable",
    "llm_illegal",
    "llm_api_errors",
    "llm_retried_errors",
    "llm_fallbacks",
    "fallback_warning",
    "tokens_in_per_decision",
    "tokens_out_per_decision",
    "llm_tokens_in",
    "llm_tokens_out",
    "latency_mean_s",
    "latency_p95_s",
    "cost",
]


def _write_results(run_dir: Path, results: dict[str, Any]) -> None:
    write_atomic(run_dir / "results.json", json.dumps(results, indent=2, default=str) + "\n")
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["env_id", *CSV_COLUMNS], extrasaction="ignore")
    w.writeheader()
    for row in results["seats"]:
        w.writerow({"env_id": results["env_id"], **{k: row.get(k) for k in CSV_COLUMNS}})
    write_atomic(run_dir / "results.csv", buf.getvalue())


def _f(x: Any, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def format_table(results: dict[str, Any]) -> str:
    """The results as a plain-text table, one row per seat."""
    head = [
        "seat",
        "player",
        "episodes",
        "return (95% CI)",
        "W/D/L",
        "invalid",
        "fallback",
        "tokens in/out",
        "latency",
    ]
    rows = []
    for s in results["seats"]:
        ci = s["return_ci95"]
        ret = _f(s["return_mean"]) + (f" ± {ci:.3f}" if ci is not None else "")
        wdl = f"{s['win']:.2f}/{s['draw']:.2f}/{s['loss']:.2f}" if "win" in s else "-"
        tokens = (
            f"{s['tokens_in_per_decision']:.0f}/{s['tokens_out_per_decision']:.1f}"
            if s.get("tokens_in_per_decision") is not None
            else "-"
        )
        latency = f"{s['latency_mean_s']:.2f}s" if s.get("latency_mean_s") is not None else "-"
        invalid = (
            _f(s.get("invalid_rate"), ".1%") if "invalid_rate" in s else _f(s["env_illegal_rate"], ".1%")
        )
        rows.append(
            [
                f"{s['seat']} {s['agent']}",
                s["player"],
                str(s["episodes"]),
                ret,
                wdl,
                invalid,
                _f(s.get("fallback_rate"), ".1%") + (" !" if s.get("fallback_warning") else ""),
                tokens,
                latency,
            ]
        )
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    lines = [
        f"{results['env_id']}: {results['episodes']} episodes"
        + (
            f", cost {sum(s.get('cost') or 0 for s in results['seats']):.4f}"
            if any("cost" in s for s in results["seats"])
            else ""
        ),
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
    ]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append(
        "invalid: LLM seats: unparseable or illegal replies / replies; others: env-flagged illegal moves / moves"
    )
    if any(s.get("fallback_warning") for s in results["seats"]):
        lines.append(
            f"!: more than {HIGH_FALLBACK_RATE:.0%} of this seat's moves were the fallback policy's, not the "
            "model's (see llm_api_errors, invalid); its results describe the fallback as much as the model"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- Hydra app
def _resolve_env(env_cfg: DictConfig) -> MultiAgentEnv:
    from alem.train import make_env

    try:
        return make_env(env_cfg)
    except AlemError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"env: {e}") from None


def run(cfg: DictConfig, output_dir: str | Path, overrides: list[str] | None = None) -> dict[str, Any]:
    """Evaluate as ``cfg`` says; return the results.

    Everything is checked (config, players, LLM endpoints) before the run directory is
    written; a new run refuses a directory that holds anything. ``cfg.resume=<run dir>``
    finishes that run with its saved config; ``overrides`` (the command line's
    ``key=value`` list) may raise ``episodes``, change ``num_envs`` or the LLM transport
    settings (:data:`RESUME_FREE`); one that would change play is refused, by name.
    """
    resume = cfg.get("resume")
    run_dir = Path(resume if resume else output_dir).resolve()
    if resume:
        cfg = _resumed_config(cfg, run_dir, overrides or [])
    current = OmegaConf.to_container(cfg, resolve=True)
    env = _resolve_env(cfg.env)
    player_kwargs = current.get("player_kwargs") or {}
    players = build_players(env, list(cfg.players), player_kwargs)
    labels = [p.label for p in players]
    current["players_resolved"] = labels
    current["output_dir"] = str(run_dir)
    try:
        results = evaluate(
            env,
            players,
            episodes=cfg.episodes,
            num_envs=cfg.num_envs,
            seed=cfg.seed,
            max_steps=cfg.get("max_steps"),
            run_dir=run_dir,
            labels=labels,
            config=_redacted(current),
            resume=bool(resume),
        )
    finally:
        for p in players:
            p.close()
    return results


def _redacted(tree: Any) -> Any:
    """A config tree with the secrets of every ``base_url`` removed (see :func:`redact_url`)."""
    if isinstance(tree, dict):
        return {
            k: redact_url(v) if k == "base_url" and isinstance(v, str) else _redacted(v)
            for k, v in tree.items()
        }
    if isinstance(tree, list):
        return [_redacted(v) for v in tree]
    return tree


def _resumed_config(cfg: DictConfig, run_dir: Path, overrides: list[str]) -> DictConfig:
    """The saved config of the run in ``run_dir`` with the overrides a resume may apply."""
    saved = read_run_config(run_dir, cli="alem.evaluate", required=("players", "env"))
    refused = []
    for override in overrides:
        key = override_key(override)
        if key is None or key == "resume":
            continue
        if key == "output_dir":
            new = cfg.get("output_dir")
            if new is not None and Path(new).resolve() != run_dir:
                refused.append(f"output_dir={new} (a resumed run writes into its own directory)")
            continue
        parts = key.split(".")
        # The llm group is what player_kwargs.llm holds; the run saved it resolved.
        target = ["player_kwargs", *parts] if parts[0] == "llm" else parts
        new, was = plain(OmegaConf.select(cfg, key)), plain(OmegaConf.select(saved, ".".join(target)))
        if new == was:
            continue
        free = parts[0] in ("episodes", "num_envs") or (
            len(target) == 3 and target[0] == "player_kwargs" and target[2] in RESUME_FREE
        )
        if not free:
            refused.append(f"{key}={new!r} (the run has {was!r})")
            continue
        OmegaConf.update(saved, ".".join(target), new, force_add=True)
        if parts[0] == "llm":
            OmegaConf.update(saved, key, new, force_add=True)
    if refused:
        raise ConfigError(
            f"resume={run_dir} finishes the run as it was set up; these overrides would change its play: "
            + "; ".join(refused)
            + f". A resume may raise episodes, change num_envs and LLM transport settings ({', '.join(sorted(RESUME_FREE))}); "
            "start a new run for anything else"
        )
    hidden = [
        f"player_kwargs.{name}.base_url"
        for name, kw in (plain(saved.get("player_kwargs")) or {}).items()
        if isinstance(kw, dict) and "***" in str(kw.get("base_url") or "")
    ]
    if hidden:
        raise ConfigError(
            f"resume={run_dir}: the run's {hidden[0]} held credentials, which are never saved; "
            f"give it again (e.g. llm.base_url=...) to resume"
        )
    saved.resume = str(run_dir)
    return saved


@hydra.main(version_base=None, config_path="pkg://alem.configs", config_name="evaluate")
def _main(cfg: DictConfig) -> None:
    logging.getLogger("jax").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        results = run(cfg, cfg.get("output_dir") or hydra_run_dir(), hydra_overrides())
    except AlemError as e:
        print(f"alem.evaluate: error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(format_table(results), flush=True)
    out = results["config"]["output_dir"]
    print(f"Results written to {Path(out) / 'results.json'}", flush=True)


_VERSIONED_ID = re.compile(r"^env=([a-z][a-z0-9_/]*-v\d+)$")


def main() -> None:
    """Entry point; ``env=<name>-vN`` (a registered id) is rewritten to ``env.id=<name>-vN``."""
    sys.argv = [_VERSIONED_ID.sub(r"env.id=\1", a) for a in sys.argv]
    _main()


if __name__ == "__main__":
    main()
