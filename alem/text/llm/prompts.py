"""Chat prompts built from an env's text hooks, in one of several prompt modes.

One system message per episode and seat (the rules, then the answer format);
per decision one user message with the seat's own view of the state
(``env.render_text(state, agent)``, which never shows hidden information) and,
in the default mode, the legal actions by name. The last ``history`` accepted
exchanges of the same episode can be kept in the conversation.

A :class:`PromptMode` chooses how much the prompt gives away:

- ``legal_moves="list"`` names the legal actions every turn (and constrains structured
  output to them); ``"none"`` names only the action vocabulary, once, in the system message,
  and shows the env's view without what it says about the moves available now
  (``render_text(..., moves=False)``: Kuhn poker's turn says "It is your turn." without
  "pass (check) or bet (1 chip)"), so the model must know which moves are legal: an illegal
  reply is invalid (re-prompted without a list, then the fallback), as in Kaggle Game Arena's
  harness.
- ``rules="full"`` tells the rules (:meth:`~alem.text_hooks.TextHooks.rules_text`);
  ``"short"`` only the game and the seat (:meth:`~alem.text_hooks.TextHooks.rules_summary`).
- ``format="text"`` shows each turn's situation as the env's text view; ``"json"`` as its JSON
  view (:meth:`~alem.text_hooks.TextHooks.to_json`), and then only a JSON object
  ``{"action": ...}`` is a reply (free text is unparseable).

:func:`harness_hash` names the harness that produced a result: the prompt templates and the
reply parser (this module's and :mod:`alem.text.llm.parsing`'s source) and the mode.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alem.core import MultiAgentEnv
from alem.errors import AlemError

__all__ = [
    "ANSWER_FORMAT",
    "FORMATS",
    "LEGAL_MOVES",
    "RULES",
    "PromptMode",
    "feedback_prompt",
    "harness_hash",
    "system_prompt",
    "turn_prompt",
]

ANSWER_FORMAT = '{"action": "<name>"}'
LEGAL_MOVES = ("list", "none")
RULES = ("full", "short")
FORMATS = ("text", "json")


@dataclasses.dataclass(frozen=True)
class PromptMode:
    """How much a prompt tells and how: the legal moves each turn (``list``/``none``), the rules
    (``full``/``short``), the situation as text or JSON (``text``/``json``). Unknown values are
    refused by name."""

    legal_moves: str = "list"
    rules: str = "full"
    format: str = "text"

    def __post_init__(self) -> None:
        for key, allowed in (("legal_moves", LEGAL_MOVES), ("rules", RULES), ("format", FORMATS)):
            value = getattr(self, key)
            if value not in allowed:
                raise AlemError(f"llm.{key} must be one of {list(allowed)}, got {value!r}")

    @property
    def lists_legal_moves(self) -> bool:
        return self.legal_moves == "list"

    def view(self, env: MultiAgentEnv, state: Any, agent: int, params: Any) -> str:
        """One (unbatched) ``state`` as ``agent``'s turn shows it: text, or its JSON view. Not
        listing the legal moves, the text leaves out the moves available now (``moves=False``) and
        the JSON view its ``legal_moves`` (the one key a family lists them under: chess)."""
        if self.format == "json":
            view = env.to_json(state, agent, params)
            if not self.lists_legal_moves:
                view.pop("legal_moves", None)
            return json.dumps(view)
        if self.lists_legal_moves:
            return env.render_text(state, agent, params)
        if not _takes_moves_flag(env):
            raise AlemError(
                f"{env.id}: render_text takes no moves flag, so llm.legal_moves=none cannot leave out "
                "the moves its view names; give it a keyword moves: bool = True (see TextHooks.render_text)"
            )
        return env.render_text(state, agent, params, moves=False)


_MOVES_FLAG: dict[type, bool] = {}


def _takes_moves_flag(env: MultiAgentEnv) -> bool:
    """Whether ``env``'s own ``render_text`` (under any wrappers, which forward keywords) takes
    ``moves``; cached per class, since prompts are built on the host for every turn."""
    cls = type(getattr(env, "unwrapped", env))
    found = _MOVES_FLAG.get(cls)
    if found is None:
        params = inspect.signature(cls.render_text).parameters.values()
        found = _MOVES_FLAG[cls] = any(p.name == "moves" or p.kind is p.VAR_KEYWORD for p in params)
    return found


def _choices(names: Sequence[str]) -> str:
    return ", ".join(names)


def system_prompt(env: MultiAgentEnv, params: Any, agent: int, mode: PromptMode = PromptMode()) -> str:
    """Rules of the game for seat ``agent`` (or its one-sentence summary) and the answer format."""
    rules = env.rules_text(params, agent) if mode.rules == "full" else env.rules_summary(params, agent)
    if mode.format == "json":
        rules += (
            "\n\nEach turn the situation is given as one JSON object (your view only); reply with one "
            "JSON object, nothing else: free text is not read."
        )
    if mode.lists_legal_moves:
        answer = (
            "How to answer: each turn you are shown the current situation and the legal actions. "
            f"Reply with one JSON object {ANSWER_FORMAT} naming exactly one legal action, and nothing else."
        )
    else:
        fmt = env.action_format(agent)
        named = f"Actions are named: {_choices(env.action_names(agent))}." if fmt is None else fmt
        answer = (
            f"{named} Not every action is legal in "
            "every situation, and the legal ones are not listed: an illegal action counts as an "
            "invalid reply.\nHow to answer: each turn you are shown the current situation. Reply "
            f"with one JSON object {ANSWER_FORMAT} naming exactly one action that is legal now, and "
            "nothing else."
        )
    return f"{rules.strip()}\n\n{answer}"


def turn_prompt(view: str, legal_names: Sequence[str], mode: PromptMode = PromptMode()) -> str:
    """The decision message: the seat's view of the state (and its legal actions, when listed)."""
    if not mode.lists_legal_moves:
        return f"{view.strip()}\n\nYour move. Answer with {ANSWER_FORMAT}."
    return (
        f"{view.strip()}\n\nLegal actions: {_choices(legal_names)}\n"
        f'Your move. Answer with {{"action": "<one of: {_choices(legal_names)}>"}}.'
    )


def feedback_prompt(
    status: str, legal_names: Sequence[str], named: str | None = None, mode: PromptMode = PromptMode()
) -> str:
    """The re-prompt after a reply that was unparseable or named an illegal action (it names
    that action; it lists the legal ones only when the mode lists them)."""
    if status == "illegal" and named is not None:
        head = f'"{named}" is not a legal action now.'
    else:
        head = "I could not read exactly one action from your reply."
    legal = f" Legal actions: {_choices(legal_names)}." if mode.lists_legal_moves else ""
    return f"{head}{legal} Answer with {ANSWER_FORMAT} only."


def harness_hash(mode: PromptMode = PromptMode()) -> str:
    """A short sha256 of the prompt templates, the reply parser and the mode: two results with
    the same hash were produced by the same harness (the env's own text hooks are versioned
    with the env id)."""
    from alem.text.llm import parsing

    h = hashlib.sha256()
    for module_file in (__file__, parsing.__file__):
        h.update(Path(module_file).read_bytes())
    h.update(json.dumps(dataclasses.asdict(mode), sort_keys=True).encode())
    return h.hexdigest()[:16]
