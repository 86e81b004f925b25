"""The chat backend interface: :class:`ChatBackend` and the :class:`Reply` every backend returns.

Implementations: :class:`~alem.text.llm.openai.OpenAIChatBackend` (any OpenAI-compatible HTTP
endpoint) and :class:`~alem.text.llm.scripted.ScriptedBackend` (no model, for tests and dry runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

__all__ = ["Reply", "ChatBackend"]


@dataclasses.dataclass
class Reply:
    """One chat completion as the text bridge uses it."""

    content: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    retries: int = 0  # failed tries before this reply
    cached: bool = False
    structured: bool = False  # response_format was sent
    finish_reason: str | None = None
    errors: list[str] = dataclasses.field(default_factory=list)  # kinds of the failed tries


class ChatBackend:
    """Interface: ``await chat(messages, legal_names=..., seed=...) -> Reply``."""

    name = "backend"

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        legal_names: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Reply:
        raise NotImplementedError

    async def health_check(self) -> None:
        """Raise :class:`BackendUnavailable` with a clear message when the backend cannot serve."""

    async def aclose(self) -> None:
        """Close connections."""

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name}
