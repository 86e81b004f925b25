"""Bargaining ("Deal or No Deal"), with OpenSpiel's ``bargaining`` rules, numbering and tensors.

Card
----
- **Agents**: ``player_0`` and ``player_1``; one role. ``player_0`` always makes the
  first offer; the players then alternate.
- **Chance**: at ``reset`` one instance is drawn uniformly (from the reset key) from
  the instance list: a pool of books, hats and balls (5 to 7 items in all, at least
  one of each) and each player's private value per item type (a full pool is worth
  10 to each player). The list is OpenSpiel's default ``bargaining_instances1000``
  (Apache-2.0, Copyright 2019 DeepMind Technologies Limited), shipped unmodified in
  ``data/bargaining_instances1000.json``; ``max_num_instances`` keeps its first
  ``n`` rows and ``instances_file`` reads another file in OpenSpiel's format.
  With ``prob_end > 0`` the step key also draws whether the negotiation breaks off.
- **Actions**: ``Discrete(121)``, OpenSpiel's numbering. Actions ``0..119`` are the
  offers ``(books, hats, balls)`` with at most 7 items in all, ordered with the books
  count varying fastest (``0 = (0,0,0)``, ``1 = (1,0,0)``, ..., ``8 = (0,1,0)``); an
  offer names what its *proposer* gets, the other player gets the rest of the pool.
  Action ``120`` accepts the last offer ("agree"). Names:
  ``"I get 1 book, 2 hats, 0 balls"``, ``"agree"``.
- **Legal moves** (``action_mask``; only the player to move has any): every offer
  within the pool (each count at most the pool's), and "agree" once an offer has
  been made.
- **Rewards**: zero until the end. On agreement the proposer of the last offer gets
  its values of the offer and the other player its values of the rest of the pool,
  both multiplied by ``discount ** (offers - 1)`` (OpenSpiel applies the discount
  on every move from the third on); 0 each without a deal. General-sum.
- **Termination**: on "agree"; after ``max_turns`` offers (default 10; the last
  offer can no longer be accepted: no deal); with ``prob_end``, after each offer but
  the first, the negotiation breaks off with that probability (no deal). Never
  truncated. Stepping a finished game changes nothing.
- **Observation**: float32 per player, OpenSpiel's ``observation_tensor`` by default
  (93 floats for ``max_turns=10``): agreement bit, one-hot number of offers so far
  (``max_turns + 1``), thermometers (``x`` is ``x + 1`` ones) of the pool (3 x 8),
  of the player's own values (3 x 11) and of the last offer (3 x 8, zeros before
  the first). ``observation_type="information_state"`` gives OpenSpiel's
  ``information_state_tensor`` instead (309 floats): every offer so far (in
  ``max_turns`` blocks of 3 x 8) in place of the last one. The other player's values
  are never in a player's observation.
- **Illegal actions**: ``illegal_action="replace"`` (the only mode) plays the first
  legal action, the offer ``(0,0,0)`` (everything to the other player), and flags
  ``info["illegal_action"]``. Out-of-range indices are illegal; actions of the
  player not to move are ignored.
- **Reference**: OpenSpiel 2.0.2 ``bargaining`` (``max_turns``, ``discount``,
  ``prob_end``, ``max_num_instances``, ``instances_file``), checked transition by
  transition (legal actions, player to move, terminal flag, returns, both tensors),
  with OpenSpiel's chance nodes fed alem's draws.
- **Text**: rules, a per-player view (pool, own values, the offers so far in both
  players' shares, whose turn, the outcome) that never shows the other player's
  values, and a parser for offers written as the proposer's share (``"I get 2 books,
  1 hat, 0 balls"``, ``"I'll take 2 books and a hat"``, a missing item is 0;
  a ``"you get ..."`` part is not needed and not checked) and for ``"agree"``,
  ``"accept"``, ``"deal"`` (not after a negation: ``"no deal"``). The text hooks have
  no message channel, so free text around the move is accepted and ignored; a reply
  naming one offer plays it even if it also says "agree".
- **Picture** (``render_rgb``, 316 x 142 px, omniscient): a status strip (blue/red: player
  0/1 to move, green: deal, grey: no deal), one row per item type with a glyph per item in
  the pool (books, hats, balls) coloured by who gets it in the last offer (blue player 0,
  red player 1, grey before any offer), both players' values as bars at the right, and one
  segment per offer made along the bottom.
- **Version**: v0.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv
from alem.envs.games.bargaining import viewer
from alem.envs.games.bargaining.text import BargainingText
from alem.envs.games.bargaining.types import (
    AGREE,
    NUM_ITEMS,
    NUM_PLAYERS,
    OFFERS,
    POOL_MAX,
    VALUE_MAX,
    BargainingParams,
    BargainingState,
    load_instances,
)
from alem.errors import EnvArgumentError

__all__ = ["Bargaining"]


class Bargaining(BargainingText, MultiAgentEnv[BargainingState, BargainingParams]):
    """Two-player multi-issue bargaining, exact to OpenSpiel's ``bargaining`` (see the module card).

    Args:
        max_turns: offers before the game ends without a deal (OpenSpiel ``max_turns``; default 10).
        discount: default ``params.discount`` (OpenSpiel ``discount``; default 1.0).
        prob_end: default ``params.prob_end`` (OpenSpiel ``prob_end``; default 0.0).
        max_num_instances: keep the first ``n`` instances (OpenSpiel ``max_num_instances``).
        instances_file: another instance list in OpenSpiel's format (default: OpenSpiel's own).
        observation_type: ``"observation"`` (default, OpenSpiel's ``observation_tensor``) or
            ``"information_state"`` (its ``information_state_tensor``).
        illegal_action: ``"replace"``.
    """

    turn_based: ClassVar[bool] = True
    stochastic: ClassVar[bool] = True

    def __init__(
        self,
        max_turns: int = 10,
        discount: float = 1.0,
        prob_end: float = 0.0,
        max_num_instances: int = 1000,
        instances_file: str | None = None,
        observation_type: str = "observation",
        *,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        for name, value in (("max_turns", max_turns), ("max_num_instances", max_num_instances)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 1:
                raise EnvArgumentError(f"Bargaining: {name} must be an integer >= 1, got {value!r}")
        for name, value in (("discount", discount), ("prob_end", prob_end)):
            if not 0.0 <= float(value) <= 1.0:
                raise EnvArgumentError(f"Bargaining: {name} must be in [0, 1], got {value!r}")
        if observation_type not in ("observation", "information_state"):
            raise EnvArgumentError(
                f"Bargaining: observation_type={observation_type!r} is not 'observation' or 'information_state'"
            )
        self.max_turns = int(max_turns)
        self.instances = load_instances(instances_file, int(max_num_instances))
        if instances_file is None and len(self.instances) < int(max_num_instances):
            raise EnvArgumentError(f"Bargaining: max_num_instances={max_num_instances} > the 1000 instances")
        self.instances_file = instances_file
        self.observation_type = observation_type
        self._params = BargainingParams(discount=jnp.float32(discount), prob_end=jnp.float32(prob_end))
        self.agents = tuple(f"player_{i}" for i in range(NUM_PLAYERS))
        self.agent_roles = np.zeros(NUM_PLAYERS, dtype=np.int32)
        self.role_names = ("player",)
        blocks = self.max_turns if observation_type == "information_state" else 1
        self._obs_dim = (
            1 + self.max_turns + 1 + NUM_ITEMS * (POOL_MAX + 1 + VALUE_MAX + 1 + blocks * (POOL_MAX + 1))
        )

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> BargainingParams:
        return self._params

    @property
    def episode_steps_hint(self) -> float:
        # Uniform random play: 8.5 steps with 10 turns, measured ("agree" is 1 of ~25 legal moves).
        return min(8.5, float(self.max_turns))

    def check_params(self, params: BargainingParams) -> None:
        """The type, and where concrete: ``discount`` and ``prob_end`` in [0, 1]."""
        super().check_params(params)
        self._check_param_range(params, "discount", 0.0, 1.0)
        self._check_param_range(params, "prob_end", 0.0, 1.0)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0.0, 1.0, (self._obs_dim,))
        return one if agent is not None else spaces.stack([one] * NUM_PLAYERS)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(AGREE + 1)
        return one if agent is not None else spaces.stack([one] * NUM_PLAYERS)

    def openspiel_params(self) -> dict:
        """The parameters of this game for ``pyspiel.load_game("bargaining", ...)``."""
        out = {
            "max_turns": self.max_turns,
            "discount": float(self._params.discount),
            "prob_end": float(self._params.prob_end),
            "max_num_instances": len(self.instances),
        }
        if self.instances_file is not None:
            out["instances_file"] = str(self.instances_file)
        return out

    def render_rgb(self, state: BargainingState, params: BargainingParams | None = None) -> np.ndarray:
        """uint8 ``[142, 316, 3]``: the pool split by the last offer, both players' values, the turn or
        the outcome, the offers so far (see :func:`alem.envs.games.bargaining.viewer.render_rgb`)."""
        return viewer.render_rgb(state, self.max_turns)

    # ------------------------------------------------------------------ dynamics
    def terminal(self, state: BargainingState) -> jax.Array:
        return state.agreed | state.ended | (state.num_offers >= self.max_turns)

    def acting(self, state: BargainingState, params: BargainingParams) -> jax.Array:
        return (jnp.arange(NUM_PLAYERS) == state.player) & ~self.terminal(state)

    def action_mask(self, state: BargainingState, params: BargainingParams) -> jax.Array:
        offers = jnp.all(jnp.asarray(OFFERS) <= state.pool, axis=1)
        legal = jnp.append(offers, state.num_offers > 0)
        return legal[None, :] & self.acting(state, params)[:, None]

    def observe(self, state: BargainingState, params: BargainingParams) -> jax.Array:
        def therm(x, size):  # [..., 3] counts -> [..., 3 * size]: x + 1 ones per count
            bits = jnp.arange(size) <= x[..., None]
            return bits.reshape(*x.shape[:-1], -1)

        if self.observation_type == "information_state":
            made = jnp.arange(self.max_turns) < state.num_offers
            history = (therm(state.offers, POOL_MAX + 1) & made[:, None]).reshape(-1)
        else:
            last = state.offers[jnp.maximum(state.num_offers - 1, 0)]
            history = therm(last, POOL_MAX + 1) & (state.num_offers > 0)
        public = jnp.concatenate(
            [
                state.agreed[None],
                jnp.arange(self.max_turns + 1) == state.num_offers,
                therm(state.pool, POOL_MAX + 1),
            ]
        )
        rows = [jnp.concatenate([public, therm(state.values[p], VALUE_MAX + 1), history]) for p in range(2)]
        return jnp.stack(rows).astype(jnp.float32)

    def reset_env(self, key, params):
        idx = jax.random.randint(key, (), 0, len(self.instances)).astype(jnp.int32)
        inst = jnp.asarray(self.instances)[idx]
        state = BargainingState(
            instance=idx,
            pool=inst[0],
            values=inst[1:],
            offers=jnp.zeros((self.max_turns, NUM_ITEMS), jnp.int32),
            num_offers=jnp.int32(0),
            player=jnp.int32(0),
            agreed=jnp.bool_(False),
            ended=jnp.bool_(False),
        )
        return state, self.timestep(state, params, jnp.zeros((NUM_PLAYERS,), jnp.float32))

    def step_env(self, key, state, actions, params):
        action = actions[state.player]
        live = ~self.terminal(state)
        agree = live & (action == AGREE)
        offer = live & ~agree
        n = state.num_offers
        share = jnp.asarray(OFFERS)[jnp.clip(action, 0, AGREE - 1)]
        num_offers = n + offer.astype(jnp.int32)
        # Only a game with prob_end > 0 draws (OpenSpiel's chance node after each offer but the first).
        chance_end = jax.lax.cond(
            params.prob_end > 0.0, lambda: jax.random.uniform(key) < params.prob_end, lambda: jnp.bool_(False)
        )
        broke_off = offer & (n >= 1) & (num_offers < self.max_turns) & chance_end
        new = state.replace(
            offers=state.offers.at[n].set(jnp.where(offer, share, 0), mode="drop"),
            num_offers=num_offers,
            player=jnp.where(offer, 1 - state.player, state.player),
            agreed=state.agreed | agree,
            ended=state.ended | broke_off,
        )
        # On "agree" the last offer was made by the other player (players alternate).
        last = state.offers[jnp.maximum(n - 1, 0)]
        proposer = 1 - state.player
        shares = jnp.where((jnp.arange(NUM_PLAYERS) == proposer)[:, None], last, state.pool - last)
        value = jnp.sum(state.values * shares, axis=1).astype(jnp.float32)
        factor = jnp.power(params.discount, jnp.maximum(n - 1, 0).astype(jnp.float32))
        reward = jnp.where(agree, value * factor, 0.0)
        return new, self.timestep(new, params, reward, terminated=self.terminal(new))
