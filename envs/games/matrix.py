"""Matrix games: one-shot and repeated normal-form games, 2-player and n-player.

Card
----
- **Agents**: ``player_0 .. player_{N-1}`` (N = 2 for the named tables; any N for
  custom payoff tensors and for the public goods game). One role.
- **Actions**: ``Discrete(A)``; every action is always legal (the mask is all
  True). Out-of-range indices follow ``illegal_action="replace"``: the action
  becomes 0 and ``info["illegal_action"]`` is set for that agent.
- **Observation**: the last ``history_len`` joint actions, most recent first, as
  one-hot vectors over ``A + 1`` slots (slot 0 means "no round played yet"),
  flattened to ``float32 [history_len * N * (A + 1)]``. With ``ego_centric=True``
  (default) each agent sees itself first, then the others in cyclic order
  (``i+1, i+2, ...``), so one shared policy can play every seat.
- **Rewards**: each round every agent receives its entry of the payoff tensor
  ``params.payoffs[i, a_0, ..., a_{N-1}]`` (public goods: see
  :class:`PublicGoodsGame`).
- **Termination**: after ``params.num_rounds`` rounds (``terminated``; or
  ``truncated`` when ``params.truncate_at_horizon`` is True, for infinite-horizon
  discounted play), or earlier with probability ``1 - params.continue_prob`` after
  each round (a random stopping time; makes the env stochastic).
- **Reference**: the tables of OpenSpiel 2.0.2's ``matrix_sh``, ``matrix_mp``,
  ``matrix_rps``, ``matrix_coordination``, ``matrix_cd`` (chicken) and
  ``matrix_bos`` are reproduced exactly. The prisoner's dilemma uses the
  canonical Axelrod payoffs (R=3, S=0, T=5, P=1), not OpenSpiel's (5, 0, 10, 1)
  where 2R = T + S; climbing and penalty(k) are Claus & Boutilier (1998).
- **Text**: rules with the payoff table, per-agent history rendering, action
  names with one-letter aliases, parser.
- **Version**: v0.

Payoffs live in ``params`` so a batch of games can be run by ``vmap`` over params.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import MultiAgentEnv
from alem.envs.games.payoffs import GAMES, payoff_table
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = [
    "GAMES",
    "payoff_table",
    "RepeatedGameState",
    "MatrixGameParams",
    "PublicGoodsParams",
    "RepeatedGame",
    "MatrixGame",
    "PublicGoodsGame",
]


@struct.dataclass
class RepeatedGameState:
    round: jax.Array  # int32 [], rounds played
    history: jax.Array  # int32 [H, N], most recent first; -1 = no round yet
    returns: jax.Array  # float32 [N], summed rewards this episode (for text)


@struct.dataclass
class MatrixGameParams:
    payoffs: jax.Array  # float32 [N, A, ..., A]
    num_rounds: jax.Array  # int32 []
    continue_prob: jax.Array  # float32 []
    truncate_at_horizon: jax.Array  # bool []


@struct.dataclass
class PublicGoodsParams:
    endowment: jax.Array  # float32 []
    multiplier: jax.Array  # float32 [], the pot is multiplied by this and shared equally
    num_rounds: jax.Array
    continue_prob: jax.Array
    truncate_at_horizon: jax.Array


def _horizon_params(num_rounds: int, continue_prob: float, truncate_at_horizon: bool) -> dict:
    if int(num_rounds) < 1:
        raise EnvArgumentError(f"num_rounds must be >= 1, got {num_rounds}")
    if not 0.0 < float(continue_prob) <= 1.0:
        raise EnvArgumentError(f"continue_prob must be in (0, 1], got {continue_prob}")
    return dict(
        num_rounds=jnp.int32(num_rounds),
        continue_prob=jnp.float32(continue_prob),
        truncate_at_horizon=jnp.bool_(truncate_at_horizon),
    )


class RepeatedGame(TextHooks, MultiAgentEnv[RepeatedGameState, Any]):
    """Shared core of simultaneous-move repeated games; subclasses define :meth:`payoff`."""

    def __init__(
        self,
        num_agents: int,
        action_names: tuple[str, ...],
        *,
        history_len: int = 1,
        ego_centric: bool = True,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        if int(history_len) < 1:
            raise EnvArgumentError(f"history_len must be >= 1, got {history_len}")
        if int(num_agents) < 2:
            raise EnvArgumentError(f"num_agents must be >= 2, got {num_agents}")
        self.agents = tuple(f"player_{i}" for i in range(num_agents))
        self.agent_roles = np.zeros(num_agents, dtype=np.int32)
        self.role_names = ("player",)
        self._names = tuple(action_names)
        self.history_len = int(history_len)
        self.ego_centric = bool(ego_centric)
        n, a = num_agents, len(action_names)
        # order[i] lists whose action agent i sees in each of its N slots.
        shift = (
            np.arange(n)[:, None] + np.arange(n)[None, :] if ego_centric else np.tile(np.arange(n), (n, 1))
        )
        self._order = np.asarray(shift % n, dtype=np.int32)
        self._obs_dim = self.history_len * n * (a + 1)

    # -- description
    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0.0, 1.0, (self._obs_dim,))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(len(self._names))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    @property
    def stochastic(self) -> bool:  # type: ignore[override]
        return bool(self.default_params.continue_prob < 1.0)

    @property
    def episode_steps_hint(self) -> float:
        p = self.default_params
        stop = 1.0 - float(p.continue_prob)  # expected length of the geometric stop, capped by the horizon
        return float(p.num_rounds) if stop <= 0 else min(float(p.num_rounds), 1.0 / stop)

    def check_params(self, params: Any) -> None:
        """The type, and where concrete: ``num_rounds >= 1`` and ``continue_prob`` in (0, 1]."""
        super().check_params(params)
        self._check_param_range(params, "num_rounds", 1)
        self._check_param_range(params, "continue_prob", 0.0, 1.0, low_open=True)

    def payoff(self, params: Any, joint_action: jax.Array) -> jax.Array:
        """float32 ``[N]`` rewards of one joint action ``[N]``."""
        raise NotImplementedError

    # -- dynamics
    def observe(self, state: RepeatedGameState, params: Any) -> jax.Array:
        a = len(self._names)
        seen = state.history[:, self._order]  # [H, N(agent), N(slot)]
        onehot = jax.nn.one_hot(seen + 1, a + 1, dtype=jnp.float32)  # [H, N, N, A+1]
        return jnp.moveaxis(onehot, 1, 0).reshape(self.num_agents, -1)

    def reset_env(self, key, params):
        n = self.num_agents
        state = RepeatedGameState(
            round=jnp.int32(0),
            history=jnp.full((self.history_len, n), -1, dtype=jnp.int32),
            returns=jnp.zeros((n,), jnp.float32),
        )
        return state, self.timestep(state, params, jnp.zeros((n,), jnp.float32), info={"round": state.round})

    def step_env(self, key, state, actions, params):
        reward = self.payoff(params, actions).astype(jnp.float32)
        history = jnp.concatenate([actions[None, :], state.history[:-1]], axis=0)
        state = RepeatedGameState(round=state.round + 1, history=history, returns=state.returns + reward)
        # With shared (unbatched) params this stays a real branch under vmap, so the
        # common continue_prob == 1 case draws no random numbers.
        stopped = jax.lax.cond(
            params.continue_prob < 1.0,
            lambda: jax.random.uniform(key) >= params.continue_prob,
            lambda: jnp.bool_(False),
        )
        horizon = state.round >= params.num_rounds
        terminated = stopped | (horizon & ~params.truncate_at_horizon)
        truncated = horizon & params.truncate_at_horizon & ~stopped
        return state, self.timestep(
            state, params, reward, terminated=terminated, truncated=truncated, info={"round": state.round}
        )

    # -- text
    def action_names(self, agent: int = 0) -> list[str]:
        return list(self._names)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        initials = [n[0] for n in self._names]
        aliases = {c: j for j, c in enumerate(initials) if initials.count(c) == 1}
        aliases.update({f"i {n}": j for j, n in enumerate(self._names)})
        aliases.update({f"i choose {n}": j for j, n in enumerate(self._names)})
        return aliases

    def _rounds_text(self, params) -> str:
        r = int(params.num_rounds)
        text = "once (a one-shot game)" if r == 1 else f"for up to {r} rounds"
        if float(params.continue_prob) < 1.0:
            text += f"; after each round the game goes on with probability {float(params.continue_prob):g}"
        return text

    def json_view(self, state: RepeatedGameState, agent: int, params: Any = None) -> dict[str, Any]:
        """``round`` (rounds played), ``num_rounds``, ``your_total``, ``history``: the remembered
        rounds, most recent first, each ``{"you": move, "player <j>": move}``."""
        params = self.default_params if params is None else params
        label = lambda j: "you" if j == agent else f"player {j}"
        rounds = [h for h in np.asarray(state.history) if h[0] >= 0]
        return {
            "round": int(state.round),
            "num_rounds": int(params.num_rounds),
            "your_total": float(np.asarray(state.returns)[agent]),
            "history": [{label(j): self._names[h[j]] for j in self._order[agent]} for h in rounds],
        }

    def render_text(
        self, state: RepeatedGameState, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        # past rounds' moves are the history; no available moves to leave out
        params = self.default_params if params is None else params
        rnd = int(state.round)
        hist = np.asarray(state.history)
        returns = np.asarray(state.returns)
        lines = [
            f"Round {rnd + 1} of {int(params.num_rounds)}."
            if rnd < int(params.num_rounds)
            else "The game is over."
        ]
        who = range(self.num_agents) if agent is None else self._order[agent]

        def label(j: int) -> str:
            return "you" if agent is not None and j == agent else f"player {j}"

        if agent is not None:
            lines.append(f"Your total payoff so far: {returns[agent]:g}.")
        else:
            lines.append(
                "Totals so far: "
                + ", ".join(f"player {j}: {returns[j]:g}" for j in range(self.num_agents))
                + "."
            )
        played = [h for h in hist if h[0] >= 0]
        if played:
            lines.append("Recent rounds (most recent first):")
            for k, h in enumerate(played):
                moves = ", ".join(f"{label(j)} played {self._names[h[j]]}" for j in who)
                lines.append(f"  {rnd - k}: {moves}")
        else:
            lines.append("No rounds have been played yet.")
        return "\n".join(lines)

    def render_rgb(self, state: RepeatedGameState, params: Any = None) -> np.ndarray:
        """Rows are the remembered rounds (most recent on top), columns the players."""
        cell = 24
        palette = np.array(
            [[70, 130, 180], [220, 80, 60], [90, 170, 90], [230, 180, 50], [150, 100, 200]], np.uint8
        )
        hist = np.asarray(state.history)
        colors = np.where(hist[..., None] >= 0, palette[np.maximum(hist, 0) % len(palette)], 60)
        img = np.repeat(np.repeat(colors.astype(np.uint8), cell, axis=0), cell, axis=1)
        img[::cell, :] = 255
        img[:, ::cell] = 255
        return img


class MatrixGame(RepeatedGame):
    """A named or custom normal-form game, played once or repeated (see the module card).

    Args:
        game: a name from :data:`GAMES`, or ``"custom"`` with ``payoffs``.
        num_rounds: rounds per episode (1 = one-shot).
        history_len: how many past joint actions the observation holds.
        continue_prob: probability that the game goes on after each round.
        truncate_at_horizon: report the round limit as truncation, not termination.
        k: the penalty game's miscoordination payoff.
        num_actions: actions of the coordination game.
        payoffs: custom ``[N, A, ..., A]`` payoff tensor (with ``game="custom"``).
        action_names: names for a custom game's actions.
    """

    def __init__(
        self,
        game: str = "prisoners_dilemma",
        *,
        num_rounds: int = 1,
        history_len: int = 1,
        continue_prob: float = 1.0,
        truncate_at_horizon: bool = False,
        k: float = -10.0,
        num_actions: int = 2,
        payoffs: Any = None,
        action_names: tuple[str, ...] | None = None,
        ego_centric: bool = True,
        illegal_action: str = "replace",
    ):
        if game == "custom":
            if payoffs is None:
                raise EnvArgumentError("MatrixGame(game='custom') needs a `payoffs` tensor [N, A, ..., A]")
            table = np.asarray(payoffs, dtype=np.float32)
            n = table.shape[0] if table.ndim else 0
            if table.ndim != n + 1 or n < 2 or len(set(table.shape[1:])) != 1:
                raise EnvArgumentError(
                    f"custom payoffs must have shape [N, A, ..., A] with N >= 2 action axes, got {table.shape}"
                )
            names = tuple(action_names) if action_names else tuple(string.ascii_lowercase[: table.shape[1]])
            self.title = "a custom matrix game"
        else:
            if payoffs is not None:
                raise EnvArgumentError(f"payoffs are only accepted with game='custom', not game={game!r}")
            if game == "coordination" and int(num_actions) < 2:
                raise EnvArgumentError(f"coordination needs num_actions >= 2, got {num_actions}")
            table = payoff_table(game, k=k, num_actions=num_actions)
            names = GAMES[game][1] or tuple(f"option_{j}" for j in range(int(num_actions)))
            names = tuple(action_names) if action_names else names
            self.title = GAMES[game][0]
        if len(names) != table.shape[1]:
            raise EnvArgumentError(f"{len(names)} action names for {table.shape[1]} actions")
        self.game = game
        super().__init__(
            table.shape[0],
            names,
            history_len=history_len,
            ego_centric=ego_centric,
            illegal_action=illegal_action,
        )
        self._default_params = MatrixGameParams(
            payoffs=jnp.asarray(table), **_horizon_params(num_rounds, continue_prob, truncate_at_horizon)
        )

    @property
    def zero_sum(self) -> bool:  # type: ignore[override]
        return bool(np.allclose(np.asarray(self.default_params.payoffs).sum(axis=0), 0.0))

    @property
    def cooperative(self) -> bool:  # type: ignore[override]
        """A common-payoff game: every agent's payoff tensor is the same."""
        table = np.asarray(self.default_params.payoffs)
        return bool(np.allclose(table, table[:1]))

    def payoff(self, params: MatrixGameParams, joint_action: jax.Array) -> jax.Array:
        return params.payoffs[(slice(None), *joint_action)]

    def rules_text(self, params: MatrixGameParams | None = None, agent: int = 0) -> str:
        params = self.default_params if params is None else params
        table = np.asarray(params.payoffs)
        n = self.num_agents
        others = [j for j in self._order[agent] if j != agent]
        lines = [
            f"You are player {agent} in {self.title}, a simultaneous-move game for {n} players, "
            f"played {self._rounds_text(params)}.",
            f"Each round every player secretly picks one action: {', '.join(self._names)}.",
            "Payoffs for each combination (higher is better):",
        ]
        for joint in itertools.product(range(len(self._names)), repeat=n):
            yours = table[(agent, *joint)]
            theirs = ", ".join(f"player {j} gets {table[(j, *joint)]:g}" for j in others)
            desc = ", ".join(f"player {j} plays {self._names[joint[j]]}" for j in others)
            lines.append(f"- you play {self._names[joint[agent]]} and {desc}: you get {yours:g}, {theirs}.")
        lines.append("Your goal is to maximise your own total payoff.")
        return "\n".join(lines)


class PublicGoodsGame(RepeatedGame):
    """The n-player public goods game.

    Each round every player either keeps its endowment ``e`` (action 0,
    ``keep``) or contributes it to a common pot (action 1, ``contribute``); the
    pot is multiplied by ``params.multiplier`` (``r``) and shared equally, so
    player ``i`` receives ``e * (1 - c_i) + r * e * sum_j c_j / N``. With
    ``1 < r < N`` contributing is dominated for each player but best for the group.
    Other rules as in the module card.
    """

    def __init__(
        self,
        num_agents: int = 4,
        *,
        num_rounds: int = 1,
        history_len: int = 1,
        endowment: float = 1.0,
        multiplier: float = 2.0,
        continue_prob: float = 1.0,
        truncate_at_horizon: bool = False,
        ego_centric: bool = True,
        illegal_action: str = "replace",
    ):
        super().__init__(
            num_agents,
            ("keep", "contribute"),
            history_len=history_len,
            ego_centric=ego_centric,
            illegal_action=illegal_action,
        )
        self.title = "the public goods game"
        self._default_params = PublicGoodsParams(
            endowment=jnp.float32(endowment),
            multiplier=jnp.float32(multiplier),
            **_horizon_params(num_rounds, continue_prob, truncate_at_horizon),
        )

    def payoff(self, params: PublicGoodsParams, joint_action: jax.Array) -> jax.Array:
        c = joint_action.astype(jnp.float32)
        pot = params.multiplier * params.endowment * c.sum()
        return params.endowment * (1.0 - c) + pot / self.num_agents

    def rules_text(self, params: PublicGoodsParams | None = None, agent: int = 0) -> str:
        params = self.default_params if params is None else params
        e, r, n = float(params.endowment), float(params.multiplier), self.num_agents
        return "\n".join(
            [
                f"You are player {agent} of {n} in the public goods game, played {self._rounds_text(params)}.",
                f"Each round every player receives {e:g} and secretly chooses to keep it or contribute it.",
                f"All contributions are multiplied by {r:g} and split equally among the {n} players,",
                "whatever they chose. Your round payoff is what you kept plus your share of the pot.",
                "Actions: keep, contribute. Your goal is to maximise your own total payoff.",
            ]
        )
