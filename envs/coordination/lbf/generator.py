"""Level-Based Foraging reset-side generation: agent and food layouts and levels (in jit).

:class:`LBFGenerator` holds the static layout options of an env and draws one episode's
:class:`~alem.envs.coordination.lbf.types.LBFState`: agents uniformly on distinct cells,
levels uniform in their range, then each food uniformly among the cells still allowed
(interior, not on an agent, not touching an earlier food nor two cells from one in a line).
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.lbf.types import COOP_AGENTS, LBFParams, LBFState

__all__ = ["LBFGenerator", "uniform_int", "pick_cell"]


def uniform_int(u: jax.Array, low, high) -> jax.Array:
    """Integers uniform in ``[low, high]`` from uniforms ``u`` in ``[0, 1)``."""
    span = jnp.asarray(high - low + 1, jnp.float32)
    return jnp.minimum(low + jnp.floor(u * span).astype(jnp.int32), high).astype(jnp.int32)


def pick_cell(free: jax.Array, u: jax.Array, cols: int) -> tuple[jax.Array, jax.Array]:
    """(flat index of the k-th True cell of ``free`` ``[rows * cols]``, k uniform below their
    count; whether any cell is True). Two short prefix sums (rows, then one row) instead of one
    over the whole grid, which is much slower on CPU."""
    grid = free.reshape(-1, cols).astype(jnp.int32)
    count = grid.sum()
    k = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
    per_row = grid.sum(1)
    upto = jnp.cumsum(per_row)
    r = jnp.argmax(upto > k)
    c = jnp.argmax(jnp.cumsum(grid[r]) > k - (upto[r] - per_row[r]))
    return r * cols + c, count > 0


@dataclass(frozen=True)
class LBFGenerator:
    """Static layout options; ``generator(key, params)`` is one episode's initial state."""

    rows: int
    cols: int
    num_agents: int
    num_food: int
    min_agent_level: int
    max_agent_level: int
    min_food_level: int
    max_food_level: int | None  # None: the summed level of the (up to) COOP_AGENTS lowest agents

    def cells(self) -> jax.Array:
        """int32 ``[rows * cols, 2]``: every cell's (row, col), row-major."""
        return jnp.asarray(np.indices((self.rows, self.cols)).reshape(2, -1).T, jnp.int32)

    def place_agents(self, u: jax.Array) -> jax.Array:
        """Agents one by one, each uniform among the cells not taken yet (``u``: ``[N]`` uniforms)."""
        cells = self.cells()

        def place(free, u_i):
            idx, _ = pick_cell(free, u_i, self.cols)  # num_agents <= rows * cols: a cell is always left
            return free.at[idx].set(False), cells[idx]

        return jax.lax.scan(place, jnp.ones(len(cells), bool), u)[1]

    def place_food(self, u: jax.Array, agent_pos: jax.Array, levels: jax.Array):
        """Foods one by one, each uniform among the allowed cells: interior, not on an agent, not
        touching an earlier food (8-neighbourhood) or 2 cells from one in a line. A food with no
        allowed cell left is not placed (level 0)."""
        cells = self.cells()
        interior = (cells >= 1).all(-1) & (cells[:, 0] <= self.rows - 2) & (cells[:, 1] <= self.cols - 2)
        on_agent = (cells[:, None, :] == agent_pos[None]).all(-1).any(-1)

        def place(free, inputs):
            u_i, level = inputs
            idx, ok = pick_cell(free, u_i, self.cols)
            pos = cells[idx]
            d = jnp.abs(cells - pos)
            blocked = (d.max(-1) <= 1) | ((d.min(-1) == 0) & (d.max(-1) <= 2))
            free = free & ~(blocked & ok)
            return free, (jnp.where(ok, pos, 0), jnp.where(ok, level, 0))

        return jax.lax.scan(place, interior & ~on_agent, (u, levels))[1]

    def __call__(self, key: jax.Array, params: LBFParams) -> LBFState:
        n, f = self.num_agents, self.num_food
        # One uniform per random choice: generating random bits is most of the cost of a reset.
        u = jax.random.uniform(key, (2 * n + 2 * f,))
        u_pos, u_lvl, u_fpos, u_flvl = jnp.split(u, np.cumsum([n, n, f]))
        agent_pos = self.place_agents(u_pos)
        agent_level = uniform_int(u_lvl, self.min_agent_level, self.max_agent_level)
        if self.max_food_level is None:
            top = jnp.sort(agent_level)[: min(COOP_AGENTS, n)].sum()
        else:
            top = jnp.int32(self.max_food_level)
        low = jnp.where(params.force_coop, top, self.min_food_level)
        levels = uniform_int(u_flvl, low, top)
        food_pos, food_level = self.place_food(u_fpos, agent_pos, levels)
        return LBFState(
            agent_pos=agent_pos,
            agent_level=agent_level.astype(jnp.int32),
            food_pos=food_pos,
            food_level=food_level,
            food_spawned=food_level.sum().astype(jnp.float32),
            step=jnp.int32(0),
        )
