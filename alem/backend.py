"""The backend alem tunes a program for while tracing it: :func:`target_backend`.

Some choices are fastest on one backend and slow on another: on CPU a data-dependent loop or a
conditional costs next to nothing, on a GPU each iteration waits for its predicate on the host.
Code that chooses asks :func:`target_backend` at trace time: JAX's default backend, unless a
cost tool compiles for another one on this machine (:func:`compiling_for`, used by
``python -m benchmarks.hlo`` to count on CPU what alem would compile for a GPU).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import jax

__all__ = ["target_backend", "compiling_for", "BACKENDS"]

#: The backends a program can be tuned for.
BACKENDS = ("cpu", "gpu", "tpu")

_target: contextvars.ContextVar[str | None] = contextvars.ContextVar("alem_target_backend", default=None)


def target_backend() -> str:
    """``"cpu"``, ``"gpu"`` or ``"tpu"``: the backend the program being traced is tuned for."""
    chosen = _target.get()
    if chosen is not None:
        return chosen
    backend = jax.default_backend()
    return "gpu" if backend in ("cuda", "rocm") else backend


@contextlib.contextmanager
def compiling_for(backend: str) -> Iterator[None]:
    """Trace with ``backend``'s choices (auto-reset strategy, fusion boundaries) on any machine.

    Programs traced inside run correctly anywhere; they are only tuned for ``backend``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"compiling_for: backend must be one of {list(BACKENDS)}, got {backend!r}")
    token = _target.set(backend)
    try:
        yield
    finally:
        _target.reset(token)
