"""Players: one interface for everything that acts in a seat (random, scripted, trained, LLM).

One word for a thing that acts: a *player*. (A *policy* is what a learner trains, a
distribution over actions; a trained policy plays as a ``checkpoint`` player.) ``alem.policies``,
this module's name until 2026-12, still imports, with a DeprecationWarning.

The evaluator steps a batch of ``B`` envs. Whenever agent seat ``i`` must act it
calls the player in that seat with a :class:`Turn` and gets one action per env.

Two kinds of player:

- **device players** (``host = False``): ``act`` is a pure JAX function of
  ``(key, turn)``; the evaluator may ``jit`` it (the env and agent index are
  static, the arrays are traced). Random, scripted game players and trained
  checkpoints are of this kind.
- **host players** (``host = True``): ``act`` runs in Python on NumPy arrays
  (the evaluator moves the batch to the host once per step) and may do I/O,
  e.g. query an LLM. Only rows where ``turn.active`` is True need a real answer.

Named players are registered per env name (``"tic_tac_toe"``) or for every env
(``"*"``) by ``"module:attr"`` string, like envs, so registering imports nothing::

    register_player("*", "random", "alem.players:RandomPlayer")
    player = make_player("random", env)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv, TimeStep
from alem.errors import AlemError, did_you_mean
from alem.registry import load_entry_point

__all__ = ["Turn", "Player", "RandomPlayer", "register_player", "make_player", "player_names"]


@dataclasses.dataclass(frozen=True)
class Turn:
    """What a player sees when seat ``agent`` must act in a batch of ``B`` envs.

    Attributes:
        env: the (unwrapped) env; static.
        params: the env params (unbatched).
        agent: the seat that acts; static.
        state: batched env state ``[B, ...]`` (a player must not reveal hidden
            information to an agent; text players use ``env.render_text(state_b, agent)``).
        timestep: batched :class:`TimeStep` ``[B, ...]``; ``timestep.obs[:, agent]`` and
            ``timestep.action_mask[:, agent]`` are this seat's observation and legal moves.
        active: bool ``[B]``; rows where this seat acts now and the episode is still running.
        episode: int ``[B]``; index of the episode played in each row (host players use it
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


class Player:
    """Base class of evaluator players; see the module docstring."""

    #: True when ``act`` runs in Python on host arrays (e.g. LLM calls).
    host: ClassVar[bool] = False
    name: str = "player"

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        """int32 ``[B]`` actions for ``turn.agent`` (values on inactive rows are ignored)."""
        raise NotImplementedError

    def program_key(self) -> Hashable:
        """What a device player's traced ``act`` depends on besides :meth:`device_params`.

        The evaluator compiles one step per distinct key: device players with equal keys (and
        equal-shaped :meth:`device_params`) share a compiled program, so the partners of a
        cross-play pool compile once. Default: the player itself (shared with no other player).
        Override only when :meth:`act_with` reads nothing of ``self`` but what the key holds.
        """
        return self

    def device_params(self) -> Any:
        """Arrays the compiled step takes as an argument instead of baking them in (a pytree;
        None: none). :meth:`act_with` receives them."""
        return None

    def act_with(self, device_params: Any, key: jax.Array, turn: Turn) -> jax.Array:
        """:meth:`act` with :meth:`device_params` given explicitly (what the evaluator traces)."""
        return self.act(key, turn)

    def begin(self, env: MultiAgentEnv, params: Any, agent: int) -> None:
        """Called once before an evaluation in which this player plays seat ``agent``."""

    def end_episode(self, episode: int) -> None:
        """Called when episode ``episode`` ends (host players drop per-episode context)."""

    def close(self) -> None:
        """Release resources (servers, connections) after the evaluation."""

    def stats(self) -> dict[str, float]:
        """Counters to report next to the results (e.g. tokens, invalid replies)."""
        return {}


class RandomPlayer(Player):
    """Uniform over the legal actions (continuous envs: uniform over the action box)."""

    name = "random"

    def __init__(self, env: MultiAgentEnv | None = None):
        del env

    def program_key(self) -> Hashable:
        return type(self)  # every random player acts alike

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        from alem.rollout import random_actions, random_legal_actions

        if turn.env.continuous_actions:
            return random_actions(turn.env, key, turn.timestep)[:, turn.agent]
        return random_legal_actions(key, jnp.asarray(turn.action_mask))


class FunctionPlayer(Player):
    """A device player from a pure function ``fn(key, turn) -> int32 [B]``."""

    def __init__(self, fn: Callable[[jax.Array, Turn], jax.Array], name: str):
        self.fn, self.name = fn, name

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        return self.fn(key, turn)


# ---------------------------------------------------------------------------- registry
_PLAYERS: dict[tuple[str, str], str | Callable[..., Player]] = {}


def register_player(env_name: str, name: str, entry_point: str | Callable[..., Player]) -> None:
    """Register player ``name`` for env ``env_name`` (the id without ``-vN``; ``"*"``: all envs).

    ``entry_point`` is ``"module:attr"`` or a callable taking ``(env, **kwargs)``.
    """
    _PLAYERS[(env_name, name)] = entry_point


def _env_name(env: MultiAgentEnv) -> str:
    return env.id.rsplit("-v", 1)[0]


def player_names(env: MultiAgentEnv) -> list[str]:
    """Names :func:`make_player` accepts for ``env``."""
    name = _env_name(env)
    return sorted({p for (e, p) in _PLAYERS if e in (name, "*")})


def make_player(name: str, env: MultiAgentEnv, **kwargs: Any) -> Player:
    """Build the player registered as ``name`` for ``env`` (env-specific entries win over ``"*"``)."""
    env_name = _env_name(env)
    entry = _PLAYERS.get((env_name, name), _PLAYERS.get(("*", name)))
    if entry is None:
        known = player_names(env)
        raise AlemError(f"no player {name!r} for env {env.id!r}{did_you_mean(name, known)}; known: {known}")
    if isinstance(entry, str):
        entry = load_entry_point(entry)
    player = entry(env, **kwargs)
    if not isinstance(player, Player):
        raise AlemError(
            f"player entry {name!r} for {env.id!r} returned {type(player).__name__}, not a Player"
        )
    return player


def host_view(tree: Any) -> Any:
    """The tree as NumPy arrays (one device-to-host transfer)."""
    return jax.tree.map(np.asarray, jax.device_get(tree))


register_player("*", "random", "alem.players:RandomPlayer")
register_player("*", "llm", "alem.text.llm.player:LLMPlayer")  # text-capable envs only
register_player("*", "checkpoint", "alem.algos.checkpoint_player:CheckpointPlayer")  # checkpoint:<run dir>
