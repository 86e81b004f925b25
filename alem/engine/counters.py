"""The counters of an LLM seat's decision records (requests, replies, parse outcomes, tokens, latency).

:class:`~alem.text.llm.player.LLMPlayer` writes one transcript record per decision and sums
:func:`decision_counts` of each for its live stats; the arena computes results from the
transcripts with the same function, so a resumed evaluation counts exactly what its
transcripts hold.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COUNTERS", "decision_counts"]

#: Counters summed over decision records (see :func:`decision_counts`).
COUNTERS = (
    "decisions",
    "requests",
    "replies",
    "ok",
    "unparseable",
    "illegal",
    "api_errors",
    "retried_errors",
    "reprompts",
    "fallbacks",
    "cached",
    "tokens_in",
    "tokens_out",
    "latency_s",
)


def decision_counts(record: dict[str, Any]) -> dict[str, float]:
    """Counters of one decision record (one mechanism for live stats and for results from transcripts)."""
    attempts = record.get("attempts", [])
    c = dict.fromkeys(COUNTERS, 0.0)
    c["decisions"] = 1
    c["requests"] = len(attempts)
    c["reprompts"] = max(len(attempts) - 1, 0)
    c["fallbacks"] = int(record.get("fallback") is not None)
    for a in attempts:
        status = a.get("status")
        if status == "api_error":
            c["api_errors"] += 1
        else:
            c["replies"] += 1
            c[status] += 1
        c["retried_errors"] += len(a.get("retry_errors") or [])
        c["cached"] += int(bool(a.get("cached")))
        c["tokens_in"] += a.get("tokens_in") or 0
        c["tokens_out"] += a.get("tokens_out") or 0
        c["latency_s"] += a.get("latency_s") or 0.0
    return c
