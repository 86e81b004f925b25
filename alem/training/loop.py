"""The one training loop: any learner with ``init``/``run``, seeds vmapped, compiled chunks, sinks.

A learner is anything with (the :class:`Trainable` protocol)

- ``init(key) -> state`` and
- ``run(state, num_updates) -> (state, metrics)``, pure and jittable, whose ``metrics`` have a
  leading ``[num_updates]`` axis and hold at least the episode sums of
  :func:`alem.metrics.episode_totals` (``episodes``, ``return_sum``, ``length_sum``,
  ``illegal_actions``, and an ``outcome_<name>`` count per outcome the env declares); other
  float entries (losses) are averaged into the metrics rows
  (NaN entries, for updates where a metric is undefined, are left out of the average),

plus a ``name``. The PPO core (:class:`alem.algos.Learner`) and the random baseline
(:class:`alem.algos.random.RandomLearner`) are two such learners. :func:`train` runs one
for ``schedule.num_chunks`` chunks of ``schedule.chunk_updates`` updates, every seed in one
compiled program, and hands a :class:`ChunkStats` to each sink after every chunk
(:mod:`alem.training.sinks`: console progress, ``metrics.jsonl``, wandb).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from alem.errors import CheckpointError, Terminated, TrainingDiverged, TrainingInterrupted
from alem.metrics import EPISODE_PREFIXES, outcome_rates

__all__ = [
    "Trainable",
    "Schedule",
    "ChunkStats",
    "TrainResult",
    "train",
    "seed_keys",
    "mean_return",
    "shard_state",
    "state_shardings",
]

#: The episode sums every learner's metrics hold (summed over a chunk's updates).
EPISODE_SUMS = ("episodes", "return_sum", "length_sum", "illegal_actions")
#: Metrics that are finite in every update of a healthy run; a NaN or inf in one stops training.
DIVERGENCE_WATCH = ("policy_loss", "value_loss", "loss")


class Trainable(Protocol):
    """What :func:`train` runs (the module docstring says what each method returns); the PPO
    core's :class:`alem.algos.Learner` and the random baseline are two."""

    name: str

    def init(self, key: jax.Array) -> Any: ...

    def run(self, state: Any, num_updates: int) -> tuple[Any, dict[str, jax.Array]]: ...


@dataclasses.dataclass(frozen=True)
class Schedule:
    """How a run is cut: seeds ``seed .. seed + num_seeds - 1``, ``num_chunks`` compiled chunks of
    ``chunk_updates`` updates, each update ``steps_per_update`` env steps per seed.

    ``configs`` > 1: a vmapped sweep of that many learner configurations, every one on the same
    seeds; the compiled program's leading axis then has a *row* per (configuration, seed),
    configuration-major (row ``k * num_seeds + i`` is configuration ``k``, seed ``seed + i``).
    """

    seed: int
    num_seeds: int
    chunk_updates: int
    num_chunks: int
    steps_per_update: int
    configs: int = 1

    @property
    def seeds(self) -> list[int]:
        return list(range(self.seed, self.seed + self.num_seeds))

    @property
    def rows(self) -> int:
        """Rows of the vmapped program: configurations x seeds."""
        return self.configs * self.num_seeds

    def row_labels(self, row: int) -> dict[str, int]:
        """``{"seed": s}``, and ``"config": k`` in a sweep: what a metrics row names its row by."""
        seed = self.seed + row % self.num_seeds
        return {"config": row // self.num_seeds, "seed": seed} if self.configs > 1 else {"seed": seed}

    def row_name(self, row: int) -> str:
        return "/".join(f"{k}{v}" for k, v in self.row_labels(row).items())

    @property
    def env_steps_per_chunk(self) -> int:
        return self.chunk_updates * self.steps_per_update

    @property
    def env_steps(self) -> int:
        """Env steps per seed of the whole run."""
        return self.num_chunks * self.env_steps_per_chunk


@dataclasses.dataclass(frozen=True)
class ChunkStats:
    """What the sinks get after a chunk; arrays have the row axis first (``[S]``, ``[S, N]``: a row
    per seed, or per configuration and seed in a sweep, :class:`Schedule`)."""

    chunk: int  # 0-based index of the chunk just done
    schedule: Schedule
    seconds: float  # wall time of this chunk (compiling is not in it: see compile_s)
    first: bool  # the first chunk this process ran
    episodes: np.ndarray  # [S] episodes that ended in the chunk
    episode_return: np.ndarray  # [S, N] mean return per agent of those episodes (NaN: none ended)
    episode_length: np.ndarray  # [S] mean length (NaN: none ended)
    illegal_actions: np.ndarray  # [S] agent-steps flagged illegal
    losses: dict[str, np.ndarray]  # name -> [S], means over the chunk's updates
    #: "<outcome>_rate" -> [S], share of the chunk's finished episodes that ended so (NaN: none
    #: ended), for each of the env's ``outcomes`` (SMAX: ``won_rate``, ...), and "<metric>" -> [S],
    #: the mean over those episodes of each of its ``episode_metrics`` (pathfinding's ISR, SoC,
    #: ...); empty for most envs.
    outcomes: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    compile_s: float = 0.0  # seconds compiling the chunk before it ran (the first chunk only)

    @property
    def update(self) -> int:
        """Updates done after this chunk."""
        return (self.chunk + 1) * self.schedule.chunk_updates

    @property
    def env_steps(self) -> int:
        """Env steps per seed done after this chunk."""
        return (self.chunk + 1) * self.schedule.env_steps_per_chunk

    @property
    def steps_per_s(self) -> float:
        """Env steps per second over all seeds in this chunk."""
        return self.schedule.env_steps_per_chunk * self.schedule.rows / max(self.seconds, 1e-9)

    @property
    def seed_return(self) -> np.ndarray:
        """[S] mean over agents of :attr:`episode_return` (NaN for a seed with no episode)."""
        ret = np.where(self.episodes[:, None] > 0, self.episode_return, 0.0).mean(axis=1)
        return np.where(self.episodes > 0, ret, np.nan)


@dataclasses.dataclass
class TrainResult:
    state: Any  # the seed-vmapped learner state after the last chunk
    keys: jax.Array  # [S] the seeds' keys
    start_chunk: int  # chunks restored from a checkpoint (0 for a fresh run)
    totals: dict[str, np.ndarray]  # EPISODE_SUMS and outcome counts summed over the chunks this process ran
    wall_s: float
    first_chunk_s: float | None  # from the start of compiling to the end of the first chunk
    compile_s: float = 0.0  # compiling the chunk (in first_chunk_s and wall_s)


def seed_keys(seed: int, num_seeds: int) -> jax.Array:
    """PRNG keys for seeds ``seed .. seed + num_seeds - 1`` (``[num_seeds]``).

    Seed ``s`` gets ``jax.random.key(s)`` whatever ``num_seeds`` is, so one seed
    of a multi-seed run can be re-run alone.
    """
    return jax.vmap(jax.random.key)(jnp.arange(seed, seed + num_seeds, dtype=jnp.uint32))


def mean_return(return_sum: np.ndarray, episodes: np.ndarray) -> np.ndarray:
    """Mean episode return per agent from sums: ``[..., N]`` over ``[...]`` episodes, NaN where none ended."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(episodes[..., None] > 0, return_sum / np.maximum(episodes, 1)[..., None], np.nan)


def state_shardings(state: Any, mesh: Any) -> Any:
    """Where each leaf of a seed-vmapped learner state (arrays or :func:`jax.eval_shape`'s
    shapes) lives on ``mesh``: the fields its class lists in ``batched_fields`` split over the
    mesh axis ``data`` along the env axis, the rest replicated.

    XLA (GSPMD) then partitions the whole update; the losses are means over the env
    batch, so gradients are averaged across devices by the compiler's all-reduce.
    """
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    split, whole = NamedSharding(mesh, P(None, "data")), NamedSharding(mesh, P())
    batched = set(type(state).batched_fields)
    fields = {
        f: jax.tree.map(
            lambda x, f=f: split if f in batched and len(x.shape) >= 2 else whole, getattr(state, f)
        )
        for f in (field.name for field in dataclasses.fields(state))
    }
    return state.replace(**fields)


def shard_state(state: Any, mesh: Any) -> Any:
    """Place a seed-vmapped learner state of this process on ``mesh`` (:func:`state_shardings`)."""
    return jax.device_put(state, state_shardings(state, mesh))


def _chunk_stats(chunk: int, schedule: Schedule, seconds: float, first: bool, m: dict) -> ChunkStats:
    episodes = np.asarray(m["episodes"]).sum(1)  # m: [S, chunk_updates, ...]
    length = np.where(episodes > 0, np.asarray(m["length_sum"]).sum(1) / np.maximum(episodes, 1), np.nan)
    with warnings.catch_warnings():  # a metric may be NaN in updates where it is undefined
        warnings.simplefilter("ignore", RuntimeWarning)
        losses = {
            k: np.nanmean(np.asarray(v, np.float64).reshape(schedule.rows, -1), axis=1)
            for k, v in m.items()
            if k not in EPISODE_SUMS
            and not k.startswith(EPISODE_PREFIXES)  # episode metric sums are not losses
            and np.issubdtype(np.asarray(v).dtype, np.floating)
        }
    counts = {k: np.asarray(v).sum(1) for k, v in m.items() if k.startswith(EPISODE_PREFIXES)}
    return ChunkStats(
        chunk=chunk,
        schedule=schedule,
        seconds=seconds,
        first=first,
        episodes=episodes,
        episode_return=mean_return(np.asarray(m["return_sum"]).sum(1), episodes),
        episode_length=length,
        illegal_actions=np.asarray(m["illegal_actions"]).reshape(schedule.rows, -1).sum(1),
        losses=losses,
        outcomes=outcome_rates(counts, episodes),
    )


def _check_finite(m: dict, chunk: int, schedule: Schedule, checkpoint_dir: str | Path | None) -> None:
    """Stop a run whose loss is no longer finite, before its sinks or a checkpoint see the chunk
    (a NaN policy still acts, deterministically, and can even score: it must not pass as trained)."""
    for key in DIVERGENCE_WATCH:
        if key not in m:
            continue
        bad = ~np.isfinite(np.asarray(m[key], np.float64))  # [S, chunk_updates]
        if not bad.any():
            continue
        rows = np.flatnonzero(bad.any(axis=1))
        seeds = [schedule.row_name(int(r)) if schedule.configs > 1 else schedule.seed + int(r) for r in rows]
        update = chunk * schedule.chunk_updates + int(np.flatnonzero(bad.any(axis=0))[0]) + 1
        kept = (
            f"; the checkpoint after chunk {chunk} (the one before) is kept"
            if checkpoint_dir is not None and chunk > 0
            else ""
        )
        raise TrainingDiverged(
            f"training diverged: {key} is not finite from update {update} (chunk {chunk + 1}/"
            f"{schedule.num_chunks}) in seed(s) {seeds}; nothing of that chunk was saved{kept}. "
            "A smaller algo.lr or algo.max_grad_norm usually helps; if it does not, please report it"
        )


def train(
    learner: Trainable,
    schedule: Schedule,
    sinks: Sequence[Any] = (),
    *,
    mesh: Any = None,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    stop_after_chunks: int | None = None,
    hyper: dict[str, Any] | None = None,
) -> TrainResult:
    """Run ``learner`` as ``schedule`` says; every sink gets ``start(first_chunk)``, then
    ``chunk(ChunkStats)`` after each chunk.

    With ``checkpoint_dir`` (and a learner whose ``checkpointed`` is not False) the state is
    saved after every chunk; ``resume`` continues from the newest readable checkpoint there.
    ``stop_after_chunks`` stops (:class:`TrainingInterrupted`) after that many chunks, as a
    kill would, for testing resumes. In a multi-process run a SIGTERM to any process stops every
    process after the same chunk (:class:`~alem.errors.Terminated`). A loss that is no longer finite (:data:`DIVERGENCE_WATCH`)
    stops the run with :class:`TrainingDiverged` before that chunk reaches a sink or a checkpoint.
    ``hyper``: a vmapped sweep's hyperparameters, ``name -> [schedule.rows]`` values (one per
    row), handed to ``learner.init(key, hyper=...)`` (the PPO core's ``algo.sweep``).
    """
    from alem import checkpoint

    checkpointed = checkpoint_dir is not None and getattr(learner, "checkpointed", True)
    if checkpointed:
        # orbax (and tensorstore, a C extension) load here, before the first chunk: a Ctrl-C that
        # lands inside a C extension's import surfaces as an ImportError, not as an interrupt.
        import orbax.checkpoint  # noqa: F401
    # 1. Seeds and the compiled programs: init and one chunk, vmapped over seeds.
    # With a mesh, the state is made where it lives (out_shardings), never on one device first:
    # across processes (jax.distributed) no process could hold it, and each makes only its part.
    keys = jnp.tile(seed_keys(schedule.seed, schedule.num_seeds), schedule.configs)  # [rows]
    if hyper:  # a row's swept hyperparameters go into its state (learner.init(key, hyper=...))
        rows = {k: jnp.asarray(v, jnp.float32) for k, v in hyper.items()}
        vmapped_init = lambda k: jax.vmap(lambda kk, h: learner.init(kk, hyper=h))(k, rows)
    else:
        vmapped_init = jax.vmap(learner.init)
    chunk = jax.vmap(lambda st: learner.run(st, schedule.chunk_updates))
    if mesh is None:
        init, chunk_fn = jax.jit(vmapped_init), jax.jit(chunk)
    else:
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        where = state_shardings(jax.eval_shape(vmapped_init, keys), mesh)
        # The keys go in as host data (the same on every process), the typed keys made inside.
        init = jax.jit(lambda raw: vmapped_init(jax.random.wrap_key_data(raw)), out_shardings=where)
        # metrics replicated: every process reads them whole
        chunk_fn = jax.jit(chunk, in_shardings=(where,), out_shardings=(where, NamedSharding(mesh, P())))

    # 2. A fresh state, or the newest checkpoint's (restored where the fresh one lives).
    state = init(keys if mesh is None else np.asarray(jax.random.key_data(keys)))
    start = 0
    if resume and checkpointed:
        start, state = restore_latest(Path(checkpoint_dir), state)
    for sink in sinks:
        sink.start(start)

    # 3. The chunks: run, bring the metrics to the host (small arrays), hand them to the sinks.
    # The chunk is compiled ahead, timed on its own: a first chunk's rate that included
    # compiling made the console's ETA minutes too long.
    totals = {k: 0 for k in EPISODE_SUMS}
    t_start = time.perf_counter()
    chunk_fn = chunk_fn.lower(state).compile()
    compile_s = time.perf_counter() - t_start
    first_chunk_s = None
    for i in range(start, schedule.num_chunks):
        t0 = time.perf_counter()
        state, m = chunk_fn(state)
        m = jax.device_get(m)
        if first_chunk_s is None:
            first_chunk_s = time.perf_counter() - t_start
        _check_finite(m, i, schedule, checkpoint_dir if checkpointed else None)
        stats = _chunk_stats(i, schedule, time.perf_counter() - t0, i == start, m)
        if i == start:
            stats = dataclasses.replace(stats, compile_s=compile_s)
        for k in (*EPISODE_SUMS, *(k for k in m if k.startswith(EPISODE_PREFIXES))):
            totals[k] = totals.get(k, 0) + np.asarray(m[k]).sum(1)
        for sink in sinks:
            sink.chunk(stats)
        if checkpointed:
            try:
                checkpoint.save(checkpoint_dir, i + 1, state)
            except CheckpointError as e:
                kept = f"the checkpoint of chunk {i} is kept" if i > 0 else "there is no checkpoint yet"
                raise CheckpointError(
                    f"{e}; the run stops here ({kept}; a resume recomputes what follows it): continue "
                    f"with `python -m alem.train resume={checkpoint_dir}` once the directory can be written"
                ) from None
        if _terminated(i + 1) and i + 1 < schedule.num_chunks:
            raise Terminated(
                f"stopped after chunk {i + 1}/{schedule.num_chunks} on SIGTERM (every process of the run "
                f"stops after this chunk{', its checkpoint saved' if checkpointed else ''}); continue "
                f"with resume={checkpoint_dir}"
            )
        if stop_after_chunks is not None and i + 1 >= stop_after_chunks and i + 1 < schedule.num_chunks:
            raise TrainingInterrupted(
                f"stopped after chunk {i + 1}/{schedule.num_chunks} (stop_after_chunks={stop_after_chunks}); "
                f"continue with resume={checkpoint_dir}"
            )

    # 4. Wait for the last chunk; the state stays on the devices for the caller's evaluation.
    jax.block_until_ready(state)
    return TrainResult(
        state=state,
        keys=keys,
        start_chunk=start,
        totals={k: np.asarray(v) for k, v in totals.items()},
        wall_s=time.perf_counter() - t_start,
        first_chunk_s=first_chunk_s,
        compile_s=compile_s,
    )


def _terminated(chunks_done: int) -> bool:
    """Whether a multi-process run stops after this chunk because one of its processes got a
    SIGTERM. JAX's distributed runtime catches the signal and agrees on one chunk with every
    process (its preemption sync point), so all stop after the same chunk; a single process has
    no such handler and dies of the signal at once, as any program does."""
    if jax.process_count() == 1:
        return False
    from jax.experimental import multihost_utils

    try:
        return multihost_utils.reached_preemption_sync_point(chunks_done)
    except RuntimeError:  # the preemption service is switched off (jax_enable_preemption_service)
        return False


def restore_latest(run_dir: Path, template: Any) -> tuple[int, Any]:
    """``(chunks done, state)`` from the newest readable checkpoint; falls back to older kept ones.

    A run killed before its first checkpoint was complete starts over (its rows are recomputed).
    """
    from alem import checkpoint

    found = checkpoint.available(run_dir)
    if not found:
        print(f"alem.train: {run_dir} has no complete checkpoint yet; starting it over", flush=True)
        return 0, template
    errors = []
    for chunk, path in found:
        try:
            state = checkpoint.restore(path, template)
        except CheckpointError as e:
            errors.append(str(e))
            print(f"alem.train: warning: {e}; trying the previous checkpoint", flush=True)
            continue
        return chunk, state
    raise CheckpointError(
        f"resume={run_dir}: no checkpoint could be restored; tried {len(found)}: " + " | ".join(errors)
    )
