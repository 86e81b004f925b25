"""Hanabi's state, parameters and constants (see the card in :mod:`alem.envs.games.hanabi`)."""

from __future__ import annotations

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams
from alem.errors import EnvArgumentError

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
