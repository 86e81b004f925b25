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
from alem.errors import AlemError
from alem.rollout import make_rollout, summarize

__all__ = ["ALGORITHMS", "ConfigError", "WANDB_MODES", "main", "make_env", "run", "seed_keys"]

WANDB_MODES = ("disabled", "offline", "online")


class ConfigError(AlemError, ValueError):
    """The training config names something that does not exist or has a bad value."""


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
        mode = cfg.wandb.mode
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
def train_random(cfg: DictConfig, env: alem.MultiAgentEnv, logger: _WandbLogger) -> dict[str, Any]:
    """Uniform-random legal policy over ``num_seeds`` vmapped seeds, in compiled chunks.

    Returns the algorithm's part of ``results.json`` (statistics per seed and
    their means over seeds; means are over the episodes that finished).
    """
    algo = cfg.algo
    num_envs = _positive_int(algo, "num_envs", "algo.")
    num_steps = _positive_int(algo, "num_steps", "algo.")
    total_steps = _positive_int(algo, "total_steps", "algo.")
    num_seeds = _positive_int(cfg, "num_seeds", "")
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - num_seeds:
        raise ConfigError(f"seed must be an integer in [0, 2**32 - num_seeds], got {seed!r}")

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


#: algorithm name (``algo.name``) -> ``fn(cfg, env, logger) -> results dict``.
ALGORITHMS: dict[str, Callable[[DictConfig, alem.MultiAgentEnv, _WandbLogger], dict[str, Any]]] = {
    "random": train_random,
}


# ---------------------------------------------------------------------------- driver
def run(cfg: DictConfig, output_dir: str | Path) -> Path:
    """Train as ``cfg`` says, write ``results.json`` and ``config.yaml``; return the results path.

    Raises:
        ConfigError: unknown algorithm, bad sizes or wandb mode.
        alem.AlemError: from the registry (unknown env id, bad env keyword, missing dependency).
    """
    output_dir = Path(output_dir).resolve()
    algo_name = cfg.algo.get("name") if isinstance(cfg.get("algo"), DictConfig) else None
    if algo_name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {algo_name!r}; available: {sorted(ALGORITHMS)}")
    mode = cfg.wandb.get("mode") if isinstance(cfg.get("wandb"), DictConfig) else "disabled"
    if mode not in WANDB_MODES:
        raise ConfigError(f"wandb.mode must be one of {list(WANDB_MODES)}, got {mode!r}")
    env = make_env(cfg.env)

    config = OmegaConf.to_container(cfg, resolve=True)
    config["output_dir"] = str(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)

    logger = _WandbLogger(cfg, config, output_dir)
    try:
        results = ALGORITHMS[algo_name](cfg, env, logger)
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
    path = output_dir / "results.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    (output_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(config)))
    summary = {k: v for k, v in results.items() if k not in ("config", "jax_devices")}
    logger.finish(summary={k: v for k, v in summary.items() if not isinstance(v, list)})
    return path


def _hydra_output_dir() -> str:
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get().runtime.output_dir


@hydra.main(version_base=None, config_path="pkg://alem.configs", config_name="config")
def main(cfg: DictConfig) -> None:
    """Hydra entry point; see the module docstring and ``configs/config.yaml``."""
    # Hydra sets the root logger to INFO; keep JAX's backend probing ("no TPU") quiet.
    logging.getLogger("jax").setLevel(logging.WARNING)
    try:
        path = run(cfg, cfg.get("output_dir") or _hydra_output_dir())
    except AlemError as e:
        print(f"alem.train: error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"Results written to {path}", flush=True)


if __name__ == "__main__":
    main()
