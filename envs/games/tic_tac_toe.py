"""Tic-tac-toe, and a perfect (minimax) player.

Card
----
- **Agents**: ``player_0`` (X, moves first) and ``player_1`` (O), as in OpenSpiel. One role.
- **Observation**: bool ``[3, 3, 3]`` per player, ego-centric planes: the
  player's own marks, the opponent's marks, empty cells (each player sees
  itself first, so one policy can play both seats).
- **Actions**: ``Discrete(9)``, the cell ``row * 3 + col`` with row 0 on top,
  the same numbering as OpenSpiel's ``tic_tac_toe``. Names ``a1 .. c3``: letter =
  column (a = left), digit = row (1 = top); e.g. ``b2`` is the centre.
  Aliases: ``top left``, ``center``, ``bottom right``..., ``1a``,
  ``row 1 column 1``, ``r1c1``, OpenSpiel's ``x(0,0)``; a bare number is the
  action index 0-8 (reading order).
- **Turns**: ``acting`` is one-hot on the player to move, all False after the end;
  ``action_mask``: the mover's row marks the empty cells, the other row is all False.
  Actions of the waiting player are ignored.
- **Rewards**: terminal utilities, zero-sum: +1 to the player completing three in a
  row, -1 to the other, 0 each for a draw (full board); 0 on every other step.
- **Termination**: a line of three (row, column or diagonal) or a full board.
  No truncation.
- **Illegal moves**: ``illegal_action="replace"`` (default): an occupied or
  out-of-range cell becomes the mover's first legal cell and is counted in
  ``info["illegal_action"]``; ``illegal_action="lose"``: the mover loses at once
  (-1/+1, board unchanged). See :mod:`alem.envs.games.board`.
- **Reference**: OpenSpiel 2.0.2 ``tic_tac_toe``: same legal actions, player to move,
  terminal states and returns at every step (tests/envs/games/test_tic_tac_toe.py).
- **Text**: rules, a board with coordinates per player, cell names and aliases, parser.
- **Scripted players**: ``"minimax"`` (:class:`MinimaxPlayer`, perfect play from
  a value table over all 3^9 boards) and ``"random"``.
- **Version**: v0.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.games.board import EMPTY, BoardGame, line_table
from alem.players import Player, Turn

__all__ = ["TicTacToe", "MinimaxPlayer", "value_table"]

_COLS = "abc"
_ROW_WORDS = (("top", "upper"), ("middle", "center", "centre"), ("bottom", "lower"))
_COL_WORDS = (("left",), ("center", "centre", "middle"), ("right",))


class TicTacToe(BoardGame):
    """Tic-tac-toe on a 3x3 board; see the module card.

    Args:
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    title = "tic-tac-toe"
    glyphs = ("cross", "ring")
    colors = np.array([[200, 50, 50], [40, 90, 200]], np.uint8)

    episode_steps_hint = 7.6  # random play, measured

    def __init__(self, *, illegal_action: str = "replace"):
        super().__init__(3, 3, 9, 3, illegal_action=illegal_action)

    def move_cell(self, board: jax.Array, action: jax.Array) -> jax.Array:
        return action.astype(jnp.int32)

    def legal_moves(self, board: jax.Array) -> jax.Array:
        return board == EMPTY

    # ------------------------------------------------------------------ text
    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        return {
            **super().text_vocabulary(),
            "column": ("lower", tuple(_COLS)),
            "row": ("digit", ("1", "2", "3")),
        }

    def action_names(self, agent: int = 0) -> list[str]:
        cols, rows = self.labels("column"), self.labels("row")
        return [f"{cols[c]}{rows[r]}" for r in range(3) for c in range(3)]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in range(3):
            for c in range(3):
                j = r * 3 + c
                out[f"{r + 1}{_COLS[c]}"] = j
                out[f"row {r + 1} column {c + 1}"] = j
                out[f"row {r + 1} col {c + 1}"] = j
                out[f"r{r + 1}c{c + 1}"] = j
                out[f"x({r},{c})"] = j
                out[f"o({r},{c})"] = j
                for rw in _ROW_WORDS[r]:
                    for cw in _COL_WORDS[c]:
                        out[f"{rw} {cw}"] = j
                        out[f"{rw}-{cw}"] = j
                        out[f"{rw} {cw} corner" if r != 1 and c != 1 else f"{rw} {cw} cell"] = j
        for w in ("center", "centre", "middle", "the center", "the centre", "the middle"):
            out[w] = 4
        return out

    def rules_text(self, params=None, agent: int = 0) -> str:
        mark, (game,), seat = self.labels("piece"), self.labels("game"), self.labels("seat")
        cols, rows, cell = self.labels("column"), self.labels("row"), self.action_names(agent)
        if self.relabeled_text:  # made-up labels have no order to name a range by
            naming = f"column ({', '.join(cols)}, left to right) and row ({', '.join(rows)}, top to bottom):"
        else:
            naming = "column letter a-c (left to right) and row number 1-3 (top to bottom):"
        return "\n".join(
            [
                f"You are player {seat[agent]} in {game} and play {mark[agent]}; your opponent plays "
                f"{mark[1 - agent]}.",
                f"Players take turns placing their mark in an empty cell of a 3x3 grid; {mark[0]} moves first.",
                "The first to get three marks in a row (horizontally, vertically or diagonally) wins;",
                "a full board without such a line is a draw. Win: +1, loss: -1, draw: 0.",
                f"Cells are named by {naming}",
                f"{cell[0]} is the top-left corner, {cell[4]} the centre, {cell[8]} the bottom-right corner.",
                f"Answer with the name of one empty cell, e.g. {cell[4]}.",
            ]
        )

    def _grid_text(self, board: np.ndarray) -> list[str]:
        sym = np.array([".", *self.labels("piece")])[board.reshape(3, 3)]
        cols, rows = self.labels("column"), self.labels("row")
        lines = ["   " + "   ".join(cols)]
        for r in range(3):
            lines.append(f"{rows[r]}  " + " | ".join(sym[r]))
            if r < 2:
                lines.append("  ---+---+---")
        return lines


# ---------------------------------------------------------------------------- perfect player
_POW3 = 3 ** np.arange(9)


@functools.cache
def value_table() -> np.ndarray:
    """int8 ``[3**9]`` minimax values of every ego-centric board, for the player to move.

    A board is indexed ``sum(v_c * 3**c)`` with ``v_c`` = 0 empty, 1 the mover's
    mark, 2 the opponent's. The value is ``+(1 + e)`` if the mover wins with best
    play, ``-(1 + e)`` if it loses, ``0`` for a draw, where ``e`` is the number of
    empty cells left at the end of the game: so larger is better and faster wins
    (slower losses) are preferred. Computed once in NumPy (under a second) by
    backward induction over the number of pieces.
    """
    idx = np.arange(3**9)
    cells = (idx[:, None] // _POW3) % 3  # [S, 9]
    lines = line_table(3, 3, 3)
    opp_line = np.all(cells[:, lines] == 2, axis=-1).any(axis=1)
    empty = (cells == 0).sum(axis=1)
    # swap[s]: the same board seen by the other player (1 <-> 2).
    swapped = np.where(cells == 0, 0, 3 - cells)
    swap = swapped @ _POW3
    value = np.zeros(3**9, dtype=np.int16)
    for e in range(10):  # children have one empty cell fewer: fill in order of e
        sel = np.flatnonzero(empty == e)
        lost = opp_line[sel]
        best = np.full(sel.shape, -100, dtype=np.int16)
        for c in range(9):
            free = cells[sel, c] == 0
            child = swap[np.where(free, sel + _POW3[c], sel)]
            best = np.where(free, np.maximum(best, -value[child]), best)
        v = np.where(e == 0, 0, best)
        value[sel] = np.where(lost, -(1 + e), v)
    return value.astype(np.int8)


def best_moves(obs: jax.Array, table: jax.Array) -> jax.Array:
    """bool ``[..., 9]``: the optimal cells for the mover given its ego planes ``[..., 3, 3, 3]``."""
    flat = obs.reshape(*obs.shape[:-3], 9, 3)
    ego = (flat[..., 0] + 2 * flat[..., 1]).astype(jnp.int32)  # 1 own, 2 opponent
    # Ego index of each child seen from the opponent (who moves next): own -> 2, theirs -> 1.
    theirs = jnp.where(ego == 0, 0, 3 - ego)
    pow3 = jnp.asarray(_POW3, jnp.int32)
    base = (theirs * pow3).sum(-1)
    child = base[..., None] + 2 * pow3
    q = -table[child].astype(jnp.int32)
    free = ego == 0
    q = jnp.where(free, q, -1000)
    return free & (q == q.max(-1, keepdims=True))


class MinimaxPlayer(Player):
    """Perfect tic-tac-toe: picks uniformly among the moves of best minimax value.

    Among game-theoretically optimal moves it prefers the fastest win (slowest
    loss), see :func:`value_table`; remaining ties are broken at random with the key.
    Reads only the seat's ego-centric observation, so it works in either seat.
    """

    name = "minimax"

    def __init__(self, env=None):
        del env
        self.table = jnp.asarray(value_table())

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        from alem.rollout import random_legal_actions

        return random_legal_actions(key, best_moves(turn.obs, self.table))
