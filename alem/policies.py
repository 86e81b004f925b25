"""Players for evaluation: one interface for random, scripted, trained and LLM policies.

The evaluator steps a batch of ``B`` envs. Whenever agent seat ``i`` must act it
calls the policy in that seat with a :class:`Turn` and gets one action per env.

Two kinds of policy:

- **device policies** (``host = False``): ``act`` is a pure JAX function of
  ``(key, turn)``; the evaluator may ``jit`` it (the env and agent index are
  static, the arrays are traced). Random, scripted game players and trained
  checkpoints are of this kind.
- **host policies** (``host = True``): ``act`` runs in Python on NumPy arrays
  (the evaluator moves the batch to the host once per step) and may do I/O,
  e.g. query an LLM. Only rows where ``turn.active`` is True need a real answer.

Named policies are registered per env name (``"tic_tac_toe"``) or for every env
(``"*"``) by ``"module:attr"`` string, like envs, so registering imports nothing::

    register_policy("*", "random", "alem.policies:RandomPolicy")
    policy = make_policy("random", env)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv, TimeStep
from alem.errors import AlemError, did_you_mean
from alem.registry import load_entry_point

__all__ = ["Turn", "Policy", "RandomPolicy", "register_policy", "make_policy", "policy_names"]


@dataclasses.dataclass(frozen=True)
class Turn:
    """What a policy sees when seat ``agent`` must act in a batch of ``B`` envs.

    Attributes:
        env: the (unwrapped) env; static.
        params: the env params (unbatched).
        agent: the seat that acts; static.
        state: batched env state ``[B, ...]`` (a policy must not reveal hidden
            information to an agent; text policies use ``env.render_text(state_b, agent)``).
        timestep: batched :class:`TimeStep` ``[B, ...]``; ``timestep.obs[:, agent]`` and
            ``timestep.action_mask[:, agent]`` are this seat's observation and legal moves.
        active: bool ``[B]``; rows where this seat acts now and the episode is still running.
        episode: int ``[B]``; index of the episode played in each row (host policies use it
            to keep per-episode context such as a chat history).
    """

    env: MultiAgentEnv
    params: Any
    agent: int
    state: Any
    timestep: TimeStep
    active: Any
    episode: Any

    @property
    def obs(self):
        return self.timestep.obs[:, self.agent]

    @property
    def action_mask(self):
        return self.timestep.action_mask[:, self.agent]


class Policy:
    """Base class of evaluator players; see the module docstring."""

    #: True when ``act`` runs in Python on host arrays (e.g. LLM calls).
    host: ClassVar[bool] = False
    name: str = "policy"

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        """int32 ``[B]`` actions for ``turn.agent`` (values on inactive rows are ignored)."""
        raise NotImplementedError

    def begin(self, env: MultiAgentEnv, params: Any, agent: int) -> None:
        """Called once before an evaluation in which this policy plays seat ``agent``."""

    def end_episode(self, episode: int) -> None:
        """Called when episode ``episode`` ends (host policies drop per-episode context)."""

    def close(self) -> None:
        """Release resources (servers, connections) after the evaluation."""

    def stats(self) -> dict[str, float]:
        """Counters to report next to the results (e.g. tokens, invalid replies)."""
        return {}


class RandomPolicy(Policy):
    """Uniform over the legal actions (continuous envs: uniform over the action box)."""

    name = "random"

    def __init__(self, env: MultiAgentEnv | None = None):
        del env

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        from alem.rollout import random_actions, random_legal_actions

        if turn.env.continuous_actions:
            return random_actions(turn.env, key, turn.timestep)[:, turn.agent]
        return random_legal_actions(key, jnp.asarray(turn.action_mask))


class FunctionPolicy(Policy):
    """A device policy from a pure function ``fn(key, turn) -> int32 [B]``."""

    def __init__(self, fn: Callable[[jax.Array, Turn], jax.Array], name: str):
        self.fn, self.name = fn, name

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        return self.fn(key, turn)


# ---------------------------------------------------------------------------- registry
_POLICIES: dict[tuple[str, str], str | Callable[..., Policy]] = {}


def register_policy(env_name: str, name: str, entry_point: str | Callable[..., Policy]) -> None:
    """Register policy ``name`` for env ``env_name`` (the id without ``-vN``; ``"*"``: all envs).

    ``entry_point`` is ``"module:attr"`` or a callable taking ``(env, **kwargs)``.
    """
    _POLICIES[(env_name, name)] = entry_point


def _env_name(env: MultiAgentEnv) -> str:
    return env.id.rsplit("-v", 1)[0]


def policy_names(env: MultiAgentEnv) -> list[str]:
    """Names :func:`make_policy` accepts for ``env``."""
    name = _env_name(env)
    return sorted({p for (e, p) in _POLICIES if e in (name, "*")})


def make_policy(name: str, env: MultiAgentEnv, **kwargs: Any) -> Policy:
    """Build the policy registered as ``name`` for ``env`` (env-specific entries win over ``"*"``)."""
    env_name = _env_name(env)
    entry = _POLICIES.get((env_name, name), _POLICIES.get(("*", name)))
    if entry is None:
        known = policy_names(env)
        raise AlemError(f"no policy {name!r} for env {env.id!r}{did_you_mean(name, known)}; known: {known}")
    if isinstance(entry, str):
        entry = load_entry_point(entry)
    policy = entry(env, **kwargs)
    if not isinstance(policy, Policy):
        raise AlemError(
            f"policy entry {name!r} for {env.id!r} returned {type(policy).__name__}, not a Policy"
        )
    return policy


def host_view(tree: Any) -> Any:
    """The tree as NumPy arrays (one device-to-host transfer)."""
    return jax.tree.map(np.asarray, jax.device_get(tree))


register_policy("*", "random", "alem.policies:RandomPolicy")
register_policy("*", "llm", "alem.text.llm.player:LLMPolicy")  # text-capable envs only
register_policy("*", "checkpoint", "alem.algos.checkpoint_player:CheckpointPolicy")  # checkpoint:<run dir>
