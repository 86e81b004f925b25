"""Reading a move of chess-v0 in a position: UCI (``e2e4``, ``e7e8q``, ``e1g1``) and SAN (``Nf3``,
``O-O``, ``exd8=Q+``, ``0-0``, ``e4``), host side (plain Python over one position's legal moves).

SAN needs the position (which knight goes to f3), so these read a reply against
:func:`legal_moves` of one state. Tolerances: check and annotation marks (``+ # ! ?``), ``x`` or
``:`` for captures, ``-`` between squares, ``=`` before a promotion piece, ``0`` or ``o`` for the
``O`` of castling, long algebraic (``Ng1f3``, ``e2-e4``), and letter case where it is unambiguous:
an upper-case ``B`` is a bishop and a lower-case ``b`` the b-file (``bxc3`` is the pawn's capture,
as in SAN); other piece letters and squares are read in either case. A promotion without a piece
(``e8``, ``e7e8``) is the queen's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from alem.envs.games.chess import fen as fen_io
from alem.envs.games.chess import tables as T

__all__ = ["Move", "legal_moves", "read_move", "read_token"]

_PIECES = "PNBRQK"
_SAN = re.compile(r"([a-h])?([1-8])?[x:]?-?([a-h][1-8])(?:=?\(?([qrbn])\)?)?(?:e\.?p\.?)?")
_UCI = re.compile(r"([a-h][1-8])-?([a-h][1-8])([qrbn])?")
_CASTLE = re.compile(r"[o0]-?[o0](-?[o0])?")
#: A reply's candidate moves: runs of the characters a move is written with ('.' splits "1.e4").
_TOKEN = re.compile(r"[A-Za-z0-9=+#:()\-]+")


class Move(NamedTuple):
    """One legal move: its action id, UCI name, piece letter (``PNBRQK``), squares, promotion."""

    action: int
    uci: str
    piece: str
    src: str  # e.g. "e2"
    dst: str
    promo: str  # "q", "r", "b", "n" or ""


def legal_moves(board: np.ndarray, player: int, legal: np.ndarray) -> list[Move]:
    """The legal moves of a mover-frame ``board`` (``player`` 1: black) whose ids ``legal`` marks."""
    board = np.asarray(board)
    out = []
    for a in map(int, np.flatnonzero(np.asarray(legal))):
        name = fen_io.uci(board, player, a)
        piece = "K" if a >= T.NUM_PIECE_ACTIONS else _PIECES[abs(int(board[a // T.NUM_MOVE_TYPES])) - 1]
        out.append(Move(a, name, piece, name[:2], name[2:4], name[4:]))
    return out


def _san_matches(body: str, piece: str, moves: list[Move]) -> set[int]:
    m = _SAN.fullmatch(body)
    if not m:
        return set()
    file, rank, dst, promo = m.groups()
    found = set()
    for mv in moves:
        if mv.piece != piece or mv.dst != dst:
            continue
        if (file and mv.src[0] != file) or (rank and mv.src[1] != rank):
            continue
        if mv.promo and mv.promo != (promo or "q"):
            continue
        if promo and not mv.promo:
            continue
        found.add(mv.action)
    return found


def read_token(token: str, moves: list[Move]) -> set[int]:
    """The legal moves one written move names (empty: none; several: ambiguous).

    Readings in order, the first that names any legal move decides: castling, UCI, SAN as
    written (upper-case piece letters, lower-case files), then SAN with the first letter read as
    a piece in either case.
    """
    tok = token.strip().rstrip("+#!?").strip()
    if not tok:
        return set()
    low = tok.lower()
    castle = _CASTLE.fullmatch(low)
    if castle:
        want = T.CASTLE_LONG if castle.group(1) else T.CASTLE_SHORT
        return {mv.action for mv in moves if mv.action == want}
    m = _UCI.fullmatch(low)
    if m:
        src, dst, promo = m.groups()
        found = {
            mv.action
            for mv in moves
            if mv.src == src and mv.dst == dst and mv.promo in ((promo,) if promo else ("", "q"))
        }
        if found:
            return found
    readings = []
    if tok[0] in "NBRQK":
        readings.append((tok[0], tok[1:].lower()))
    elif tok[0] in "abcdefgh":
        readings.append(("P", low))
    if low[0] in "nbrqk" and len(low) >= 3:
        readings.append((low[0].upper(), low[1:]))
    if tok[0] in "ABCDEFGH":
        readings.append(("P", low))
    for piece, body in readings:
        found = _san_matches(body, piece, moves)
        if found:
            return found
    return set()


def read_move(text: str, moves: list[Move]) -> int | None:
    """The one legal move ``text`` names: the whole text as one move, else the one legal move
    that its words name (None when they name none, or several different ones)."""
    found = read_token(text.strip().strip(".,;:!?\"'`*()[]{}"), moves)
    if len(found) == 1:
        return found.pop()
    if found:
        return None
    named: set[int] = set()
    for token in _TOKEN.findall(text):
        hit = read_token(token.strip("():-"), moves)
        if len(hit) > 1:
            return None
        named |= hit
    return named.pop() if len(named) == 1 else None
