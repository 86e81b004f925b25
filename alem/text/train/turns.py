"""What a :class:`~alem.text.train.pool.TextEnvPool` hands a trainer: the pending turns (chat
prompts), the decisions read from the replies, each finished episode, and one step's result;
with the answer format and the per-decision reward credit trainers build on."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import numpy as np

__all__ = ["TextTurn", "Decision", "EpisodeResult", "PoolStep", "answer", "credit_rewards"]


def answer(name: str) -> str:
    """The answer format for move ``name``: ``{"action": "<name>"}`` (what a model should reply)."""
    return json.dumps({"action": name})


@dataclasses.dataclass(eq=False)
class TextTurn:
    """One seat of one env row that must act now: what it is shown and what it may answer.

    Attributes:
        env: the row of the pool.
        seat: the acting seat (agent index).
        agent: the seat's agent name (``env.agents[seat]``).
        role: the seat's role id (``env.agent_roles[seat]``) and ``role_name`` its name.
        seed: the episode's seed (``(pool seed, seed)`` fixes the deal).
        turn: env steps played in this episode before this decision.
        decision: this seat's earlier decisions in this episode.
        messages: the chat (``system``, earlier accepted exchanges, then ``user``).
        legal: the legal move names; ``legal_actions`` their action indices.
    """

    env: int
    seat: int
    agent: str
    role: int
    role_name: str
    seed: int
    turn: int
    decision: int
    messages: list[dict[str, str]]
    legal: list[str]
    legal_actions: list[int]

    @property
    def prompt(self) -> list[dict[str, str]]:
        """The messages (the name trainers' datasets use)."""
        return self.messages


@dataclasses.dataclass(eq=False)
class Decision:
    """A turn once answered: the reply, how it was read, the move played and its rewards.

    Attributes:
        turn: the :class:`TextTurn`.
        reply: the reply text (for scripted seats and :meth:`TextEnvPool.step_actions`:
            the canonical answer of the move, :func:`answer`).
        status: ``"ok"``, ``"unparseable"`` or ``"illegal"`` (see :func:`parse_reply`).
        invalid: the reply named no legal move, so ``invalid=`` chose ``action``.
        action: the action index played (``-1``: forfeit).
        action_name: its name (None for -1).
        env_illegal: the env flagged the move illegal (a forfeit, or an illegal index).
        step_reward: the seat's reward from the env step that applied this move.
        reward: the rewards credited to this decision (:func:`credit_rewards`; set when the
            episode ends): the seat's rewards from this move up to its next decision.
        scripted: a device policy of ``players=`` made this move.
    """

    turn: TextTurn
    reply: str
    status: str
    invalid: bool
    action: int
    action_name: str | None
    env_illegal: bool = False
    step_reward: float = 0.0
    reward: float = 0.0
    scripted: bool = False


@dataclasses.dataclass(eq=False)
class EpisodeResult:
    """A finished episode of one row.

    Attributes:
        env: the row; ``seed``: the episode's seed.
        returns: each seat's undiscounted return.
        length: env steps played.
        terminated, truncated: the env's flags; ``cut``: ended by the pool's ``max_steps``.
        decisions: how often each seat acted; ``invalid``: how many of its replies were invalid.
        trajectory: every recorded :class:`Decision` in play order (``record=True``).
    """

    env: int
    seed: int
    returns: tuple[float, ...]
    length: int
    terminated: bool
    truncated: bool
    cut: bool
    decisions: tuple[int, ...]
    invalid: tuple[int, ...]
    trajectory: list[Decision]


@dataclasses.dataclass(eq=False)
class PoolStep:
    """What :meth:`TextEnvPool.step` returns.

    Attributes:
        decisions: one :class:`Decision` per reply, in the order of the pending records.
        invalid: bool ``[len(replies)]``: which replies were invalid.
        rewards: float32 ``[N, num_agents]``: every seat's reward from this step (0 on idle rows).
        done: bool ``[N]``: the row's episode ended in this step.
        returns: float64 ``[N, num_agents]``: the episode returns of rows with ``done`` (NaN elsewhere).
        finished: the :class:`EpisodeResult` of every episode that ended in this step.
        pending: the next pending :class:`TextTurn` records.
    """

    decisions: list[Decision]
    invalid: np.ndarray
    rewards: np.ndarray
    done: np.ndarray
    returns: np.ndarray
    finished: list[EpisodeResult]
    pending: list[TextTurn]


def credit_rewards(rewards: np.ndarray, steps: Sequence[int]) -> np.ndarray:
    """Per-decision rewards of one seat: ``rewards[k]`` (the seat's reward after env step ``k``)
    credited to its latest decision made at or before step ``k``.

    ``steps`` are the env steps at which the seat decided (increasing). Decision ``j`` gets
    ``sum(rewards[steps[j]:steps[j+1]])`` (the last one: up to the end); rewards that arrive
    before the first decision go to the first one, so the credited rewards sum to the seat's
    return. A seat that never decided gets nothing (an empty array).

    >>> credit_rewards(np.array([0.0, 0.0, 1.0, 0.0, -2.0]), [0, 2]).tolist()
    [0.0, -1.0]
    """
    rewards = np.asarray(rewards, np.float64)
    if len(steps) == 0:
        return np.zeros(0)
    bounds = np.asarray(steps, np.int64).copy()
    bounds[0] = 0
    return np.add.reduceat(rewards, bounds) if len(rewards) else np.zeros(len(steps))
