"""Every exception alem raises, and the helpers that word its messages.

Each error names what was wrong and how to fix it. They all derive from :class:`AlemError`,
and those raised for a bad value also from :class:`ValueError`, so ``except ValueError``
works as users expect. Import them from here.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Iterable
from typing import Any

__all__ = [
    "AlemError",
    "UnknownEnvError",
    "EnvArgumentError",
    "DependencyNotInstalled",
    "ActionError",
    "MapFormatError",
    "ConfigError",
    "LearnerConfigError",
    "CheckpointError",
    "RunDirError",
    "CorruptFileError",
    "TrainingInterrupted",
    "Terminated",
    "PeerLost",
    "EvaluationStopped",
    "TextBackendError",
    "BackendUnavailable",
    "BackendConfigError",
    "RequestFailed",
    "CacheMiss",
    "EndpointFailing",
    "SessionError",
    "closest",
    "did_you_mean",
    "require_positive_int",
]


class AlemError(Exception):
    """Base class of alem's own errors."""


# ------------------------------------------------------------------------------- envs


class UnknownEnvError(AlemError, ValueError):
    """``alem.make`` was given an id that is not registered."""


class EnvArgumentError(AlemError, ValueError):
    """An env constructor was given a keyword it does not take, or a bad value."""


class DependencyNotInstalled(AlemError, ImportError):
    """An env needs an optional dependency that is not installed."""


class ActionError(AlemError, ValueError):
    """Actions passed to ``step`` have the wrong shape or dtype (caught at trace time)."""


class MapFormatError(AlemError, ValueError):
    """A map or scenario text is malformed (the message names the source and line)."""


# ----------------------------------------------------------------- training and CLIs


class ConfigError(AlemError, ValueError):
    """A command-line or config value is missing, malformed or inconsistent (``alem.train``,
    ``alem.evaluate``); raised before anything is written."""


class LearnerConfigError(AlemError, ValueError):
    """A learner configuration value is missing, inconsistent or unsupported by the env."""


class CheckpointError(AlemError):
    """A checkpoint is missing, incomplete or does not match the run's configuration."""


class RunDirError(AlemError, ValueError):
    """A run directory cannot be used: it holds another run, or is not the run it claims to be."""


class CorruptFileError(AlemError, ValueError):
    """A run file is damaged beyond a torn last line (a corrupt line in the middle, bad JSON)."""


class TrainingInterrupted(AlemError):
    """The run stopped early on request (``stop_after_chunks``); ``resume=<run dir>`` continues it."""


class Terminated(TrainingInterrupted):
    """A multi-process run stopped on a SIGTERM (``scancel``, a preemption): every process stops
    after the same chunk, its checkpoint saved; the CLI exits with status 143, as a killed
    process would."""

    exit_status = 143


class PeerLost(AlemError):
    """Another process of a multi-process run stopped; this one cannot go on (the CLI exits at
    once: JAX's shutdown would wait for the lost process)."""


class TrainingDiverged(AlemError):
    """A learner's loss became NaN or infinite; the chunk in which it happened is not saved."""


class EvaluationStopped(AlemError):
    """Play stopped on an error (e.g. an LLM endpoint that keeps failing); finished episodes are kept."""


# ------------------------------------------------------------------------ LLM backends


class TextBackendError(AlemError):
    """A chat backend failed; ``kind`` says how (``timeout``, ``http_429``, ``malformed``, ...)."""

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(message)
        self.kind = kind


class BackendUnavailable(TextBackendError, ConnectionError):
    """The health check before a run failed (unreachable, wrong model, missing or rejected key)."""


class BackendConfigError(TextBackendError, ValueError):
    """A backend setting has a bad value (caught before any request)."""

    def __init__(self, message: str):
        super().__init__(message, "config")


class RequestFailed(TextBackendError):
    """One chat request failed for good (after retries, or a non-retryable client error).

    ``errors`` lists the kinds of every failed try, the last one included; ``detail``
    holds what the transcript should keep of the last try (e.g. the head of a cut reply).
    """

    def __init__(
        self, message: str, kind: str = "error", errors: list[str] | None = None, detail: dict | None = None
    ):
        super().__init__(message, kind)
        self.errors = list(errors) if errors is not None else [kind]
        self.detail = dict(detail or {})


class CacheMiss(TextBackendError):
    """A request is not in a ``mode="replay"`` cache: the run cannot go on offline (it stops)."""

    def __init__(self, message: str):
        super().__init__(message, "cache_miss")


class EndpointFailing(TextBackendError):
    """The circuit breaker tripped: too many requests of one LLM seat failed; the run stops."""

    def __init__(self, message: str):
        super().__init__(message, "circuit_open")


# ------------------------------------------------------------------------- serving


class SessionError(AlemError):
    """A served session cannot take a request (alem.serve); ``status`` is the HTTP status that
    names the kind (400 bad request or illegal move, 403/421 a foreign page or host, 404 unknown
    session, 405 another method, 409 ended, 413 too large, 415 not JSON, 429 too many sessions,
    501 unsupported framing). ``close``: the connection is dropped after the answer (the
    request's framing cannot be trusted); ``allow``: a route's methods (405)."""

    def __init__(self, message: str, status: int = 400, *, close: bool = False, allow: tuple[str, ...] = ()):
        super().__init__(message)
        self.status = status
        self.close, self.allow = close, allow


# ------------------------------------------------------------------------- messages


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` closest to ``name``, closest first."""
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.6)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the candidate closest to ``name``, or ``""`` when none is close.

    The one wording of the hint in every "unknown name" message (env ids, keywords, players,
    learners, config fields).
    """
    near = closest(name, candidates, n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def require_positive_int(
    value: Any, name: str, *, error: type[Exception] = ValueError, allow_none: bool = False
) -> Any:
    """``value`` as an ``int`` when it is an integer >= 1 (NumPy integers too; ``None`` too with
    ``allow_none``); else raise ``error`` naming ``name`` and the value. Booleans and floats are
    refused: ``True`` and ``2.0`` are not counts."""
    if value is None and allow_none:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        what = "null or an integer >= 1" if allow_none else "an integer >= 1"
        raise error(f"{name} must be {what}, got {value!r}")
    return int(value)
