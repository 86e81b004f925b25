"""Reading an action out of a model's reply.

Structured output first (a JSON object ``{"action": "<name>"}``, which servers
that support ``response_format`` are forced to produce), then the env's own
tolerant parser (:meth:`~alem.text_hooks.TextHooks.parse_action`) on the whole reply, then
on an ``answer: X``-style line and on the last line. Every reply is classified
as ``ok``, ``unparseable`` (names no action, or several) or ``illegal`` (names
an action that is not legal now).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from alem.core import MultiAgentEnv

__all__ = ["ParseResult", "action_schema", "parse_reply", "MAX_PARSE_CHARS"]

#: Replies are cut to this many characters before parsing (very long replies cost no more).
MAX_PARSE_CHARS = 4000

Status = Literal["ok", "unparseable", "illegal"]

_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_ANSWER_LINE = re.compile(
    r"(?:final answer|answer|action|move|choice|i choose|i pick|i play)\s*(?:is)?\s*[:=\-]?\s*(.+)",
    re.IGNORECASE,
)


@dataclasses.dataclass(frozen=True)
class ParseResult:
    """How a reply was read: the action index (None unless ``status == "ok"``) and what it named."""

    status: Status
    action: int | None
    named: int | None  # the action the reply named, legal or not


def action_schema(legal_names: Sequence[str]) -> dict[str, Any]:
    """JSON schema of a reply naming exactly one of ``legal_names`` (for ``response_format``)."""
    return {
        "type": "object",
        "properties": {"action": {"type": "string", "enum": list(legal_names)}},
        "required": ["action"],
        "additionalProperties": False,
    }


def _json_action(text: str) -> str | None:
    """The ``action`` field of the first JSON object in ``text`` that has one."""
    candidates = [text.strip()]
    candidates += [m.group(0) for m in _JSON_OBJECT.finditer(text)]
    for c in candidates:
        try:
            obj = json.loads(c)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and "action" in obj and isinstance(obj["action"], str | int):
            return str(obj["action"])
    return None


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _json_reply(text: str) -> Any:
    """The reply as one JSON value (a ```json fence around it allowed), or None."""
    body = text.strip()
    fenced = _FENCE.match(body)
    try:
        return json.loads(fenced.group(1) if fenced else body)
    except (ValueError, RecursionError):
        return None


def parse_reply(
    text: str,
    env: MultiAgentEnv,
    agent: int,
    legal: Sequence[int],
    *,
    json_only: bool = False,
    state: Any = None,
) -> ParseResult:
    """Classify ``text`` as a move of ``agent`` given the ``legal`` action indices.

    A JSON ``action`` field decides alone when present (a server-validated answer
    should not be second-guessed by free-text heuristics); otherwise the env's
    parser is tried on the whole reply, then on ``answer: X``-style phrases
    (last one first), then on the last non-empty line. With ``json_only`` (the JSON prompt
    mode) the reply must be one JSON object ``{"action": <name or index>}``, read by
    :meth:`~alem.text_hooks.TextHooks.action_from_json`; anything else is unparseable. Given the
    (unbatched, host) ``state``, free text is read by the env's
    :meth:`~alem.text_hooks.TextHooks.parse_move` in that position (chess reads SAN there).
    """
    text = (text or "")[:MAX_PARSE_CHARS]
    legal_set = {int(j) for j in legal}
    named: int | None
    if json_only:
        named = env.action_from_json(_json_reply(text), agent)
        if named is None:
            return ParseResult("unparseable", None, None)
        return ParseResult("ok", named, named) if named in legal_set else ParseResult("illegal", None, named)
    if state is None:
        read = lambda t: env.parse_action(t, agent)
    else:
        read = lambda t: env.parse_move(state, t, agent)
    said = _json_action(text)
    if said is not None:
        named = read(said)
    else:
        named = read(text)
        if named is None:
            tries = [m.group(1) for m in _ANSWER_LINE.finditer(text)][::-1]
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            tries += lines[-1:]
            for t in tries:
                named = read(t.strip(" .*`'\""))
                if named is not None:
                    break
    if named is None:
        return ParseResult("unparseable", None, None)
    if named not in legal_set:
        return ParseResult("illegal", None, named)
    return ParseResult("ok", named, named)
