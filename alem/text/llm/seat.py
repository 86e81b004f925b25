"""One text seat: the chat a seat is shown and the move an invalid reply plays.

Shared by :class:`~alem.text.llm.player.LLMPlayer` (evaluation) and
:class:`~alem.text.train.pool.TextEnvPool` (training), so a model sees the same prompt, and an
unusable reply plays the same move, in both.

:func:`turn_messages` is the prompt of one decision: the seat's system message (rules and
answer format, :func:`~alem.text.llm.prompts.system_prompt`), the last ``history`` accepted
exchanges of the episode, then the user message (the seat's view and, when listed, its legal
moves, :func:`~alem.text.llm.prompts.turn_prompt`).

The invalid-reply rule (``invalid=`` in both; :data:`INVALID_RULES`) decides what a reply that
names no legal move plays (the player asks again first, up to ``reprompts`` times; the pool
never does):

- ``"random"``: a uniformly random legal move: ``legal[k]`` with ``k`` drawn by NumPy's
  ``default_rng`` seeded from :func:`stable_seed` of (the player's ``seed`` or the pool's
  ``seed``, ``"invalid"``, the episode, the seat, the seat's decision in the episode).
  The episode is the arena's episode index, which is the pool's episode seed (seed ``s`` of
  ``TextEnvPool.reset`` deals like episode ``s``), so the move depends on neither the batch
  layout nor resumes;
- ``"first"``: the first legal move;
- ``"forfeit"``: an illegal move (-1), so the env's own illegal-action rule applies
  (``illegal_action="lose"`` in games that offer it ends the game as a loss; the default
  ``"replace"`` plays the env's documented default move and flags it).

With no legal move at all every rule plays -1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from alem.core import MultiAgentEnv
from alem.text.llm.prompts import PromptMode, system_prompt, turn_prompt

__all__ = ["INVALID_RULES", "invalid_move", "stable_seed", "turn_messages"]

#: Values of ``invalid=``: what a reply that names no legal move plays.
INVALID_RULES = ("random", "first", "forfeit")

Message = dict[str, str]


def stable_seed(*parts: Any) -> int:
    """A 31-bit seed from the parts' text (stable across runs, processes, batch sizes and resumes;
    any integers, negative ones too)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def invalid_move(rule: str, legal: Sequence[int], seed: int, episode: int, seat: int, decision: int) -> int:
    """The move ``rule`` plays for an invalid reply at ``seat``'s ``decision``-th decision of
    ``episode`` (see the module docstring); -1 is the forfeit."""
    if rule == "forfeit" or not legal:
        return -1
    if rule == "first":
        return int(legal[0])
    rng = np.random.default_rng(stable_seed(int(seed), "invalid", int(episode), int(seat), int(decision)))
    return int(legal[rng.integers(len(legal))])


def turn_messages(
    env: MultiAgentEnv,
    params: Any,
    state: Any,
    seat: int,
    legal_names: Sequence[str],
    mode: PromptMode,
    *,
    system: str | None = None,
    past: Sequence[Message] = (),
    history: int = 0,
) -> list[Message]:
    """The chat of one decision of ``seat`` in one (unbatched, host) ``state``: system message,
    the last ``history`` exchanges of ``past`` (user, assistant pairs), the user message last.

    ``system`` is the seat's :func:`~alem.text.llm.prompts.system_prompt`, passed in by callers
    that keep it for the episode (None: built here)."""
    if system is None:
        system = system_prompt(env, params, seat, mode)
    view = mode.view(env, state, seat, params)
    user = {"role": "user", "content": turn_prompt(view, legal_names, mode)}
    kept = list(past[-2 * history :]) if history else []
    return [{"role": "system", "content": system}, *kept, user]
