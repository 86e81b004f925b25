"""chess-v0's picture: the board from white's side with drawn piece glyphs (NumPy only: no fonts
or images are loaded, so rendering needs nothing beyond the core install)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

_LIGHT, _DARK, _CHECK = (238, 216, 180), (176, 134, 98), (214, 80, 70)
_WHITE, _BLACK = ((250, 248, 240), (35, 35, 35)), ((30, 30, 30), (215, 215, 215))  # (fill, outline)
_SAMPLES = 3  # supersampling per pixel side


def _polygon(u: np.ndarray, v: np.ndarray, points: list[tuple[float, float]]) -> np.ndarray:
    """Even-odd point-in-polygon of the sample grid ``(u, v)`` (unit cell coordinates)."""
    inside = np.zeros(u.shape, bool)
    pts = np.asarray(points, float)
    for (u0, v0), (u1, v1) in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        crosses = (v0 > v) != (v1 > v)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = u0 + (v - v0) * (u1 - u0) / (v1 - v0)
        inside ^= crosses & (u < at)
    return inside


def _disc(u, v, cu, cv, r):
    return (u - cu) ** 2 + (v - cv) ** 2 < r * r


def _box(u, v, u0, u1, v0, v1):
    return (u >= u0) & (u <= u1) & (v >= v0) & (v <= v1)


def _shapes(u: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    """Pawn, knight, bishop, rook, queen, king silhouettes on the sample grid (v grows downwards)."""
    base = _box(u, v, 0.22, 0.78, 0.78, 0.88)
    pawn = (
        base
        | _disc(u, v, 0.5, 0.32, 0.12)
        | _polygon(u, v, [(0.4, 0.44), (0.6, 0.44), (0.7, 0.8), (0.3, 0.8)])
    )
    knight = base | _polygon(
        u,
        v,
        [(0.3, 0.8), (0.72, 0.8), (0.7, 0.5), (0.6, 0.26), (0.5, 0.16), (0.46, 0.24), (0.36, 0.28),
         (0.22, 0.46), (0.27, 0.54), (0.44, 0.48), (0.34, 0.66)],
    )  # fmt: skip
    knight &= ~_disc(u, v, 0.45, 0.33, 0.035)  # the eye
    bishop = (
        base
        | _disc(u, v, 0.5, 0.17, 0.05)
        | _polygon(u, v, [(0.42, 0.6), (0.58, 0.6), (0.66, 0.8), (0.34, 0.8)])
    )
    bishop |= ((u - 0.5) / 0.14) ** 2 + ((v - 0.42) / 0.2) ** 2 < 1
    bishop &= ~(np.abs((u - 0.5) + (v - 0.4)) < 0.03) | (v > 0.5)  # the mitre's slit
    rook = base | _box(u, v, 0.34, 0.66, 0.3, 0.8) | _box(u, v, 0.27, 0.73, 0.18, 0.34)
    rook &= ~(_box(u, v, 0.38, 0.45, 0.0, 0.25) | _box(u, v, 0.55, 0.62, 0.0, 0.25))
    tips = [(0.2, 0.28), (0.35, 0.22), (0.5, 0.18), (0.65, 0.22), (0.8, 0.28)]
    queen = base | _polygon(
        u,
        v,
        [
            (0.27, 0.8),
            (0.73, 0.8),
            tips[4],
            (0.64, 0.52),
            tips[3],
            (0.5, 0.48),
            tips[1],
            (0.36, 0.52),
            tips[0],
        ],
    )
    queen |= _polygon(u, v, [(0.5, 0.48), (0.44, 0.5), tips[2], (0.56, 0.5)])
    for cu, cv in tips:
        queen |= _disc(u, v, cu, cv, 0.045)
    king = base | _polygon(u, v, [(0.28, 0.8), (0.72, 0.8), (0.7, 0.45), (0.5, 0.36), (0.3, 0.45)])
    king |= _box(u, v, 0.46, 0.54, 0.08, 0.38) | _box(u, v, 0.37, 0.63, 0.16, 0.24)
    return [pawn, knight, bishop, rook, queen, king]


@functools.lru_cache(maxsize=4)
def glyphs(cell: int) -> tuple[np.ndarray, np.ndarray]:
    """bool ``[6, cell, cell]`` fills and outlines of the six pieces at ``cell`` pixels."""
    n = cell * _SAMPLES
    v, u = (np.mgrid[0:n, 0:n] + 0.5) / n
    fine = np.stack(_shapes(u, v)).reshape(6, cell, _SAMPLES, cell, _SAMPLES)
    fill = fine.mean((2, 4)) >= 0.5
    grown = fill.copy()
    for axis in (1, 2):
        for shift in (-1, 1):
            grown |= np.roll(fill, shift, axis=axis)
    return fill, grown & ~fill


class ChessViewer:
    """``render_rgb`` of :class:`~alem.envs.games.chess.env.Chess` (a mixin)."""

    def render_rgb(self, state: Any, params: Any = None, cell: int = 30) -> np.ndarray:
        """uint8 ``[8 * cell, 8 * cell, 3]``: the board from white's side (a1 bottom left), the
        king in check (or mated) on a red square."""
        board = np.asarray(state.board)
        if int(state.player) == 1:
            board = -board.reshape(8, 8)[:, ::-1].reshape(64)
        grid = board.reshape(8, 8).T[::-1]  # [row from the top, file]
        fill, outline = glyphs(int(cell))
        img = np.empty((8 * cell, 8 * cell, 3), np.uint8)
        mover_king, check = (6 if int(state.player) == 0 else -6), bool(state.in_check)
        for (r, f), p in np.ndenumerate(grid):
            tile = img[r * cell : (r + 1) * cell, f * cell : (f + 1) * cell]
            tile[:] = _LIGHT if (r + f) % 2 == 0 else _DARK
            if p == mover_king and check:
                tile[:] = _CHECK
            if p:
                colours = _WHITE if p > 0 else _BLACK
                tile[fill[abs(p) - 1]] = colours[0]
                tile[outline[abs(p) - 1]] = colours[1]
        return img
