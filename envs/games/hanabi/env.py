"""Hanabi, the cooperative card game, with the Hanabi Learning Environment's rules, move
numbering and canonical observation encoding (OpenSpiel ``hanabi``).

Card
----
- **Agents**: ``player_0`` ... ``player_{P-1}`` (``num_players`` 2-5; default 2); one role.
  ``player_0`` always starts (HLE's ``random_start_player=False``).
- **Cards**: ``colours`` colours (1-5; red, yellow, green, white, blue) x ``ranks`` ranks
  (1-5); of each colour three 1s, one card of the highest rank and two of every other rank
  (50 cards in the full game). Card id ``t = colour * ranks + (rank - 1)``.
- **Chance**: the whole deck order is drawn at ``reset`` from the reset key (a uniform
  shuffle, the same distribution as HLE's card-by-card deals); ``step`` draws nothing.
  Player 0 is dealt ``hand_size`` cards first, then player 1, and so on.
- **Actions**: ``Discrete(2H + (P - 1)(C + R))`` in HLE's move order: ``discard`` slot
  ``0..H-1``, ``play`` slot ``0..H-1``, then reveal-colour moves (target offset 1 first,
  colour-major), then reveal-rank moves. Action ``j`` here is OpenSpiel action ``j``.
  Names count slots from 1 and name the target absolutely: ``"play card 2"``,
  ``"discard card 1"``, ``"hint red to player 1"``, ``"hint rank 3 to player 1"``.
- **Legal moves** (``action_mask``; only the player to move has any): play any card in
  hand; discard any card while information tokens < max; hint a colour or rank to another
  player while tokens > 0 and that player holds at least one matching card.
- **Dynamics**: a played card extends its firework when its rank is the next one, else it
  is discarded and a life is lost. Completing a firework returns a token (if below max);
  a discard returns a token; a hint costs one. Played and discarded cards leave the hand
  (later cards shift towards slot 0) and a new card is drawn into the last slot while
  the deck lasts. A hint marks the matching cards of the target with the colour or rank
  and rules it out for the others (each card's knowledge, as HLE's ``CardKnowledge``).
- **Rewards**: shared; the change of the score each step. The score is the sum of the
  fireworks, or 0 once every life is lost, so losing the last life yields minus the score
  so far (HLE's and OpenSpiel's rule).
- **Termination**: every life lost; every firework complete; or, once the deck is empty,
  after each player has made one more move. Stepping a finished game changes nothing.
- **Observation**: float32 per player, HLE's canonical encoding of the player's view
  (658 floats for the full 2-player game), bit for bit: the other hands (one-hot cards)
  and which hands miss a card, the deck size, fireworks, tokens and lives (thermometers),
  the discard pile, the last non-deal move, and (``observation_type="card_knowledge"``,
  default) every hand's hint knowledge. ``"minimal"`` drops the knowledge section;
  ``"seer"`` starts every card fully known, own cards included.
- **Illegal actions**: ``illegal_action="replace"`` (default) plays the lowest legal move
  and flags ``info["illegal_action"]``; ``illegal_action="lose"`` ends the game with no
  move applied and every life lost (score 0). Actions of players not to move are ignored.
- **Reference**: OpenSpiel 2.0.2 ``hanabi`` (the Hanabi Learning Environment) with the same
  parameters, checked transition by transition (legal actions, player to move, terminal
  flag, rewards, every player's ``observation_tensor``) with the deck order fed to its
  chance nodes.
- **Text**: rules, each player's view (the other hands; its own hand only as the hints
  told it), move names with variants (``"play 2"``, ``"discard the first card"``,
  ``"hint red to player 1"``, ``"tell player 1 about their 3s"``) and a parser.
- **Version**: v0.

This module holds the rules and the observation encoding; the text hooks, the picture and the
rule-based partner are its neighbours in the package.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv
from alem.envs.games.hanabi.text import HanabiText
from alem.envs.games.hanabi.types import (
    _ENCODED_KIND,
    _NO_MOVE,
    COLOUR,
    COLOUR_NAMES,
    DISCARD,
    OBSERVATION_TYPES,
    PLAY,
    RANK,
    HanabiParams,
    HanabiState,
    _check_int,
)
from alem.envs.games.hanabi.viewer import HanabiViewer
from alem.errors import EnvArgumentError

__all__ = ["Hanabi"]


class Hanabi(HanabiText, HanabiViewer, MultiAgentEnv[HanabiState, HanabiParams]):
    """Hanabi for 2-5 players, exact to OpenSpiel's ``hanabi`` (see the module card).

    Args:
        num_players: 2-5 (HLE ``players``).
        colours: 1-5 (HLE ``colors``).
        ranks: 1-5.
        hand_size: cards per hand; default 5 for 2-3 players, 4 for 4-5 (HLE's rule).
        max_information_tokens: default 8.
        max_life_tokens: default 3.
        observation_type: ``"card_knowledge"`` (default), ``"minimal"`` or ``"seer"``.
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    cooperative: ClassVar[bool] = True  # the agents share one goal (alem.core.MultiAgentEnv)

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
    forfeit_move: ClassVar[int | None] = _NO_MOVE  # no move is applied; forfeit() ends the game
    stochastic: ClassVar[bool] = True
    turn_based: ClassVar[bool] = True

    def __init__(
        self,
        num_players: int = 2,
        colours: int = 5,
        ranks: int = 5,
        hand_size: int | None = None,
        max_information_tokens: int = 8,
        max_life_tokens: int = 3,
        observation_type: str = "card_knowledge",
        *,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        P = _check_int("num_players", num_players, 2, 5)
        C = _check_int("colours", colours, 1, 5)
        R = _check_int("ranks", ranks, 1, 5)
        H = (5 if P < 4 else 4) if hand_size is None else _check_int("hand_size", hand_size, 1, 8)
        self.max_info = _check_int("max_information_tokens", max_information_tokens, 1, 64)
        self.max_life = _check_int("max_life_tokens", max_life_tokens, 1, 64)
        if observation_type not in OBSERVATION_TYPES:
            raise EnvArgumentError(
                f"Hanabi: observation_type={observation_type!r} is not one of {list(OBSERVATION_TYPES)}"
            )
        self.observation_type = observation_type
        self.num_players, self.colours, self.ranks, self.hand_size = P, C, R, H
        self.copies = np.array([3 if r == 0 else 1 if r == R - 1 else 2 for r in range(R)], np.int32)
        self.deck_size = int(C * self.copies.sum())
        if self.deck_size < P * H:
            raise EnvArgumentError(
                f"Hanabi: {P} hands of {H} cards need {P * H} cards but the deck has {self.deck_size}"
            )
        self.max_score = C * R
        self.agents = tuple(f"player_{i}" for i in range(P))
        self.agent_roles = np.zeros(P, dtype=np.int32)
        self.role_names = ("player",)

        # Static move tables, indexed by action id (HLE's move uid).
        kind, slot, offset, value = [], [], [], []
        for s in range(H):
            kind.append(DISCARD), slot.append(s), offset.append(0), value.append(-1)
        for s in range(H):
            kind.append(PLAY), slot.append(s), offset.append(0), value.append(-1)
        for k, n in ((COLOUR, C), (RANK, R)):
            for o in range(1, P):
                for v in range(n):
                    kind.append(k), slot.append(0), offset.append(o), value.append(v)
        self._kind, self._slot = np.array(kind, np.int32), np.array(slot, np.int32)
        self._offset, self._value = np.array(offset, np.int32), np.array(value, np.int32)
        self.num_moves = len(kind)
        # The discard section: one thermometer per card id, as long as its number of copies.
        self._discard_id = np.repeat(np.arange(C * R), np.tile(self.copies, C)).astype(np.int32)
        self._discard_bit = np.concatenate([np.arange(n) for n in np.tile(self.copies, C)]).astype(np.int32)
        self._obs_dim = (
            (P - 1) * H * C * R
            + P  # hands
            + self.deck_size
            - P * H
            + C * R
            + self.max_info
            + self.max_life  # board
            + self.deck_size  # discards
            + P
            + 4
            + P
            + C
            + R
            + H
            + H
            + C * R
            + 2  # last move
            + (0 if observation_type == "minimal" else P * H * (C * R + C + R))  # knowledge
        )
        self._names = [self._move_name(a, 0) for a in range(self.num_moves)]

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> HanabiParams:
        return HanabiParams()

    @property
    def episode_steps_hint(self) -> float:
        return 4.0 + 3.0 * self.max_life  # random play soon loses its lives; measured 13.2 in the full game

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0.0, 1.0, (self._obs_dim,))
        return one if agent is not None else spaces.stack([one] * self.num_players)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(self.num_moves)
        return one if agent is not None else spaces.stack([one] * self.num_players)

    def openspiel_params(self) -> dict:
        """The parameters of the same game for ``pyspiel.load_game("hanabi", ...)``."""
        return {
            "players": self.num_players,
            "colors": self.colours,
            "ranks": self.ranks,
            "hand_size": self.hand_size,
            "max_information_tokens": self.max_info,
            "max_life_tokens": self.max_life,
            "observation_type": self.observation_type,
        }

    def card_name(self, card: int) -> str:
        """``"red 3"`` for card id ``card`` (host-side)."""
        return f"{COLOUR_NAMES[int(card) // self.ranks]} {int(card) % self.ranks + 1}"

    def score(self, state: HanabiState) -> jax.Array:
        """The score: the sum of the fireworks, or 0 once every life is lost."""
        return jnp.where(state.life_tokens > 0, state.fireworks.sum(), 0).astype(jnp.int32)

    def terminal(self, state: HanabiState) -> jax.Array:
        return (state.life_tokens <= 0) | (state.fireworks.sum() >= self.max_score) | (state.turns_left <= 0)

    # ------------------------------------------------------------------ dynamics
    def _fresh_knowledge(self, cards: jax.Array):
        """Knowledge of newly dealt ``cards`` (any shape): nothing known, or everything (seer)."""
        C, R = self.colours, self.ranks
        if self.observation_type == "seer":
            colour, rank = cards // R, cards % R
            return (
                jax.nn.one_hot(colour, C, dtype=bool),
                jax.nn.one_hot(rank, R, dtype=bool),
                colour.astype(jnp.int32),
                rank.astype(jnp.int32),
            )
        shape = cards.shape
        return (
            jnp.ones((*shape, C), bool),
            jnp.ones((*shape, R), bool),
            jnp.full(shape, -1, jnp.int32),
            jnp.full(shape, -1, jnp.int32),
        )

    def reset_env(self, key, params):
        P, H = self.num_players, self.hand_size
        ordered = np.repeat(np.arange(self.colours * self.ranks), np.tile(self.copies, self.colours))
        deck = jax.random.permutation(key, jnp.asarray(ordered, jnp.int32))
        hands = deck[: P * H].reshape(P, H)
        cp, rp, ch, rh = self._fresh_knowledge(hands)
        state = HanabiState(
            deck=deck,
            drawn=jnp.int32(P * H),
            hands=hands,
            colour_plausible=cp,
            rank_plausible=rp,
            colour_hinted=ch,
            rank_hinted=rh,
            fireworks=jnp.zeros((self.colours,), jnp.int32),
            info_tokens=jnp.int32(self.max_info),
            life_tokens=jnp.int32(self.max_life),
            discards=jnp.zeros((self.colours * self.ranks,), jnp.int32),
            turns_left=jnp.int32(P),
            player=jnp.int32(0),
            last_player=jnp.int32(-1),
            last_move=jnp.int32(-1),
            last_reveal=jnp.zeros((H,), bool),
            last_card=jnp.int32(-1),
            last_scored=jnp.bool_(False),
            last_token=jnp.bool_(False),
        )
        return state, self.timestep(state, params, jnp.zeros((P,), jnp.float32))

    def step_env(self, key, state, actions, params):
        P, H, R = self.num_players, self.hand_size, self.ranks
        p = state.player
        action = actions[p]
        live = ~self.terminal(state)
        moves = live & (action != _NO_MOVE)
        a = jnp.clip(action, 0, self.num_moves - 1)
        kind, slot = jnp.asarray(self._kind)[a], jnp.asarray(self._slot)[a]
        offset, value = jnp.asarray(self._offset)[a], jnp.asarray(self._value)[a]
        plays, discards = moves & (kind == PLAY), moves & (kind == DISCARD)
        removes = plays | discards
        hints = moves & (kind >= COLOUR)

        # Play or discard: the card leaves the hand.
        hand = state.hands[p]
        card = jnp.maximum(hand[slot], 0)
        colour, rank = card // R, card % R
        scored = plays & (state.fireworks[colour] == rank)
        fireworks = state.fireworks.at[colour].add(scored.astype(jnp.int32))
        token = scored & (fireworks[colour] == R) & (state.info_tokens < self.max_info)
        lost = plays & ~scored
        pile = state.discards.at[card].add((discards | lost).astype(jnp.int32))

        # Shift the later cards (and their knowledge) towards slot 0; draw into the last one.
        idx = jnp.arange(H)
        src = jnp.minimum(idx + (idx >= slot), H - 1)
        vacated = idx + (idx >= slot) >= H
        fresh = self._fresh_knowledge(jnp.full((H,), -1, jnp.int32))
        life = state.life_tokens - lost.astype(jnp.int32)
        # A move that ends the game deals no card (HLE has no chance node after the end).
        ends = (life <= 0) | (fireworks.sum() >= self.max_score)
        draw = removes & (state.drawn < self.deck_size) & ~ends
        new_card = state.deck[jnp.minimum(state.drawn, self.deck_size - 1)]
        into = idx == jnp.sum(hand >= 0) - 1
        drawn_knowledge = self._fresh_knowledge(jnp.full((H,), new_card, jnp.int32))

        def shifted(x, empty, dealt):
            expand = (H,) + (1,) * (x.ndim - 1)
            y = jnp.where(vacated.reshape(expand), empty, x[src])
            return jnp.where((draw & into).reshape(expand), dealt, y)

        rows = [
            shifted(hand, -1, new_card),
            *(
                shifted(x[p], f, d)
                for x, f, d in zip(
                    (state.colour_plausible, state.rank_plausible, state.colour_hinted, state.rank_hinted),
                    fresh,
                    drawn_knowledge,
                    strict=True,
                )
            ),
        ]
        fields = (
            state.hands,
            state.colour_plausible,
            state.rank_plausible,
            state.colour_hinted,
            state.rank_hinted,
        )
        hands, cp, rp, ch, rh = (
            jnp.where(removes, x.at[p].set(row), x) for x, row in zip(fields, rows, strict=True)
        )

        # Hint: mark the target's matching cards, rule the value out for the others.
        target = (p + offset) % P
        thand = hands[target]
        held = thand >= 0
        is_colour = kind == COLOUR
        match = held & jnp.where(is_colour, thand // R == value, thand % R == value)
        other = held & ~match

        def hinted(plausible, known, n, applies):
            v = jax.nn.one_hot(value, n, dtype=bool)
            row = jnp.where(
                match[:, None], v, jnp.where(other[:, None], plausible[target] & ~v, plausible[target])
            )
            new_known = jnp.where(match, value, known[target])
            on = hints & applies
            return (
                jnp.where(on, plausible.at[target].set(row), plausible),
                jnp.where(on, known.at[target].set(new_known), known),
            )

        cp, ch = hinted(cp, ch, self.colours, is_colour)
        rp, rh = hinted(rp, rh, self.ranks, ~is_colour)

        new = HanabiState(
            deck=state.deck,
            drawn=state.drawn + draw.astype(jnp.int32),
            hands=hands,
            colour_plausible=cp,
            rank_plausible=rp,
            colour_hinted=ch,
            rank_hinted=rh,
            fireworks=fireworks,
            info_tokens=state.info_tokens + (discards | token).astype(jnp.int32) - hints.astype(jnp.int32),
            life_tokens=life,
            discards=pile,
            # HLE counts the final round down on every move made with the deck already empty.
            turns_left=state.turns_left - (moves & (state.drawn >= self.deck_size)).astype(jnp.int32),
            player=jnp.where(moves, (p + 1) % P, p),
            last_player=jnp.where(moves, p, state.last_player),
            last_move=jnp.where(moves, a, state.last_move),
            last_reveal=jnp.where(moves, match & hints, state.last_reveal),
            last_card=jnp.where(moves, jnp.where(removes, card, -1), state.last_card),
            last_scored=jnp.where(moves, scored, state.last_scored),
            last_token=jnp.where(moves, token, state.last_token),
        )
        reward = (self.score(new) - self.score(state)).astype(jnp.float32)
        return new, self.timestep(new, params, jnp.full((P,), reward), terminated=self.terminal(new))

    def acting(self, state: HanabiState, params: HanabiParams) -> jax.Array:
        return (jnp.arange(self.num_players) == state.player) & ~self.terminal(state)

    def action_mask(self, state: HanabiState, params: HanabiParams) -> jax.Array:
        P, H, R = self.num_players, self.hand_size, self.ranks
        held = state.hands[state.player] >= 0
        kind, slot = jnp.asarray(self._kind), jnp.asarray(self._slot)
        offset, value = jnp.asarray(self._offset), jnp.asarray(self._value)
        targets = state.hands[(state.player + offset) % P]  # [A, H]
        has = jnp.where((kind == COLOUR)[:, None], targets // R, targets % R) == value[:, None]
        has = (has & (targets >= 0)).any(axis=1)
        legal = jnp.where(
            kind == DISCARD,
            held[slot] & (state.info_tokens < self.max_info),
            jnp.where(kind == PLAY, held[slot], has & (state.info_tokens > 0)),
        )
        del H
        return legal[None, :] & self.acting(state, params)[:, None]

    # ------------------------------------------------------------------ observation
    def observe(self, state: HanabiState, params: HanabiParams) -> jax.Array:
        return jax.vmap(lambda o: self._encode(state, o))(jnp.arange(self.num_players))

    def _encode(self, state: HanabiState, observer: jax.Array) -> jax.Array:
        P, H, C, R = self.num_players, self.hand_size, self.colours, self.ranks
        f32 = jnp.float32

        def therm(n, length):
            return (jnp.arange(length) < n).astype(f32)

        rel = (observer + jnp.arange(P)) % P
        hands = state.hands[rel]  # [P, H], the observer first
        parts = [
            jax.nn.one_hot(hands[1:], C * R, dtype=f32).reshape(-1),
            (jnp.sum(hands >= 0, axis=1) < H).astype(f32),
            therm(self.deck_size - state.drawn, self.deck_size - P * H),
            jax.nn.one_hot(state.fireworks - 1, R, dtype=f32).reshape(-1),
            therm(state.info_tokens, self.max_info),
            therm(state.life_tokens, self.max_life),
            (state.discards[jnp.asarray(self._discard_id)] > jnp.asarray(self._discard_bit)).astype(f32),
        ]
        # The last move (zeros before any).
        a = jnp.maximum(state.last_move, 0)
        kind, slot = jnp.asarray(self._kind)[a], jnp.asarray(self._slot)[a]
        offset, value = jnp.asarray(self._offset)[a], jnp.asarray(self._value)[a]
        some = state.last_player >= 0
        hint, removal = kind >= COLOUR, kind < COLOUR
        last = [
            jax.nn.one_hot((state.last_player - observer) % P, P, dtype=f32),
            jax.nn.one_hot(jnp.asarray(_ENCODED_KIND)[kind], 4, dtype=f32),
            jax.nn.one_hot((state.last_player + offset - observer) % P, P, dtype=f32) * hint,
            jax.nn.one_hot(value, C, dtype=f32) * (kind == COLOUR),
            jax.nn.one_hot(value, R, dtype=f32) * (kind == RANK),
            state.last_reveal.astype(f32) * hint,
            jax.nn.one_hot(slot, H, dtype=f32) * removal,
            jax.nn.one_hot(state.last_card, C * R, dtype=f32) * removal,
            jnp.stack([state.last_scored, state.last_token]).astype(f32) * (kind == PLAY),
        ]
        parts.append(jnp.concatenate(last) * some)
        if self.observation_type != "minimal":
            held = (hands >= 0)[..., None]
            cp, rp = state.colour_plausible[rel], state.rank_plausible[rel]
            plausible = (cp[..., :, None] & rp[..., None, :]).reshape(P, H, C * R)
            knowledge = jnp.concatenate(
                [
                    plausible.astype(f32),
                    jax.nn.one_hot(state.colour_hinted[rel], C, dtype=f32),
                    jax.nn.one_hot(state.rank_hinted[rel], R, dtype=f32),
                ],
                axis=-1,
            )
            parts.append((knowledge * held).reshape(-1))
        return jnp.concatenate(parts)

    # ------------------------------------------------------------------ illegal moves
    def forfeit(self, state, offender, params):
        # The game ends as if the last life were lost: the team scores nothing.
        return state.replace(life_tokens=jnp.zeros_like(state.life_tokens)), jnp.full(
            (self.num_players,), -self.score(state).astype(jnp.float32)
        )
