"""Kuhn poker (2 players; 3 to 10 as an option), exactly as OpenSpiel's ``kuhn_poker``.

Card
----
- **Agents**: ``player_0 .. player_{N-1}`` (``num_players=N``, default 2). One role.
- **Deck and deal**: ``N + 1`` cards of increasing rank (2 players: J < Q < K;
  3 players: J < Q < K < A); every player antes 1 chip and gets one private card,
  dealt from the reset key (uniform, without replacement, in seat order: the
  same chance outcomes OpenSpiel's chance nodes produce). Nothing else is random:
  the step key is unused.
- **Actions** (OpenSpiel's numbering): ``0 = pass`` (check, or fold when facing a
  bet), ``1 = bet`` (bet 1 chip, or call a bet). Both are always legal for the
  player to move; ``action_mask`` rows of the other players (and every row once
  the game is over) are all False.
- **Order of play**: players act in seat order from player 0. If nobody bets in
  the first orbit, there is a showdown among everyone. After the first bet, each
  other player acts exactly once more (in seat order, wrapping around) and either
  calls (bet) or folds (pass); then the highest card among the players who put a
  bet in wins.
- **Observation**: float32 ``[N + (N + 1) + 2 (2N - 1)]`` (2 players: 11), the
  player's information state, identical to OpenSpiel's
  ``information_state_tensor(player)``: one-hot own seat, one-hot own card, then
  one pair of bits per betting move so far (``10`` = pass, ``01`` = bet). It never
  contains another player's card. Every seat gets its own row at every step.
- **Rewards**: zero until the end; at the end each player's chips won minus chips
  put in (OpenSpiel's returns; zero-sum). The winner of a 2-player game gets +1
  (uncontested or no bets) or +2 (called bet).
- **Termination**: by the rules (at most ``2N - 1`` moves); never truncated. A
  finished game stays finished under further ``step`` calls (reward 0).
- **Illegal actions**: only out-of-range indices are illegal. ``"replace"``
  (default) plays ``pass`` and flags ``info["illegal_action"]``; ``"lose"`` ends
  the game: the offender loses the chips it has in the pot and the others share
  them (see :func:`~alem.envs.games.poker.forfeit_returns`). Actions of players
  not to move are ignored.
- **Scripted players**: ``"cfr"`` / ``"nash"`` (2 players): a CFR+ average strategy
  solved with OpenSpiel and shipped in ``data/kuhn_poker_cfr.json`` (its
  exploitability is in the file); ``"random"``.
- **Reference**: OpenSpiel 2.0.2 ``kuhn_poker`` (and ``kuhn_poker(players=3)``): legal
  actions, player to move, termination, returns and the observation are checked
  step by step on random trajectories fed the same deals.
- **Text**: rules, per-player rendering (own card only), action names, parser
  accepting pass/check/fold and bet/call/raise.
- **Version**: v0.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import struct
from alem.errors import EnvArgumentError
from alem.players import Player

from .poker import PokerEnv, TablePlayer, split_pot

__all__ = ["KuhnState", "KuhnPoker", "cfr_player", "nash_player"]

_RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
_RANK_NAMES = {"J": "Jack", "Q": "Queen", "K": "King", "A": "Ace"}
PASS, BET = 0, 1


@struct.dataclass
class KuhnState:
    cards: jax.Array  # int32 [N], private card per seat
    history: jax.Array  # int32 [2N-1], betting moves so far (-1 = none)
    num_moves: jax.Array  # int32 []
    first_bettor: jax.Array  # int32 [], seat of the first bet (-1 = none yet)
    player: jax.Array  # int32 [], seat to move
    contrib: jax.Array  # int32 [N], chips in the pot per seat (1 or 2)
    terminal: jax.Array  # bool []
    returns: jax.Array  # float32 [N], final utilities (zero until terminal)
    forfeit: jax.Array  # int32 [], seat that forfeited by an illegal action (-1 = none)


class KuhnPoker(PokerEnv):
    """Kuhn poker for ``num_players`` players (see the module card).

    Args:
        num_players: 2 (default) to 10, as OpenSpiel's ``kuhn_poker(players=N)``.
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    @property
    def episode_steps_hint(self) -> float:
        return self.num_agents + 0.25  # 2.25 for two players under random play, measured

    def __init__(self, num_players: int = 2, *, illegal_action: str = "replace"):
        if not 2 <= int(num_players) <= 10:
            raise EnvArgumentError(f"KuhnPoker: num_players must be in 2..10, got {num_players}")
        n = int(num_players)
        super().__init__(n, illegal_action=illegal_action)
        self.num_players = n
        self.num_cards = n + 1
        self.num_dealt = n
        self.max_moves = 2 * n - 1
        self.obs_dim = n + (n + 1) + 2 * self.max_moves
        self._names = ("pass", "bet")
        # J, Q, K (2 players), J, Q, K, A (3); larger decks extend downwards from the Ace.
        self._ranks = _RANKS[9 : 9 + n + 1] if n <= 3 else _RANKS[-(n + 1) :]

    # -- rules
    def initial_state(self, cards: jax.Array) -> KuhnState:
        n = self.num_players
        return KuhnState(
            cards=jnp.asarray(cards, jnp.int32),
            history=jnp.full((self.max_moves,), -1, jnp.int32),
            num_moves=jnp.int32(0),
            first_bettor=jnp.int32(-1),
            player=jnp.int32(0),
            contrib=jnp.ones((n,), jnp.int32),
            terminal=jnp.bool_(False),
            returns=jnp.zeros((n,), jnp.float32),
            forfeit=jnp.int32(-1),
        )

    def transition(self, state: KuhnState, action: jax.Array) -> KuhnState:
        n = self.num_players
        seat = jnp.arange(n)
        bet = action == BET
        first = jnp.where((state.first_bettor < 0) & bet, state.player, state.first_bettor)
        contrib = state.contrib + ((seat == state.player) & bet).astype(jnp.int32)
        moves = state.num_moves + 1
        # Without a bet: one orbit, then showdown. After the first bet by seat f, every
        # other seat answers once, which ends the game after N + f moves.
        terminal = jnp.where(first < 0, moves == n, moves == n + first)
        in_hand = jnp.where(first >= 0, contrib > 1, True)
        winner = jnp.argmax(jnp.where(in_hand, state.cards, -1))
        returns = jnp.where(terminal, split_pot(contrib, seat == winner), 0.0)
        return state.replace(
            history=state.history.at[state.num_moves].set(action.astype(jnp.int32), mode="drop"),
            num_moves=moves,
            first_bettor=first,
            player=(moves % n).astype(jnp.int32),
            contrib=contrib,
            terminal=terminal,
            returns=returns,
        )

    def legal(self, state: KuhnState) -> jax.Array:
        return jnp.ones((2,), dtype=bool)

    def info_state(self, state: KuhnState, player: jax.Array) -> jax.Array:
        n = self.num_players
        moves = jnp.stack([state.history == PASS, state.history == BET], axis=-1).reshape(-1)
        return jnp.concatenate(
            [
                jax.nn.one_hot(player, n, dtype=jnp.float32),
                jax.nn.one_hot(state.cards[player], n + 1, dtype=jnp.float32),
                moves.astype(jnp.float32),
            ]
        )

    # -- text
    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        return {
            "game": ("name", ("Kuhn poker",)),
            "seat": ("name", tuple(str(i) for i in range(self.num_players))),
            "card": ("name", tuple(_RANK_NAMES.get(r, r) for r in self._ranks)),
            "move": ("word", self._names),
        }

    def action_names(self, agent: int = 0) -> list[str]:
        return list(self.labels("move"))

    def seat_name(self, i: int) -> str:
        return self.labels("seat")[i]

    def card_name(self, card: int, short: bool = False) -> str:
        r = self._ranks[int(card)]
        return r if short else self.labels("card")[int(card)]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return {
            "p": PASS,
            "check": PASS,
            "fold": PASS,
            "b": BET,
            "call": BET,
            "raise": BET,
            "i pass": PASS,
            "i bet": BET,
        }

    def infoset_label(self, obs: Any) -> str:
        """Readable name of an information state from its observation row, e.g. ``"p1 K b"``."""
        o = np.asarray(obs) > 0.5
        n = self.num_players
        player = int(np.argmax(o[:n]))
        card = self.card_name(int(np.argmax(o[n : 2 * n + 1])), short=True)
        bits = o[2 * n + 1 :].reshape(-1, 2)
        hist = "".join("p" if b[0] else "b" for b in bits if b.any())
        return f"p{player} {card} {hist or '-'}"

    def rules_text(self, params: Any = None, agent: int = 0) -> str:
        n = self.num_players
        deck = " < ".join(self.card_name(c) for c in range(self.num_cards))
        (game,), seat, (pass_, bet) = self.labels("game"), self.labels("seat"), self.labels("move")
        return "\n".join(
            [
                f"You are player {seat[agent]} in {game} with {n} players (player {seat[0]} acts first).",
                f"The deck has {n + 1} cards, ranked {deck}. Every player puts 1 chip in the pot",
                "(the ante) and is dealt one private card; you see only your own card.",
                f"Players act in turn. While nobody has bet, you may {pass_} (check) or {bet} 1 chip.",
                f"Once someone has bet, every other player acts once more, in turn: {bet} 1 chip to",
                f"call, or {pass_} to fold (you give up and lose what you put in).",
                "If nobody bets, everyone shows their card; otherwise the players who bet show theirs.",
                "The highest card shown wins the whole pot.",
                "Your payoff is the chips you win minus the chips you put in.",
                f"Actions: {pass_} (check/fold) or {bet} (bet/call).",
            ]
        )

    def json_view(self, state: KuhnState, agent: int, params: Any = None) -> dict[str, Any]:
        """``your_card``, ``pot`` (chips per seat), ``moves`` (``[seat, move]`` in order),
        ``to_act`` (a seat, or null once over), ``payoff`` (yours, once over)."""
        s = self._host(state)
        seats, names = self.labels("seat"), self.action_names(agent)
        return {
            "your_card": self.card_name(s.cards[agent]),
            "pot": {seats[i]: int(s.contrib[i]) for i in range(self.num_players)},
            "moves": [
                [seats[k % self.num_players], names[int(s.history[k])]] for k in range(int(s.num_moves))
            ],
            "to_act": None if bool(s.terminal) else seats[int(s.player)],
            "payoff": float(s.returns[agent]) if bool(s.terminal) else None,
        }

    def render_text(
        self, state: KuhnState, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        """``agent``'s view; on its turn it names its options unless ``moves=False``."""
        s = self._host(state)
        n = self.num_players
        (game,), seats, (pass_, bet) = self.labels("game"), self.labels("seat"), self.labels("move")
        you = lambda i: "you" if i == agent else f"player {seats[i]}"
        lines = [f"{game}, {n} players."]
        if agent is None:
            lines.append(
                "Cards: "
                + ", ".join(f"player {seats[i]}: {self.card_name(s.cards[i])}" for i in range(n))
                + "."
            )
        else:
            lines.append(f"You are player {seats[agent]}. Your card: {self.card_name(s.cards[agent])}.")
        lines.append(
            f"Pot: {int(s.contrib.sum())} chips ("
            + ", ".join(f"{you(i)} {int(s.contrib[i])}" for i in range(n))
            + ")."
        )
        played, bet_seen = [], False
        for k in range(int(s.num_moves)):
            seat, a = k % n, int(s.history[k])
            word = ("called" if bet_seen else "bet") if a == BET else ("folded" if bet_seen else "checked")
            bet_seen |= a == BET
            played.append(f"{you(seat)} {word}")
        lines.append("Moves so far: " + (", ".join(played) + "." if played else "none."))
        if bool(s.terminal):
            lines += self._outcome_lines(s, agent)
        elif agent is None or int(s.player) != agent:
            lines.append(f"Player {seats[int(s.player)]} to act.")
        elif not moves:
            lines.append("It is your turn.")
        else:
            opts = (
                f"{pass_} (fold) or {bet} (call 1 chip)" if bet_seen else f"{pass_} (check) or {bet} (1 chip)"
            )
            lines.append(f"It is your turn: {opts}.")
        return "\n".join(lines)


def cfr_player(env: KuhnPoker, name: str = "cfr") -> Player:
    """The shipped CFR+ average strategy (2 players): an approximate Nash equilibrium."""
    return TablePlayer(env, "kuhn_poker_cfr.json", name=name)


def nash_player(env: KuhnPoker) -> Player:
    """Alias of :func:`cfr_player` named ``"nash"`` (exploitability recorded in the table)."""
    return cfr_player(env, name="nash")


# deprecated aliases (the player rename), kept for one release: docs/changelog.md
cfr_policy, nash_policy = cfr_player, nash_player
