"""Text hooks: the optional mixin of envs that language agents can play.

An env opts in by listing :class:`TextHooks` before the base class::

    class MyGame(TextHooks, MultiAgentEnv):
        def rules_text(self, params=None, agent=0): ...
        def render_text(self, state, agent=None, params=None): ...
        def action_names(self, agent=0): ...

This module is light on purpose (no :mod:`alem.text`, which pulls in HTTP backends), so
env modules can import it freely.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np

__all__ = ["TEXT_HOOKS", "TextHooks", "words"]

#: Names of the text hooks (methods of :class:`TextHooks`); wrappers and adapters forward them.
TEXT_HOOKS: tuple[str, ...] = (
    "rules_text",
    "rules_summary",
    "render_text",
    "action_names",
    "action_aliases",
    "legal_action_names",
    "parse_action",
)


def words(text: str) -> str:
    """``text`` lower-cased, reduced to its alphanumeric words joined by single spaces.

    >>> words("  Call!  (raise) ")
    'call raise'
    """
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _one_letter(key: str) -> bool:
    return len(key) == 1 and key.isalpha()


class TextHooks:
    """Mixin giving an env text support (``supports_text = True``).

    Subclasses implement :meth:`rules_text`, :meth:`render_text` and :meth:`action_names`
    and may extend :meth:`action_aliases` or override :meth:`parse_action`. The mixin
    goes before the base class: ``class X(TextHooks, MultiAgentEnv)``; it relies on the
    env's ``id``, ``default_params`` and ``action_mask``.
    """

    #: Whether the env has text hooks (rules, render_text, action names, parser).
    supports_text: ClassVar[bool] = True

    id: str
    default_params: Any

    def rules_text(self, params: Any = None, agent: int = 0) -> str:
        """The rules of the game as told to ``agent`` (a prompt's system part)."""
        raise NotImplementedError(f"{self.id} has no rules text")

    def rules_summary(self, params: Any = None, agent: int = 0) -> str:
        """The game and ``agent``'s seat in one sentence, without the rules (``llm.rules=short``).

        The default is the first sentence of :meth:`rules_text`, which names the game and the
        seat in every text env alem ships; override it when that sentence says more.
        """
        text = self.rules_text(params, agent).strip()
        found = re.match(r"(.+?[.!?])(?=\s|$)", text, re.DOTALL)
        return " ".join((found.group(1) if found else text).split())

    def render_text(self, state: Any, agent: int | None = None, params: Any = None) -> str:
        """One (unbatched) ``state`` as text, as ``agent`` sees it (``None``: everything)."""
        raise NotImplementedError(f"{self.id} has no text rendering")

    def action_names(self, agent: int = 0) -> list[str]:
        """Names of ``agent``'s actions, indexed like the action space."""
        raise NotImplementedError(f"{self.id} has no action names")

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        """Extra accepted spellings (lower case) for :meth:`parse_action`."""
        return {}

    def legal_action_names(self, state: Any, agent: int, params: Any = None) -> list[str]:
        """Names of ``agent``'s legal actions in one (unbatched) ``state``; host-side."""
        params = self.default_params if params is None else params
        mask = np.asarray(self.action_mask(state, params))[agent]  # type: ignore[attr-defined]
        names = self.action_names(agent)
        return [n for j, n in enumerate(names) if mask[j]]

    def _name_table(self, agent: int) -> tuple[list[str], dict[str, int]]:
        """``agent``'s action names and its lookup table (normalised name or alias -> index).

        Built once per env instance and agent: names and aliases take no state, so they are
        static (parsing is on the host hot path of batched text play).
        """
        cache = self.__dict__.setdefault("_name_tables", {})
        found = cache.get(agent)
        if found is None:
            names = self.action_names(agent)
            table = {words(n): j for j, n in enumerate(names)}
            table.update({words(k): v for k, v in self.action_aliases(agent).items()})
            found = cache[agent] = (names, table)
        return found

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """Action index named in free ``text``, or None when it names none or several.

        Accepts an action name or alias (case and punctuation ignored), the name
        inside a sentence when exactly one name occurs, and a bare index. One-letter
        aliases (``h`` for heads) count only as the whole reply: inside a sentence they are
        mostly pieces of words ("can't" -> "can t", "it's" -> "it s").
        """
        names, table = self._name_table(agent)
        said = words(text)
        if said in table:
            return table[said]
        if re.fullmatch(r"(action )?\d+", said):
            j = int(said.split()[-1])
            return j if 0 <= j < len(names) else None
        padded = f" {said} "
        hits = {v for k, v in table.items() if k and not _one_letter(k) and f" {k} " in padded}
        return hits.pop() if len(hits) == 1 else None
