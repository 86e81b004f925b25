"""Exceptions raised by alem; each names what was wrong and how to fix it."""

from __future__ import annotations


class AlemError(Exception):
    """Base class of alem's own errors."""


class UnknownEnvError(AlemError, ValueError):
    """``alem.make`` was given an id that is not registered."""


class EnvArgumentError(AlemError, TypeError):
    """An env constructor was given a keyword it does not take, or a bad value."""


class DependencyNotInstalled(AlemError, ImportError):
    """An env needs an optional dependency that is not installed."""


class ActionError(AlemError, ValueError):
    """Actions passed to ``step`` have the wrong shape or dtype (caught at trace time)."""
