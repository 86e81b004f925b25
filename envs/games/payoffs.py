"""The payoff tables of the named matrix games (host NumPy; the envs are in :mod:`.matrix`).

Each entry of :data:`GAMES` gives a title, action names, a builder of the ``[N, A, ..., A]``
payoff tensor and a one-line description; :func:`payoff_table` builds one by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from alem.errors import EnvArgumentError, did_you_mean

__all__ = ["GAMES", "payoff_table"]


def _two_player(row: list[list[float]], col: list[list[float]] | None = None) -> np.ndarray:
    """``[2, A, A]`` tensor from the row player's table (``col`` defaults to common payoff)."""
    r = np.asarray(row, dtype=np.float32)
    c = r.copy() if col is None else np.asarray(col, dtype=np.float32)
    return np.stack([r, c])


def _penalty(k: float) -> np.ndarray:
    return _two_player([[10, 0, k], [0, 2, 0], [k, 0, 10]])


def _coordination(n: int) -> np.ndarray:
    return _two_player(np.eye(n).tolist())


#: name -> (title, action names, payoff builder, description). Builders take keyword options.
GAMES: dict[str, tuple[str, tuple[str, ...], Any, str]] = {
    "prisoners_dilemma": (
        "the prisoner's dilemma",
        ("cooperate", "defect"),
        lambda: _two_player([[3, 0], [5, 1]], [[3, 5], [0, 1]]),
        "Axelrod payoffs R=3, S=0, T=5, P=1",
    ),
    "stag_hunt": (
        "the stag hunt",
        ("stag", "hare"),
        lambda: _two_player([[2, 0], [1, 1]], [[2, 1], [0, 1]]),
        "OpenSpiel matrix_sh",
    ),
    "chicken": (
        "chicken",
        ("dare", "chicken"),
        lambda: _two_player([[0, 4], [1, 3]], [[0, 1], [4, 3]]),
        "OpenSpiel matrix_cd",
    ),
    "matching_pennies": (
        "matching pennies",
        ("heads", "tails"),
        lambda: _two_player([[1, -1], [-1, 1]], [[-1, 1], [1, -1]]),
        "zero-sum; player 0 wins on a match (OpenSpiel matrix_mp)",
    ),
    "rock_paper_scissors": (
        "rock-paper-scissors",
        ("rock", "paper", "scissors"),
        lambda: _two_player([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], [[0, 1, -1], [-1, 0, 1], [1, -1, 0]]),
        "zero-sum (OpenSpiel matrix_rps)",
    ),
    "battle_of_the_sexes": (
        "the battle of the sexes",
        ("bach", "stravinsky"),
        lambda: _two_player([[3, 0], [0, 2]], [[2, 0], [0, 3]]),
        "OpenSpiel matrix_bos",
    ),
    "coordination": (
        "a pure coordination game",
        (),  # named from num_actions
        _coordination,
        "common payoff identity matrix: 1 if both pick the same action",
    ),
    "climbing": (
        "the climbing game",
        ("a", "b", "c"),
        lambda: _two_player([[11, -30, 0], [-30, 7, 6], [0, 0, 5]]),
        "common payoff, Claus & Boutilier (1998)",
    ),
    "penalty": (
        "the penalty game",
        ("a", "b", "c"),
        _penalty,
        "common payoff, Claus & Boutilier (1998); k is the miscoordination penalty",
    ),
}


def payoff_table(game: str, *, k: float = -10.0, num_actions: int = 2) -> np.ndarray:
    """The ``[N, A, ..., A]`` payoff tensor of a named game (host NumPy)."""
    if game not in GAMES:
        raise EnvArgumentError(f"unknown matrix game {game!r}{did_you_mean(game, GAMES)}; known: {sorted(GAMES)}")
    build = GAMES[game][2]
    if game == "penalty":
        return build(float(k))
    if game == "coordination":
        return build(int(num_actions))
    return build()
