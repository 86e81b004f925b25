"""The text bridge: LLM agents play alem envs through their text hooks.

- :mod:`alem.text.prompts`: chat prompts from ``rules_text`` / ``render_text`` / action names.
- :mod:`alem.text.parsing`: structured (JSON schema) answers and a tolerant text parser.
- :mod:`alem.text.backends`: OpenAI-compatible HTTP backend (retries, cache, health check),
  scripted stand-ins.
- :mod:`alem.text.local_server`: the embedded llama.cpp server with SmolLM2-135M-Instruct.
- :mod:`alem.text.policy`: :class:`LLMPolicy`, the ``"llm"`` player of ``python -m alem.evaluate``.

Importing this package starts nothing and needs neither httpx nor xllamacpp.
"""

from __future__ import annotations

from alem.text.backends import (
    BackendUnavailable,
    OpenAIChatBackend,
    Reply,
    RequestCache,
    RequestFailed,
    ScriptedBackend,
    TextBackendError,
)
from alem.text.parsing import ParseResult, action_schema, parse_reply
from alem.text.policy import LLMPolicy, decision_counts

__all__ = [
    "BackendUnavailable",
    "LLMPolicy",
    "OpenAIChatBackend",
    "ParseResult",
    "Reply",
    "RequestCache",
    "RequestFailed",
    "ScriptedBackend",
    "TextBackendError",
    "action_schema",
    "decision_counts",
    "parse_reply",
]
