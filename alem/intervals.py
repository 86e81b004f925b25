"""Confidence intervals shared by the arena's tables and the benchmark scripts (no extra needed
beyond SciPy, which is imported only when an interval is computed)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ci95"]


def ci95(x: np.ndarray) -> float | None:
    """Half-width of the Student-t 95% confidence interval of the mean (None below 2 samples)."""
    if len(x) < 2:
        return None
    from scipy import stats

    return float(stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x)))
