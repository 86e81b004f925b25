"""Host-side chess notation: FEN in and out, UCI move names (NumPy and plain Python only).

Boards here are int8 ``[64]`` in white's frame (square ``file * 8 + rank``, a1 = 0), ``+1..+6``
white's pawn, knight, bishop, rook, queen, king and ``-1..-6`` black's. Castling rights are bool
``[4]``: white short, white long, black short, black long.

:func:`parse_fen` checks what the move generator relies on and raises
:class:`~alem.errors.EnvArgumentError` naming the first thing that is wrong. The en-passant square
is kept only when the side to move has a pawn beside the pawn that just moved two squares, as
OpenSpiel does when it loads a FEN (it is then part of the position's identity for repetitions).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from alem.envs.games.chess import tables as T
from alem.errors import EnvArgumentError

__all__ = ["START_FEN", "START_BOARD", "Position", "parse_fen", "format_fen", "uci"]

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
_LETTERS = "pnbrqk"
_CASTLE_ORDER = "KQkq"
# Per right: the king's and the rook's home squares and the colour's sign.
_CASTLE_HOMES = {"K": (32, 56, 1), "Q": (32, 0, 1), "k": (39, 63, -1), "q": (39, 7, -1)}


class Position(NamedTuple):
    board: np.ndarray  # int8 [64], white's frame
    player: int  # 0 white to move, 1 black
    castling: np.ndarray  # bool [4]: K, Q, k, q
    ep_file: int  # -1 none
    halfmove: int
    fullmove: int


def _bad(fen: str, what: str) -> EnvArgumentError:
    return EnvArgumentError(f"chess FEN {fen!r}: {what}")


def _parse_board(fen: str, field: str) -> np.ndarray:
    ranks = field.split("/")
    if len(ranks) != 8:
        raise _bad(fen, f"the board has {len(ranks)} ranks, not 8")
    board = np.zeros(64, np.int8)
    for i, row in enumerate(ranks):
        rank, file = 7 - i, 0
        for ch in row:
            if ch in "12345678":
                file += int(ch)
            elif ch.lower() in _LETTERS:
                if file < 8:
                    code = _LETTERS.index(ch.lower()) + 1
                    board[T.square(file, rank)] = code if ch.isupper() else -code
                file += 1
            else:
                raise _bad(
                    fen, f"rank {rank + 1} has the character {ch!r}, not a piece letter or a digit 1-8"
                )
        if file != 8:
            raise _bad(fen, f"rank {rank + 1} ({row!r}) covers {file} squares, not 8")
    for sign, colour in ((1, "white"), (-1, "black")):
        kings = int((board == 6 * sign).sum())
        if kings != 1:
            raise _bad(fen, f"{colour} has {kings} kings, not 1")
    edge = np.abs(board.reshape(8, 8)[:, [0, 7]]) == 1
    if edge.any():
        raise _bad(fen, "a pawn stands on the first or last rank")
    return board


def _attacked_by(board: np.ndarray, sq: int, sign: int) -> bool:
    """Whether a piece of colour ``sign`` attacks square ``sq`` (plain loops: host side, rare)."""
    file, rank = divmod(sq, 8)
    for dx, dy in T.KNIGHT_JUMPS:
        f, r = file + dx, rank + dy
        if 0 <= f < 8 and 0 <= r < 8 and board[T.square(f, r)] == 2 * sign:
            return True
    for dx in (-1, 1):  # a pawn of colour sign attacks forwards (up for white)
        f, r = file + dx, rank - sign
        if 0 <= f < 8 and 0 <= r < 8 and board[T.square(f, r)] == sign:
            return True
    for d, (dx, dy) in enumerate(T.DIRS):
        sliders = (4, 5) if d < 4 else (3, 5)
        f, r = file + dx, rank + dy
        steps = 1
        while 0 <= f < 8 and 0 <= r < 8:
            piece = board[T.square(f, r)]
            if piece:
                if piece * sign > 0 and (abs(piece) in sliders or (steps == 1 and abs(piece) == 6)):
                    return True
                break
            f, r, steps = f + dx, r + dy, steps + 1
    return False


def parse_fen(fen: str) -> Position:
    """The position of a FEN string (6 fields, or 4 with the clocks at 0 and 1)."""
    if not isinstance(fen, str):
        raise EnvArgumentError(f"chess FEN must be a str, got {type(fen).__name__}")
    fields = fen.split()
    if len(fields) not in (4, 6):
        raise _bad(fen, f"has {len(fields)} fields; a FEN has 6 (board, side, castling, en passant, clocks)")
    board = _parse_board(fen, fields[0])
    if fields[1] not in ("w", "b"):
        raise _bad(fen, f"the side to move is {fields[1]!r}, not 'w' or 'b'")
    player = 0 if fields[1] == "w" else 1
    rights = np.zeros(4, bool)
    if fields[2] != "-":
        if not re.fullmatch(r"K?Q?k?q?", fields[2]) or not fields[2]:
            raise _bad(fen, f"the castling field {fields[2]!r} is not '-' or some of 'KQkq' in that order")
        for ch in fields[2]:
            king, rook, sign = _CASTLE_HOMES[ch]
            if board[king] != 6 * sign or board[rook] != 4 * sign:
                raise _bad(fen, f"castling right {ch!r} without the king and the rook on their home squares")
            rights[_CASTLE_ORDER.index(ch)] = True
    ep_file = -1
    if fields[3] != "-":
        m = re.fullmatch(r"([a-h])([36])", fields[3])
        want = "6" if player == 0 else "3"
        if not m or m.group(2) != want:
            raise _bad(fen, f"the en-passant square {fields[3]!r} is not a square on rank {want} or '-'")
        file = "abcdefgh".index(m.group(1))
        sign = 1 if player == 0 else -1  # the mover's sign; the pawn that moved is the opponent's
        target = T.square(file, 5 if player == 0 else 2)
        pawn, origin = target - sign, target + sign
        if board[pawn] != -sign or board[target] or board[origin]:
            raise _bad(fen, f"the en-passant square {fields[3]} does not follow a two-square pawn move")
        beside = [board[pawn + 8 * s] == sign for s in (-1, 1) if 0 <= file + s < 8]
        ep_file = file if any(beside) else -1
    clocks = fields[4:] if len(fields) == 6 else ["0", "1"]
    if not clocks[0].isdigit():
        raise _bad(fen, f"the half-move clock {clocks[0]!r} is not a non-negative integer")
    if not clocks[1].isdigit() or int(clocks[1]) < 1:
        raise _bad(fen, f"the full-move number {clocks[1]!r} is not a positive integer")
    halfmove, fullmove = int(clocks[0]), int(clocks[1])
    if halfmove > 10_000 or fullmove > 100_000:
        raise _bad(fen, "the clocks are out of range (half-move <= 10000, full-move <= 100000)")
    sign = 1 if player == 0 else -1
    waiting_king = int(np.flatnonzero(board == -6 * sign)[0])
    if _attacked_by(board, waiting_king, sign):
        raise _bad(fen, "the side not to move is in check")
    return Position(board, player, rights, ep_file, halfmove, fullmove)


def format_fen(
    board: np.ndarray, player: int, castling: np.ndarray, ep_file: int, halfmove: int, fullmove: int
) -> str:
    """The FEN of a position given as in :class:`Position` (the inverse of :func:`parse_fen`)."""
    rows = []
    grid = np.asarray(board).reshape(8, 8)  # [file, rank]
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            piece = int(grid[file, rank])
            if piece == 0:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            letter = _LETTERS[abs(piece) - 1]
            row += letter.upper() if piece > 0 else letter
        rows.append(row + (str(empty) if empty else ""))
    rights = "".join(ch for ch, on in zip(_CASTLE_ORDER, np.asarray(castling), strict=True) if on) or "-"
    ep = "-" if ep_file < 0 else "abcdefgh"[ep_file] + ("6" if player == 0 else "3")
    return f"{'/'.join(rows)} {'wb'[player]} {rights} {ep} {halfmove} {fullmove}"


def uci(board: np.ndarray, player: int, action: int) -> str:
    """UCI name of ``action`` on a mover-frame ``board`` (``player`` 1: black, ranks reversed).

    A queen-like move of a pawn onto the last rank gets the ``q`` of a queen promotion.
    """
    black = player == 1
    if not 0 <= action < T.NUM_ACTIONS:
        raise EnvArgumentError(f"chess action {action} is outside 0..{T.NUM_ACTIONS - 1}")
    if action >= T.NUM_PIECE_ACTIONS:
        rank = "8" if black else "1"
        return f"e{rank}{'c' if action == T.CASTLE_LONG else 'g'}{rank}"
    src, mtype = divmod(action, T.NUM_MOVE_TYPES)
    dest = int(T.DEST[src, mtype])
    if dest == T.NUM_SQUARES:
        raise EnvArgumentError(f"chess action {action} moves off the board")
    name = T.square_name(src, black) + T.square_name(dest, black)
    if T.TYPE_PROMO[mtype]:
        return name + {4: "r", 3: "b", 2: "n"}[int(T.TYPE_PROMO[mtype])]
    if board[src] == 1 and dest % 8 == 7:
        return name + "q"
    return name


START_BOARD = parse_fen(START_FEN).board
