"""Chat backends: any OpenAI-compatible HTTP endpoint, and scripted stand-ins.

This module gathers the backend names in one place; each lives in the module that says what
it holds, and every name stays importable from here:

- :mod:`alem.text.chat`: the :class:`ChatBackend` interface and its :class:`Reply`.
- :mod:`alem.text.openai`: :class:`OpenAIChatBackend` (retries, limits against slow or hostile
  servers, health check) and :func:`check_settings` / :data:`CHECKED_SETTINGS`.
- :mod:`alem.text.completions`: reading chat-completions reply bodies (malformed ones raise).
- :mod:`alem.text.cache`: :class:`RequestCache`, replies on disk (read-write, replay, re-record).
- :mod:`alem.text.scripted`: :class:`ScriptedBackend` (no model) and :func:`legal_names_in`.
- :mod:`alem.text.sanitize`: :func:`redact_url` and :func:`clean_text`.
- :mod:`alem.engine.sync`: :func:`run_sync` and :func:`gather_or_cancel` (the event loop).
- :mod:`alem.errors`: the errors (:class:`TextBackendError` and its kinds).
"""

from __future__ import annotations

from alem.engine.sync import gather_or_cancel, run_sync
from alem.errors import (
    BackendConfigError,
    BackendUnavailable,
    CacheMiss,
    RequestFailed,
    TextBackendError,
)
from alem.text.cache import RequestCache
from alem.text.chat import ChatBackend, Reply
from alem.text.openai import CHECKED_SETTINGS, OpenAIChatBackend, check_settings
from alem.text.sanitize import clean_text, redact_url
from alem.text.scripted import ScriptedBackend, legal_names_in

__all__ = [
    "TextBackendError",
    "BackendUnavailable",
    "RequestFailed",
    "CacheMiss",
    "BackendConfigError",
    "Reply",
    "redact_url",
    "clean_text",
    "RequestCache",
    "ChatBackend",
    "OpenAIChatBackend",
    "check_settings",
    "CHECKED_SETTINGS",
    "ScriptedBackend",
    "legal_names_in",
    "run_sync",
    "gather_or_cancel",
]
