"""chess-v0's picture: the board from white's side, a drawn glyph on every occupied square in its
side's colours, the king in check on a red square."""

from __future__ import annotations

import numpy as np

import alem
from alem.envs.games.chess import viewer

ENV = alem.make("chess-v0", observation="board")
CELL = 30


def _tile(img: np.ndarray, square: str) -> np.ndarray:
    file, rank = "abcdefgh".index(square[0]), int(square[1])
    row = 8 - rank
    return img[row * CELL : (row + 1) * CELL, file * CELL : (file + 1) * CELL]


def _has(tile: np.ndarray, colour) -> int:
    return int((tile == np.asarray(colour, np.uint8)).all(-1).sum())


def test_pieces_are_drawn_where_the_fen_puts_them_from_whites_side_for_either_mover():
    for fen in ("4k3/8/8/8/8/8/4P3/4K2R b K - 0 1", "4k3/8/8/8/8/8/4P3/4K2R w K - 0 1"):
        img = ENV.render_rgb(ENV.from_fen(fen))
        assert img.shape == (8 * CELL, 8 * CELL, 3) and img.dtype == np.uint8
        white_fill, black_fill = viewer._WHITE[0], viewer._BLACK[0]
        for sq in ("e2", "e1", "h1"):
            assert _has(_tile(img, sq), white_fill) > 40, (fen, sq)
        assert _has(_tile(img, "e8"), black_fill) > 40
        for sq in ("e4", "a1", "d8"):  # empty squares are one plain colour
            assert len(np.unique(_tile(img, sq).reshape(-1, 3), axis=0)) == 1, (fen, sq)
        assert (_tile(img, "a1") == viewer._DARK).all() and (_tile(img, "h1")[0, 0] == viewer._LIGHT).all()


def test_each_piece_has_its_own_glyph_and_a_checked_king_stands_on_red():
    fill, outline = viewer.glyphs(CELL)
    assert fill.shape == (6, CELL, CELL) and not (fill & outline).any()
    flat = fill.reshape(6, -1)
    assert len({row.tobytes() for row in flat}) == 6 and (flat.sum(1) > 60).all()
    checked = ENV.render_rgb(ENV.from_fen("4k3/8/8/8/8/8/4q3/4K3 w - - 0 1"))
    assert _has(_tile(checked, "e1"), viewer._CHECK) > 100 and _has(_tile(checked, "e8"), viewer._CHECK) == 0
