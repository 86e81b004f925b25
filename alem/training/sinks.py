"""Where a training run's per-chunk statistics go: console, ``metrics.jsonl``, Weights & Biases.

A sink has ``start(first_chunk)`` (called once, before the first chunk this process runs;
``first_chunk > 0`` on a resume), ``chunk(stats)`` (after every chunk, with a
:class:`~alem.training.loop.ChunkStats`) and ``close(summary, exit_code)``. Add your own
by writing those three methods; :func:`alem.training.train` takes any list of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from alem.errors import ConfigError
from alem.extras import require
from alem.json_values import jsonable
from alem.rundir import JsonlWriter, dumps_line, read_jsonl, write_atomic
from alem.training.loop import ChunkStats

__all__ = ["ConsoleProgress", "JsonlMetrics", "WandbSink", "METRICS_FILE", "check_chunking", "format_rate"]

METRICS_FILE = "metrics.jsonl"


def format_rate(x: float) -> str:
    """``1234567`` -> ``"1.23M"``."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ConsoleProgress:
    """One header line, then one line per chunk::

    [chunk 2/10] ####----------------  20% | env-steps 4,096/20,480 per seed | 1.2M env-steps/s | ETA 0:00:03 | episodes 512 | return -1.7
    """

    def __init__(self, header: str, width: int = 20):
        self.header = header
        self.width = width

    def start(self, first_chunk: int) -> None:
        resume = f" | resuming after chunk {first_chunk}" if first_chunk else ""
        print(self.header + resume, flush=True)

    def chunk(self, s: ChunkStats) -> None:
        n = s.schedule.num_chunks
        filled = self.width * (s.chunk + 1) // n
        bar = "#" * filled + "-" * (self.width - filled)
        ret = s.seed_return
        ret_txt = f"{np.nanmean(ret):.4g}" if np.isfinite(ret).any() else "n/a"
        won = s.outcomes.get("won_rate")
        if won is not None and np.isfinite(won).any():
            ret_txt += f" | won {np.nanmean(won):.0%}"
        print(
            f"[chunk {s.chunk + 1}/{n}] {bar} {100 * (s.chunk + 1) / n:3.0f}% | "
            f"env-steps {s.env_steps:,}/{s.schedule.env_steps:,} per seed | "
            f"{format_rate(s.steps_per_s)} env-steps/s{f' (compiled in {s.compile_s:.1f} s)' if s.first else ''} | "
            f"ETA {_eta((n - s.chunk - 1) * s.seconds)} | episodes {int(s.episodes.sum()):,} | return {ret_txt}",
            flush=True,
        )

    def close(self, summary: dict[str, Any] | None = None, exit_code: int = 0) -> None:
        pass


def check_chunking(path: str | Path, chunk_updates: int) -> None:
    """Refuse to continue the rows in ``path`` with chunks of ``chunk_updates`` updates when its
    chunks held another number (a run whose first total was shorter than one chunk cannot be
    extended). Reads only: a resume calls it before it writes anything."""
    path = Path(path)
    for r in read_jsonl(path, on_corrupt=lambda line, text: None):  # damaged rows: reported by start()
        if isinstance(r, dict) and "chunk" in r and r.get("update") != (r["chunk"] + 1) * chunk_updates:
            raise ConfigError(
                f"resume={path.parent}: the run's chunks held {r.get('update')} updates after "
                f"chunk {r['chunk'] + 1}, now they would hold {chunk_updates} each (its first "
                "total was shorter than one chunk); this run cannot be extended, start a new one"
            )


class JsonlMetrics:
    """``metrics.jsonl``: one flushed row per chunk and seed.

    On a resume the rows of chunks after the restored checkpoint are dropped first (they
    are recomputed), and a damaged row is reported and dropped.
    """

    def __init__(self, path: str | Path, chunk_updates: int, warn: Callable[[str], None] = print):
        self.path = Path(path)
        self.chunk_updates = chunk_updates
        self.warn = warn
        self._out: JsonlWriter | None = None

    def start(self, first_chunk: int) -> None:
        def report(line: int, text: str) -> None:
            self.warn(f"alem.train: warning: {self.path}: line {line} is damaged and was dropped ({text!r})")

        check_chunking(self.path, self.chunk_updates)
        rows = [r for r in read_jsonl(self.path, on_corrupt=report) if r.get("chunk", -1) < first_chunk]
        write_atomic(self.path, "".join(dumps_line(r) for r in rows))
        self._out = JsonlWriter(self.path)

    def chunk(self, s: ChunkStats) -> None:
        for i in range(s.schedule.rows):
            self._out.write(
                {
                    "chunk": s.chunk,
                    "update": s.update,
                    **s.schedule.row_labels(i),
                    "env_steps": s.env_steps,
                    "episodes": int(s.episodes[i]),
                    "episode_return": jsonable(s.seed_return[i]),
                    "episode_return_per_agent": jsonable(s.episode_return[i]),
                    "episode_length": jsonable(s.episode_length[i]),
                    "illegal_actions": int(s.illegal_actions[i]),
                    **{k: jsonable(v[i]) for k, v in s.outcomes.items()},
                    **{k: float(v[i]) for k, v in s.losses.items()},
                    "steps_per_s": s.steps_per_s,
                }
            )

    def close(self, summary: dict[str, Any] | None = None, exit_code: int = 0) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


class WandbSink:
    """Weights & Biases: ``wandb.init`` when built (so a wandb that cannot start fails before the
    run writes anything), one ``log`` per chunk, ``finish`` with the results' scalars.

    ``mode="disabled"`` does nothing and imports nothing.
    """

    def __init__(
        self, mode: str, settings: dict[str, Any], config: dict[str, Any], output_dir: Path, agents: list[str]
    ):
        self.run = None
        self.agents = agents
        if mode == "disabled":
            return
        require("wandb", "logger=wandb")
        import wandb

        try:
            self.run = wandb.init(
                mode=mode,
                project=settings.get("project"),
                entity=settings.get("entity"),
                group=settings.get("group"),
                name=settings.get("name"),
                tags=list(settings.get("tags") or []),
                config=config,
                dir=str(output_dir),
            )
        except Exception as e:  # wandb raises several types (UsageError, CommError, ...)
            raise ConfigError(
                f"wandb.init(mode={mode!r}) failed: {e}. Log in with `wandb login` or set WANDB_API_KEY, "
                "or use wandb.mode=offline / wandb.mode=disabled"
            ) from None

    def start(self, first_chunk: int) -> None:
        pass

    def chunk(self, s: ChunkStats) -> None:
        if self.run is None:
            return
        log: dict[str, Any] = {
            "env_steps": s.env_steps,
            "env_steps_per_s": s.steps_per_s,
            "episodes": int(s.episodes.sum()),
            "illegal_actions": int(s.illegal_actions.sum()),
        }
        if np.isfinite(s.episode_return).any():
            per_agent = np.nanmean(s.episode_return, axis=0)  # mean over the seeds with episodes
            log["episode_return/mean"] = float(np.mean(per_agent))
            log.update({f"episode_return/{a}": float(v) for a, v in zip(self.agents, per_agent, strict=True)})
            log["episode_length"] = float(np.nanmean(s.episode_length))
        for i, ret in enumerate(s.seed_return):  # vmapped seeds' (and swept configurations') own curves
            log[f"{s.schedule.row_name(i)}/episode_return"] = float(ret)
        for k, v in s.outcomes.items():
            if np.isfinite(v).any():
                log[k] = float(np.nanmean(v))
        for k, v in s.losses.items():
            log[k] = float(np.mean(v))
        self.run.log(log, step=s.env_steps)

    def close(self, summary: dict[str, Any] | None = None, exit_code: int = 0) -> None:
        if self.run is None:
            return
        if summary:
            self.run.summary.update({k: v for k, v in summary.items() if not isinstance(v, list | dict)})
        self.run.finish(exit_code=exit_code)
        self.run = None
