"""The training command's code: ``python -m alem.train env=... algo=... seed=... num_seeds=...``.

:mod:`alem.train` is the command (it checks the ``train`` extra, then runs :data:`main`), as
:mod:`alem.evaluate` is the arena's (:mod:`alem.arena.command`). A Hydra app (configs in the
package ``alem.configs``, so it works from a wheel). It reads top to bottom in the stages of
:func:`run`:

1. **Config**: a new run's config, or a resumed run's saved config with the overrides a
   resume may apply (:func:`_resumed_config`).
2. **Plan**: the env and the learner (``algo=random`` or a learner of the table
   :data:`alem.algos.LEARNERS`: a PPO or value-based preset) with its
   :class:`~alem.training.Schedule`; every value is checked here, before anything is written
   or compiled.
3. **Run directory**: claimed (a new run refuses a directory that holds anything), wandb
   started, ``config.yaml`` written.
4. **Training**: :func:`alem.training.train`, the one loop, with console progress,
   ``metrics.jsonl`` and wandb as sinks and a checkpoint after every chunk.
5. **Results**: for PPO learners the final evaluation against the random policy on the same
   envs; ``results.json``, and the last line printed is ``Results written to <path>``.

Errors that are alem's own (unknown env id, bad env keyword, bad config value) are printed
as one line on stderr: exit status 2 when the run was refused before writing anything, 1 when
it failed after (:func:`alem.cli.hydra_app`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import platform
from pathlib import Path
from typing import Any

import jax
import numpy as np
from omegaconf import DictConfig, OmegaConf

import alem
from alem.cli import (
    hydra_app,
    hydra_overrides,
    hydra_run_dir,
    make_env,
    override_key,
    plain,
    resume_keys,
)
from alem.errors import ConfigError, require_positive_int
from alem.json_values import jsonable
from alem.rundir import check_claim, claim, hold, read_run_config, release, write_atomic
from alem.training import (
    METRICS_FILE,
    ConsoleProgress,
    JsonlMetrics,
    Schedule,
    TrainResult,
    WandbSink,
    check_chunking,
    distributed,
    final_evaluation,
    mean_return,
    train,
)
from alem.training.devices import check_memory, device_mesh
from alem.training.sweep import Sweep, parse_sweep

__all__ = ["WANDB_MODES", "Plan", "check_unread", "main", "plan", "run"]

WANDB_MODES = ("disabled", "offline", "online")
LOGGERS = ("none", "wandb")
#: Settings a ``resume`` may change: logging only, and ``algo.total_steps`` to extend the run.
RESUME_CHANGEABLE = (
    "algo.total_steps",
    "logger",
    "wandb",
    "stop_after_chunks",
    "resume",
    "distributed",
    "devices",
)


# ---------------------------------------------------------------------------- stage 2: plan
@dataclasses.dataclass(frozen=True)
class Plan:
    """A checked run: the learner, how it is cut into chunks, the device mesh, and for PPO
    learners their config and the final evaluation's length."""

    learner: Any
    schedule: Schedule
    mesh: Any = None
    lcfg: Any = None  # the learner's config (PPOConfig, QConfig; None for the random baseline)
    eval_steps: int | None = None
    sweep: Sweep | None = None  # sweep.*: the configurations vmapped beside the seeds


def _positive(cfg: DictConfig, key: str, where: str = "") -> int:
    return require_positive_int(cfg.get(key), f"{where}{key}", error=ConfigError)


def _check_seed(cfg: DictConfig, num_seeds: int) -> int:
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - num_seeds:
        raise ConfigError(f"seed must be an integer in [0, 2**32 - num_seeds], got {seed!r}")
    return seed


def _plan_random(cfg: DictConfig, env: alem.MultiAgentEnv) -> Plan:
    from alem.algos.random import RandomLearner

    num_envs, num_steps = _positive(cfg.algo, "num_envs", "algo."), _positive(cfg.algo, "num_steps", "algo.")
    total_steps = _positive(cfg.algo, "total_steps", "algo.")
    num_seeds = _positive(cfg, "num_seeds")
    seed = _check_seed(cfg, num_seeds)
    per_update = num_envs * num_steps
    # One rollout per chunk: the random baseline reports every rollout.
    schedule = Schedule(seed, num_seeds, 1, -(-total_steps // per_update), per_update)
    parse_sweep(cfg.get("sweep"), None)  # refuses any sweep.*: nothing to vary
    return Plan(RandomLearner(env, num_envs, num_steps), schedule, device_mesh(cfg))


def _plan_learner(cfg: DictConfig, env: alem.MultiAgentEnv) -> Plan:
    """A learner of the table :data:`alem.algos.LEARNERS` (a PPO or a value-based preset)."""
    from alem.algos import make_config, make_learner
    from alem.algos.config import LearnerConfigError

    num_seeds = _positive(cfg, "num_seeds")
    seed = _check_seed(cfg, num_seeds)
    chunk_updates = _positive(cfg, "chunk_updates")
    options = {k: v for k, v in OmegaConf.to_container(cfg.algo, resolve=True).items() if k != "name"}
    try:
        lcfg = make_config(cfg.algo.name, **options)
        chunk_updates = min(chunk_updates, lcfg.num_updates)
        num_chunks = -(-lcfg.num_updates // chunk_updates)
        per_update = lcfg.num_envs * lcfg.num_steps
        # Whole chunks: the learning-rate schedule covers exactly the updates that run.
        lcfg = dataclasses.replace(lcfg, total_steps=num_chunks * chunk_updates * per_update)
        sweep = parse_sweep(cfg.get("sweep"), lcfg)
        if sweep is not None:
            lcfg = dataclasses.replace(lcfg, sweep=tuple(sweep.knobs))
        # population play's partners (algo.partners) are loaded with the learner, which sizes the pool
        learner = make_learner(env, lcfg, partners=getattr(lcfg, "partners", None))
        lcfg = learner.cfg
    except LearnerConfigError as e:
        raise ConfigError(str(e)) from None
    mesh = device_mesh(cfg)
    schedule = Schedule(
        seed, num_seeds, chunk_updates, num_chunks, per_update, 1 if sweep is None else sweep.size
    )
    return Plan(learner, schedule, mesh, lcfg, _check_eval(cfg, env, lcfg.num_steps), sweep)


def _check_eval(cfg: DictConfig, env: alem.MultiAgentEnv, rollout_steps: int) -> int:
    """Env steps of the final evaluation (whole rollouts); refuse one too short to finish an episode.
    ``auto`` is 256 steps or one episode of the env, whichever is longer."""
    if not isinstance(cfg.get("eval"), DictConfig):
        raise ConfigError(f"eval must be a mapping with num_steps, got {cfg.get('eval')!r}")
    need = math.ceil(env.episode_steps_hint)
    num_steps = cfg.eval.get("num_steps")
    if num_steps == "auto":
        num_steps = max(256, need)
    elif isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 1:
        raise ConfigError(f"eval.num_steps must be auto or an integer >= 1, got {plain(num_steps)!r}")
    steps = -(-num_steps // rollout_steps) * rollout_steps
    if steps < need:
        raise ConfigError(
            f"eval.num_steps={num_steps} ({steps} after rounding up to whole rollouts of algo.num_steps="
            f"{rollout_steps}) is shorter than an episode of {env.id} (about {need} steps): no episode "
            f"would finish and the evaluation would be empty; use eval.num_steps >= {need}"
        )
    return steps


def _check_wandb(wandb: Any) -> None:
    """``wandb.*``: names are null or strings, tags a list of strings (checked with any logger:
    a run resumed with logger=wandb reads them)."""
    if not isinstance(wandb, DictConfig):
        raise ConfigError(f"wandb must be a mapping of wandb options, got {wandb!r}")
    for key in ("project", "entity", "group", "name"):
        value = wandb.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"wandb.{key} must be null or a string, got {value!r}")
    tags = wandb.get("tags")
    if tags is not None and (
        isinstance(tags, str) or not OmegaConf.is_list(tags) or not all(isinstance(t, str) for t in tags)
    ):
        raise ConfigError(f"wandb.tags must be a list of strings, e.g. wandb.tags=[a,b], got {plain(tags)!r}")


def check_unread(cfg: DictConfig, overrides: list[str], lcfg: Any) -> None:
    """An option on the command line that the chosen logger or learner configuration does not
    read would be ignored silently: refused instead, naming what reads it."""
    logger = cfg.get("logger", "none")
    unread = lcfg.unread() if lcfg is not None else {}
    for key in filter(None, map(override_key, overrides)):
        if key.startswith("wandb.") and logger != "wandb":
            raise ConfigError(
                f"{key} is read by logger=wandb only; this run's logger is {logger}: add logger=wandb or drop {key}"
            )
        name = key.removeprefix("algo.")
        if name in unread:
            raise ConfigError(
                f"{key} is read with {unread[name]} only; this run's algo={cfg.algo.name} does not read it: "
                f"drop {key} or set {unread[name]}"
            )


def plan(cfg: DictConfig, env: alem.MultiAgentEnv) -> Plan:
    """Check ``cfg`` (algorithm, sizes, seeds, devices, logging) and build its :class:`Plan`.

    Nothing is written or compiled; every value that could only fail later is refused here.
    """
    from alem.algos import LEARNERS

    algo_name = cfg.algo.get("name") if isinstance(cfg.get("algo"), DictConfig) else None
    if algo_name != "random" and algo_name not in LEARNERS:
        known = sorted(["random", *LEARNERS])
        raise ConfigError(f"unknown algorithm {algo_name!r}; available: {known}")
    mode = cfg.wandb.get("mode") if isinstance(cfg.get("wandb"), DictConfig) else "disabled"
    if mode not in WANDB_MODES:
        raise ConfigError(f"wandb.mode must be one of {list(WANDB_MODES)}, got {mode!r}")
    if cfg.get("logger", "none") not in LOGGERS:
        raise ConfigError(f"logger must be one of {list(LOGGERS)}, got {cfg.get('logger')!r}")
    _check_wandb(cfg.get("wandb"))
    require_positive_int(
        cfg.get("stop_after_chunks"), "stop_after_chunks", error=ConfigError, allow_none=True
    )
    p = _plan_random(cfg, env) if algo_name == "random" else _plan_learner(cfg, env)
    check_memory(env, p.learner, p.schedule, p.mesh, p.lcfg)
    return p


def _header(env: alem.MultiAgentEnv, p: Plan) -> str:
    s = p.schedule
    sizes = (
        f"num_envs={p.learner.num_envs} num_steps={p.learner.num_steps}"
        if p.lcfg is None
        else f"num_envs={p.lcfg.num_envs} num_steps={p.lcfg.num_steps} param_sets={p.learner.num_param_sets}"
    )
    sweep = "" if p.sweep is None else f" sweep={p.sweep.describe()}, each on every seed"
    return (
        f"alem.train: env={env.id} algo={p.learner.name if p.lcfg is None else p.lcfg.name} seeds={s.seeds}"
        f"{sweep} {sizes} updates={s.num_chunks * s.chunk_updates} in {s.num_chunks} chunks "
        f"({s.env_steps:,} env-steps per seed{'' if p.sweep is None else ' and configuration'}) "
        f"devices={1 if p.mesh is None else p.mesh.size} backend={jax.default_backend()}"
    )


# ---------------------------------------------------------------------------- stage 5: results
def _percent(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.1%}"


def _number(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.4g}"


def _results(env: alem.MultiAgentEnv, p: Plan, r: TrainResult, resuming: bool) -> dict[str, Any]:
    """The learner's part of ``results.json``: run size and timing, and per learner kind either
    the episode statistics (random) or the final evaluation (PPO)."""
    s = p.schedule
    ran = (s.num_chunks - r.start_chunk) * s.env_steps_per_chunk * s.rows
    out: dict[str, Any] = {
        "agents": list(env.agents),
        "seeds": s.seeds,
        "num_seeds": s.num_seeds,
        "num_chunks": s.num_chunks,
        "env_steps_per_seed": s.env_steps,
        "env_steps": s.env_steps * s.rows,
        "wall_time_s": r.wall_s,
        "first_chunk_s": r.first_chunk_s,
        "compile_s": r.compile_s,
        "steps_per_s": ran / max(r.wall_s, 1e-9),
        "metrics_file": METRICS_FILE,
    }
    if p.lcfg is None:
        episodes = r.totals["episodes"]
        ret = mean_return(r.totals["return_sum"], episodes)  # [S, N]
        with np.errstate(invalid="ignore", divide="ignore"):
            length = np.where(episodes > 0, r.totals["length_sum"] / np.maximum(episodes, 1), np.nan)
        finished = episodes > 0
        steady = r.wall_s - (r.first_chunk_s or 0.0)
        return {
            **out,
            "episode_return_mean": jsonable(ret[finished].mean(0) if finished.any() else ret[0]),
            "episode_return_per_seed": jsonable(ret),
            "episode_length_mean": jsonable(length[finished].mean() if finished.any() else np.nan),
            "episode_length_per_seed": jsonable(length),
            "episodes": int(episodes.sum()),
            "episodes_per_seed": jsonable(episodes),
            "illegal_actions": int(r.totals["illegal_actions"].sum()),
            "steps_per_s_after_first_chunk": (
                (s.num_chunks - 1) * s.env_steps_per_chunk * s.rows / steady
                if s.num_chunks > 1 and steady > 0
                else None
            ),
        }
    evaluation = final_evaluation(env, p.learner, r.state, r.keys, p.eval_steps)
    trained = np.asarray(evaluation["trained_return_per_seed"], dtype=float)
    random_ret = np.asarray(evaluation["random_return_per_seed"], dtype=float)
    per_agent = lambda x: np.round(np.nanmean(x, 0), 3).tolist()
    print(
        f"final evaluation ({evaluation['episodes_per_seed']} episodes per seed, mean return per agent):",
        flush=True,
    )
    sweep = {}
    if p.sweep is None:
        print(f"  trained {p.lcfg.name:<10} {np.nanmean(trained):.4g}  per agent {per_agent(trained)}", flush=True)
    else:  # rows are (configuration, seed): each configuration is its own run, never averaged with another
        configurations = p.sweep.results(trained, s.num_seeds)
        rows = trained.reshape(p.sweep.size, s.num_seeds, -1)
        for k, c in enumerate(configurations):
            mean = c["trained_return_mean"]
            print(
                f"  trained {p.lcfg.name} {p.sweep.label(k):<28} {'n/a' if mean is None else f'{mean:.4g}'}  "
                f"per agent {per_agent(rows[k])}",
                flush=True,
            )
        sweep = {"rows": s.rows, "sweep": {"knobs": p.sweep.knobs, "configurations": configurations}}
    print(f"  random policy      {np.nanmean(random_ret):.4g}  per agent {per_agent(random_ret)}", flush=True)
    # the env's episode outcomes (SMAX: won_rate, ...) and episode metrics (pathfinding: ISR, SoC, ...)
    for name in (*(f"{o}_rate" for o in env.outcomes), *env.episode_metrics):
        show = _percent if name.endswith("_rate") else _number
        trained_rate, random_rate = (evaluation[f"{who}_{name}_mean"] for who in ("trained", "random"))
        if p.sweep is not None:  # one value per configuration, over its seeds
            rates = np.asarray(evaluation[f"trained_{name}_per_seed"], float).reshape(p.sweep.size, -1)
            trained_rate = ", ".join(
                f"{p.sweep.label(k)}: {show(float(np.nanmean(r)) if np.isfinite(r).any() else None)}"
                for k, r in enumerate(rates)
            )
        else:
            trained_rate = show(trained_rate)
        print(f"  {name}: trained {trained_rate}, random {show(random_rate)}", flush=True)
    return {
        **out,
        "learner": dataclasses.asdict(p.lcfg),
        "roles": p.learner.param_sets.tolist(),  # the file key predates the rename (runs read it)
        "updates": s.num_chunks * s.chunk_updates,
        "resumed_from_chunk": r.start_chunk if resuming else None,
        **sweep,
        **evaluation,
    }


# ---------------------------------------------------------------------------- driver
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
    # 1. Config; the processes of a multi-process run join (before JAX touches a device).
    dc = distributed.check(cfg.get("distributed"))
    resuming = bool(cfg.get("resume"))
    if resuming:
        cfg, output_dir = _resumed_config(cfg, overrides or [])
    else:
        output_dir = Path(output_dir).resolve()
        if dc.multi:  # every process checks before any claims (claiming comes after joining)
            check_claim(output_dir, cli="alem.train")
    procs = distributed.connect(dc)
    if resuming and procs.writer:  # one process at a time continues a run (refused: nothing written)
        hold(output_dir)
    # 2. Plan: everything checked, nothing written.
    env = make_env(cfg.env)
    p = plan(cfg, env)
    check_unread(cfg, overrides or [], p.lcfg)
    config = OmegaConf.to_container(cfg, resolve=True)
    config["output_dir"] = str(output_dir)
    config.pop("stop_after_chunks", None)
    config.pop("distributed", None)  # how this invocation ran, not what the run is (results.json: processes)
    config["resume"] = None
    path = output_dir / "results.json"
    if not procs.writer:
        return _follow(cfg, p, output_dir, procs, resuming, path, config)
    # 3. Run directory.
    if resuming:
        # Finished means results.json was written for this very config. config.yaml alone says
        # nothing: an extension rewrites it before training, so a killed extension has the new
        # config.yaml next to the shorter run's results.json, and must go on.
        if _results_config(path) == config:
            print(f"alem.train: {output_dir} is already finished; nothing to do", flush=True)
            return path
        check_chunking(output_dir / METRICS_FILE, p.schedule.chunk_updates)  # before any write
    else:
        output_dir = claim(output_dir, cli="alem.train")
    wandb_mode = cfg.wandb.mode if cfg.get("logger", "none") == "wandb" else "disabled"
    # A wandb that cannot start fails here, before any write; the claim is given back.
    try:
        wandb = WandbSink(wandb_mode, plain(cfg.wandb), config, output_dir, list(env.agents))
    except BaseException:
        if not resuming:
            release(output_dir)
        raise
    write_atomic(output_dir / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(config)))
    # 4. Training.
    sinks = [
        ConsoleProgress(_header(env, p)),
        JsonlMetrics(output_dir / METRICS_FILE, p.schedule.chunk_updates),
        wandb,
    ]
    try:
        result = _train(p, cfg, output_dir, resuming, procs, sinks)
        # 5. Results.
        results = {
            "env_id": env.id,
            "algo": cfg.algo.name,
            **_results(env, p, result, resuming),
            "jax_version": jax.__version__,
            "jax_backend": jax.default_backend(),
            "jax_devices": [str(d) for d in jax.devices()],
            "processes": procs.count,
            "python_version": platform.python_version(),
            "alem_version": alem.__version__,
            "output_dir": str(output_dir),
            "config": config,
        }
        write_atomic(path, json.dumps(results, indent=2) + "\n")
    except BaseException:
        for sink in sinks:
            sink.close(exit_code=1)
        raise
    for sink in sinks:
        sink.close(summary={k: v for k, v in results.items() if k not in ("config", "jax_devices")})
    return path


def _train(
    p: Plan, cfg: DictConfig, output_dir: Path, resuming: bool, procs: distributed.Processes, sinks: list = ()
) -> TrainResult:
    """The plan's training on this process (the one loop; checkpoints in ``output_dir``)."""
    with distributed.peers_watched(procs, output_dir):
        return train(
            p.learner,
            p.schedule,
            sinks,
            mesh=p.mesh,
            checkpoint_dir=output_dir,
            resume=resuming,
            stop_after_chunks=cfg.get("stop_after_chunks"),
            hyper=None if p.sweep is None else p.sweep.hyper(p.schedule.num_seeds),
        )


def _follow(
    cfg: DictConfig,
    p: Plan,
    output_dir: Path,
    procs: distributed.Processes,
    resuming: bool,
    path: Path,
    config: dict,
) -> Path:
    """A process other than 0 of a multi-process run: it trains its share and writes its
    checkpoint shards; process 0 writes everything else."""
    if resuming and _results_config(path) == config:
        return path  # process 0 finds the run finished too, and stops
    print(f"alem.train: process {procs.index} of {procs.count}; process 0 writes {output_dir}", flush=True)
    _train(p, cfg, output_dir, resuming, procs)  # process 0 evaluates the (replicated) parameters
    return path


def _results_config(path: Path) -> Any:
    """The ``config`` that a readable ``results.json`` was written for (None if there is none)."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return results.get("config") if isinstance(results, dict) else None


def _resumed_config(cfg: DictConfig, overrides: list[str]) -> tuple[DictConfig, Path]:
    """The saved config of the run in ``cfg.resume``, with the overrides a resume may apply.

    ``overrides`` are the command line's; each must leave the run as it was, extend
    ``algo.total_steps`` or change logging. The others are refused together, by name.
    """
    run_dir = Path(cfg.resume).resolve()
    old = read_run_config(run_dir, cli="alem.train", required=("algo.name", "env.id", "seed", "num_seeds"))
    if not isinstance(old.get("algo"), DictConfig):
        raise ConfigError(f"resume={run_dir}: its config.yaml is not an alem.train config")
    keys, refused = resume_keys(cfg, run_dir, overrides, ignore=("resume", "stop_after_chunks"))
    for key in keys:
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


def _main(cfg: DictConfig) -> None:
    dc = distributed.check(cfg.get("distributed"))
    if dc.multi and not cfg.get("output_dir") and not cfg.get("resume"):
        raise ConfigError(
            "a multi-process run needs output_dir=<folder> (the same on every process, on a filesystem "
            "they all see: each writes its checkpoint shards there)"
        )
    path = run(cfg, cfg.get("output_dir") or hydra_run_dir(), hydra_overrides())
    print(f"Results written to {path}", flush=True)


#: ``python -m alem.train``; see the module docstring and ``configs/config.yaml``.
main = hydra_app("alem.train", "config", _main)
