"""The env registry: ``make``, ``register`` and ``registry``.

Entries are stored in a dict keyed by versioned id (``name-vN``). An entry
points at its constructor by ``"module:attr"`` string, so registering imports
nothing: an env whose optional dependency is missing fails only when made, with
an install hint.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import DependencyNotInstalled, EnvArgumentError, UnknownEnvError, closest, did_you_mean

__all__ = ["EnvSpec", "register", "make", "registry"]

_ID = re.compile(r"^(?P<name>[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)?)-v(?P<version>\d+)$")


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """A registry entry.

    Attributes:
        id: versioned id, ``name-vN``.
        entry_point: ``"module:attr"`` (or a callable) returning a :class:`MultiAgentEnv`.
        kwargs: default constructor keywords; ``make`` keywords override them.
        family: ``"games"``, ``"pathfinding"`` or ``"coordination"``.
        num_agents: agent count with default kwargs, or a description like ``"2-8"``.
        text: whether the env has text hooks.
        reference: the implementation it is checked against (empty if none).
        requires: optional modules it needs, as ``{module: pip requirement}``.
        description: one line for listings.
    """

    id: str
    entry_point: str | Callable[..., MultiAgentEnv]
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    family: str = ""
    num_agents: int | str = ""
    text: bool = False
    reference: str = ""
    requires: Mapping[str, str] = dataclasses.field(default_factory=dict)
    description: str = ""

    @property
    def name(self) -> str:
        return self.id.rsplit("-v", 1)[0]

    @property
    def version(self) -> int:
        return int(self.id.rsplit("-v", 1)[1])


_REGISTRY: dict[str, EnvSpec] = {}


def register(
    id: str,
    entry_point: str | Callable[..., MultiAgentEnv],
    *,
    overwrite: bool = False,
    **spec: Any,
) -> EnvSpec:
    """Register an env under a versioned id ``name-vN`` and return its spec.

    Extra keywords are :class:`EnvSpec` fields (``kwargs``, ``family``, ...).
    Re-registering an id raises unless ``overwrite=True``.
    """
    if not _ID.match(id):
        raise ValueError(
            f"env id {id!r} must look like 'name-vN' (lower case, digits, underscores; "
            "an optional 'namespace/' prefix), e.g. 'prisoners_dilemma-v0'"
        )
    if id in _REGISTRY and not overwrite:
        raise ValueError(f"env id {id!r} is already registered; pass overwrite=True to replace it")
    if isinstance(entry_point, str) and ":" not in entry_point:
        raise ValueError(f"entry_point {entry_point!r} must be 'module:attr' or a callable")
    fields = {f.name for f in dataclasses.fields(EnvSpec)} - {"id", "entry_point"}
    unknown = set(spec) - fields
    if unknown:
        raise TypeError(f"register() got unknown fields {sorted(unknown)}; known: {sorted(fields)}")
    entry = EnvSpec(id=id, entry_point=entry_point, **spec)
    _REGISTRY[id] = entry
    return entry


def registry(family: str | None = None) -> Mapping[str, EnvSpec]:
    """Read-only view of registered ids -> :class:`EnvSpec` (optionally one family)."""
    if family is None:
        return MappingProxyType(dict(_REGISTRY))
    return MappingProxyType({k: v for k, v in _REGISTRY.items() if v.family == family})


def _unknown_id_error(id: str) -> UnknownEnvError:
    ids = sorted(_REGISTRY)
    name = id.rsplit("-v", 1)[0]
    versions = [k for k in ids if k.rsplit("-v", 1)[0] == name]
    if versions:
        return UnknownEnvError(f"env {id!r} is not registered; versions of {name!r}: {versions}")
    # Closest first; fall back to matching the bare name against bare names.
    near = closest(id, ids, n=3)
    if not near:
        by_name = {k.rsplit("-v", 1)[0]: k for k in ids}
        near = [by_name[n] for n in closest(name, list(by_name), n=3)]
    hint = f"; did you mean {near}?" if near else ""
    return UnknownEnvError(f"unknown env id {id!r}{hint} (alem.registry() lists all {len(ids)} ids)")


def _load(spec: EnvSpec) -> Callable[..., MultiAgentEnv]:
    if callable(spec.entry_point):
        return spec.entry_point
    for module, requirement in spec.requires.items():
        if importlib.util.find_spec(module) is None:
            raise DependencyNotInstalled(
                f"env {spec.id!r} needs the optional package {module!r}; "
                f'install it with: pip install "{requirement}"'
            )
    return load_entry_point(spec.entry_point)


def load_entry_point(entry_point: str) -> Any:
    """The object a ``"package.module:attr"`` string names (env constructors, player factories)."""
    module_name, sep, attr = entry_point.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"entry point {entry_point!r} is not of the form 'package.module:attr'")
    return getattr(importlib.import_module(module_name), attr)


def _annotated_kinds(annotation: Any) -> set[str]:
    """The plain type names of a constructor parameter's annotation (``"int | None"`` -> {"int", "None"})."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return {t.strip() for t in str(text).split("|")}


def _check_kwarg_types(id: str, params: Mapping[str, inspect.Parameter], kwargs: Mapping[str, Any]) -> None:
    """Refuse a keyword whose value the constructor's annotation rules out, where a constructor
    would otherwise coerce it silently (``num_agents=2.5`` built 2 agents)."""
    for k, v in kwargs.items():
        p = params.get(k)
        if (
            p is None
            or p.annotation is inspect.Parameter.empty
            or (v is None and "None" in _annotated_kinds(p.annotation))
        ):
            continue
        kinds = _annotated_kinds(p.annotation) - {"None"}
        is_int = isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
        if kinds == {"int"} and not is_int:
            raise EnvArgumentError(f"{id}: {k} must be an integer, got {v!r}")
        if kinds == {"bool"} and not isinstance(v, bool | np.bool_):
            raise EnvArgumentError(f"{id}: {k} must be true or false, got {v!r}")
        if kinds == {"float"} and (
            isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating)
        ):
            raise EnvArgumentError(f"{id}: {k} must be a number, got {v!r}")


def make(id: str, **kwargs: Any) -> MultiAgentEnv:
    """Build the env registered under ``id``; ``kwargs`` override its static defaults."""
    if not isinstance(id, str):  # None, bytes, a number: refused here, not deep in the lookup
        raise UnknownEnvError(f"env id must be a string like 'tic_tac_toe-v0', got {id!r}")
    if id not in _REGISTRY:
        raise _unknown_id_error(id)
    spec = _REGISTRY[id]
    ctor = _load(spec)
    params = inspect.signature(ctor).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if not takes_any:
        accepted = [k for k, p in params.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        bad = [k for k in kwargs if k not in accepted]
        if bad:
            detail = ", ".join(f"{k!r}{did_you_mean(k, accepted)}" for k in bad)
            raise EnvArgumentError(f"{id}: unknown keyword argument(s) {detail}; accepted: {accepted}")
    _check_kwarg_types(id, params, kwargs)
    try:
        env = ctor(**{**spec.kwargs, **kwargs})
    except (OverflowError, MemoryError) as e:  # e.g. num_agents=10**30: arrays that cannot exist
        shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise EnvArgumentError(f"{id}: {shown} is too large to build ({type(e).__name__}: {e})") from None
    env.id = id
    env.spec = spec
    return env
