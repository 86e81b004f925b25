"""The text bridge: LLM agents play alem envs through their text hooks.

- :mod:`alem.text.prompts`: chat prompts from ``rules_text`` / ``render_text`` / action names.
- :mod:`alem.text.parsing`: structured (JSON schema) answers and a tolerant text parser.
- :mod:`alem.text.backends`: every chat backend name in one place (re-exported from the modules below).
- :mod:`alem.text.chat`: the :class:`~alem.text.chat.ChatBackend` interface and its :class:`Reply`.
- :mod:`alem.text.openai`: the OpenAI-compatible HTTP backend (retries, limits, health check)
  and the checks of its request settings.
- :mod:`alem.text.completions`: reading chat-completions reply bodies (malformed ones raise).
- :mod:`alem.text.cache`: :class:`RequestCache`, replies on disk (read-write, replay, re-record).
- :mod:`alem.text.scripted`: :class:`ScriptedBackend`, a stand-in without a model.
- :mod:`alem.text.sanitize`: URLs without secrets, text UTF-8 can hold.
- :mod:`alem.engine.sync`: running the bridge's coroutines from synchronous code.
- :mod:`alem.text.testing`: :class:`~alem.text.testing.FakeChatServer`, a local server with fault injection.
- :mod:`alem.text.local_server`: the embedded llama.cpp server with SmolLM2-135M-Instruct.
- :mod:`alem.text.llm_player`: :class:`LLMPolicy`, the ``"llm"`` player of ``python -m alem.evaluate``.
- :mod:`alem.engine.counters`: the counters of its decision records (:func:`decision_counts`).
- :mod:`alem.text.pool`: :class:`TextEnvPool`, N envs in lock-step as chat prompts and replies (training).
- :mod:`alem.text.advantages`: GRPO, SPIRAL's role-conditioned and turn-level advantage estimators.
- :mod:`alem.text.export`: trajectories as chat-format JSONL (arena runs, scripted experts).
- :mod:`alem.text.adapters`: rollouts through any chat backend, a TRL-style one-move reward.

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
from alem.text.llm_player import LLMPolicy, decision_counts
from alem.text.parsing import ParseResult, action_schema, parse_reply
from alem.text.pool import TextEnvPool

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
    "TextEnvPool",
    "action_schema",
    "decision_counts",
    "parse_reply",
]
