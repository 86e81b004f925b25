"""One plugin per reference implementation (``make_references(harness) -> list[Reference]``),
loaded by :func:`benchmarks.harness.references`; each imports its package lazily."""
