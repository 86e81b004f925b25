"""Shared pieces of alem's poker games (Kuhn poker, Leduc hold'em).

- :class:`PokerEnv`: the turn-based env skeleton both games share: one player
  to move, terminal utilities as rewards, the ``"lose"`` illegal-action mode,
  information-state observations for every seat, text and RGB rendering.
- Chance helpers: :func:`deal` (cards from a key, without replacement), :func:`decode_deal` and
  :func:`all_deals` (every ordered deal, for exact tree enumeration).
- Pot helpers: :func:`split_pot` (showdown / fold payouts) and
  :func:`forfeit_returns` (the ``illegal_action="lose"`` rule).
- :class:`TablePlayer`: a batched, pure-JAX player that samples from a strategy
  table keyed by the observation (the shipped CFR tables).

A game subclass provides the static card/deck description, ``initial_state``
(a state from a dealt card vector), ``transition`` (one legal betting action),
``legal`` (the current player's legal actions), ``info_state`` (one player's
observation) and the text pieces.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from pathlib import Path
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv
from alem.errors import AlemError
from alem.players import Player, Turn
from alem.text_hooks import TextHooks
from alem.wrappers.autoreset import select_tree

__all__ = [
    "PokerParams",
    "PokerEnv",
    "TablePlayer",
    "deal",
    "all_deals",
    "decode_deal",
    "split_pot",
    "forfeit_returns",
    "obs_code",
    "obs_key",
    "load_table",
    "DATA_DIR",
]

#: Folder of the shipped strategy tables.
DATA_DIR = Path(__file__).resolve().parent / "data"


@struct.dataclass
class PokerParams(EnvParams):
    """The poker games have no dynamic parameters: the rules are OpenSpiel's, fixed."""


# ---------------------------------------------------------------------------- chance and pots
_DEAL_TABLE_MAX = 5040  # ordered deals drawn by index (Kuhn up to 5 players, Leduc: 120)


def deal(key: jax.Array, num_cards: int, num_dealt: int) -> jax.Array:
    """int32 ``[num_dealt]``: distinct cards from ``0 .. num_cards-1``, uniform, in deal order.

    Small games draw one index into the list of every ordered deal and decode it
    (:func:`decode_deal`: one integer draw and a few integer ops, much cheaper under ``vmap``
    than a shuffle, which sorts); larger ones shuffle the deck.
    """
    count = math.perm(num_cards, num_dealt)
    if count <= _DEAL_TABLE_MAX:
        return decode_deal(jax.random.randint(key, (), 0, count), num_cards, num_dealt)
    return jax.random.permutation(key, num_cards)[:num_dealt].astype(jnp.int32)


def decode_deal(index: jax.Array, num_cards: int, num_dealt: int) -> jax.Array:
    """int32 ``[num_dealt]``: deal number ``index`` of :func:`all_deals` (lexicographic order),
    computed with integer arithmetic instead of a table lookup (it fuses into the consumer).

    Card ``j`` is the ``d_j``-th smallest card not dealt yet, ``d_j`` the ``j``-th digit of
    ``index`` in the mixed radix ``(n, n-1, ...)``.
    """
    cards: list[jax.Array] = []
    rest = index.astype(jnp.int32)
    for j in range(num_dealt):
        base = math.perm(num_cards - 1 - j, num_dealt - 1 - j)
        digit, rest = rest // base, rest % base
        card = digit
        for _ in cards:  # reaches its fixed point after len(cards) passes
            card = digit + sum((c <= card).astype(jnp.int32) for c in cards)
        cards.append(card)
    return jnp.stack(cards).astype(jnp.int32)


@functools.cache
def all_deals(num_cards: int, num_dealt: int) -> np.ndarray:
    """Every ordered deal ``[D, num_dealt]`` (each has probability ``1 / D``); read-only."""
    table = np.array(list(itertools.permutations(range(num_cards), num_dealt)), dtype=np.int32)
    table.setflags(write=False)
    return table


def split_pot(contrib: jax.Array, winners: jax.Array) -> jax.Array:
    """float32 ``[N]`` returns: the pot is shared equally by ``winners``; everyone paid ``contrib``."""
    contrib = contrib.astype(jnp.float32)
    share = contrib.sum() / jnp.maximum(winners.sum(), 1)
    return jnp.where(winners, share, 0.0) - contrib


def forfeit_returns(contrib: jax.Array, offender: jax.Array) -> jax.Array:
    """float32 ``[N]`` returns when ``offender`` forfeits (``illegal_action="lose"``).

    The offender loses what it has put in the pot; that amount is shared equally
    by the other players, who also get their own chips back (zero-sum). With two
    players this is exactly the outcome of the offender folding.
    """
    contrib = contrib.astype(jnp.float32)
    n = contrib.shape[0]
    lost = contrib[offender]
    me = jnp.arange(n) == offender
    return jnp.where(me, -lost, lost / (n - 1))


# ---------------------------------------------------------------------------- observation keys
def obs_code(obs: jax.Array) -> jax.Array:
    """int32 code of a 0/1 observation vector (bit ``j`` = entry ``j``); ``[..., D] -> [...]``."""
    d = obs.shape[-1]
    if d > 31:
        raise AlemError(f"obs_code needs at most 31 observation entries, got {d}")
    weights = jnp.left_shift(jnp.int32(1), jnp.arange(d, dtype=jnp.int32))
    return jnp.sum(jnp.where(obs > 0.5, weights, 0), axis=-1).astype(jnp.int32)


def obs_key(obs: Any) -> str:
    """The stable text key of one 0/1 observation vector: its entries as a bit string."""
    return "".join("1" if x > 0.5 else "0" for x in np.asarray(obs).reshape(-1))


# ---------------------------------------------------------------------------- the env skeleton
class PokerEnv(TextHooks, MultiAgentEnv):
    """Turn-based poker skeleton (see the module docstring); not registered itself.

    State contract (fields every game state has): ``player`` int32 (to move),
    ``terminal`` bool, ``contrib`` int32 ``[N]`` (chips in the pot per player),
    ``returns`` float32 ``[N]`` (final utilities; zero until terminal),
    ``forfeit`` int32 (player who forfeited by an illegal action, or -1).
    """

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
    stochastic: ClassVar[bool] = True
    turn_based: ClassVar[bool] = True
    zero_sum: ClassVar[bool] = True
    cheap_reset: ClassVar[bool] = True  # one draw and a deal table

    #: Deck size and number of cards dealt at reset (set by subclasses).
    num_cards: int
    num_dealt: int
    obs_dim: int
    _names: tuple[str, ...]

    def __init__(self, num_players: int, *, illegal_action: str = "replace"):
        super().__init__(illegal_action=illegal_action)
        self.agents = tuple(f"player_{i}" for i in range(num_players))
        self.agent_roles = np.zeros(num_players, dtype=np.int32)
        self.role_names = ("player",)
        self._params = PokerParams()

    # -- game-specific pieces (subclasses)
    def initial_state(self, cards: jax.Array) -> Any:
        """The state right after dealing ``cards`` (int32 ``[num_dealt]``)."""
        raise NotImplementedError

    def transition(self, state: Any, action: jax.Array) -> Any:
        """The state after the player to move plays legal ``action`` (non-terminal ``state``)."""
        raise NotImplementedError

    def legal(self, state: Any) -> jax.Array:
        """bool ``[A]``: legal actions of the player to move."""
        raise NotImplementedError

    def info_state(self, state: Any, player: jax.Array) -> jax.Array:
        """float32 ``[obs_dim]``: ``player``'s information state."""
        raise NotImplementedError

    # -- description
    @property
    def default_params(self) -> PokerParams:
        return self._params

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0.0, 1.0, (self.obs_dim,))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(len(self._names))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def deals(self) -> np.ndarray:
        """Every ordered deal of :meth:`reset`, each equally likely (for exact enumeration)."""
        return all_deals(self.num_cards, self.num_dealt)

    # -- dynamics
    def acting(self, state: Any, params: Any = None) -> jax.Array:
        return (jnp.arange(self.num_agents) == state.player) & ~state.terminal

    def action_mask(self, state: Any, params: Any = None) -> jax.Array:
        # Only the player to move has legal actions; every row is False once the game is over.
        return self.acting(state)[:, None] & self.legal(state)[None, :]

    def observe(self, state: Any, params: Any = None) -> jax.Array:
        return jax.vmap(self.info_state, (None, 0))(state, jnp.arange(self.num_agents))

    def reset_env(self, key, params):
        # The start state is computed from the dealt cards (elementwise work that fuses into the
        # auto-reset's select), not gathered from a table of start states (a gather per field).
        state = self.initial_state(deal(key, self.num_cards, self.num_dealt))
        return state, self.timestep(state, params, jnp.zeros((self.num_agents,), jnp.float32))

    def step_env(self, key, state, actions, params):
        # Chance after the deal is pre-drawn in the state, so the step key is unused.
        nxt = self.transition(state, actions[state.player])
        nxt = select_tree(state.terminal, state, nxt)  # a finished game stays finished
        reward = jnp.where(nxt.terminal & ~state.terminal, nxt.returns, 0.0)
        return nxt, self.timestep(nxt, params, reward, terminated=nxt.terminal)

    def forfeit(self, state, offender, params):
        # The replacement (first legal action: pass/fold/check) never adds chips, so
        # state.contrib still holds what the offender had in the pot before its move.
        lost = state.replace(
            terminal=jnp.bool_(True),
            returns=forfeit_returns(state.contrib, offender),
            forfeit=offender,
        )
        return lost, lost.returns

    # -- text
    def action_names(self, agent: int = 0) -> list[str]:
        return list(self._names)

    def seat_name(self, i: int) -> str:
        """Seat ``i`` as the text calls it (``player <seat_name>``)."""
        return str(i)

    def card_name(self, card: int, short: bool = False) -> str:
        raise NotImplementedError

    def _host(self, state: Any) -> Any:
        return jax.tree.map(np.asarray, jax.device_get(state))

    def _outcome_lines(self, s: Any, agent: int | None) -> list[str]:
        """Result lines of a finished game (for ``agent``: only its own payoff)."""
        returns = s.returns
        lines = ["The game is over."]
        if int(s.forfeit) >= 0:
            who = "You" if agent == int(s.forfeit) else f"Player {self.seat_name(int(s.forfeit))}"
            lines.append(f"{who} forfeited by playing an illegal action.")
        if agent is None:
            lines.append(
                "Payoffs: "
                + ", ".join(f"player {self.seat_name(i)}: {returns[i]:+g}" for i in range(len(returns)))
            )
        else:
            r = float(returns[agent])
            chips = f"{abs(r):g} chip{'s' if abs(r) != 1 else ''}"
            lines.append(
                f"You won {chips}." if r > 0 else f"You lost {chips}." if r < 0 else "You broke even."
            )
        return lines

    def render_rgb(self, state: Any, params: Any = None) -> np.ndarray:
        """Omniscient picture: one column per player with its card (shade = rank) and its
        chips in the pot (bar height); the player to move is outlined; Leduc adds the
        public card (grey until revealed) on the right."""
        s = self._host(state)
        n, cell = self.num_agents, 32
        cols = n + 1
        img = np.full((4 * cell, cols * cell, 3), 30, np.uint8)
        ranks = self._card_ranks()
        for i in range(n):
            x0 = i * cell + 4
            shade = int(80 + 170 * ranks[int(s.cards[i])] / max(ranks.max(), 1))
            img[8 : 8 + cell, x0 : x0 + cell - 8] = (shade, shade, 255)
            height = min(int(s.contrib[i]) * 6, 2 * cell - 4)
            img[4 * cell - 4 - height : 4 * cell - 4, x0 : x0 + cell - 8] = (230, 190, 40)
            if int(s.player) == i and not bool(s.terminal):
                img[4:6, x0 : x0 + cell - 8] = 255
        public = self._public_card(s)
        x0 = n * cell + 4
        if public is not None:
            shade = int(80 + 170 * ranks[public] / max(ranks.max(), 1))
            img[8 : 8 + cell, x0 : x0 + cell - 8] = (shade, 255, shade)
        return img

    def _card_ranks(self) -> np.ndarray:
        return np.arange(self.num_cards)

    def _public_card(self, s: Any) -> int | None:
        return None


# ---------------------------------------------------------------------------- strategy tables
def load_table(path: str | Path) -> dict[str, Any]:
    """A shipped strategy table (JSON); see ``scripts/solve_poker.py`` for the format."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = DATA_DIR / path
    with open(path) as f:
        table = json.load(f)
    if table.get("format") != "alem-poker-strategy-v1":
        raise AlemError(f"{path} is not an alem poker strategy table")
    return table


class TablePlayer(Player):
    """Samples from a strategy table keyed by the acting player's observation.

    Pure JAX and batched: the observation is turned into an int code
    (:func:`obs_code`), looked up with a binary search in the table's sorted
    codes, and an action is drawn from that row. An observation missing from
    the table (it cannot happen in the game the table was solved for) falls
    back to uniform over the legal actions.

    Args:
        env: the env the table was solved for (its id and observation size are checked).
        table: a table dict, or a file name under ``alem/envs/games/data`` / a path.
        name: the policy's name in results tables.
    """

    def __init__(self, env: MultiAgentEnv, table: str | Path | dict[str, Any], name: str = "cfr"):
        data = table if isinstance(table, dict) else load_table(table)
        base = env.id.rsplit("-v", 1)[0]
        expected = data["env_id"].rsplit("-v", 1)[0]
        kwargs = data.get("env_kwargs", {})
        mismatch = [k for k, v in kwargs.items() if getattr(env, k, v) != v]
        if base != expected or mismatch:
            raise AlemError(
                f"strategy table for {data['env_id']} {kwargs} does not fit env {env.id!r}"
                + (f" (differs in {mismatch})" if mismatch else "")
            )
        obs = np.array([[c == "1" for c in row["obs"]] for row in data["infosets"]], np.float32)
        probs = np.array([row["probs"] for row in data["infosets"]], np.float32)
        if obs.shape[1] != env.observation_space(0).shape[0]:
            raise AlemError(
                f"table observations have {obs.shape[1]} entries, env has {env.observation_space(0)}"
            )
        codes = np.asarray(obs_code(jnp.asarray(obs)))
        order = np.argsort(codes)
        self.name = name
        self.meta = {k: v for k, v in data.items() if k != "infosets"}
        self.codes = jnp.asarray(codes[order])
        self.table = jnp.asarray(probs[order])

    def probs(self, obs: jax.Array, mask: jax.Array) -> jax.Array:
        """float32 ``[B, A]`` action probabilities for observations ``[B, D]`` and masks ``[B, A]``."""
        code = obs_code(obs)
        idx = jnp.clip(jnp.searchsorted(self.codes, code), 0, self.codes.shape[0] - 1)
        found = (self.codes[idx] == code)[:, None]
        legal = mask.astype(jnp.float32)
        p = jnp.where(found, self.table[idx], legal) * legal
        total = p.sum(-1, keepdims=True)
        return jnp.where(
            total > 0, p / jnp.maximum(total, 1e-30), legal / jnp.maximum(legal.sum(-1, keepdims=True), 1)
        )

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        p = self.probs(jnp.asarray(turn.obs), jnp.asarray(turn.action_mask))
        u = jax.random.uniform(key, (p.shape[0], 1))
        # Inverse-CDF sampling; the last legal action absorbs rounding (u above the total).
        over = jnp.cumsum(p, axis=1) > u
        last = p.shape[1] - 1 - jnp.argmax(p[:, ::-1] > 0, axis=1)
        return jnp.where(over.any(axis=1), jnp.argmax(over, axis=1), last).astype(jnp.int32)
