"""Training runs as data: find run directories, split them into configurations, group what is comparable.

What the analysis notebook (``notebooks/training_analysis.ipynb``) and a multirun's summary share.
A *configuration* is everything in a run's ``config.yaml`` that can change what is learned: the
env and its keywords, the learner and every option of it, the chunking; not the seeds, the output
folder, logging, devices or the final evaluation's length (:data:`NOT_CONFIGURATION`). One row of
a vmapped sweep (``sweep.*``) is a configuration of its own: the run's options with that row's
values. Runs are pooled by seed only within one configuration; :func:`group_by_configuration`
says which options separate the groups, so a plot can name them.

``python -m alem.training.runs <sweep dir>`` writes a multirun's summary (``summary.md`` and
``summary.json``, a row per job); a ``-m`` run writes it by itself when its last job ends
(:class:`MultirunSummary`, a Hydra callback in ``configs/config.yaml``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from alem.rundir import read_jsonl, write_atomic

__all__ = [
    "NOT_CONFIGURATION",
    "ConfigurationRows",
    "Group",
    "read_runs",
    "group_by_configuration",
    "write_multirun_summary",
    "MultirunSummary",
]

#: Top-level keys of a run's config.yaml that do not change what is learned.
NOT_CONFIGURATION = (
    "seed",
    "num_seeds",
    "output_dir",
    "resume",
    "stop_after_chunks",
    "logger",
    "wandb",
    "devices",
    "distributed",
    "eval",
    "sweep",  # the grid; each row's own values are put into algo.<knob>
)


@dataclasses.dataclass(frozen=True)
class ConfigurationRows:
    """One configuration's part of a run directory: the whole run, or one row of a vmapped sweep."""

    run_dir: Path
    sweep_row: int | None  # the sweep configuration's index (``config`` in metrics.jsonl), or None
    options: dict[str, Any]  # dotted option -> value: the configuration (see the module docstring)
    seeds: list[int]
    finished: bool  # results.json was written
    trained: list[float | None]  # per seed: the final evaluation's return (mean over agents)
    random: list[float | None]  # per seed: the random policy's on the same envs
    metrics: list[dict[str, Any]]  # this configuration's metrics.jsonl rows

    @property
    def env(self) -> Any:
        return self.options.get("env.id")

    @property
    def algo(self) -> Any:
        return self.options.get("algo.name")


@dataclasses.dataclass(frozen=True)
class Group:
    """Runs of one configuration, pooled by seed; ``label`` names it by env, learner and the
    options that separate it from the other groups."""

    options: dict[str, Any]
    members: list[ConfigurationRows]
    label: str

    @property
    def seeds(self) -> list[int]:
        return sorted({s for m in self.members for s in m.seeds})


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict) and node:
        out: dict[str, Any] = {}
        for k, v in node.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: node}


def _mean(x: Any) -> float | None:
    values = [float(v) for v in (x if isinstance(x, list) else [x]) if isinstance(v, int | float)]
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _configurations(run_dir: Path) -> list[ConfigurationRows]:
    config = _read_yaml(run_dir / "config.yaml")
    results = _read_json(run_dir / "results.json")
    if not config and isinstance(results.get("config"), dict):
        config = results["config"]
    base = _flatten({k: v for k, v in config.items() if k not in NOT_CONFIGURATION})
    rows = list(read_jsonl(run_dir / "metrics.jsonl", on_corrupt=lambda line, text: None))
    sweep = results.get("sweep") or {}
    knobs = list(sweep.get("knobs") or {})
    grid = sweep.get("configurations") or []
    if not grid:  # not a sweep, or one that has not finished: its rows still say their config
        ks = sorted({r["config"] for r in rows if isinstance(r.get("config"), int)})
        grid = [{} for _ in ks] if ks else []
    per_seed = lambda key: results.get(key) or []
    num_seeds = results.get("num_seeds") or config.get("num_seeds") or 1
    out = []
    for k, values in enumerate(grid or [None]):
        options = dict(base)
        if values is not None:
            options.update({f"algo.{name}": values[name] for name in knobs if name in values})
            if not values:  # an unfinished sweep: the row index is all that is known
                options["sweep.row"] = k
        mine = [r for r in rows if values is None or r.get("config") == k]
        span = slice(None) if values is None else slice(k * num_seeds, (k + 1) * num_seeds)
        seeds = results.get("seeds") or sorted({r["seed"] for r in mine if isinstance(r.get("seed"), int)})
        out.append(
            ConfigurationRows(
                run_dir=run_dir,
                sweep_row=None if values is None else k,
                options=options,
                seeds=list(seeds),
                finished=bool(results),
                trained=[_mean(x) for x in per_seed("trained_return_per_seed")[span]],
                random=[_mean(x) for x in per_seed("random_return_per_seed")[span]],
                metrics=mine,
            )
        )
    return out


def read_runs(roots: str | Path | Iterable[str | Path]) -> list[ConfigurationRows]:
    """Every configuration of every run directory under ``roots`` (searched recursively for
    ``metrics.jsonl``), in path order."""
    roots = [roots] if isinstance(roots, str | Path) else list(roots)
    run_dirs = sorted({p.parent for root in roots if str(root) for p in Path(root).glob("**/metrics.jsonl")})
    return [c for d in run_dirs for c in _configurations(d)]


def _key(options: dict[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, default=str)


def group_by_configuration(items: Sequence[ConfigurationRows]) -> tuple[list[Group], list[str]]:
    """Groups of identical configurations (in first-seen order) and the options whose values
    separate them (sorted; an option some configurations lack counts as differing)."""
    by_key: dict[str, list[ConfigurationRows]] = {}
    for item in items:
        by_key.setdefault(_key(item.options), []).append(item)
    options = [members[0].options for members in by_key.values()]
    groups = []
    for members, opts in zip(by_key.values(), options, strict=True):
        # A label names what separates a group from the others of its env and learner.
        kin = [
            o
            for o in options
            if (o.get("env.id"), o.get("algo.name")) == (opts.get("env.id"), opts.get("algo.name"))
        ]
        extra = " ".join(f"{n.removeprefix('algo.')}={opts.get(n, '<unset>')}" for n in _differing(kin))
        groups.append(Group(opts, members, f"{opts.get('algo.name')}{' ' + extra if extra else ''}"))
    return groups, _differing(options)


def _differing(options: Sequence[dict[str, Any]]) -> list[str]:
    names = sorted({k for o in options for k in o})
    return [n for n in names if len({_key({n: o.get(n, "<unset>")}) for o in options}) > 1]


def write_multirun_summary(sweep_dir: str | Path, jobs: Sequence[dict[str, Any]] = ()) -> Path:
    """``summary.md`` and ``summary.json`` in ``sweep_dir``: a row per job directory (or per job
    in ``jobs``: ``{"dir", "overrides", "status"}`` as Hydra reported them), with the options that
    separate the jobs, the seeds, the final returns and where each stands. Returns the ``.md``."""
    sweep_dir = Path(sweep_dir)
    known = {str(Path(j["dir"]).resolve()): j for j in jobs if j.get("dir")}
    dirs = sorted(
        (p for p in sweep_dir.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name),
    )
    configs = {d: _configurations(d) if (d / "config.yaml").is_file() else [] for d in dirs}
    _, separating = group_by_configuration([c for cs in configs.values() for c in cs])
    rows = []
    for d in dirs:
        job = known.get(str(d.resolve()), {})
        for c in configs[d] or [None]:
            finished = c is not None and c.finished
            status = "finished" if finished else ("stopped" if c is not None and c.metrics else "no run")
            if job.get("status") == "FAILED" and not finished:
                status = "failed"
            rows.append(
                {
                    "job": d.name + ("" if c is None or c.sweep_row is None else f"/config{c.sweep_row}"),
                    "overrides": list(job.get("overrides") or []),
                    "options": {} if c is None else {n: c.options.get(n) for n in separating},
                    "status": status,
                    "seeds": [] if c is None else c.seeds,
                    "trained": None if c is None else _mean(c.trained),
                    "random": None if c is None else _mean(c.random),
                    "chunks": 0 if c is None else len({r.get("chunk") for r in c.metrics}),
                }
            )
    write_atomic(
        sweep_dir / "summary.json", json.dumps({"separating": separating, "jobs": rows}, indent=2) + "\n"
    )
    fmt = lambda x: "" if x is None else f"{x:.4g}"
    lines = [
        f"# Multirun summary: {len(rows)} job{'s' if len(rows) != 1 else ''}",
        "",
        f"Options that separate the jobs: {', '.join(separating) or 'none'}. Returns are the final "
        "evaluation's, mean over seeds and agents.",
        "",
        "| job | "
        + " | ".join(separating)
        + (" | " if separating else "")
        + "status | seeds | chunks | trained | random |",
        "|---|" + "---|" * (len(separating) + 5),
    ]
    for r in rows:
        cells = [r["job"], *(str(r["options"].get(n, "")) for n in separating)]
        cells += [r["status"], str(len(r["seeds"])), str(r["chunks"]), fmt(r["trained"]), fmt(r["random"])]
        lines.append("| " + " | ".join(cells) + " |")
    path = sweep_dir / "summary.md"
    write_atomic(path, "\n".join(lines) + "\n")
    return path


try:
    from hydra.experimental.callback import Callback as _Callback
except ImportError:  # the env package alone: no Hydra, no multirun
    _Callback = object  # type: ignore[misc,assignment]


class MultirunSummary(_Callback):
    """Hydra callback (``configs/config.yaml``, ``hydra.callbacks``): after a multirun's last
    job, write its summary into the sweep directory and print where it is."""

    def __init__(self) -> None:
        self.jobs: list[dict[str, Any]] = []

    def on_job_end(self, config: Any, job_return: Any = None, **kwargs: Any) -> None:
        if job_return is None:
            return
        status = getattr(getattr(job_return, "status", None), "name", None)
        self.jobs.append(
            {"dir": job_return.working_dir, "overrides": list(job_return.overrides or []), "status": status}
        )

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if sweep_dir.is_dir():
            path = write_multirun_summary(sweep_dir, self.jobs)
            print(f"Multirun summary written to {path}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m alem.training.runs <sweep dir>``: (re)write a multirun's summary and print it."""
    from alem.cli import ArgumentParser

    ap = ArgumentParser(prog="python -m alem.training.runs", description=main.__doc__)
    ap.add_argument("sweep_dir", help="the folder a `python -m alem.train -m ...` wrote its jobs into")
    args = ap.parse_args(argv)
    if not Path(args.sweep_dir).is_dir():
        ap.error(f"{args.sweep_dir} is not a folder")
    path = write_multirun_summary(args.sweep_dir)
    print(path.read_text(encoding="utf-8"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
