"""Liar's dice for two players, with OpenSpiel's ``liars_dice`` rules and action numbering.

Card
----
- **Agents**: ``player_0`` and ``player_1``; one role. ``player_0`` always opens.
- **Chance**: at ``reset`` each player rolls ``dice_per_player`` dice with ``dice_sides``
  faces (from the reset key; ``step`` draws nothing). Each player's dice are kept
  sorted, as OpenSpiel sorts them once all are rolled.
- **Actions**: ``Discrete(B + 1)`` with ``B = 2 * dice_per_player * dice_sides``.
  Action ``b < B`` bids quantity ``b // dice_sides + 1`` of face ``b % dice_sides + 1``
  ("at least that many dice on the table show that face"); action ``B`` calls
  "liar". This is OpenSpiel's numbering under its default ``bidding_rule="reset-face"``:
  action ``j`` here is OpenSpiel action ``j`` (see :func:`openspiel_action`), so bids
  are ordered by quantity first, then face. Names: ``"bid 2 fours"``, ``"liar"``.
- **Legal moves** (``action_mask``; only the player to move has any): every bid
  strictly higher than the current one, and "liar" once a bid has been made (not
  on the opening move). After the highest bid (``2D`` sixes for six-sided dice)
  only "liar" is legal.
- **Resolution**: after "liar" all dice are counted; a die matches the standing bid
  when it shows the bid's face or the highest face (``dice_sides``, e.g. 6), which
  is wild. With at least ``quantity`` matches the bidder wins, otherwise the caller.
- **Rewards**: terminal utilities, zero-sum: ``+1`` to the winner, ``-1`` to the
  loser, on the step that ends the game; 0 otherwise.
- **Termination**: on the "liar" call (or on an illegal move with
  ``illegal_action="lose"``); at most ``B + 1`` moves. Stepping a finished game
  changes nothing.
- **Observation**: float32 ``[2 + D * S + B + 1]`` per player, OpenSpiel's
  information-state tensor: one-hot of the observing player, one-hot of each of
  its own (sorted) dice, and one bit per action taken so far (bids strictly
  increase and players alternate, so these bits are the whole public history).
  The opponent's dice are never in a player's observation.
- **Illegal actions**: ``illegal_action="replace"`` (default) plays the lowest
  legal move instead and flags ``info["illegal_action"]``;
  ``illegal_action="lose"`` ends the game at once with ``-1`` for the offender and
  ``+1`` for the opponent (no move is applied). Out-of-range indices are illegal
  actions; actions of the player not to move are ignored.
- **Reference**: OpenSpiel 2.0.2 ``liars_dice`` (``players=2``, ``numdice``,
  ``dice_sides``, ``bidding_rule="reset-face"``), checked transition by transition
  (legal actions, player to move, terminal flag, returns, information-state tensor).
- **Text**: rules, a per-player view (own dice, bid history, whose turn, outcome)
  that never shows the opponent's dice, action names and a parser for variants
  such as ``"2 fours"``, ``"bid 2x4"``, ``"two 4s"``, ``"2-4"``, ``"call liar"``,
  ``"challenge"``.
- **Version**: v0.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks, words

__all__ = ["LiarsDiceState", "LiarsDiceParams", "LiarsDice", "openspiel_action", "face_name"]

NUM_PLAYERS = 2
#: Action passed to ``step_env`` in place of an illegal move under ``illegal_action="lose"``.
_NO_MOVE = -1

_FACES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_PLURAL = [f + ("es" if f == "six" else "s") for f in _FACES]
_NUMBERS = ["zero", *_FACES]  # quantity words
_LIAR_WORDS = ("liar", "challenge", "dudo", "doubt", "bluff", "lie", "lying")
_BID_CONNECTORS = ("x", "of", "times", "by", "at", "least")


def face_name(face: int, plural: bool) -> str:
    """``"four"`` / ``"fours"`` for faces 1-12; ``"13"`` / ``"13s"`` beyond."""
    if 1 <= face <= len(_FACES):
        return (_PLURAL if plural else _FACES)[face - 1]
    return f"{face}s" if plural else str(face)


def openspiel_action(action: int) -> int:
    """OpenSpiel ``liars_dice`` action id of alem action ``action`` (the numbering is shared)."""
    return int(action)


@struct.dataclass
class LiarsDiceState:
    dice: jax.Array  # int32 [2, D]: each player's dice, faces 1..S, sorted ascending
    taken: jax.Array  # bool [B + 1]: actions played so far (the bid history; B = liar call)
    current_bid: jax.Array  # int32 []: the standing bid's action index, -1 before the first bid
    player: jax.Array  # int32 []: player to move (stays the caller after "liar")
    loser: jax.Array  # int32 []: -1 while the game runs, else the losing player


@struct.dataclass
class LiarsDiceParams(EnvParams):
    """Liar's dice has no dynamic parameters (dice counts change shapes: they are static)."""


class LiarsDice(TextHooks, MultiAgentEnv[LiarsDiceState, LiarsDiceParams]):
    """Two-player liar's dice, exact to OpenSpiel's ``liars_dice`` (see the module card).

    Args:
        dice_per_player: dice each player rolls (OpenSpiel ``numdice``; default 1).
        dice_sides: faces per die (OpenSpiel ``dice_sides``; default 6); the highest is wild.
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
    forfeit_move: ClassVar[int | None] = _NO_MOVE  # no move is applied; forfeit() ends the game
    stochastic: ClassVar[bool] = True
    turn_based: ClassVar[bool] = True
    zero_sum: ClassVar[bool] = True
    cheap_reset: ClassVar[bool] = True  # a roll of a few dice (sorted per player)

    @property
    def episode_steps_hint(self) -> float:
        return 1.5 + 1.8 * self.dice_per_player  # 3.3 with one die each under random play, measured

    def __init__(self, dice_per_player: int = 1, dice_sides: int = 6, *, illegal_action: str = "replace"):
        super().__init__(illegal_action=illegal_action)
        for name, value, low in (("dice_per_player", dice_per_player, 1), ("dice_sides", dice_sides, 2)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < low:
                raise EnvArgumentError(f"LiarsDice: {name} must be an integer >= {low}, got {value!r}")
        self.dice_per_player = int(dice_per_player)
        self.dice_sides = int(dice_sides)
        self.total_dice = NUM_PLAYERS * self.dice_per_player
        self.num_bids = self.total_dice * self.dice_sides  # B; action B is "liar"
        self.liar_action = self.num_bids
        self.agents = tuple(f"player_{i}" for i in range(NUM_PLAYERS))
        self.agent_roles = np.zeros(NUM_PLAYERS, dtype=np.int32)
        self.role_names = ("player",)
        self._obs_dim = NUM_PLAYERS + self.dice_per_player * self.dice_sides + self.num_bids + 1
        self._names = [self._bid_name(b) for b in range(self.num_bids)] + ["liar"]

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> LiarsDiceParams:
        return LiarsDiceParams()

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0.0, 1.0, (self._obs_dim,))
        return one if agent is not None else spaces.stack([one] * NUM_PLAYERS)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(self.num_bids + 1)
        return one if agent is not None else spaces.stack([one] * NUM_PLAYERS)

    def bid(self, action: int) -> tuple[int, int]:
        """``(quantity, face)`` of bid action ``action`` (host-side)."""
        if not 0 <= int(action) < self.num_bids:
            raise ValueError(f"{self.id}: action {action} is not a bid (bids are 0..{self.num_bids - 1})")
        return int(action) // self.dice_sides + 1, int(action) % self.dice_sides + 1

    def bid_action(self, quantity: int, face: int) -> int:
        """Action index of bidding ``quantity`` dice of ``face`` (host-side)."""
        if not (1 <= quantity <= self.total_dice and 1 <= face <= self.dice_sides):
            raise ValueError(
                f"{self.id}: no bid of {quantity} x {face}; quantities are 1..{self.total_dice}, "
                f"faces 1..{self.dice_sides}"
            )
        return (quantity - 1) * self.dice_sides + face - 1

    # ------------------------------------------------------------------ dynamics
    def observe(self, state: LiarsDiceState, params: LiarsDiceParams) -> jax.Array:
        own = jax.nn.one_hot(state.dice - 1, self.dice_sides, dtype=jnp.float32).reshape(NUM_PLAYERS, -1)
        history = jnp.broadcast_to(state.taken.astype(jnp.float32), (NUM_PLAYERS, self.num_bids + 1))
        return jnp.concatenate([jnp.eye(NUM_PLAYERS, dtype=jnp.float32), own, history], axis=1)

    def acting(self, state: LiarsDiceState, params: LiarsDiceParams) -> jax.Array:
        return (jnp.arange(NUM_PLAYERS) == state.player) & (state.loser < 0)

    def action_mask(self, state: LiarsDiceState, params: LiarsDiceParams) -> jax.Array:
        idx = jnp.arange(self.num_bids + 1)
        legal = jnp.where(idx < self.num_bids, idx > state.current_bid, state.current_bid >= 0)
        return legal[None, :] & self.acting(state, params)[:, None]

    def _utilities(self, loser: jax.Array) -> jax.Array:
        return jnp.where(jnp.arange(NUM_PLAYERS) == loser, -1.0, 1.0).astype(jnp.float32)

    def reset_env(self, key, params):
        rolls = jax.random.randint(key, (NUM_PLAYERS, self.dice_per_player), 1, self.dice_sides + 1)
        state = LiarsDiceState(
            dice=jnp.sort(rolls, axis=1).astype(jnp.int32) if self.dice_per_player > 1 else rolls,
            taken=jnp.zeros((self.num_bids + 1,), dtype=bool),
            current_bid=jnp.int32(-1),
            player=jnp.int32(0),
            loser=jnp.int32(-1),
        )
        return state, self.timestep(state, params, jnp.zeros((NUM_PLAYERS,), jnp.float32))

    def step_env(self, key, state, actions, params):
        action = actions[state.player]
        moves = (state.loser < 0) & (action != _NO_MOVE)
        called = moves & (action == self.liar_action)
        bids = moves & ~called
        # Resolve the standing bid (only used when "liar" was called; the bid then exists).
        quantity = state.current_bid // self.dice_sides + 1
        face = state.current_bid % self.dice_sides + 1
        matches = jnp.sum((state.dice == face) | (state.dice == self.dice_sides))
        caller, bidder = state.player, 1 - state.player
        loser = jnp.where(matches >= quantity, caller, bidder)
        new = LiarsDiceState(
            dice=state.dice,
            taken=state.taken | ((jnp.arange(self.num_bids + 1) == action) & moves),
            current_bid=jnp.where(bids, action, state.current_bid),
            player=jnp.where(bids, 1 - state.player, state.player),
            loser=jnp.where(called, loser, state.loser),
        )
        reward = jnp.where(called, self._utilities(loser), 0.0)
        return new, self.timestep(new, params, reward, terminated=new.loser >= 0)

    def forfeit(self, state, offender, params):
        return state.replace(loser=offender), self._utilities(offender)

    # ------------------------------------------------------------------ text
    def _bid_name(self, action: int) -> str:
        q, f = self.bid(action)
        return f"bid {q} {face_name(f, q > 1)}"

    def _bid_phrase(self, action: int) -> str:
        q, f = self.bid(action)
        return f"{q} {face_name(f, q > 1)}"

    def action_names(self, agent: int = 0) -> list[str]:
        return list(self._names)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        aliases = {w: self.liar_action for w in _LIAR_WORDS}
        aliases.update({"call": self.liar_action, "call liar": self.liar_action})
        return aliases

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """Action named in ``text``, or None when it names none or several.

        Accepts the action names (``"bid 2 fours"``, ``"liar"``), a bare index, bids
        written as quantity then face in digits or words with optional connectors
        (``"2 fours"``, ``"bid 2x4"``, ``"two 4s"``, ``"2-4"``, ``"2 of 4"``), and a
        liar call (``"liar"``, ``"call liar"``, ``"challenge"``, ``"doubt"``, ``"dudo"``,
        ``"bluff"``, or a bare ``"call"`` when no bid is named).
        """
        said = words(text)
        table = {words(n): j for j, n in enumerate(self._names)}
        table.update(self.action_aliases(agent))
        if said in table:
            return table[said]
        if re.fullmatch(r"(action )?\d+", said):
            j = int(said.split()[-1])
            return j if 0 <= j <= self.num_bids else None
        tokens = re.findall(r"[a-z]+|\d+", text.lower())
        hits = set(self._bids_in(tokens))
        if any(t in _LIAR_WORDS for t in tokens) or (not hits and "call" in tokens):
            hits.add(self.liar_action)
        return hits.pop() if len(hits) == 1 else None

    def _bids_in(self, tokens: list[str]):
        """Bid actions written as ``<quantity> [connector] <face>`` in ``tokens``."""

        def number(tok: str, words: list[str]) -> int | None:
            if tok.isdigit():
                return int(tok)
            return words.index(tok) if tok in words else None

        for i, tok in enumerate(tokens):
            q = number(tok, _NUMBERS)
            if q is None:
                continue
            j = i + 1
            while j < len(tokens) and tokens[j] in _BID_CONNECTORS:
                j += 1
            if j >= len(tokens):
                continue
            face_tok = tokens[j]
            f = int(face_tok) if face_tok.isdigit() else None
            if f is None and face_tok in _FACES:
                f = _FACES.index(face_tok) + 1
            if f is None and face_tok in _PLURAL:
                f = _PLURAL.index(face_tok) + 1
            if f is not None and 1 <= q <= self.total_dice and 1 <= f <= self.dice_sides:
                yield self.bid_action(q, f)

    def rules_text(self, params: LiarsDiceParams | None = None, agent: int = 0) -> str:
        d, s, n = self.dice_per_player, self.dice_sides, self.total_dice
        dice = "one die" if d == 1 else f"{d} dice"
        top = self._bid_phrase(self.num_bids - 1)
        return "\n".join(
            [
                f"You are player {agent} in liar's dice for 2 players. Each player secretly rolls {dice} "
                f"with {s} sides; you see only your own dice. There are {n} dice in total.",
                "Player 0 moves first and the players alternate. On your turn you either bid or call liar.",
                "A bid 'Q Fs' claims that at least Q of all the dice (yours and your opponent's) show face F. "
                f"Face {s} is wild: it counts as a match for every bid.",
                "Every bid must be higher than the one before: a larger quantity, or the same quantity of "
                f"a higher face. The opening move must be a bid. The highest possible bid is {top}.",
                "Instead of bidding you may call 'liar' on the last bid. Then all dice are counted: if the "
                "bid holds, the bidder wins; otherwise the caller wins. The winner gets +1, the loser -1.",
                "Actions: 'bid Q F' (for example 'bid 1 four', 'bid 2 sixes') or 'liar'.",
            ]
        )

    def json_view(
        self, state: LiarsDiceState, agent: int, params: LiarsDiceParams | None = None
    ) -> dict[str, Any]:
        """``your_dice``, ``bids`` (``[seat, bid]`` oldest first, by action name), ``to_act`` (null
        once over), ``loser`` (a seat, or null while the game runs)."""
        names = self.action_names(agent)
        bids = [int(a) for a in np.flatnonzero(np.asarray(state.taken)) if a < self.num_bids]
        loser = int(state.loser)
        return {
            "your_dice": [int(d) for d in np.asarray(state.dice)[agent]],
            "bids": [[k % NUM_PLAYERS, names[a]] for k, a in enumerate(bids)],
            "to_act": int(state.player) if loser < 0 else None,
            "loser": loser if loser >= 0 else None,
        }

    def render_text(
        self,
        state: LiarsDiceState,
        agent: int | None = None,
        params: LiarsDiceParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        """Player ``agent``'s view (its own dice only); ``agent=None`` shows every die. It names no
        available bids, so ``moves`` changes nothing."""
        dice = np.asarray(state.dice)
        taken = np.flatnonzero(np.asarray(state.taken))
        player, loser = int(state.player), int(state.loser)

        def who(p: int) -> str:
            return "you" if p == agent else f"player {p}"

        lines = [
            f"Liar's dice: 2 players, {self.dice_per_player} {'die' if self.dice_per_player == 1 else 'dice'} "
            f"each, {self.dice_sides} sides, {self.dice_sides}s wild."
        ]
        if agent is None:
            lines += [f"Player {p}'s dice: {' '.join(map(str, dice[p]))}." for p in range(NUM_PLAYERS)]
        else:
            lines.append(f"You are player {agent}. Your dice: {' '.join(map(str, dice[agent]))}.")
        bids = [a for a in taken if a < self.num_bids]
        if bids:
            lines.append("Bids so far (oldest first):")
            lines += [f"  {who(k % NUM_PLAYERS)}: {self._bid_phrase(a)}" for k, a in enumerate(bids)]
        else:
            lines.append("No bids yet.")
        if loser < 0:
            turn = "your turn" if player == agent else f"player {player}'s turn"
            lines.append(f"It is {turn}.")
        else:
            if self.liar_action in taken:
                bidder = 1 - player
                whose = "your" if bidder == agent else f"player {bidder}'s"
                lines.append(
                    f"{who(player).capitalize()} called liar on {whose} bid of "
                    f"{self._bid_phrase(bids[-1])}; the bid was {'true' if loser == player else 'false'}."
                )
            else:
                lines.append(f"{who(loser).capitalize()} made an illegal move and forfeited.")
            lines.append(f"Game over: {who(1 - loser)} won (+1), {who(loser)} lost (-1).")
        return "\n".join(lines)

    def render_rgb(self, state: LiarsDiceState, params: LiarsDiceParams | None = None) -> np.ndarray:
        """Both players' dice (one row each, pips for faces up to 9) over a strip of the bids
        (blue: player 0, red: player 1, black: the liar call)."""
        cell, pad = 40, 6
        dice = np.asarray(state.dice)
        taken = np.flatnonzero(np.asarray(state.taken))
        strip = 10
        width = max(self.dice_per_player * (cell + pad) + pad, (self.num_bids + 1) * strip)
        img = np.full((NUM_PLAYERS * (cell + pad) + pad + 2 * strip, width, 3), 34, np.uint8)
        colours = np.array([[70, 130, 220], [220, 80, 60]], np.uint8)
        # 3x3 pip grid positions (row, col) for faces 1..9.
        pips = {
            1: [(1, 1)],
            2: [(0, 0), (2, 2)],
            3: [(0, 0), (1, 1), (2, 2)],
            4: [(0, 0), (0, 2), (2, 0), (2, 2)],
            5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
            6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
            7: [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 2)],
            8: [(r, c) for r in range(3) for c in range(3) if (r, c) != (1, 1)],
            9: [(r, c) for r in range(3) for c in range(3)],
        }
        for p in range(NUM_PLAYERS):
            y0 = pad + p * (cell + pad)
            for d, face in enumerate(dice[p]):
                x0 = pad + d * (cell + pad)
                img[y0 : y0 + cell, x0 : x0 + cell] = 245
                img[y0 : y0 + 3, x0 : x0 + cell] = colours[p]
                for r, c in pips.get(int(face), []):
                    cy, cx = y0 + 8 + r * 12, x0 + 8 + c * 12
                    img[cy : cy + 6, cx : cx + 6] = 20
                if int(face) not in pips:  # large dice: a bar as long as the face value
                    img[y0 + 16 : y0 + 24, x0 + 4 : x0 + 4 + (cell - 8) * int(face) // self.dice_sides] = 20
        y0 = NUM_PLAYERS * (cell + pad) + pad
        for k, a in enumerate(taken):
            colour = 0 if a == self.liar_action else colours[k % NUM_PLAYERS]
            img[y0 : y0 + strip, a * strip : (a + 1) * strip - 1] = colour
        img[y0 + strip :, :: self.dice_sides * strip] = 120  # a tick where each quantity's bids start
        return img
