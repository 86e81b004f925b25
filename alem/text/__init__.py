"""The text bridge: LLM agents play alem envs through their text hooks, and LLMs train on them.

- :mod:`alem.text.llm`: the LLM player (prompts, parsing, chat backends, cache, the ``"llm"``
  player, a local server and a fault-injecting test server).
- :mod:`alem.text.train`: the LLM-training tools (a batched text env pool, advantage
  estimators, chat-JSONL export, trainer adapters, a GRPO demo).

The package exports the names most code needs. Importing it starts nothing and needs neither
httpx nor xllamacpp.
"""

from __future__ import annotations

from alem.errors import BackendUnavailable, RequestFailed, TextBackendError
from alem.text.llm.cache import RequestCache
from alem.text.llm.chat import Reply
from alem.text.llm.openai import OpenAIChatBackend
from alem.text.llm.parsing import ParseResult, action_schema, parse_reply
from alem.text.llm.player import LLMPlayer, decision_counts
from alem.text.llm.scripted import ScriptedBackend
from alem.text.llm.settings import LLMSettings
from alem.text.train.pool import TextEnvPool

__all__ = [
    "BackendUnavailable",
    "LLMPlayer",
    "LLMSettings",
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
