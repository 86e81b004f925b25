"""Bargaining's picture (host-side NumPy): the pool split by the last offer, both players'
values, whose turn it is or how the game ended, and the offers made so far."""

from __future__ import annotations

import numpy as np

from alem.envs.games.bargaining.types import NUM_ITEMS, NUM_PLAYERS, POOL_MAX, VALUE_MAX, BargainingState

__all__ = ["PLAYER_COLOURS", "DEAL_COLOUR", "NO_DEAL_COLOUR", "UNOFFERED_COLOUR", "render_rgb"]

#: Player 0 blue, player 1 red.
PLAYER_COLOURS = np.array([[70, 130, 220], [220, 80, 60]], np.uint8)
DEAL_COLOUR = (90, 190, 100)
NO_DEAL_COLOUR = (120, 120, 120)
#: Items before the first offer.
UNOFFERED_COLOUR = (205, 205, 205)
_BACKGROUND, _SLOT, _TRACK = 34, 58, 70
CELL, PAD, STATUS, HISTORY, UNIT = 28, 6, 12, 10, 6  # px: item slot, gaps, strips, per value point


def _glyphs(cell: int) -> np.ndarray:
    """bool ``[3, cell, cell]`` masks: a book (a block with a spine gap), a hat, a ball."""
    yy, xx = np.mgrid[0:cell, 0:cell]
    c = (cell - 1) / 2
    book = (yy >= 4) & (yy < cell - 4) & (xx >= 6) & (xx < cell - 6) & (xx != 9)
    cone = (yy >= 5) & (yy < cell - 9) & (np.abs(xx - c) <= (yy - 3) * 0.45)
    brim = (yy >= cell - 9) & (yy < cell - 5) & (xx >= 3) & (xx < cell - 3)
    ball = (yy - c) ** 2 + (xx - c) ** 2 <= (0.36 * cell) ** 2
    return np.stack([book, cone | brim, ball])


def render_rgb(state: BargainingState, max_turns: int) -> np.ndarray:
    """uint8 ``[142, 316, 3]`` picture of ``state`` (omniscient: both players' values).

    From the top: a status strip (the colour of the player to move; green after a deal, grey
    after no deal); one row per item type (books, hats, balls) with one glyph per item in the
    pool, coloured by who gets it in the last offer (player 0's share first, blue; player 1's
    red; light grey before any offer), and at its right the item's value to player 0 (upper
    bar) and player 1 (lower bar), 0 to 10; at the bottom one segment per possible offer,
    filled in its proposer's colour once made.
    """
    pool = np.asarray(state.pool)
    values = np.asarray(state.values)
    offers, n = np.asarray(state.offers), int(state.num_offers)
    player, agreed, ended = int(state.player), bool(state.agreed), bool(state.ended)
    slots = POOL_MAX * (CELL + PAD)
    width = PAD + slots + PAD + VALUE_MAX * UNIT + PAD
    height = PAD + STATUS + PAD + NUM_ITEMS * (CELL + PAD) + HISTORY + PAD
    img = np.full((height, width, 3), _BACKGROUND, np.uint8)

    if agreed:
        status = DEAL_COLOUR
    elif ended or n >= max_turns:
        status = NO_DEAL_COLOUR
    else:
        status = PLAYER_COLOURS[player]
    img[PAD : PAD + STATUS, PAD : width - PAD] = status

    glyphs = _glyphs(CELL)
    if n:
        proposer = (n - 1) % NUM_PLAYERS  # player 0 makes the first offer; they alternate
        share = offers[n - 1] if proposer == 0 else pool - offers[n - 1]  # player 0's items
    top = PAD + STATUS + PAD
    for item in range(NUM_ITEMS):
        y = top + item * (CELL + PAD)
        for k in range(int(pool[item])):
            x = PAD + k * (CELL + PAD)
            colour = UNOFFERED_COLOUR if not n else PLAYER_COLOURS[0 if k < share[item] else 1]
            img[y : y + CELL, x : x + CELL] = _SLOT
            img[y : y + CELL, x : x + CELL][glyphs[item]] = colour
        x = PAD + slots + PAD
        bar = (CELL - 2) // 2
        for p in range(NUM_PLAYERS):
            yb = y + p * (bar + 2)
            img[yb : yb + bar, x : x + VALUE_MAX * UNIT] = _TRACK
            img[yb : yb + bar, x : x + int(values[p, item]) * UNIT] = PLAYER_COLOURS[p]

    y = top + NUM_ITEMS * (CELL + PAD)
    seg = max(1, (width - 2 * PAD) // max_turns)
    for k in range(max_turns):
        x = PAD + k * seg
        img[y : y + HISTORY, x : x + max(1, seg - 2)] = PLAYER_COLOURS[k % NUM_PLAYERS] if k < n else _SLOT
    return img
