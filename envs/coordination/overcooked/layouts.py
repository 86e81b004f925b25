"""The five original Overcooked layouts (Carroll et al. 2019) as overcooked-ai 1.1.0 ships them.

A layout is a grid of tiles (``X`` counter, ``P`` pot, ``O`` onion dispenser, ``T`` tomato
dispenser, ``D`` dish dispenser, ``S`` serving window, space: floor) with the players' start
cells marked ``1``, ``2`` (players start on floor facing north, empty-handed), plus its
orders: which soups pay and how much, and how long each soup cooks. :func:`compile_layout`
turns one into the static arrays the env closes over and the recipe tables it puts in params.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from alem.envs.coordination.overcooked.types import FLOOR, MAX_INGREDIENTS, TILE_CHARS
from alem.errors import EnvArgumentError

__all__ = ["Layout", "LAYOUTS", "CompiledLayout", "compile_layout"]

#: overcooked-ai's defaults: a soup is worth 20 and cooks 20 ticks; bonus orders pay double.
DEFAULT_VALUE = 20
DEFAULT_TIME = 20
ORDER_BONUS = 2


@dataclass(frozen=True)
class Layout:
    """A kitchen: the grid and its orders.

    ``all_orders``: soups that pay, as (onions, tomatoes); empty means every soup pays.
    ``bonus_orders``: soups that pay ``ORDER_BONUS`` times their value. Values are
    ``onion_value * onions + tomato_value * tomatoes`` when both are given (else
    ``DEFAULT_VALUE``); cooking times likewise from ``onion_time``/``tomato_time``.
    """

    name: str
    grid: tuple[str, ...]
    all_orders: tuple[tuple[int, int], ...] = ((3, 0),)
    bonus_orders: tuple[tuple[int, int], ...] = ()
    onion_value: int | None = None
    tomato_value: int | None = None
    onion_time: int | None = None
    tomato_time: int | None = None
    notes: str = field(default="", compare=False)


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout("cramped_room", ("XXPXX", "O  2O", "X1  X", "XDXSX"), notes="a small shared room, one pot"),
        Layout(
            "asymmetric_advantages",
            ("XXXXXXXXX", "O XSXOX S", "X   P 1 X", "X2  P   X", "XXXDXDXXX"),
            notes="two separate rooms sharing two pots in the wall between them",
        ),
        Layout(
            "coordination_ring",
            ("XXXPX", "X 1 P", "D2X X", "O   X", "XOSXX"),
            notes="a ring around a central counter; players must not block each other",
        ),
        Layout(
            "forced_coordination",
            ("XXXPX", "O X1P", "O2X X", "D X X", "XXXSX"),
            notes="two rooms: ingredients and dishes on one side, pots and serving on the other",
        ),
        Layout(
            "counter_circuit",
            ("XXXPDPXXX", "X   2   X", "X XXXXX X", "X   1   X", "XXXOSTXXX"),
            all_orders=((1, 2), (2, 1), (1, 1)),
            bonus_orders=((1, 1),),
            onion_value=21,
            tomato_value=13,
            onion_time=15,
            tomato_time=7,
            notes="a loop around a long counter; overcooked-ai 1.1.0 adds a tomato dispenser and "
            "orders with tomatoes (onion + tomato is a bonus order)",
        ),
    )
}


@dataclass(frozen=True)
class CompiledLayout:
    terrain: np.ndarray  # int8 [H, W] tile codes
    start: np.ndarray  # int32 [N, 2] start cells (x, y)
    recipe_value: np.ndarray  # float32 [4, 4] by (onions, tomatoes); 0 where no order pays
    cook_time: np.ndarray  # int32 [4, 4] by (onions, tomatoes)

    @property
    def height(self) -> int:
        return int(self.terrain.shape[0])

    @property
    def width(self) -> int:
        return int(self.terrain.shape[1])


def compile_layout(layout: Layout) -> CompiledLayout:
    """Tile codes, start cells and recipe tables of ``layout``."""
    rows = [r for r in layout.grid]
    if not rows or len({len(r) for r in rows}) != 1:
        raise EnvArgumentError(f"Overcooked layout {layout.name!r}: rows must be non-empty and equally long")
    starts: dict[int, tuple[int, int]] = {}
    terrain = np.zeros((len(rows), len(rows[0])), np.int8)
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch.isdigit() and ch != "0":
                if int(ch) in starts:
                    raise EnvArgumentError(f"Overcooked layout {layout.name!r}: player {ch} appears twice")
                starts[int(ch)] = (x, y)
                terrain[y, x] = FLOOR
            elif ch in TILE_CHARS:
                terrain[y, x] = TILE_CHARS.index(ch)
            else:
                raise EnvArgumentError(f"Overcooked layout {layout.name!r}: unknown tile {ch!r}")
    if sorted(starts) != list(range(1, len(starts) + 1)) or len(starts) != 2:
        raise EnvArgumentError(
            f"Overcooked layout {layout.name!r}: mark exactly two start cells, '1' and '2' "
            f"(overcooked-ai's observations are defined for two players)"
        )
    start = np.array([starts[k] for k in sorted(starts)], np.int32)
    value = np.zeros((MAX_INGREDIENTS + 1,) * 2, np.float32)
    time = np.ones((MAX_INGREDIENTS + 1,) * 2, np.int32)
    priced = layout.onion_value is not None and layout.tomato_value is not None
    timed = layout.onion_time is not None and layout.tomato_time is not None
    for o in range(MAX_INGREDIENTS + 1):
        for t in range(MAX_INGREDIENTS + 1 - o):
            if o + t == 0:
                continue
            base = layout.onion_value * o + layout.tomato_value * t if priced else DEFAULT_VALUE
            time[o, t] = layout.onion_time * o + layout.tomato_time * t if timed else DEFAULT_TIME
            if layout.all_orders and (o, t) not in layout.all_orders:
                continue
            value[o, t] = base * (ORDER_BONUS if (o, t) in layout.bonus_orders else 1)
    return CompiledLayout(terrain=terrain, start=start, recipe_value=value, cook_time=time)
