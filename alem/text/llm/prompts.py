"""Chat prompts built from an env's text hooks.

One system message per episode and seat (the rules, then the answer format);
per decision one user message with the seat's own view of the state
(``env.render_text(state, agent)``, which never shows hidden information) and
the legal actions by name. The last ``history`` accepted exchanges of the same
episode can be kept in the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alem.core import MultiAgentEnv

__all__ = ["system_prompt", "turn_prompt", "feedback_prompt", "ANSWER_FORMAT"]

ANSWER_FORMAT = '{"action": "<name>"}'


def _choices(names: Sequence[str]) -> str:
    return ", ".join(names)


def system_prompt(env: MultiAgentEnv, params: Any, agent: int) -> str:
    """Rules of the game for seat ``agent`` and the required answer format."""
    return (
        f"{env.rules_text(params, agent).strip()}\n\n"
        "How to answer: each turn you are shown the current situation and the legal actions. "
        f"Reply with one JSON object {ANSWER_FORMAT} naming exactly one legal action, and nothing else."
    )


def turn_prompt(view: str, legal_names: Sequence[str]) -> str:
    """The decision message: the seat's view of the state and its legal actions."""
    return (
        f"{view.strip()}\n\nLegal actions: {_choices(legal_names)}\n"
        f'Your move. Answer with {{"action": "<one of: {_choices(legal_names)}>"}}.'
    )


def feedback_prompt(status: str, legal_names: Sequence[str], named: str | None = None) -> str:
    """The re-prompt after a reply that was unparseable or named an illegal action."""
    if status == "illegal" and named is not None:
        head = f'"{named}" is not a legal action now.'
    else:
        head = "I could not read exactly one action from your reply."
    return f'{head} Legal actions: {_choices(legal_names)}. Answer with {{"action": "<name>"}} only.'
