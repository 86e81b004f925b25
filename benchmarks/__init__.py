"""alem's benchmarks: speed against the reference implementations, and reference results.

Run them from the repository root as modules, e.g. ``python -m benchmarks.run_all --quick``.
:mod:`benchmarks.harness` is what they share (alem's timed rollout, the reference registry, the
timer, the machine record); :mod:`benchmarks.references` holds one plugin per reference
implementation; :mod:`benchmarks.jobs` declares the comparisons of ``run_all``. See
``benchmarks/README.md`` for the measured tables.
"""
