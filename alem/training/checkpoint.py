"""Deprecated alias of :mod:`alem.checkpoint` (moved beside :mod:`alem.rundir`, which training,
the learners and the benchmarks all use); it goes in the release after 0.x, docs/changelog.md."""

import sys
import warnings

from alem import checkpoint as _checkpoint

warnings.warn(
    "alem.training.checkpoint moved to alem.checkpoint; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _checkpoint
