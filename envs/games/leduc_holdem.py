"""Leduc hold'em (2 players), exactly as OpenSpiel's ``leduc_poker``.

Card
----
- **Agents**: ``player_0``, ``player_1``. One role.
- **Deck and deal**: six cards, two suits of J < Q < K, numbered as OpenSpiel
  does: ``0 = Js, 1 = Jh, 2 = Qs, 3 = Qh, 4 = Ks, 5 = Kh`` (rank = card // 2).
  Both players ante 1 chip and get one private card. **Chance comes from the reset
  key only**: the reset key deals the two private cards *and* the public card
  (uniform, without replacement, in that order); the public card stays hidden in
  the state and is revealed when the first betting round ends (it is never part
  of an observation or a per-player rendering before that). This has exactly the
  distribution of OpenSpiel's chance nodes, and a trajectory is reproducible from
  the reset key and the actions; the step key is unused.
- **Actions** (OpenSpiel's numbering): ``0 = fold`` (legal only when facing a
  bet), ``1 = call`` (a check when there is nothing to call; always legal),
  ``2 = raise`` (legal while fewer than 2 raises were made this round). A raise is
  2 chips in round 1 and 4 in round 2 (on top of matching the current bet).
- **Order of play**: player 0 acts first in both rounds. A round ends when both
  players have checked, or a raise has been called; a fold ends the game.
- **Observation**: float32 ``[30]``, the player's information state, identical to
  OpenSpiel's ``information_state_tensor(player)``: one-hot seat (2), one-hot own
  card (6), one-hot public card (6, zeros until revealed), then the betting
  sequence of both rounds, 4 slots each, 2 bits per move (``10`` = call/check,
  ``01`` = raise; a fold sets neither). Never the opponent's card.
- **Rewards**: zero until the end; at the end chips won minus chips put in
  (OpenSpiel's returns; zero-sum). Showdown: a pair with the public card beats
  any unpaired hand; otherwise the higher private card wins; equal ranks split
  the pot (both returns 0).
- **Termination**: by a fold or the showdown after round 2 (at most 8 moves);
  never truncated. A finished game stays finished under further ``step`` calls.
- **Illegal actions**: out of range, fold when not facing a bet, or a third raise.
  ``"replace"`` (default) plays the first legal action (fold when facing a bet,
  otherwise check) and flags ``info["illegal_action"]``; ``"lose"`` ends the game:
  the offender loses the chips it has in the pot to the opponent (the outcome of
  folding). Actions of the player not to move are ignored.
- **Scripted players**: ``"cfr"`` / ``"nash"``: a CFR+ average strategy solved with
  OpenSpiel, shipped in ``data/leduc_holdem_cfr.json`` (its exploitability is in
  the file); ``"random"``.
- **Reference**: OpenSpiel 2.0.2 ``leduc_poker`` (default parameters): legal actions,
  player to move, termination, returns and observations are checked step by step
  on random trajectories fed the same cards, showdown ties and raise caps included.
- **Text**: rules, per-player rendering (own card and the public card once shown),
  action names, parser accepting fold, call/check/pass, raise/bet.
- **Version**: v0.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import struct
from alem.players import Player

from .poker import PokerEnv, TablePlayer, split_pot

__all__ = ["LeducState", "LeducHoldem", "cfr_player", "nash_player"]

FOLD, CALL, RAISE = 0, 1, 2
_RANKS = ("J", "Q", "K")
_RANK_NAMES = ("Jack", "Queen", "King")
_SUITS = ("s", "h")
_SUIT_NAMES = ("spades", "hearts")
#: The betting rounds (state.round): before and after the public card is shown.
FIRST_ROUND, LAST_ROUND = 0, 1
#: Chips per raise in each round.
_RAISE_SIZE = (2, 4)
_MAX_RAISES = 2
_SLOTS = 4  # moves per round at most: check, raise, raise, call


@struct.dataclass
class LeducState:
    cards: jax.Array  # int32 [3]: player 0, player 1, public (hidden until round 2)
    round: jax.Array  # int32 [], 0 or 1
    seq: jax.Array  # int32 [2, 4], moves of each round (-1 = none)
    num_moves: jax.Array  # int32 [], moves in the current round
    player: jax.Array  # int32 [], seat to move
    stakes: jax.Array  # int32 [], chips each player must have in to stay
    num_raises: jax.Array  # int32 [], raises this round
    num_calls: jax.Array  # int32 [], calls/checks since the last raise this round
    contrib: jax.Array  # int32 [2], chips in the pot per seat
    terminal: jax.Array  # bool []
    returns: jax.Array  # float32 [2], final utilities (zero until terminal)
    forfeit: jax.Array  # int32 [], seat that forfeited by an illegal action (-1 = none)


def hand_strength(private: jax.Array, public: jax.Array) -> jax.Array:
    """Showdown score (higher wins, equal splits): pairs first, then high card, then kicker."""
    mine, board = private // 2, public // 2
    pair = mine == board
    return jnp.where(pair, 9 + mine, 3 * jnp.maximum(mine, board) + jnp.minimum(mine, board))


class LeducHoldem(PokerEnv):
    """Two-player Leduc hold'em (see the module card).

    Args:
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    episode_steps_hint = 4.0  # random play, measured

    def __init__(self, *, illegal_action: str = "replace"):
        super().__init__(2, illegal_action=illegal_action)
        self.num_cards = 6
        self.num_dealt = 3
        self.obs_dim = 2 + 6 + 6 + 2 * _SLOTS * 2
        self._names = ("fold", "call", "raise")

    # -- rules
    def initial_state(self, cards: jax.Array) -> LeducState:
        return LeducState(
            cards=jnp.asarray(cards, jnp.int32),
            round=jnp.int32(FIRST_ROUND),
            seq=jnp.full((2, _SLOTS), -1, jnp.int32),
            num_moves=jnp.int32(0),
            player=jnp.int32(0),
            stakes=jnp.int32(1),
            num_raises=jnp.int32(0),
            num_calls=jnp.int32(0),
            contrib=jnp.ones((2,), jnp.int32),
            terminal=jnp.bool_(False),
            returns=jnp.zeros((2,), jnp.float32),
            forfeit=jnp.int32(-1),
        )

    def transition(self, state: LeducState, action: jax.Array) -> LeducState:
        me = jnp.arange(2) == state.player
        fold, call, raise_ = action == FOLD, action == CALL, action == RAISE
        raise_size = jnp.where(state.round == FIRST_ROUND, _RAISE_SIZE[FIRST_ROUND], _RAISE_SIZE[LAST_ROUND])
        stakes = state.stakes + jnp.where(raise_, raise_size, 0)
        # Calling or raising brings the mover's chips up to the (new) stakes.
        contrib = jnp.where(me & ~fold, stakes, state.contrib)
        num_raises = state.num_raises + raise_
        num_calls = jnp.where(raise_, 0, state.num_calls + call)
        round_over = ~fold & jnp.where(num_raises == 0, num_calls == 2, num_calls == 1)
        showdown = round_over & (state.round == LAST_ROUND)
        next_round = round_over & (state.round == FIRST_ROUND)
        strength = jax.vmap(hand_strength, (0, None))(state.cards[:2], state.cards[2])
        returns = jnp.where(
            fold,
            split_pot(contrib, ~me),
            jnp.where(showdown, split_pot(contrib, strength == strength.max()), 0.0),
        )
        return state.replace(
            round=jnp.where(next_round, LAST_ROUND, state.round),
            seq=state.seq.at[state.round, state.num_moves].set(action.astype(jnp.int32), mode="drop"),
            num_moves=jnp.where(next_round, 0, state.num_moves + 1),
            player=jnp.where(next_round, 0, 1 - state.player).astype(jnp.int32),
            stakes=stakes,
            num_raises=jnp.where(next_round, 0, num_raises),
            num_calls=jnp.where(next_round, 0, num_calls),
            contrib=contrib,
            terminal=fold | showdown,
            returns=returns,
        )

    def legal(self, state: LeducState) -> jax.Array:
        facing_bet = state.stakes > state.contrib[state.player]
        return jnp.stack([facing_bet, jnp.bool_(True), state.num_raises < _MAX_RAISES])

    def info_state(self, state: LeducState, player: jax.Array) -> jax.Array:
        public = jax.nn.one_hot(state.cards[2], 6, dtype=jnp.float32) * (state.round == LAST_ROUND)
        bets = jnp.stack([state.seq == CALL, state.seq == RAISE], axis=-1).reshape(-1)
        return jnp.concatenate(
            [
                jax.nn.one_hot(player, 2, dtype=jnp.float32),
                jax.nn.one_hot(state.cards[player], 6, dtype=jnp.float32),
                public,
                bets.astype(jnp.float32),
            ]
        )

    # -- text
    def card_name(self, card: int, short: bool = False) -> str:
        r, s = int(card) // 2, int(card) % 2
        return f"{_RANKS[r]}{_SUITS[s]}" if short else f"{_RANK_NAMES[r]} of {_SUIT_NAMES[s]}"

    def _card_ranks(self) -> np.ndarray:
        return np.arange(6) // 2

    def _public_card(self, s: Any) -> int | None:
        return int(s.cards[2]) if int(s.round) == LAST_ROUND else None

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        # "pass" is a check in poker parlance; giving up must be said as "fold".
        return {"f": FOLD, "c": CALL, "check": CALL, "pass": CALL, "r": RAISE, "bet": RAISE}

    def infoset_label(self, obs: Any) -> str:
        """Readable name of an information state, e.g. ``"p0 Qs Kh rc/r"`` (``-``: no public card)."""
        o = np.asarray(obs) > 0.5
        player = int(np.argmax(o[:2]))
        card = self.card_name(int(np.argmax(o[2:8])), short=True)
        public = self.card_name(int(np.argmax(o[8:14])), short=True) if o[8:14].any() else "-"
        bits = o[14:].reshape(2, _SLOTS, 2)
        rounds = ["".join("c" if b[0] else "r" for b in rnd if b.any()) for rnd in bits]
        hist = rounds[0] + ("/" + rounds[1] if o[8:14].any() else "")
        return f"p{player} {card} {public} {hist or '-'}"

    def rules_text(self, params: Any = None, agent: int = 0) -> str:
        return "\n".join(
            [
                f"You are player {agent} in Leduc hold'em, a two-player poker game (player 0 acts first).",
                "The deck has six cards: two Jacks, two Queens and two Kings (suits spades and hearts;",
                "suits do not matter). Both players put 1 chip in the pot and get one private card;",
                "you see only your own card.",
                "There are two betting rounds. After the first, one public card is shown to both players.",
                "In a round, player 0 acts first. You may call (check if there is nothing to call),",
                "raise (bet 2 chips in round 1, 4 chips in round 2, on top of matching the current bet),",
                "or fold when facing a bet (you give up and lose what you put in). At most two raises",
                "per round. A round ends when both players checked or a raise was called.",
                "At the showdown, a private card that pairs the public card wins; otherwise the higher",
                "private card wins; equal ranks split the pot.",
                "Your payoff is the chips you win minus the chips you put in.",
                "Actions: fold, call (check), raise (bet).",
            ]
        )

    def json_view(self, state: LeducState, agent: int, params: Any = None) -> dict[str, Any]:
        """``your_card``, ``public_card`` (null until shown), ``round`` (1 or 2), ``pot`` (chips per
        seat), ``moves`` (per round, ``[seat, move]``), ``to_act`` (null once over), ``payoff``."""
        s = self._host(state)
        names, public = self.action_names(agent), self._public_card(s)
        return {
            "your_card": self.card_name(s.cards[agent]),
            "public_card": None if public is None else self.card_name(public),
            "round": int(s.round) + 1,
            "pot": {self.seat_name(i): int(s.contrib[i]) for i in range(2)},
            "moves": [
                [[self.seat_name(k % 2), names[int(a)]] for k, a in enumerate(x for x in s.seq[r] if x >= 0)]
                for r in range(int(s.round) + 1)
            ],
            "to_act": None if bool(s.terminal) else self.seat_name(int(s.player)),
            "payoff": float(s.returns[agent]) if bool(s.terminal) else None,
        }

    def render_text(
        self, state: LeducState, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        """``agent``'s view; on its turn it lists its legal actions unless ``moves=False``."""
        s = self._host(state)
        you = lambda i: "you" if i == agent else f"player {i}"
        lines = ["Leduc hold'em."]
        if agent is None:
            lines.append(
                f"Cards: player 0: {self.card_name(s.cards[0])}, player 1: {self.card_name(s.cards[1])}."
            )
        else:
            lines.append(f"You are player {agent}. Your card: {self.card_name(s.cards[agent])}.")
        public = self._public_card(s)
        shown = self.card_name(public) if public is not None else "not shown yet"
        lines.append(f"Public card: {shown}.")
        lines.append(
            f"Pot: {int(s.contrib.sum())} chips ({you(0)} {int(s.contrib[0])}, {you(1)} {int(s.contrib[1])})."
        )
        for r in range(int(s.round) + 1):
            words, raised = [], False
            for k, a in enumerate(int(x) for x in s.seq[r] if x >= 0):
                seat = k % 2
                if a == RAISE:
                    words.append(f"{you(seat)} {'raised' if raised else 'bet'} {_RAISE_SIZE[r]}")
                    raised = True
                elif a == CALL:
                    words.append(f"{you(seat)} {'called' if raised else 'checked'}")
                else:
                    words.append(f"{you(seat)} folded")
            lines.append(f"Round {r + 1} betting: " + (", ".join(words) + "." if words else "none yet."))
        if bool(s.terminal):
            lines += self._outcome_lines(s, agent)
        elif agent is None or int(s.player) != agent:
            lines.append(f"Round {int(s.round) + 1}: player {int(s.player)} to act.")
        elif not moves:
            lines.append("It is your turn.")
        else:
            owe = int(s.stakes) - int(s.contrib[agent])
            opts = [f"fold, call ({owe} chip{'s' if owe != 1 else ''})"] if owe > 0 else ["call (check)"]
            if int(s.num_raises) < _MAX_RAISES:
                size = _RAISE_SIZE[int(s.round)]
                opts.append(f"raise ({owe} to call + {size})" if owe > 0 else f"raise (bet {size})")
            lines.append("It is your turn. Legal actions: " + ", ".join(opts) + ".")
        return "\n".join(lines)


def cfr_player(env: LeducHoldem, name: str = "cfr") -> Player:
    """The shipped CFR+ average strategy: an approximate Nash equilibrium."""
    return TablePlayer(env, "leduc_holdem_cfr.json", name=name)


def nash_player(env: LeducHoldem) -> Player:
    """Alias of :func:`cfr_player` named ``"nash"`` (exploitability recorded in the table)."""
    return cfr_player(env, name="nash")


# deprecated aliases (the player rename), kept for one release: docs/changelog.md
cfr_policy, nash_policy = cfr_player, nash_player
