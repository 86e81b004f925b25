"""Text hooks: the optional mixin of envs that language agents can play.

An env opts in by listing :class:`TextHooks` before the base class::

    class MyGame(TextHooks, MultiAgentEnv):
        def rules_text(self, params=None, agent=0): ...
        def render_text(self, state, agent=None, params=None, *, moves=True): ...
        def action_names(self, agent=0): ...

An env can also declare a relabelable vocabulary (:meth:`TextHooks.text_vocabulary`: the game's
name, seats, pieces, coordinates, move words), read through :meth:`TextHooks.labels`; then
:meth:`TextHooks.relabeled` gives a copy whose text uses fresh, seeded labels (``llm.obfuscate``),
so a model cannot lean on memorised names and openings.

This module is light on purpose (no :mod:`alem.text`, which pulls in HTTP backends), so
env modules can import it freely.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

__all__ = ["TEXT_HOOKS", "TextHooks", "words"]

#: Names of the text hooks (methods of :class:`TextHooks`); wrappers and adapters forward them.
TEXT_HOOKS: tuple[str, ...] = (
    "rules_text",
    "rules_summary",
    "render_text",
    "to_json",
    "action_from_json",
    "action_names",
    "action_aliases",
    "legal_action_names",
    "parse_action",
    "parse_move",
    "action_format",
)


def words(text: str) -> str:
    """``text`` lower-cased, reduced to its alphanumeric words joined by single spaces.

    >>> words("  Call!  (raise) ")
    'call raise'
    """
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _one_letter(key: str) -> bool:
    return len(key) == 1 and key.isalpha()


_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"

#: The kinds of label :meth:`TextHooks.relabeled` draws: a made-up word, the same capitalised,
#: an upper- or lower-case letter, a digit.
LABEL_KINDS = ("word", "name", "upper", "lower", "digit")


def _draw_labels(kind: str, n: int, avoid: set[str], rng: random.Random) -> tuple[str, ...]:
    """``n`` distinct fresh labels of ``kind``, none of them in ``avoid`` (any case)."""
    avoid = {a.lower() for a in avoid}
    if kind in ("upper", "lower", "digit"):
        pool = {"upper": "ABCDEFGHJKLMNPRSTUVWYZ", "lower": "bdefghjkmnpqrstuvwyz", "digit": "123456789"}[
            kind
        ]
        options = [c for c in pool if c.lower() not in avoid]
        if len(options) < n:
            options = list(pool)  # a permutation of the defaults still hides which is which
        return tuple(rng.sample(options, n))
    out: list[str] = []
    while len(out) < n:
        w = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(2)) + rng.choice(_CONSONANTS)
        if w not in avoid and w not in out:
            out.append(w.capitalize() if kind == "name" else w)
    return tuple(out)


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

    # ------------------------------------------------------------------ vocabulary
    def text_vocabulary(self) -> Mapping[str, tuple[str, tuple[str, ...]]]:
        """The relabelable words of the env's text: ``group -> (kind, default labels)``, a kind of
        :data:`LABEL_KINDS`. Empty (the default): the env cannot be relabeled. Text hooks read
        each group through :meth:`labels`, so a :meth:`relabeled` copy renders fresh ones."""
        return {}

    def labels(self, group: str) -> tuple[str, ...]:
        """The labels of ``group`` this env renders: the defaults, or a relabeled copy's."""
        drawn = self.__dict__.get("_text_labels")
        return drawn[group] if drawn is not None else self.text_vocabulary()[group][1]

    @property
    def relabeled_text(self) -> bool:
        """Whether this is a :meth:`relabeled` copy."""
        return self.__dict__.get("_text_labels") is not None

    def relabeled(self, seed: int) -> TextHooks:
        """A copy whose text (rules, views, action names) uses fresh labels drawn from ``seed``
        for every group of :meth:`text_vocabulary`; the same seed draws the same labels.

        The copy parses its own action names only (in full, or alone in a sentence): aliases
        and env-specific readings speak the original vocabulary, which the copy does not
        accept. Actions, states and play are unchanged; only text differs.
        """
        from alem.errors import AlemError

        vocab = self.text_vocabulary()
        if not vocab:
            raise AlemError(
                f"{self.id} has no relabelable text vocabulary (TextHooks.text_vocabulary), so it "
                "cannot be obfuscated"
            )
        rng = random.Random(f"alem-relabel:{self.id}:{int(seed)}")
        used = {w for _, defaults in vocab.values() for w in defaults}
        drawn: dict[str, tuple[str, ...]] = {}
        for group in sorted(vocab):
            kind, defaults = vocab[group]
            if kind not in LABEL_KINDS:
                raise AlemError(f"{self.id}: text vocabulary group {group!r} has unknown kind {kind!r}")
            drawn[group] = _draw_labels(kind, len(defaults), used, rng)
            used |= set(drawn[group])
        out = copy.copy(self)
        out.__dict__["_text_labels"] = drawn
        out.__dict__.pop("_name_tables", None)
        # an env's own parser reads its original vocabulary; the copy reads its names only
        out.__dict__["parse_action"] = TextHooks.parse_action.__get__(out)
        return out

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

    def render_text(
        self, state: Any, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        """One (unbatched) ``state`` as text, as ``agent`` sees it (``None``: everything).

        ``moves=False`` leaves out what the view says about the moves ``agent`` may make now
        (Kuhn poker's "pass (check) or bet (1 chip)"), keeping the state and whose turn it is:
        the view of ``llm.legal_moves=none``. A view that names no available moves ignores it;
        every text env takes it (:class:`~alem.text.llm.prompts.PromptMode` refuses one that
        does not).
        """
        raise NotImplementedError(f"{self.id} has no text rendering")

    def to_json(self, state: Any, agent: int, params: Any = None) -> dict[str, Any]:
        """One (unbatched) ``state`` as ``agent`` sees it, as a JSON object (``llm.format=json``).

        ``{"env": id, "seat": agent, ...}`` (a :meth:`relabeled` copy: its made-up game name) and the family's fields (:meth:`json_view`, whose
        docstring is the family's schema), in the labels :meth:`render_text` uses; never
        information ``agent`` may not see. Host-side.
        """
        # a relabeled copy names its made-up game, not the id it would give away
        name = self.labels("game")[0] if self.relabeled_text and "game" in self.text_vocabulary() else self.id
        return {"env": name, "seat": int(agent), **self.json_view(state, int(agent), params)}

    def json_view(self, state: Any, agent: int, params: Any = None) -> dict[str, Any]:
        """The family's fields of :meth:`to_json`."""
        raise NotImplementedError(f"{self.id} has no JSON view")

    def action_from_json(self, reply: Any, agent: int = 0) -> int | None:
        """The action a JSON reply names: ``{"action": <name or index>}``; None when ``reply`` is
        not such an object or names no action of ``agent``."""
        if not isinstance(reply, dict) or "action" not in reply:
            return None
        said = reply["action"]
        if isinstance(said, int) and not isinstance(said, bool):
            return said if 0 <= said < len(self.action_names(agent)) else None
        return self.parse_action(said, agent) if isinstance(said, str) else None

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
            if not self.relabeled_text:  # aliases speak the original vocabulary
                table.update({words(k): v for k, v in self.action_aliases(agent).items()})
            found = cache[agent] = (names, table)
        return found

    def action_format(self, agent: int = 0) -> str | None:
        """How actions are named, in a sentence, for a game whose names are too many to list (a
        prompt that hides the legal moves names the format instead of every action); None (the
        default): the names are listed."""
        return None

    def parse_move(self, state: Any, text: str, agent: int = 0, params: Any = None) -> int | None:
        """The action ``text`` names in one (unbatched, host) ``state``: :meth:`parse_action` (the
        default: names need no position). An env whose replies are read against the position
        overrides it (chess's SAN: which knight ``Nf3`` moves); the reply parser calls it when it
        has the position."""
        return self.parse_action(text, agent)

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
        if re.fullmatch(r"(action )?\d+", said) and not self.relabeled_text:
            j = int(said.split()[-1])
            return j if 0 <= j < len(names) else None
        padded = f" {said} "
        hits = {v for k, v in table.items() if k and not _one_letter(k) and f" {k} " in padded}
        return hits.pop() if len(hits) == 1 else None
