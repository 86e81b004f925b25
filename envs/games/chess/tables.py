"""Static tables of chess-v0 (NumPy constants, built once at import): squares, rays, knight jumps,
OpenSpiel's action numbering and the UCI name of every action.

Squares are numbered ``file * 8 + rank`` (a1 = 0, a2 = 1, ..., h8 = 63), OpenSpiel's order, always
from the point of view of the player to move: black's board is seen with the ranks reversed (its
back rank is rank 0), files unchanged. An action is ``from_square * 73 + move_type`` for the 4,672
piece moves plus 4,672 = long castling and 4,673 = short castling (OpenSpiel's ``chess`` ids):

- types 0-8: under-promotions, ``3 * piece + direction`` with pieces rook, bishop, knight and
  directions straight, towards the h-file, towards the a-file;
- types 9-64: queen-like moves, four lines (vertical, horizontal, diagonal ``(+1, +1)``,
  anti-diagonal ``(-1, +1)``) of 14 each, offsets -7..-1 then +1..+7 along the line; a pawn's push,
  capture or queen promotion is one of these;
- types 65-72: knight jumps in the order of :data:`KNIGHT_JUMPS`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "NUM_SQUARES",
    "NUM_MOVE_TYPES",
    "NUM_PIECE_ACTIONS",
    "NUM_ACTIONS",
    "CASTLE_LONG",
    "CASTLE_SHORT",
    "OFF_BOARD",
    "DIRS",
    "KNIGHT_JUMPS",
    "RAYS",
    "KNIGHT_TARGETS",
    "TYPE_DX",
    "TYPE_DY",
    "TYPE_LINE",
    "TYPE_PROMO",
    "DEST",
    "SLIDER_TYPE_ORDER",
    "square",
    "square_name",
    "uci_names",
]

NUM_SQUARES = 64
NUM_MOVE_TYPES = 73
NUM_PIECE_ACTIONS = NUM_SQUARES * NUM_MOVE_TYPES  # 4672
CASTLE_LONG, CASTLE_SHORT = NUM_PIECE_ACTIONS, NUM_PIECE_ACTIONS + 1
NUM_ACTIONS = NUM_PIECE_ACTIONS + 2  # 4674, OpenSpiel's num_distinct_actions()
#: Board code of the padding square past the edge (index 64): blocks rays, is nobody's piece.
OFF_BOARD = 7

#: The 8 ray directions ``(d_file, d_rank)``: direction ``2 * line + (positive side)``, so the
#: opposite of direction ``d`` is ``d ^ 1``; 0-3 are orthogonal, 4-7 diagonal.
DIRS = np.array([(0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (1, 1), (-1, 1), (1, -1)], np.int32)
#: Knight jumps in OpenSpiel's order of move types 65-72.
KNIGHT_JUMPS = np.array([(-2, -1), (-2, 1), (-1, -2), (-1, 2), (2, -1), (2, 1), (1, -2), (1, 2)], np.int32)


def square(file: int, rank: int) -> int:
    return file * 8 + rank


def square_name(sq: int, black: bool = False) -> str:
    """Algebraic name of a mover-relative square (``black``: the ranks are reversed)."""
    file, rank = divmod(int(sq), 8)
    return "abcdefgh"[file] + str((7 - rank if black else rank) + 1)


def _target(sq: int, dx: int, dy: int) -> int:
    file, rank = divmod(sq, 8)
    f, r = file + dx, rank + dy
    return square(f, r) if 0 <= f < 8 and 0 <= r < 8 else NUM_SQUARES


def _rays() -> np.ndarray:
    """int32 ``[64, 8, 7]``: the square ``k + 1`` steps from a square along each direction (64 off board)."""
    out = np.empty((NUM_SQUARES, 8, 7), np.int32)
    for sq in range(NUM_SQUARES):
        for d, (dx, dy) in enumerate(DIRS):
            for k in range(7):
                out[sq, d, k] = _target(sq, dx * (k + 1), dy * (k + 1))
    return out


RAYS = _rays()
#: int32 ``[64, 8]``: a knight's jumps from each square (64 off board), in :data:`KNIGHT_JUMPS` order.
KNIGHT_TARGETS = np.array([[_target(s, dx, dy) for dx, dy in KNIGHT_JUMPS] for s in range(64)], np.int32)


def _move_types() -> tuple[np.ndarray, ...]:
    """Per move type: file and rank offsets, line (0-3, knight 4), promotion piece (0 = none/queen)."""
    dx, dy, line, promo = [], [], [], []
    for piece in (4, 3, 2):  # rook, bishop, knight under-promotions
        for side, lin in ((0, 0), (1, 2), (-1, 3)):
            dx.append(side), dy.append(1), line.append(lin), promo.append(piece)
    for lin in range(4):
        ux, uy = DIRS[2 * lin + 1]
        for k in (*range(-7, 0), *range(1, 8)):
            dx.append(ux * k), dy.append(uy * k), line.append(lin), promo.append(0)
    for jx, jy in KNIGHT_JUMPS:
        dx.append(jx), dy.append(jy), line.append(4), promo.append(0)
    return tuple(np.asarray(a, np.int32) for a in (dx, dy, line, promo))


TYPE_DX, TYPE_DY, TYPE_LINE, TYPE_PROMO = _move_types()
#: int32 ``[64, 73]``: destination of each (square, move type), 64 where it leaves the board.
DEST = np.array([[_target(s, TYPE_DX[t], TYPE_DY[t]) for t in range(73)] for s in range(64)], np.int32)


def _slider_type_order() -> np.ndarray:
    """int32 ``[56]``: for queen-like move types 9-64, the flat index ``d * 7 + k`` of the
    ``[8 directions, 7 distances]`` ray layout that holds the same move."""
    order = []
    for lin in range(4):
        neg, pos = 2 * lin, 2 * lin + 1
        order += [neg * 7 + k for k in range(6, -1, -1)]  # offsets -7 .. -1
        order += [pos * 7 + k for k in range(7)]  # offsets +1 .. +7
    return np.asarray(order, np.int32)


SLIDER_TYPE_ORDER = _slider_type_order()

_PROMO_LETTER = {4: "r", 3: "b", 2: "n"}


def uci_names(black: bool) -> list[str]:
    """The UCI name of every action index (``NUM_ACTIONS`` of them) for the side to move.

    Castling is the king's two-square move (``e1c1``, ``e1g1``): the same name as a rook's or
    queen's move from e1, which is never legal at the same time (castling needs the king there).
    A queen-like move to the last rank
    is a queen promotion only when a pawn makes it, which the index does not say: it is named
    without the ``q`` here (the env's ``uci`` adds it from the position). Indices whose move
    leaves the board are named ``"-"`` (no position makes them legal).
    """
    names = []
    for sq in range(NUM_SQUARES):
        for t in range(NUM_MOVE_TYPES):
            dest = DEST[sq, t]
            if dest == NUM_SQUARES:
                names.append("-")
                continue
            names.append(
                square_name(sq, black) + square_name(dest, black) + _PROMO_LETTER.get(TYPE_PROMO[t], "")
            )
    rank = "8" if black else "1"
    names += [f"e{rank}c{rank}", f"e{rank}g{rank}"]
    return names
