"""Training entry point: ``python -m alem.train env=... algo=... seed=... num_seeds=...``.

A Hydra app (configs in the package ``alem.configs``, so it works from a wheel).
Until the learners land, the only algorithm is ``random``: a uniform-random
legal policy with episode statistics, which is a baseline and a throughput check.

Runs are vmapped over seeds and executed in compiled chunks: one jitted
function advances every env by ``algo.num_steps`` steps and is called
repeatedly with the env state carried across calls; Python runs between
chunks to print progress and log to Weights & Biases (``wandb.mode=offline``
or ``online``; ``disabled`` by default). At the end ``results.json`` and
``config.yaml`` are written into the output dir and the last line printed is
``Results written to <path>``.

Errors that are alem's own (unknown env id, bad env keyword, bad config value)
are printed as one line on stderr and exit with status 1.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import platform
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import hydra
import jax
import jax.numpy as jnp
import numpy as np
from omegaconf import DictConfig, OmegaConf

import alem
from alem.cli import hydra_overrides, hydra_run_dir, override_key, plain
from alem.errors import AlemError, ConfigError, TrainingInterrupted
from alem.rollout import make_rollout, summarize
from alem.rundir import (
    claim,
    dumps_line,
    read_jsonl,
    read_run_config,
    write_atomic,
)

__all__ = [
    "ConfigError",
    "TrainingInterrupted",
    "WANDB_MODES",
    "eval_keys",
    "final_evaluation",
    "main",
    "make_env",
    "policy_evaluator",
    "run",
    "seed_keys",
]

WANDB_MODES = ("disabled", "offline", "online")
LOGGERS = ("none", "wandb")



# ---------------------------------------------------------------------------- helpers
def seed_keys(seed: int, num_seeds: int) -> jax.Array:
    """PRNG keys for seeds ``seed .. seed + num_seeds - 1`` (``[num_seeds]``).

    Seed ``s`` gets ``jax.random.key(s)`` whatever ``num_seeds`` is, so one seed
    of a multi-seed run can be re-run alone.
    """
    return jax.vmap(jax.random.key)(jnp.arange(seed, seed + num_seeds, dtype=jnp.uint32))


def make_env(env_cfg: Mapping[str, Any]) -> alem.MultiAgentEnv:
    """Build the env named by an ``env`` config group (``id`` and ``kwargs``)."""
    env_id = env_cfg.get("id")
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(f"env.id must be a registered env id string, got {env_id!r}")
    kwargs = env_cfg.get("kwargs") or {}
    if isinstance(kwargs, DictConfig):
        kwargs = OmegaConf.to_container(kwargs, resolve=True)
    if not isinstance(kwargs, dict):
        raise ConfigError(f"env.kwargs must be a mapping of constructor keywords, got {kwargs!r}")
    return alem.make(env_id, **kwargs)


def _positive_int(cfg: DictConfig, key: str, where: str) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}{key} must be an integer >= 1, got {value!r}")
    return value


def _jsonable(x: Any) -> Any:
    """NumPy values to plain Python for json (NaN becomes None)."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        v = arr.item()
        return None if isinstance(v, float) and not math.isfinite(v) else v
    return [_jsonable(v) for v in arr]


def _fmt_rate(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


class _WandbLogger:
    """A thin wrapper around ``wandb``; does nothing (and imports nothing) when disabled."""

    def __init__(self, cfg: DictConfig, config: dict, output_dir: Path):
        self.run = None
        mode = cfg.wandb.mode if cfg.get("logger", "none") == "wandb" else "disabled"
        if mode == "disabled":
            return
        import wandb

        try:
            self.run = wandb.init(
                mode=mode,
                project=cfg.wandb.get("project"),
                entity=cfg.wandb.get("entity"),
                group=cfg.wandb.get("group"),
                name=cfg.wandb.get("name"),
                tags=list(cfg.wandb.get("tags") or []),
                config=config,
                dir=str(output_dir),
            )
        except Exception as e:  # wandb raises several types (UsageError, CommError, ...)
            raise ConfigError(
                f"wandb.init(mode={mode!r}) failed: {e}. Log in with `wandb login` or set WANDB_API_KEY, "
                "or use wandb.mode=offline / wandb.mode=disabled"
            ) from None

    def log(self, metrics: dict[str, Any], step: int) -> None:
        if self.run is not None:
            self.run.log(metrics, step=step)

    def finish(self, summary: dict[str, Any] | None = None, exit_code: int = 0) -> None:
        if self.run is None:
            return
        if summary:
            self.run.summary.update(summary)
        self.run.finish(exit_code=exit_code)
        self.run = None


def _chunk_log(metrics: dict[str, np.ndarray], agents: tuple[str, ...], env_steps: int, sps: float) -> dict:
    """Per-chunk wandb metrics: means over seeds (NaN-aware) plus throughput."""
    out: dict[str, Any] = {"env_steps": env_steps, "env_steps_per_s": sps}
    ret = metrics["episode_return"]  # [S, N]
    if np.isfinite(ret).any():
        per_agent = np.nanmean(ret, axis=0)
        out["episode_return/mean"] = float(np.mean(per_agent))
        out.update({f"episode_return/{a}": float(v) for a, v in zip(agents, per_agent, strict=True)})
        out["episode_length"] = float(np.nanmean(metrics["episode_length"]))
    out["episodes"] = int(metrics["episodes"].sum())
    out["illegal_actions"] = int(metrics["illegal_actions"].sum())
    return out


# ---------------------------------------------------------------------------- algorithms
def prepare_random(
    cfg: DictConfig, env: alem.MultiAgentEnv
) -> Callable[[_WandbLogger, Path], dict[str, Any]]:
    """Check the config of a uniform-random run; return the function that runs it (nothing runs yet)."""
    for key in ("num_envs", "num_steps", "total_steps"):
        _positive_int(cfg.algo, key, "algo.")
    _check_seed(cfg, _positive_int(cfg, "num_seeds", ""))
    return lambda logger, output_dir: train_random(cfg, env, logger, output_dir)


def _check_seed(cfg: DictConfig, num_seeds: int) -> int:
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - num_seeds:
        raise ConfigError(f"seed must be an integer in [0, 2**32 - num_seeds], got {seed!r}")
    return seed


def train_random(
    cfg: DictConfig, env: alem.MultiAgentEnv, logger: _WandbLogger, output_dir: Path | None = None
) -> dict[str, Any]:
    """Uniform-random legal policy over ``num_seeds`` vmapped seeds, in compiled chunks.

    Returns the algorithm's part of ``results.json`` (statistics per seed and
    their means over seeds; means are over the episodes that finished).
    """
    algo = cfg.algo
    num_envs = _positive_int(algo, "num_envs", "algo.")
    num_steps = _positive_int(algo, "num_steps", "algo.")
    total_steps = _positive_int(algo, "total_steps", "algo.")
    num_seeds = _positive_int(cfg, "num_seeds", "")
    seed = _check_seed(cfg, num_seeds)

    steps_per_chunk = num_envs * num_steps
    num_chunks = -(-total_steps // steps_per_chunk)
    params = env.default_params
    rollout = make_rollout(env, num_envs, num_steps)

    @jax.jit
    def init(keys):
        return jax.vmap(rollout.init, in_axes=(0, None))(keys, params)

    @jax.jit
    def chunk(keys, index, state):
        keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, index)
        return jax.vmap(rollout, in_axes=(0, None, 0))(keys, params, state)

    keys = seed_keys(seed, num_seeds)
    split = jax.vmap(jax.random.split)(keys)  # [S, 2]
    init_keys, loop_keys = split[:, 0], split[:, 1]

    agents = tuple(env.agents)
    totals = {
        "episodes": np.zeros((num_seeds,), np.int64),
        "return_sum": np.zeros((num_seeds, env.num_agents), np.float64),
        "length_sum": np.zeros((num_seeds,), np.float64),
        "illegal_actions": np.zeros((num_seeds,), np.int64),
    }
    print(
        f"alem.train: env={env.id} algo=random seeds={list(range(seed, seed + num_seeds))} "
        f"num_envs={num_envs} num_steps={num_steps} chunks={num_chunks} "
        f"({num_chunks * steps_per_chunk:,} env-steps per seed) backend={jax.default_backend()}",
        flush=True,
    )
    t_start = time.perf_counter()
    state = init(init_keys)
    first_chunk_s = 0.0
    for i in range(num_chunks):
        t0 = time.perf_counter()
        state, metrics = chunk(loop_keys, jnp.uint32(i), state)
        metrics = jax.device_get(metrics)  # waits for the chunk; small arrays
        dt = time.perf_counter() - t0
        if i == 0:
            first_chunk_s = time.perf_counter() - t_start
        for k in totals:
            totals[k] += np.asarray(metrics[k])
        done = (i + 1) * steps_per_chunk
        sps = steps_per_chunk * num_seeds / max(dt, 1e-9)
        ret = metrics["episode_return"]
        ret_txt = (
            "[" + ", ".join(f"{v:.3g}" for v in np.nanmean(ret, axis=0)) + "]"
            if np.isfinite(ret).any()
            else "n/a"
        )
        note = " (incl. compile)" if i == 0 else ""
        print(
            f"[chunk {i + 1}/{num_chunks}] env-steps {done:,}/{num_chunks * steps_per_chunk:,} per seed | "
            f"{_fmt_rate(sps)} env-steps/s{note} | episodes {int(metrics['episodes'].sum()):,} | "
            f"return {ret_txt}",
            flush=True,
        )
        logger.log(_chunk_log(metrics, agents, done, sps), step=done)
    jax.block_until_ready(state)
    wall = time.perf_counter() - t_start

    episodes = totals["episodes"]
    per_seed = jax.device_get(summarize(totals, num_chunks * steps_per_chunk))  # NaN: no episode ended
    ret_per_seed, len_per_seed = per_seed["episode_return"], per_seed["episode_length"]
    finished = episodes > 0
    ret_mean = ret_per_seed[finished].mean(axis=0) if finished.any() else np.full(env.num_agents, np.nan)
    len_mean = len_per_seed[finished].mean() if finished.any() else np.nan
    env_steps = num_chunks * steps_per_chunk
    steady = wall - first_chunk_s
    return {
        "agents": list(agents),
        "seeds": list(range(seed, seed + num_seeds)),
        "num_seeds": num_seeds,
        "episode_return_mean": _jsonable(ret_mean),
        "episode_return_per_seed": _jsonable(ret_per_seed),
        "episode_length_mean": _jsonable(len_mean),
        "episode_length_per_seed": _jsonable(len_per_seed),
        "episodes": int(episodes.sum()),
        "episodes_per_seed": _jsonable(episodes),
        "illegal_actions": int(totals["illegal_actions"].sum()),
        "env_steps_per_seed": env_steps,
        "env_steps": env_steps * num_seeds,
        "num_chunks": num_chunks,
        "wall_time_s": wall,
        "first_chunk_s": first_chunk_s,
        "steps_per_s": env_steps * num_seeds / wall,
        "steps_per_s_after_first_chunk": (
            (num_chunks - 1) * steps_per_chunk * num_seeds / steady if num_chunks > 1 and steady > 0 else None
        ),
    }



METRICS_FILE = "metrics.jsonl"
_LOSS_KEYS = (
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_frac",
    "beta1",
    "beta2",
    "kl_after_update",
)


def _progress(done: int, total: int, width: int = 24) -> str:
    filled = int(width * done / max(total, 1))
    return "[" + "#" * filled + "-" * (width - filled) + f"] {100 * done / max(total, 1):3.0f}%"


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _mean_return(return_sum: np.ndarray, episodes: np.ndarray) -> np.ndarray:
    """Per seed and agent mean episode return (NaN where no episode ended)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(episodes[..., None] > 0, return_sum / np.maximum(episodes, 1)[..., None], np.nan)


def device_mesh(cfg: DictConfig):
    """A 1-d mesh ``("data",)`` over the devices the config asks for, or None for one device."""
    devices = cfg.get("devices", 1)
    available = jax.devices()  # global: every host's devices after jax.distributed.initialize()
    if devices == "all":
        devices = len(available)
    if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= len(available):
        raise ConfigError(f"devices must be 'all' or an integer in [1, {len(available)}], got {devices!r}")
    if devices == 1:
        return None
    if cfg.algo.num_envs % devices:
        raise ConfigError(f"algo.num_envs={cfg.algo.num_envs} must be divisible by devices={devices}")
    from jax.sharding import Mesh

    return Mesh(np.array(available[:devices]), ("data",))


def shard_learner_state(state: Any, mesh: Any) -> Any:
    """Place a seed-vmapped learner state: env-batched fields split over ``data``, the rest replicated.

    XLA (GSPMD) then partitions the whole update; the losses are means over the env
    batch, so gradients are averaged across devices by the compiler's all-reduce.
    """
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    split, whole = NamedSharding(mesh, P(None, "data")), NamedSharding(mesh, P())
    batched = {"env_state", "timestep", "hidden", "resets"}
    fields = {
        f: jax.tree.map(
            lambda x, f=f: jax.device_put(x, split if f in batched and x.ndim >= 2 else whole),
            getattr(state, f),
        )
        for f in state.__dataclass_fields__
    }
    return state.replace(**fields)


@dataclasses.dataclass
class _PPOPlan:
    """Everything a PPO-core run needs, checked before anything is written or compiled."""

    lcfg: Any
    learner: Any
    mesh: Any
    seed: int
    num_seeds: int
    chunk_updates: int
    num_chunks: int
    eval_steps: int


def prepare_ppo(cfg: DictConfig, env: alem.MultiAgentEnv) -> Callable[[_WandbLogger, Path], dict[str, Any]]:
    """Check a PPO-core run's config and build its learner; return the function that trains it.

    Every value that could only fail later (after compiling or training) is checked here:
    learner options, seeds, devices and the final evaluation's length.
    """
    from alem.algos import make_config, make_learner
    from alem.algos.config import LearnerConfigError

    num_seeds = _positive_int(cfg, "num_seeds", "")
    seed = _check_seed(cfg, num_seeds)
    chunk_updates = _positive_int(cfg, "chunk_updates", "")
    options = {k: v for k, v in OmegaConf.to_container(cfg.algo, resolve=True).items() if k != "name"}
    try:
        lcfg = make_config(cfg.algo.name, **options)
        chunk_updates = min(chunk_updates, lcfg.num_updates)
        num_chunks = -(-lcfg.num_updates // chunk_updates)
        per_update = lcfg.num_envs * lcfg.num_steps
        # Whole chunks: the learning-rate schedule covers exactly the updates that run.
        lcfg = dataclasses.replace(lcfg, total_steps=num_chunks * chunk_updates * per_update)
        learner = make_learner(env, lcfg)
    except LearnerConfigError as e:
        raise ConfigError(str(e)) from None
    mesh = device_mesh(cfg)
    eval_steps = _check_eval(cfg, env, lcfg.num_steps)
    plan = _PPOPlan(lcfg, learner, mesh, seed, num_seeds, chunk_updates, num_chunks, eval_steps)
    return lambda logger, output_dir: train_ppo(cfg, env, plan, logger, output_dir)


def _check_eval(cfg: DictConfig, env: alem.MultiAgentEnv, rollout_steps: int) -> int:
    """Env steps of the final evaluation (whole rollouts); refuse one too short to finish an episode."""
    if not isinstance(cfg.get("eval"), DictConfig):
        raise ConfigError(f"eval must be a mapping with num_steps, got {cfg.get('eval')!r}")
    num_steps = _positive_int(cfg.eval, "num_steps", "eval.")
    steps = -(-num_steps // rollout_steps) * rollout_steps
    need = math.ceil(env.episode_steps_hint)
    if steps < need:
        raise ConfigError(
            f"eval.num_steps={num_steps} ({steps} after rounding up to whole rollouts of algo.num_steps="
            f"{rollout_steps}) is shorter than an episode of {env.id} (about {need} steps): no episode "
            f"would finish and the evaluation would be empty; use eval.num_steps >= {need}"
        )
    return steps


def train_ppo(
    cfg: DictConfig, env: alem.MultiAgentEnv, plan: _PPOPlan, logger: _WandbLogger, output_dir: Path
) -> dict[str, Any]:
    """Train a PPO-core learner (``algo.name`` in :data:`alem.algos.VARIANTS`) in compiled chunks.

    Writes ``metrics.jsonl`` (one row per chunk and seed) and a checkpoint after every
    chunk into ``output_dir``; with ``resume`` set, continues from the newest readable
    checkpoint (an unreadable newest one falls back to the older kept one).
    """
    from alem.algos import checkpoint

    lcfg, learner, mesh = plan.lcfg, plan.learner, plan.mesh
    seed, num_seeds, chunk_updates, num_chunks = (
        plan.seed,
        plan.num_seeds,
        plan.chunk_updates,
        plan.num_chunks,
    )
    per_update = lcfg.num_envs * lcfg.num_steps
    metrics_path = output_dir / METRICS_FILE
    resuming = bool(cfg.get("resume"))
    keys = seed_keys(seed, num_seeds)
    init = jax.jit(jax.vmap(learner.init))
    chunk_fn = jax.jit(jax.vmap(lambda st: learner.run(st, chunk_updates)))
    state = init(keys)
    start = 0
    if resuming:
        start, state = _restore_latest(output_dir, state)
        rows = [
            r
            for r in read_jsonl(metrics_path, on_corrupt=_skip_row(metrics_path))
            if r.get("chunk", -1) < start
        ]
        if rows and rows[-1].get("update") != (rows[-1]["chunk"] + 1) * chunk_updates:
            raise ConfigError(
                f"resume={output_dir}: the run's chunks held {rows[-1].get('update')} updates after chunk "
                f"{rows[-1]['chunk'] + 1}, now they would hold {chunk_updates} each (its first total was "
                "shorter than one chunk); this run cannot be extended, start a new one"
            )
        write_atomic(metrics_path, "".join(dumps_line(r) for r in rows))
    if mesh is not None:
        state = shard_learner_state(state, mesh)

    agents = tuple(env.agents)
    total_env_steps = num_chunks * chunk_updates * per_update
    print(
        f"alem.train: env={env.id} algo={lcfg.name} seeds={list(range(seed, seed + num_seeds))} "
        f"num_envs={lcfg.num_envs} num_steps={lcfg.num_steps} updates={num_chunks * chunk_updates} "
        f"in {num_chunks} chunks ({total_env_steps:,} env-steps per seed) roles={learner.num_roles} "
        f"devices={1 if mesh is None else mesh.size} backend={jax.default_backend()}"
        + (f" | resuming after chunk {start}" if resuming else ""),
        flush=True,
    )
    t_start = time.perf_counter()
    first_chunk_s = None
    with metrics_path.open("a") as out:
        for i in range(start, num_chunks):
            t0 = time.perf_counter()
            state, m = chunk_fn(state)
            m = jax.device_get(m)  # [S, chunk_updates, ...]
            dt = time.perf_counter() - t0
            if first_chunk_s is None:
                first_chunk_s = time.perf_counter() - t_start
            episodes = m["episodes"].sum(1)
            ret = _mean_return(m["return_sum"].sum(1), episodes)
            length = np.where(episodes > 0, m["length_sum"].sum(1) / np.maximum(episodes, 1), np.nan)
            done_steps = (i + 1) * chunk_updates * per_update
            sps = chunk_updates * per_update * num_seeds / max(dt, 1e-9)
            for s in range(num_seeds):
                row = {
                    "chunk": i,
                    "update": (i + 1) * chunk_updates,
                    "seed": seed + s,
                    "env_steps": done_steps,
                    "episodes": int(episodes[s]),
                    "episode_return": _jsonable(np.nanmean(ret[s]) if episodes[s] else np.nan),
                    "episode_return_per_agent": _jsonable(ret[s]),
                    "episode_length": _jsonable(length[s]),
                    "illegal_actions": int(m["illegal_actions"][s].sum()),
                    **{k: float(np.mean(m[k][s])) for k in _LOSS_KEYS if k in m},
                    "steps_per_s": sps,
                }
                out.write(json.dumps(row) + "\n")
            out.flush()
            ret_txt = f"{np.nanmean(ret):.4g}" if np.isfinite(ret).any() else "n/a"
            eta = (num_chunks - i - 1) * dt
            print(
                f"{_progress(i + 1, num_chunks)} chunk {i + 1}/{num_chunks} | env-steps {done_steps:,} per seed | "
                f"{_fmt_rate(sps)} env-steps/s{' (incl. compile)' if i == start else ''} | ETA {_eta(eta)} | "
                f"return {ret_txt}",
                flush=True,
            )
            log = {
                "env_steps": done_steps,
                "env_steps_per_s": sps,
                "episode_return/mean": float(np.nanmean(ret)),
            }
            for s in range(num_seeds):  # per-seed curves; vmapped seeds are logged from the host
                log[f"seed{seed + s}/episode_return"] = (
                    float(np.nanmean(ret[s])) if episodes[s] else float("nan")
                )
            logger.log(log, step=done_steps)
            checkpoint.save(output_dir, i + 1, state)
            stop = cfg.get("stop_after_chunks")
            if stop is not None and i + 1 >= stop and i + 1 < num_chunks:
                raise TrainingInterrupted(
                    f"stopped after chunk {i + 1}/{num_chunks} (stop_after_chunks={stop}); "
                    f"continue with resume={output_dir}"
                )
    jax.block_until_ready(state)
    wall = time.perf_counter() - t_start

    evaluation = final_evaluation(env, learner, state, keys, plan.eval_steps)
    trained = np.asarray(evaluation["trained_return_per_seed"], dtype=float)
    random_ret = np.asarray(evaluation["random_return_per_seed"], dtype=float)
    print(
        f"final evaluation ({evaluation['episodes_per_seed']} episodes per seed, mean return per agent):\n"
        f"  trained {lcfg.name:<10} {np.nanmean(trained):.4g}  per agent {np.round(np.nanmean(trained, 0), 3).tolist()}\n"
        f"  random policy      {np.nanmean(random_ret):.4g}  per agent {np.round(np.nanmean(random_ret, 0), 3).tolist()}",
        flush=True,
    )
    return {
        "agents": list(agents),
        "seeds": list(range(seed, seed + num_seeds)),
        "num_seeds": num_seeds,
        "learner": dataclasses.asdict(lcfg),
        "roles": learner.roles.tolist(),
        "num_chunks": num_chunks,
        "updates": num_chunks * chunk_updates,
        "env_steps_per_seed": total_env_steps,
        "env_steps": total_env_steps * num_seeds,
        "wall_time_s": wall,
        "first_chunk_s": first_chunk_s,
        "steps_per_s": (num_chunks - start) * chunk_updates * per_update * num_seeds / max(wall, 1e-9),
        "resumed_from_chunk": start if resuming else None,
        "metrics_file": METRICS_FILE,
        **evaluation,
    }


def policy_evaluator(
    env, learner, num_steps: int
) -> Callable[[jax.Array, Any], tuple[np.ndarray, np.ndarray]]:
    """A compiled evaluation of seed-batched learner parameters (compiled once, called many times).

    Returns ``evaluate(keys, params) -> (episodes [S], mean return per agent [S, N])``: for each
    seed, ``learner.cfg.num_envs`` fresh envs run the (stochastic) policy with ``params`` for
    ``num_steps`` steps, rounded up to whole rollouts of ``learner.cfg.num_steps``; the mean is over
    the episodes that ended (NaN where none did). ``params`` has the seed axis first, as in a
    seed-vmapped ``LearnerState.params``.
    """
    rounds = -(-num_steps // learner.cfg.num_steps)

    def one_seed(key, params):
        st = learner.init(key).replace(params=params)

        def one_rollout(s, _):
            s, _batch, stats = learner.rollout(s, env.default_params)
            return s, stats

        _, m = jax.lax.scan(one_rollout, st, None, length=rounds)
        return m["episodes"].sum(), m["return_sum"].sum(0)

    batched = jax.jit(jax.vmap(one_seed))

    def evaluate(keys: jax.Array, params: Any) -> tuple[np.ndarray, np.ndarray]:
        episodes, return_sum = jax.device_get(batched(keys, params))
        return np.asarray(episodes), _mean_return(np.asarray(return_sum), np.asarray(episodes))

    return evaluate


def eval_keys(keys: jax.Array, index: int = 0) -> jax.Array:
    """Evaluation keys of seeds ``keys`` (``[S]``), apart from the training keys; ``index`` numbers evaluations."""
    keys = jax.vmap(lambda k: jax.random.fold_in(k, 2**31 - 1))(keys)
    return keys if index == 0 else jax.vmap(lambda k: jax.random.fold_in(k, index))(keys)


def final_evaluation(env, learner, state, keys, num_steps: int, evaluate=None) -> dict[str, Any]:
    """Mean episode return of the trained (stochastic) policy and of the random policy, same envs.

    ``evaluate``: a :func:`policy_evaluator` of the same ``num_steps`` already compiled, if any.
    """
    rounds = -(-num_steps // learner.cfg.num_steps)
    keys = eval_keys(keys)
    evaluate = evaluate or policy_evaluator(env, learner, num_steps)
    episodes, trained = evaluate(keys, jax.device_get(state.params))
    rollout = make_rollout(env, learner.cfg.num_envs, rounds * learner.cfg.num_steps)
    rnd = jax.device_get(jax.jit(jax.vmap(lambda k: rollout(k, env.default_params)[1]))(keys))
    random_ret = _mean_return(rnd["return_sum"], rnd["episodes"])
    return {
        "episodes_per_seed": int(np.min(episodes)),
        "trained_return_per_seed": _jsonable(trained),
        "random_return_per_seed": _jsonable(random_ret),
        "trained_return_mean": _jsonable(np.nanmean(trained)),
        "random_return_mean": _jsonable(np.nanmean(random_ret)),
    }


def _algorithms() -> dict[str, Callable[..., Callable[[_WandbLogger, Path], dict[str, Any]]]]:
    """Algorithm name -> ``prepare(cfg, env)``, which checks the config and returns the run function."""
    from alem.algos import VARIANTS

    return {"random": prepare_random, **{name: prepare_ppo for name in VARIANTS}}


def _skip_row(path: Path) -> Callable[[int, str], None]:
    def report(line: int, text: str) -> None:
        print(f"alem.train: warning: {path}: line {line} is damaged and was dropped ({text!r})", flush=True)

    return report


def _restore_latest(run_dir: Path, template: Any) -> tuple[int, Any]:
    """``(chunks done, state)`` from the newest readable checkpoint; falls back to older kept ones.

    A run killed before its first checkpoint was complete starts over (its rows are recomputed).
    """
    from alem.algos import checkpoint

    found = checkpoint.available(run_dir)
    if not found:
        # Killed before its first checkpoint was complete (rows of chunk 0 may be on disk).
        print(f"alem.train: {run_dir} has no complete checkpoint yet; starting it over", flush=True)
        return 0, template
    errors = []
    for chunk, path in found:
        try:
            state = checkpoint.restore(path, template)
        except checkpoint.CheckpointError as e:
            errors.append(str(e))
            print(f"alem.train: warning: {e}; trying the previous checkpoint", flush=True)
            continue
        return chunk, state
    raise checkpoint.CheckpointError(
        f"resume={run_dir}: no checkpoint could be restored; tried {len(found)}: " + " | ".join(errors)
    )


# ---------------------------------------------------------------------------- driver
#: Settings a ``resume`` may change: logging only, and ``algo.total_steps`` to extend the run.
RESUME_CHANGEABLE = ("algo.total_steps", "logger", "wandb", "stop_after_chunks", "resume")


def run(cfg: DictConfig, output_dir: str | Path, overrides: list[str] | None = None) -> Path:
    """Train as ``cfg`` says, write ``results.json`` and ``config.yaml``; return the results path.

    Every check runs before anything is written: a new run refuses an ``output_dir`` that
    holds anything (:func:`alem.rundir.claim`). ``cfg.resume=<run dir>`` continues that run
    with its saved config; ``overrides`` (the command line's ``key=value`` list) may only
    extend ``algo.total_steps`` or change logging, anything else that differs is refused.

    Raises:
        ConfigError: unknown algorithm, bad sizes or wandb mode, a resume override that is refused.
        alem.AlemError: from the registry (unknown env id, bad env keyword, missing dependency),
            or :class:`alem.rundir.RunDirError` for a directory that is not this run's.
    """
    resuming = bool(cfg.get("resume"))
    if resuming:
        cfg, output_dir = _resumed_config(cfg, overrides or [])
    else:
        output_dir = Path(output_dir).resolve()
    algo_name = cfg.algo.get("name") if isinstance(cfg.get("algo"), DictConfig) else None
    algorithms = _algorithms()
    if algo_name not in algorithms:
        raise ConfigError(f"unknown algorithm {algo_name!r}; available: {sorted(algorithms)}")
    mode = cfg.wandb.get("mode") if isinstance(cfg.get("wandb"), DictConfig) else "disabled"
    if mode not in WANDB_MODES:
        raise ConfigError(f"wandb.mode must be one of {list(WANDB_MODES)}, got {mode!r}")
    if cfg.get("logger", "none") not in LOGGERS:
        raise ConfigError(f"logger must be one of {list(LOGGERS)}, got {cfg.get('logger')!r}")
    stop = cfg.get("stop_after_chunks")
    if stop is not None and (isinstance(stop, bool) or not isinstance(stop, int) or stop < 1):
        raise ConfigError(f"stop_after_chunks must be null or an integer >= 1, got {stop!r}")
    env = make_env(cfg.env)
    train_fn = algorithms[algo_name](cfg, env)  # checks every value; compiles nothing

    config = OmegaConf.to_container(cfg, resolve=True)
    config["output_dir"] = str(output_dir)
    config.pop("stop_after_chunks", None)
    config["resume"] = None
    path = output_dir / "results.json"
    if resuming:
        saved = OmegaConf.to_container(OmegaConf.load(output_dir / "config.yaml"), resolve=True)
        if saved == config and _readable_json(path):
            print(f"alem.train: {output_dir} is already finished; nothing to do", flush=True)
            return path
    else:
        output_dir = claim(output_dir, cli="alem.train")
    logger = _WandbLogger(cfg, config, output_dir)  # a wandb that cannot start fails before any write
    write_atomic(output_dir / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(config)))
    try:
        results = train_fn(logger, output_dir)
    except BaseException:
        logger.finish(exit_code=1)
        raise
    results = {
        "env_id": env.id,
        "algo": algo_name,
        **results,
        "jax_version": jax.__version__,
        "jax_backend": jax.default_backend(),
        "jax_devices": [str(d) for d in jax.devices()],
        "python_version": platform.python_version(),
        "alem_version": alem.__version__,
        "output_dir": str(output_dir),
        "config": config,
    }
    write_atomic(path, json.dumps(results, indent=2) + "\n")
    summary = {k: v for k, v in results.items() if k not in ("config", "jax_devices")}
    logger.finish(summary={k: v for k, v in summary.items() if not isinstance(v, list)})
    return path


def _readable_json(path: Path) -> bool:
    try:
        return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
    except (OSError, ValueError, RecursionError):
        return False


def _resumed_config(cfg: DictConfig, overrides: list[str]) -> tuple[DictConfig, Path]:
    """The saved config of the run in ``cfg.resume``, with the overrides a resume may apply.

    ``overrides`` are the command line's; each must leave the run as it was, extend
    ``algo.total_steps`` or change logging. The others are refused together, by name.
    """
    run_dir = Path(cfg.resume).resolve()
    old = read_run_config(run_dir, cli="alem.train", required=("algo", "env"))
    if not isinstance(old.get("algo"), DictConfig):
        raise ConfigError(f"resume={run_dir}: its config.yaml is not an alem.train config")
    refused = []
    for override in overrides:
        key = override_key(override)
        if key is None or key in ("resume", "stop_after_chunks"):
            continue
        if key == "output_dir":
            new = cfg.get("output_dir")
            if new is not None and Path(new).resolve() != run_dir:
                refused.append(f"output_dir={new} (a resumed run writes into its own directory)")
            continue
        new = OmegaConf.select(cfg, key, default=None)
        was = OmegaConf.select(old, key, default=None)
        if plain(new) == plain(was):
            continue
        if key == "algo.total_steps":
            if isinstance(new, bool) or not isinstance(new, int) or not isinstance(was, int) or new < was:
                refused.append(
                    f"algo.total_steps={new!r} (only an extension of the run's {was!r} is possible)"
                )
                continue
        elif key.split(".")[0] not in RESUME_CHANGEABLE:
            refused.append(f"{key}={plain(new)!r} (the run has {plain(was)!r})")
            continue
        OmegaConf.update(old, key, new, force_add=True)
    if refused:
        raise ConfigError(
            f"resume={run_dir} continues the run as it was configured; these overrides would change it: "
            + "; ".join(refused)
            + ". A resume may extend algo.total_steps and change logging (logger, wandb.*); "
            "start a new run for anything else"
        )
    old.resume = str(run_dir)
    old.stop_after_chunks = cfg.get("stop_after_chunks")
    return old, run_dir


@hydra.main(version_base=None, config_path="pkg://alem.configs", config_name="config")
def main(cfg: DictConfig) -> None:
    """Hydra entry point; see the module docstring and ``configs/config.yaml``."""
    # Hydra sets the root logger to INFO; keep JAX's backend probing ("no TPU") quiet.
    for name in ("jax", "absl"):  # absl: orbax's per-save INFO lines
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        path = run(cfg, cfg.get("output_dir") or hydra_run_dir(), hydra_overrides())
    except AlemError as e:
        print(f"alem.train: error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"Results written to {path}", flush=True)


if __name__ == "__main__":
    main()
