"""A chat backend without a model, and reading the legal actions out of a chat request.

:class:`ScriptedBackend` answers without a server (``script="random"``: a
random legal action, ``"first"``: the first legal action, or any callable),
with the same :class:`~alem.text.llm.chat.Reply` shape, for tests and dry runs.
:func:`legal_names_in` is what it (and :class:`~alem.text.llm.testing.FakeChatServer`)
reads the legal actions from.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

from alem.text.llm.chat import ChatBackend, Reply
from alem.text.llm.parsing import action_schema

__all__ = ["ScriptedBackend", "legal_names_in"]


_LEGAL_LINE = re.compile(r"Legal actions:\s*(.+)")


def legal_names_in(body: dict[str, Any]) -> list[str]:
    """The legal action names of a chat request (its schema enum, else the last 'Legal actions:' line)."""
    rf = body.get("response_format") or {}
    try:
        return list(rf["json_schema"]["schema"]["properties"]["action"]["enum"])
    except (KeyError, TypeError):
        pass
    for m in reversed(body.get("messages") or []):
        found = _LEGAL_LINE.findall(str(m.get("content", "")))
        if found:
            return [s.strip() for s in found[-1].split(",") if s.strip()]
    return []


class ScriptedBackend(ChatBackend):
    """An LLM-shaped agent without a model: ``script(body) -> reply text``.

    ``script="random"`` answers a uniformly random legal action (seeded by the
    request's ``seed``), ``"first"`` the first legal one, both as
    ``{"action": name}``. Token counts are whitespace word counts.
    """

    name = "scripted"

    def __init__(self, script: str | Callable[[dict[str, Any]], str] = "random", *, structured: bool = True):
        if isinstance(script, str) and script not in ("random", "first"):
            raise ValueError(f"script must be 'random', 'first' or a callable, got {script!r}")
        self.script, self.structured = script, structured

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        legal_names: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Reply:
        body: dict[str, Any] = {"messages": messages, "seed": seed}
        if self.structured and legal_names:
            body["response_format"] = {"json_schema": {"schema": action_schema(legal_names)}}
        if callable(self.script):
            content = self.script(body)
        else:
            names = legal_names_in(body)
            if not names:
                content = "I do not know."
            else:
                pick = names[0] if self.script == "first" else random.Random(seed).choice(names)
                content = json.dumps({"action": pick})
        t_in = sum(len(str(m.get("content", "")).split()) for m in messages)
        return Reply(content, t_in, len(content.split()), 0.0, 0, False, "response_format" in body, "stop")

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "script": self.script if isinstance(self.script, str) else "callable"}
