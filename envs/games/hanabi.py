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
- **Reference**: OpenSpiel ``hanabi`` (the Hanabi Learning Environment) with the same
  parameters, checked transition by transition (legal actions, player to move, terminal
  flag, rewards, every player's ``observation_tensor``) with the deck order fed to its
  chance nodes.
- **Text**: rules, each player's view (the other hands; its own hand only as the hints
  told it), move names with variants (``"play 2"``, ``"discard the first card"``,
  ``"hint red to player 1"``, ``"tell player 1 about their 3s"``) and a parser.
- **Version**: v0.
"""

from __future__ import annotations

import re
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.errors import EnvArgumentError
from alem.policies import Policy, Turn
from alem.text_hooks import TextHooks, words

__all__ = [
    "HanabiState",
    "HanabiParams",
    "Hanabi",
    "RulePlayer",
    "rule_actions",
    "COLOUR_NAMES",
    "OBSERVATION_TYPES",
]

COLOUR_NAMES = ("red", "yellow", "green", "white", "blue")
OBSERVATION_TYPES = ("minimal", "card_knowledge", "seer")
# Move kinds in HLE's move-uid order; _ENCODED_KIND is their index in the observation's
# last-move section (play, discard, reveal colour, reveal rank).
DISCARD, PLAY, COLOUR, RANK = 0, 1, 2, 3
_ENCODED_KIND = np.array([1, 0, 2, 3], np.int32)
#: Action passed to ``step_env`` in place of an illegal move under ``illegal_action="lose"``.
_NO_MOVE = -1
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")
_RANK_PLURALS = ("ones", "twos", "threes", "fours", "fives")
_HINT_VERBS = ("hint", "tell", "reveal", "clue", "give", "inform", "show")


@struct.dataclass
class HanabiState:
    deck: jax.Array  # int32 [D]: card ids in deal order
    drawn: jax.Array  # int32 []: cards dealt so far (deck[drawn] is next)
    hands: jax.Array  # int32 [P, H]: card ids from slot 0, -1 for an empty slot
    colour_plausible: jax.Array  # bool [P, H, C]: colours the hints leave possible
    rank_plausible: jax.Array  # bool [P, H, R]
    colour_hinted: jax.Array  # int32 [P, H]: the hinted colour, -1 if none
    rank_hinted: jax.Array  # int32 [P, H]
    fireworks: jax.Array  # int32 [C]: cards played per colour
    info_tokens: jax.Array  # int32 []
    life_tokens: jax.Array  # int32 []
    discards: jax.Array  # int32 [C * R]: discarded (or misplayed) cards per id
    turns_left: jax.Array  # int32 []: HLE's turns_to_play (counts down once the deck is empty)
    player: jax.Array  # int32 []: player to move
    last_player: jax.Array  # int32 []: who made the last move, -1 before any
    last_move: jax.Array  # int32 []: that move's action id
    last_reveal: jax.Array  # bool [H]: cards a last hint touched
    last_card: jax.Array  # int32 []: card played or discarded by the last move, -1 otherwise
    last_scored: jax.Array  # bool []: the last move was a successful play
    last_token: jax.Array  # bool []: the last play completed a firework and returned a token


@struct.dataclass
class HanabiParams(EnvParams):
    """Hanabi has no dynamic parameters (every option changes shapes: they are static)."""


def _check_int(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= int(value) <= high:
        raise EnvArgumentError(f"Hanabi: {name} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


class Hanabi(TextHooks, MultiAgentEnv[HanabiState, HanabiParams]):
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

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
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
        return state, self._timestep(state, params, jnp.zeros((P,), jnp.float32))

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
        return new, self._timestep(new, params, jnp.full((P,), reward))

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

    def _timestep(self, state: HanabiState, params: HanabiParams, reward: jax.Array) -> TimeStep:
        return TimeStep(
            obs=self.observe(state, params),
            action_mask=self.action_mask(state, params),
            reward=reward,
            terminated=self.terminal(state),
            truncated=jnp.bool_(False),
            acting=self.acting(state, params),
            info={},
        )

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
    def sanitize_actions(self, state, actions, params):
        actions, illegal = super().sanitize_actions(state, actions, params)
        if self.illegal_action == "lose":
            actions = jnp.where(illegal, _NO_MOVE, actions)
        return actions, illegal

    def apply_illegal_policy(self, state, ts, illegal, params):
        if self.illegal_action != "lose":
            return state, ts
        lost = illegal.any()
        ended = state.replace(life_tokens=jnp.where(lost, 0, state.life_tokens))
        reward = jnp.where(lost, -self.score(state).astype(jnp.float32), ts.reward)
        return ended, self._timestep(ended, params, reward)

    # ------------------------------------------------------------------ text
    def _move_name(self, action: int, agent: int) -> str:
        kind, slot = int(self._kind[action]), int(self._slot[action])
        offset, value = int(self._offset[action]), int(self._value[action])
        if kind == DISCARD:
            return f"discard card {slot + 1}"
        if kind == PLAY:
            return f"play card {slot + 1}"
        target = (agent + offset) % self.num_players
        what = COLOUR_NAMES[value] if kind == COLOUR else f"rank {value + 1}"
        return f"hint {what} to player {target}"

    def action_names(self, agent: int = 0) -> list[str]:
        return [self._move_name(a, agent) for a in range(self.num_moves)]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        aliases: dict[str, int] = {}
        for a in range(self.num_moves):
            kind, slot = int(self._kind[a]), int(self._slot[a])
            if kind in (PLAY, DISCARD):
                verb = "play" if kind == PLAY else "discard"
                aliases[f"{verb} {slot + 1}"] = a
                aliases[f"{verb} the {_ORDINALS[slot]} card"] = a
                aliases[f"{verb} {_ORDINALS[slot]} card"] = a
        return aliases

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """Move named in ``text``, or None when it names none or several.

        Accepts the move names (``"play card 2"``, ``"hint red to player 1"``), a bare
        action index, ``"play 2"``, ``"discard the first card"``, and hints written with any
        of hint/tell/reveal/clue/give, a colour word or a rank (``"rank 3"``, ``"3s"``,
        ``"threes"``), and ``"player N"`` for the target (optional with two players).
        """
        said = words(text)
        _, table = self._name_table(agent)  # names and aliases, normalised, built once
        if said in table:
            return table[said]
        if re.fullmatch(r"(action )?\d+", said):
            j = int(said.split()[-1])
            return j if 0 <= j < self.num_moves else None
        tokens = said.split()
        hits = set(self._removals_in(tokens)) | set(self._hints_in(tokens, agent))
        return hits.pop() if len(hits) == 1 else None

    def _removals_in(self, tokens: list[str]):
        for i, tok in enumerate(tokens):
            if tok not in ("play", "discard", "plays", "discards", "playing", "discarding"):
                continue
            base = PLAY if tok.startswith("play") else DISCARD
            for nxt in tokens[i + 1 : i + 5]:
                slot = None
                if nxt.isdigit():
                    slot = int(nxt) - 1
                elif nxt in _ORDINALS:
                    slot = _ORDINALS.index(nxt)
                elif nxt in _NUMBER_WORDS:
                    slot = _NUMBER_WORDS.index(nxt) - 1
                if slot is not None:
                    if 0 <= slot < self.hand_size:
                        yield (0 if base == DISCARD else self.hand_size) + slot
                    break

    def _hints_in(self, tokens: list[str], agent: int):
        if not any(t in _HINT_VERBS or t.startswith(("hint", "clue")) for t in tokens):
            return
        values = set()
        for i, tok in enumerate(tokens):
            if tok in COLOUR_NAMES[: self.colours]:
                values.add((COLOUR, COLOUR_NAMES.index(tok)))
            m = re.fullmatch(r"(\d)s?", tok)
            prev = tokens[i - 1] if i else ""
            if (
                m
                and prev not in ("player", "players", "p")
                and (prev in ("rank", "number") or tok.endswith("s"))
            ):
                values.add((RANK, int(m.group(1)) - 1))
            if tok in _RANK_PLURALS:
                values.add((RANK, _RANK_PLURALS.index(tok)))
        targets = {
            int(tokens[i + 1])
            for i, t in enumerate(tokens[:-1])
            if t in ("player", "p") and tokens[i + 1].isdigit()
        }
        if not targets and self.num_players == 2:
            targets = {1 - agent}
        for kind, value in values:
            if not 0 <= value < (self.colours if kind == COLOUR else self.ranks):
                continue
            for target in targets:
                offset = (target - agent) % self.num_players
                if offset == 0:
                    continue
                base = 2 * self.hand_size + (0 if kind == COLOUR else (self.num_players - 1) * self.colours)
                n = self.colours if kind == COLOUR else self.ranks
                yield base + (offset - 1) * n + value

    def rules_text(self, params: HanabiParams | None = None, agent: int = 0) -> str:
        P, C, R, H = self.num_players, self.colours, self.ranks, self.hand_size
        colours = ", ".join(COLOUR_NAMES[:C])
        copies = ", ".join(f"{n} of rank {r + 1}" for r, n in enumerate(self.copies))
        return "\n".join(
            [
                f"You are player {agent} in Hanabi, a cooperative card game for {P} players. Everyone wins "
                "or loses together: the team's score is what counts.",
                f"The deck has {self.deck_size} cards in {C} colours ({colours}) and ranks 1 to {R}; each "
                f"colour has {copies}. Each player holds {H} cards, numbered from card 1 (oldest) to card "
                f"{H} (newest).",
                "You cannot see your own cards, but you see everyone else's. You only know about your own "
                "cards what hints have told you.",
                f"The team builds one firework per colour, from 1 up to {R}, in order. The score is the "
                f"number of cards played on the fireworks (at most {self.max_score}).",
                "On your turn do exactly one of:",
                "- play a card: if it is the next rank of its colour it joins the firework, otherwise it is "
                "discarded and the team loses a life. Completing a firework returns an information token.",
                f"- discard a card to regain an information token (not allowed with all {self.max_info} "
                "tokens).",
                "- give a hint (costs one information token): tell another player about ALL of their cards "
                "of one colour or of one rank. The hint must match at least one of their cards.",
                "After playing or discarding you draw a new card into your last position; later cards move "
                "down one position.",
                f"The team has {self.max_life} lives; losing the last one ends the game with score 0. "
                "When the deck runs out, every player gets one more turn.",
                f"Moves: 'play card N', 'discard card N' (N from 1 to {H}), 'hint <colour> to player K', "
                "'hint rank N to player K'.",
            ]
        )

    def _knowledge_text(self, state: HanabiState, player: int, slot: int) -> str:
        cp = np.asarray(state.colour_plausible[player, slot])
        rp = np.asarray(state.rank_plausible[player, slot])
        ch, rh = int(state.colour_hinted[player, slot]), int(state.rank_hinted[player, slot])
        bits = []
        if ch >= 0 and rh >= 0:
            bits.append(f"{COLOUR_NAMES[ch]} {rh + 1}")
        elif ch >= 0:
            bits.append(COLOUR_NAMES[ch])
        elif rh >= 0:
            bits.append(f"rank {rh + 1}")
        if ch < 0 and not cp.all():
            bits.append("not " + "/".join(COLOUR_NAMES[c] for c in np.flatnonzero(~cp)))
        if rh < 0 and not rp.all():
            bits.append("not rank " + "/".join(str(r + 1) for r in np.flatnonzero(~rp)))
        return ", ".join(bits) if bits else "unknown"

    def render_text(
        self, state: HanabiState, agent: int | None = None, params: HanabiParams | None = None
    ) -> str:
        """Player ``agent``'s view: others' cards, its own only as hints; ``agent=None``: all."""
        P, C = self.num_players, self.colours
        hands = np.asarray(state.hands)
        fireworks = np.asarray(state.fireworks)

        def who(q: int) -> str:
            return "you" if q == agent else f"player {q}"

        # self.score in NumPy (its jnp.where costs a dispatch, half of a render on the host)
        score = int(fireworks.sum()) if int(state.life_tokens) > 0 else 0
        lines = [
            f"Hanabi, {P} players. Score: {score} of {self.max_score}.",
            "Fireworks: " + ", ".join(f"{COLOUR_NAMES[c]} {fireworks[c]}" for c in range(C)) + ".",
            f"Information tokens: {int(state.info_tokens)} of {self.max_info}. "
            f"Lives: {int(state.life_tokens)} of {self.max_life}. "
            f"Cards left in the deck: {self.deck_size - int(state.drawn)}.",
        ]
        pile = np.asarray(state.discards)
        gone = [f"{self.card_name(t)}" + (f" x{n}" if n > 1 else "") for t, n in enumerate(pile) if n]
        lines.append("Discarded: " + (", ".join(gone) if gone else "nothing") + ".")
        order = range(P) if agent is None else [(agent + k) % P for k in range(P)]
        for q in order:
            held = [s for s in range(self.hand_size) if hands[q, s] >= 0]
            if q == agent:
                lines.append("Your hand (hidden from you; what the hints told you):")
                lines += [f"  card {s + 1}: {self._knowledge_text(state, q, s)}" for s in held]
            else:
                lines.append(f"Player {q}'s hand:")
                lines += [
                    f"  card {s + 1}: {self.card_name(hands[q, s])} (they know: "
                    f"{self._knowledge_text(state, q, s)})"
                    for s in held
                ]
        last = int(state.last_player)
        if last >= 0:
            lines.append("Last move: " + self._last_move_text(state, who))
        if bool(self.terminal(state)):
            lines.append(f"Game over. Final score: {score}.")
        else:
            turn = int(state.player)
            lines.append("It is your turn." if turn == agent else f"It is player {turn}'s turn.")
        return "\n".join(lines)

    def _last_move_text(self, state: HanabiState, who) -> str:
        last, a = int(state.last_player), int(state.last_move)
        kind, slot = int(self._kind[a]), int(self._slot[a])
        if kind in (PLAY, DISCARD):
            card = self.card_name(int(state.last_card))
            if kind == DISCARD:
                return f"{who(last)} discarded card {slot + 1}, {card}."
            outcome = (
                "it joined the firework" if bool(state.last_scored) else "it did not fit: a life was lost"
            )
            return f"{who(last)} played card {slot + 1}, {card}; {outcome}."
        target = (last + int(self._offset[a])) % self.num_players
        value = int(self._value[a])
        what = COLOUR_NAMES[value] if kind == COLOUR else f"rank {value + 1}"
        touched = [str(s + 1) for s in np.flatnonzero(np.asarray(state.last_reveal))]
        return f"{who(last)} hinted {what} to {who(target)}: card(s) {', '.join(touched)}."

    def render_rgb(self, state: HanabiState, params: HanabiParams | None = None) -> np.ndarray:
        """Every hand (a row of cards in their colour, height = rank; grey: empty slot), the
        fireworks below, then tokens (blue) and lives (red) as pips."""
        palette = np.array(
            [[220, 60, 50], [235, 200, 40], [60, 170, 80], [235, 235, 235], [60, 110, 220]], np.uint8
        )
        cw, chh, pad = 24, 36, 6
        P, H, R = self.num_players, self.hand_size, self.ranks
        width = max(H, self.colours, self.max_info + self.max_life + 1) * (cw + pad) + pad
        height = (P + 1) * (chh + pad) + pad + 14
        img = np.full((height, width, 3), 30, np.uint8)

        def card(y0, x0, colour, rank):
            img[y0 : y0 + chh, x0 : x0 + cw] = 70
            if colour >= 0:
                fill = max(4, chh * (rank + 1) // R)
                img[y0 + chh - fill : y0 + chh, x0 : x0 + cw] = palette[colour]

        hands = np.asarray(state.hands)
        for q in range(P):
            for s in range(H):
                t = int(hands[q, s])
                card(pad + q * (chh + pad), pad + s * (cw + pad), t // R if t >= 0 else -1, t % R)
        for c, n in enumerate(np.asarray(state.fireworks)):
            card(pad + P * (chh + pad), pad + c * (cw + pad), c if n else -1, max(int(n) - 1, 0))
        y0 = height - 12
        for i in range(int(state.info_tokens)):
            img[y0 : y0 + 8, pad + i * 12 : pad + i * 12 + 8] = (80, 140, 255)
        for i in range(int(state.life_tokens)):
            x0 = width - pad - (i + 1) * 12
            img[y0 : y0 + 8, x0 : x0 + 8] = (230, 60, 60)
        return img


# ---------------------------------------------------------------------- scripted partner
def rule_actions(env: Hanabi, state: HanabiState) -> jax.Array:
    """The rule-based player's move for the player to move in ``state`` (one env, traced).

    It reads only what that player may see (other hands, its own hint knowledge, the
    board), in this order of preference:

    1. play a card its knowledge proves playable (every card still possible fits a firework);
    2. with a token, hint the next player about a playable card they do not fully know
       (the rank when it is unknown to them, else the colour);
    3. discard a card its knowledge proves useless (every possible card is already played),
       else its oldest card without any hint, else its oldest card;
    4. otherwise hint the next player's oldest card's rank (always legal with a token).

    Anything illegal falls back to the lowest legal move.
    """
    P, H, C, R = env.num_players, env.hand_size, env.colours, env.ranks
    p = state.player
    fw = state.fireworks
    ids = jnp.arange(C * R)
    playable_id = fw[ids // R] == ids % R
    useless_id = ids % R < fw[ids // R]
    held = state.hands[p] >= 0
    possible = (state.colour_plausible[p][:, :, None] & state.rank_plausible[p][:, None, :]).reshape(H, C * R)
    known_playable = held & possible.any(1) & ~(possible & ~playable_id).any(1)
    known_useless = held & possible.any(1) & ~(possible & ~useless_id).any(1)
    hinted = (state.colour_hinted[p] >= 0) | (state.rank_hinted[p] >= 0)

    q = (p + 1) % P
    theirs = state.hands[q]
    their_playable = (theirs >= 0) & playable_id[jnp.maximum(theirs, 0)]
    unknown = (state.colour_hinted[q] < 0) | (state.rank_hinted[q] < 0)
    to_hint = their_playable & unknown
    s = jnp.argmax(to_hint)
    card = jnp.maximum(theirs[s], 0)
    hint_rank = state.rank_hinted[q, s] < 0
    # Action ids of "hint rank/colour to the next player" (target offset 1).
    rank_move = 2 * H + (P - 1) * C + card % R
    colour_move = 2 * H + card // R
    hint = jnp.where(hint_rank, rank_move, colour_move)
    discard = jnp.where(
        known_useless.any(),
        jnp.argmax(known_useless),
        jnp.where((held & ~hinted).any(), jnp.argmax(held & ~hinted), 0),
    )
    can_hint = state.info_tokens > 0
    can_discard = state.info_tokens < env.max_info
    fallback_hint = 2 * H + (P - 1) * C + jnp.maximum(theirs[0], 0) % R
    action = jnp.where(
        known_playable.any(),
        H + jnp.argmax(known_playable),
        jnp.where(
            can_hint & to_hint.any(),
            hint,
            jnp.where(can_discard, discard, jnp.where(can_hint, fallback_hint, H)),
        ),
    ).astype(jnp.int32)
    mask = env.action_mask(state, env.default_params)[p]
    return jnp.where(mask[action], action, jnp.argmax(mask)).astype(jnp.int32)


class RulePlayer(Policy):
    """The rule-based Hanabi partner of :func:`rule_actions` as an arena player (``rule``)."""

    name = "rule"

    def __init__(self, env=None):
        del env

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        del key
        env = turn.env
        return jax.vmap(lambda s: rule_actions(env, s))(turn.state)
