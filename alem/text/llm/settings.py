"""The LLM player's options: :class:`LLMSettings`, frozen and checked when built.

The ``llm`` config group (``configs/llm/*.yaml``, ``llm.<option>=...`` on the command line) holds
exactly these fields; :class:`~alem.text.llm.player.LLMPlayer` builds one from its keywords. A bad
value is refused by :meth:`LLMSettings.__post_init__` in one line naming ``llm.<field>``, before
any server starts or any request is sent.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from alem.errors import AlemError, BackendConfigError, require_positive_int
from alem.text.llm.cache import RequestCache
from alem.text.llm.openai import CHECKED_SETTINGS, OpenAIChatBackend, check_auth, check_settings
from alem.text.llm.prompts import PromptMode
from alem.text.llm.seat import INVALID_RULES

__all__ = ["BACKENDS", "BACKEND_ONLY", "LLMSettings"]

BACKENDS = ("local", "openai", "scripted")
SCRIPTS = ("random", "first")

#: Options one backend reads: ``option -> (backend, its value when not given)``.
BACKEND_ONLY = {
    "base_url": ("openai", None),
    "api_key_env": ("openai", None),
    "model_path": ("local", None),
    "threads": ("local", 1),
    "context": ("local", 2048),
    "parallel": ("local", 1),
    "script": ("scripted", "random"),
}
BACKEND_WHAT = {
    "local": "the embedded llama.cpp model",
    "openai": "an OpenAI-compatible endpoint",
    "scripted": "a scripted stand-in",
}


def _count(key: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise AlemError(f"llm.{key} must be an integer >= {low}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """Every option of an LLM seat (see :class:`~alem.text.llm.player.LLMPlayer` for their meaning).

    Args:
        backend: ``"local"`` (embedded llama.cpp server with SmolLM2-135M-Instruct),
            ``"openai"`` (any OpenAI-compatible endpoint at ``base_url``) or ``"scripted"``.
        base_url, model, api_key_env, temperature, top_p, max_tokens, structured, timeout_s,
            max_retries, backoff_s, backoff_cap_s, extra_body: see
            :class:`~alem.text.llm.openai.OpenAIChatBackend`.
        seed: base of the per-request seeds, of the ``"random"`` invalid rule and of ``obfuscate``.
        reprompts: re-prompts with feedback after an unparseable or illegal reply.
        legal_moves, rules, format: the prompt mode (:class:`~alem.text.llm.prompts.PromptMode`).
        obfuscate: play a relabeled copy of the env's text (made-up names drawn from ``seed``).
        invalid: what a reply that names no legal move plays once the re-prompts are spent:
            ``"random"``, ``"first"`` or ``"forfeit"`` (:mod:`alem.text.llm.seat`; the
            ``fallback`` keyword is its deprecated alias).
        history: earlier exchanges of the episode kept in the conversation.
        max_concurrency: requests in flight at once for this seat.
        max_reply_bytes: the most of a reply body that is read (longer ones count as errors).
        max_consecutive_failures, max_failure_rate, min_decisions: the circuit breaker (a run
            stops with :class:`~alem.errors.EndpointFailing` rather than score the invalid rule
            as the model).
        cache, cache_mode: a request cache file and its mode (:class:`~alem.text.llm.cache.RequestCache`).
        model_path, threads, context, parallel: the embedded server (``backend="local"``).
        script: the scripted backend's script (``"random"``, ``"first"`` or a callable).
        price_in_per_mtok, price_out_per_mtok: prices per million tokens (for a cost column).
    """

    backend: str = "local"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 32
    seed: int = 0
    structured: str = "auto"
    reprompts: int = 2
    legal_moves: str = "list"
    rules: str = "full"
    format: str = "text"
    obfuscate: bool = False
    invalid: str = "random"
    history: int = 0
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 0.5
    backoff_cap_s: float = 20.0
    max_reply_bytes: int = OpenAIChatBackend.MAX_REPLY_BYTES
    max_consecutive_failures: int = 5
    max_failure_rate: float = 0.5
    min_decisions: int = 20
    extra_body: Mapping[str, Any] | None = None
    cache: str | Path | None = None
    cache_mode: str = "readwrite"
    model_path: str | None = None
    threads: int = 1
    context: int = 2048
    parallel: int = 1
    script: str | Callable[[dict[str, Any]], str] = "random"
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise AlemError(f"llm.backend must be one of {BACKENDS}, got {self.backend!r}")
        # An option that only another backend reads would be ignored silently: refused instead.
        for key, (reader, unset) in BACKEND_ONLY.items():
            value = getattr(self, key)
            if reader != self.backend and value != unset:
                raise AlemError(
                    f"llm.{key}={value!r} is read by llm={reader} only ({BACKEND_WHAT[reader]}); this run's "
                    f"llm.backend is {self.backend} ({BACKEND_WHAT[self.backend]}): add llm={reader} or drop llm.{key}"
                )
        _ = self.mode  # PromptMode refuses legal_moves, rules and format by name
        if not isinstance(self.obfuscate, bool):
            raise AlemError(f"llm.obfuscate must be true or false, got {self.obfuscate!r}")
        if self.invalid not in INVALID_RULES:
            raise AlemError(f"llm.invalid must be one of {INVALID_RULES}, got {self.invalid!r}")
        for key, low in (("reprompts", 0), ("history", 0), ("max_concurrency", 1)):
            _count(key, getattr(self, key), low)
        _count("max_consecutive_failures", self.max_consecutive_failures, 1)
        _count("min_decisions", self.min_decisions, 1)
        rate = self.max_failure_rate
        if isinstance(rate, bool) or not (isinstance(rate, int | float) and 0 < rate <= 1):
            raise AlemError(f"llm.max_failure_rate must be a number in (0, 1], got {rate!r}")
        self._check_cache()
        if self.structured not in OpenAIChatBackend.STRUCTURED:  # before the embedded model is looked for
            raise BackendConfigError(
                f"llm.structured must be one of {list(OpenAIChatBackend.STRUCTURED)}, got {self.structured!r}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise AlemError(f"llm.seed must be an integer, got {self.seed!r}")
        if self.extra_body is not None and not isinstance(self.extra_body, Mapping):
            raise AlemError(f"llm.extra_body must be a mapping of request fields, got {self.extra_body!r}")
        object.__setattr__(self, "extra_body", dict(self.extra_body or {}))  # a copy the caller cannot change
        for key in ("price_in_per_mtok", "price_out_per_mtok"):
            value = getattr(self, key)
            if value is not None and not (
                isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < math.inf
            ):
                raise AlemError(
                    f"llm.{key} must be null or a number >= 0 (a price per million tokens), got {value!r}"
                )
        for key in ("model", "api_key_env", "base_url"):
            if (value := getattr(self, key)) is not None and not isinstance(value, str):
                raise AlemError(f"llm.{key} must be null or a string, got {value!r}")
        if self.backend == "local":
            for key in ("threads", "context", "parallel"):
                require_positive_int(getattr(self, key), f"llm.{key}", error=AlemError)
            if self.model_path is not None and not Path(str(self.model_path)).is_file():
                raise AlemError(
                    f"llm.model_path={self.model_path!r}: no such file (give a chat GGUF file, or null for SmolLM2)"
                )
        if self.backend == "openai":
            check_auth(self.base_url, self.api_key_env)
        if self.backend == "scripted" and not callable(self.script) and self.script not in SCRIPTS:
            raise AlemError(f"llm.script={self.script!r}: the scripted backend plays 'random' or 'first'")
        check_settings(**{k: getattr(self, k) for k in CHECKED_SETTINGS})

    def _check_cache(self) -> None:
        if self.cache_mode not in RequestCache.MODES:
            raise BackendConfigError(
                f"llm.cache_mode must be one of {list(RequestCache.MODES)}, got {self.cache_mode!r}"
            )
        if self.cache is not None and not isinstance(self.cache, str | Path):
            raise BackendConfigError(f"llm.cache must be null or a file path, got {self.cache!r}")
        if self.cache is not None:
            RequestCache.check_path(self.cache, self.cache_mode)

    @property
    def mode(self) -> PromptMode:
        """The prompt mode these settings ask for."""
        return PromptMode(legal_moves=self.legal_moves, rules=self.rules, format=self.format)

    def with_spec(self, spec: str | None) -> LLMSettings:
        """These settings with a player spec's ``ARG`` (``llm:ARG``): the script of the scripted
        backend, the model name of the others."""
        if not spec:
            return self
        if self.backend != "scripted":
            return dataclasses.replace(self, model=spec)
        if spec not in SCRIPTS:
            raise AlemError(f"players=[llm:{spec}]: the scripted backend plays 'random' or 'first'")
        return dataclasses.replace(self, script=spec)

    def request_settings(self) -> dict[str, Any]:
        """The keywords of :class:`~alem.text.llm.openai.OpenAIChatBackend` these settings give."""
        keys = ("base_url", "model", "api_key_env", "structured", "extra_body", *CHECKED_SETTINGS)
        out = {k: getattr(self, k) for k in keys}
        out["extra_body"] = dict(out["extra_body"])
        return out

    @classmethod
    def from_options(cls, options: Mapping[str, Any], base: LLMSettings | None = None) -> LLMSettings:
        """``base`` (default: the defaults) with ``options`` replaced; an unknown option is
        refused by name with the known ones."""
        known = [f.name for f in dataclasses.fields(cls)]
        for key in options:
            if key not in known:
                raise AlemError(f"llm.{key} is not an llm option; the options are: {', '.join(known)}")
        return dataclasses.replace(base, **options) if base is not None else cls(**options)
