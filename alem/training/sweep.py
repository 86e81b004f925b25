"""Vmapped hyperparameter sweeps: ``python -m alem.train sweep.lr=[1e-3,3e-4] sweep.ent_coef=[0,0.01]``.

Every combination of the listed values (a grid, as Hydra's multirun makes) trains in one compiled
program beside the seed axis: the PPO core reads the swept knobs (``LearnerConfig.sweepable``:
learning rate, entropy coefficient, clip range, discount, GAE lambda) from each row's learner
state instead of baking them in, so K configurations x S seeds are K x S rows of one vmapped
program, compiled once (:class:`~alem.training.loop.Schedule`, ``configs``). Every configuration
runs on the same seeds (the same env draws where the policies agree). ``results.json`` has a
``sweep`` section with a row per configuration; ``metrics.jsonl`` rows carry ``config``.

Knobs that change the program (layer widths, batch sizes, the learner preset) are structural:
they are swept with Hydra's multirun (``-m``), one run per value.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from alem.errors import ConfigError, LearnerConfigError

__all__ = ["Sweep", "parse_sweep"]


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A checked sweep: the swept knobs' values, and the configurations (the grid), in row order."""

    knobs: dict[str, list[float]]
    configurations: list[dict[str, float]]

    @property
    def size(self) -> int:
        return len(self.configurations)

    def label(self, k: int) -> str:
        """Configuration ``k`` as the command line sets it: ``ent_coef=0.01 lr=0.0003``."""
        return " ".join(f"{name}={self.configurations[k][name]:g}" for name in self.knobs)

    def describe(self) -> str:
        """``6 configurations (ent_coef=[0, 0.01] x lr=[0.001, 0.0003, 0.0001])``."""
        grid = " x ".join(f"{k}=[{', '.join(f'{v:g}' for v in vs)}]" for k, vs in self.knobs.items())
        return f"{self.size} configuration{'s' if self.size != 1 else ''} ({grid})"

    def hyper(self, num_seeds: int) -> dict[str, np.ndarray]:
        """``knob -> [K * num_seeds]``: each row's value, configuration-major (the Schedule's rows)."""
        return {
            k: np.repeat(np.array([c[k] for c in self.configurations], np.float32), num_seeds)
            for k in self.knobs
        }

    def results(self, per_row: np.ndarray, num_seeds: int) -> list[dict[str, Any]]:
        """A row per configuration: its values, the mean trained return over its seeds and agents,
        and each seed's (``per_row``: ``[K * num_seeds, N]`` per-agent returns)."""
        per_row = np.asarray(per_row, float).reshape(self.size, num_seeds, -1)
        out = []
        for config, rows in zip(self.configurations, per_row, strict=True):
            seed_means = [None if not np.isfinite(r).any() else float(np.nanmean(r)) for r in rows]
            finite = [x for x in seed_means if x is not None]
            out.append(
                {
                    **config,
                    "trained_return_mean": float(np.mean(finite)) if finite else None,
                    "trained_return_per_seed": seed_means,
                }
            )
        return out


def parse_sweep(node: Any, lcfg: Any) -> Sweep | None:
    """``sweep.*`` checked against the learner configuration ``lcfg`` (None: no sweep). Each value
    is checked as ``algo.<knob>`` would be; every mistake is one line naming ``sweep.<knob>``."""
    given = {str(k): v for k, v in dict(node or {}).items() if v is not None}
    if not given:
        return None
    sweepable = getattr(type(lcfg), "sweepable", ())  # the PPO core's LearnerConfig names them
    if not sweepable:
        raise ConfigError(
            f"sweep.{next(iter(given))}: a vmapped sweep varies the PPO core's knobs; this learner "
            "has none to vary per row (sweep it with Hydra's multirun: python -m alem.train -m ...)"
        )
    knobs: dict[str, list[float]] = {}
    for name, values in given.items():
        if name not in sweepable:
            raise ConfigError(
                f"sweep.{name}: a vmapped sweep varies {list(sweepable)} in one compiled program; {name} "
                f"is structural (it changes the program): sweep it with Hydra's multirun, "
                f"python -m alem.train -m algo.{name}=<a>,<b>"
            )
        seq = list(values) if isinstance(values, list | tuple) or hasattr(values, "__iter__") else None
        if isinstance(values, str) or seq is None or not seq:
            raise ConfigError(
                f"sweep.{name} must be a non-empty list of numbers, e.g. sweep.{name}=[0.1,0.2], got {values!r}"
            )
        floats = []
        for v in seq:
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ConfigError(f"sweep.{name} must list numbers, got {v!r} in {seq!r}")
            try:
                dataclasses.replace(lcfg, **{name: float(v)})
            except LearnerConfigError as e:
                raise ConfigError(f"sweep.{name}={seq!r}: {e}") from None
            floats.append(float(v))
        if len(set(floats)) != len(floats):
            raise ConfigError(f"sweep.{name} lists a value twice: {seq!r}")
        knobs[name] = floats
    names = sorted(knobs)
    configurations = [
        dict(zip(names, combo, strict=True)) for combo in itertools.product(*(knobs[k] for k in names))
    ]
    return Sweep({k: knobs[k] for k in names}, configurations)
