"""Reading chat-completions reply bodies from a server that may be slow, buggy or hostile.

:func:`parse_body` and :func:`parse_completion` return the content, token counts and finish
reason of a well-formed completion and raise ``ValueError`` (only) on anything else: bad
JSON, nesting too deep, token counts that are not counts, no choices. The backend counts
that as a ``malformed`` reply (retried), and validates cached replies the same way.
Text is passed through :func:`~alem.text.llm.sanitize.clean_text`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from alem.sanitize import clean_text

__all__ = ["parse_completion", "parse_body"]


_MAX_TOKEN_COUNT = 2**53  # any real count fits; larger (or 1e400 = inf) is garbage


def _token_count(usage: dict, field: str) -> int:
    value = usage.get(field)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"usage.{field}={value!r} is not a token count")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"usage.{field}={value!r} is not a token count")
    if not 0 <= value < _MAX_TOKEN_COUNT:
        raise ValueError(f"usage.{field}={value!r} is out of range")
    return int(value)


def parse_completion(payload: Any) -> tuple[str, int, int, str | None]:
    """Content, prompt and completion tokens and finish reason of a chat-completions body.

    Raises ValueError (only) on anything that is not a well-formed completion.
    """
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ValueError("no choices in the reply")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ValueError("the first choice has no message content")
    usage = payload.get("usage") or {}
    if not isinstance(usage, dict):
        raise ValueError(f"usage is not an object: {usage!r:.60}")
    finish = choices[0].get("finish_reason")
    return (
        clean_text(content),
        _token_count(usage, "prompt_tokens"),
        _token_count(usage, "completion_tokens"),
        clean_text(finish) if isinstance(finish, str) else None,
    )


def parse_body(data: bytes) -> tuple[Any, tuple[str, int, int, str | None]]:
    """``(payload, parsed completion)`` of a reply body; ValueError for anything malformed."""
    try:
        payload = json.loads(data.decode("utf-8", "replace"))
    except RecursionError:
        raise ValueError("the reply nests too deep") from None
    return payload, parse_completion(payload)
