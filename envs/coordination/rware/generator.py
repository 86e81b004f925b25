"""Multi-robot warehouse layouts (static, host-side) and the episode start drawn at reset (in jit).

:class:`Layout` is rware's floor plan: highway cells (corridors, where shelves cannot be put down),
shelf cells (one shelf each at the start, numbered row-major like rware's shelf ids) and goal cells
(the delivery points, in rware's order). :func:`layout_from_params` builds rware's parametric
warehouse, :func:`layout_from_str` its custom-layout strings (``x`` shelf, ``.`` corridor, ``g`` goal).
:class:`RwareGenerator` draws an episode's start: agents on distinct cells uniformly among all cells
(shelf cells included: an unloaded robot drives under shelves), facing uniform directions, and a
request queue of distinct shelves drawn uniformly without replacement.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.rware.types import RwareParams, RwareState
from alem.errors import EnvArgumentError

__all__ = ["Layout", "layout_from_params", "layout_from_str", "RwareGenerator", "SIZES", "DIFFICULTIES"]

#: rware's warehouse sizes: name -> (shelf_rows, shelf_columns).
SIZES = {"tiny": (1, 3), "small": (2, 3), "medium": (2, 5), "large": (3, 5)}
#: rware's difficulties: name -> request queue size per agent (``int(agents * factor)``).
DIFFICULTIES = {"easy": 2.0, "normal": 1.0, "hard": 0.5}


@dataclass(frozen=True, eq=False)
class Layout:
    """A warehouse floor plan (host NumPy arrays, static for an env)."""

    highway: np.ndarray  # bool [H, W]
    goals: np.ndarray  # int32 [G, 2], (row, col), rware's order

    @property
    def rows(self) -> int:
        return int(self.highway.shape[0])

    @property
    def cols(self) -> int:
        return int(self.highway.shape[1])

    @property
    def shelf_home(self) -> np.ndarray:
        """int32 ``[S, 2]``: the shelf cells, row-major (shelf ``k`` is rware's shelf id ``k + 1``)."""
        return np.argwhere(~self.highway).astype(np.int32)

    @property
    def num_shelves(self) -> int:
        return int((~self.highway).sum())


def layout_from_params(shelf_columns: int, column_height: int, shelf_rows: int) -> Layout:
    """rware's parametric warehouse: ``shelf_rows`` blocks of ``shelf_columns`` two-wide shelf columns
    ``column_height`` deep, corridors between them, the goals in the middle of the bottom row and a
    two-wide queueing lane above them."""
    if shelf_columns < 1 or shelf_columns % 2 != 1:
        raise EnvArgumentError(
            f"Warehouse: shelf_columns must be odd and >= 1 (rware's rule), got {shelf_columns}"
        )
    if column_height < 1 or shelf_rows < 1:
        raise EnvArgumentError(
            f"Warehouse: column_height and shelf_rows must be >= 1, got {column_height}, {shelf_rows}"
        )
    h, w = (column_height + 1) * shelf_rows + 2, 3 * shelf_columns + 1
    y, x = np.indices((h, w))
    highway = (
        (x % 3 == 0)
        | (y % (column_height + 1) == 0)
        | (y == h - 1)
        | ((y > h - (column_height + 3)) & ((x == w // 2 - 1) | (x == w // 2)))
    )
    goals = np.array([[h - 1, w // 2 - 1], [h - 1, w // 2]], np.int32)
    return Layout(highway=highway, goals=goals)


def layout_from_str(layout: str) -> Layout:
    """rware's custom layout string: rows of ``x`` (shelf), ``.`` (corridor) and ``g`` (goal), case and
    spaces ignored."""
    lines = layout.strip().replace(" ", "").split("\n")
    width = len(lines[0])
    if any(len(line) != width for line in lines):
        raise EnvArgumentError("Warehouse: the layout must be rectangular")
    chars = np.array([list(line.lower()) for line in lines])
    if not np.isin(chars, ["x", ".", "g"]).all():
        raise EnvArgumentError(
            "Warehouse: layout characters must be 'x' (shelf), '.' (corridor) or 'g' (goal)"
        )
    goals = np.argwhere(chars == "g").astype(np.int32)
    if len(goals) < 1:
        raise EnvArgumentError("Warehouse: the layout needs at least one goal 'g'")
    return Layout(highway=chars != "x", goals=goals)


@dataclass(frozen=True, eq=False)
class RwareGenerator:
    """Static options; ``generator(key, params)`` is one episode's initial state."""

    layout: Layout
    num_agents: int
    request_queue_size: int
    msg_bits: int

    def __call__(self, key: jax.Array, params: RwareParams) -> RwareState:
        n, lay = self.num_agents, self.layout
        k_pos, k_dir, k_req = jax.random.split(key, 3)
        cells = jax.random.choice(k_pos, lay.rows * lay.cols, (n,), replace=False)
        agent_pos = jnp.stack([cells // lay.cols, cells % lay.cols], -1).astype(jnp.int32)
        agent_dir = jax.random.randint(k_dir, (n,), 0, 4, jnp.int32)
        queue = jax.random.choice(k_req, lay.num_shelves, (self.request_queue_size,), replace=False)
        return RwareState(
            agent_pos=agent_pos,
            agent_dir=agent_dir,
            carrying=jnp.full((n,), -1, jnp.int32),
            has_delivered=jnp.zeros((n,), bool),
            message=jnp.zeros((n, self.msg_bits), jnp.float32),
            shelf_pos=jnp.asarray(lay.shelf_home),
            request_queue=queue.astype(jnp.int32),
            step=jnp.int32(0),
            inactive_steps=jnp.int32(0),
        )
