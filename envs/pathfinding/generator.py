"""Pathfinding task building: the instance drawn at each reset and the params that feed it.

- :func:`sample_instance` (in jit, at reset): the obstacle map (random, maze, or one of
  ``params.maps``), the spawn region, distinct starts and goals, or the given task.
- :func:`make_params` (host-side): params of an env, with maps loaded and given tasks
  checked (sizes, cells on the map and off obstacles, distinct starts, reachable goals).

The map generators and loaders themselves live in :mod:`alem.envs.pathfinding.maps`;
this module composes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import PRNGKeyArray

from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding import maps as M
from alem.envs.pathfinding.types import MODES, PathfindingParams, check_choice
from alem.errors import EnvArgumentError

if TYPE_CHECKING:
    from alem.envs.pathfinding.env import PathfindingEnv

__all__ = ["Instance", "sample_instance", "make_params", "as_map_list", "task_arrays", "check_task"]


class Instance(NamedTuple):
    """One reset's task (device arrays)."""

    obstacles: jax.Array  # bool [H, W]
    spawn: jax.Array  # bool [H, W] cells where starts/goals (and lifelong random goals) lie
    starts: jax.Array  # int32 [N, 2]
    goal_seq: jax.Array  # int32 [N, L, 2]
    given: jax.Array  # bool []: the task comes from params (not sampled)


def sample_instance(
    key: PRNGKeyArray,
    params: PathfindingParams,
    *,
    num_agents: int,
    height: int,
    width: int,
    map_type: str,
    goal_sequence_len: int,
) -> Instance:
    """Obstacles, spawn mask, starts ``[N, 2]``, goal sequence ``[N, L, 2]`` and whether it is given."""
    n, h, w = num_agents, height, width
    k_map, k_pick, k_cells = jax.random.split(key, 3)
    if map_type == "random":
        obstacles = M.random_map(k_map, h, w, params.density)
        spawn = G.largest_component(~obstacles)
        # A map whose largest component cannot hold 2N distinct cells falls back to empty.
        too_small = spawn.sum() < 2 * n
        obstacles = jnp.where(too_small, False, obstacles)
        spawn = jnp.where(too_small, True, spawn)
        given = jnp.bool_(False)
        starts_g = jnp.zeros((n, 2), jnp.int32)
        goals_g = jnp.zeros((n, goal_sequence_len, 2), jnp.int32)
    elif map_type == "maze":
        obstacles = M.maze_map(k_map, h, w)
        spawn = ~obstacles
        given = jnp.bool_(False)
        starts_g = jnp.zeros((n, 2), jnp.int32)
        goals_g = jnp.zeros((n, goal_sequence_len, 2), jnp.int32)
    else:
        m = jax.random.randint(k_pick, (), 0, params.maps.shape[0])
        obstacles, spawn = params.maps[m], params.spawn[m]
        given, starts_g, goals_g = params.has_task[m], params.starts[m], params.goals[m]
    # 2N distinct spawn cells: the first N are starts, the next N goals.
    score = jnp.where(spawn.reshape(-1), jax.random.uniform(k_cells, (h * w,)), -1.0)
    cells = jax.lax.top_k(score, 2 * n)[1].astype(jnp.int32)
    cells = jnp.stack([cells // w, cells % w], axis=1)
    starts = jnp.where(given, starts_g, cells[:n])
    goal_seq = jnp.where(given, goals_g, jnp.broadcast_to(cells[n:, None], goals_g.shape))
    return Instance(obstacles, spawn, starts, goal_seq, given)


# ---------------------------------------------------------------------------- params
def as_map_list(maps: Any) -> list[np.ndarray]:
    """Bool ``[H, W]`` obstacle maps from an ASCII string, an array, or a list of either."""
    if isinstance(maps, str):
        return [M.parse_ascii_map(maps).obstacles]
    if isinstance(maps, np.ndarray | jax.Array) and np.ndim(maps) == 2:
        return [np.asarray(maps, dtype=bool)]
    if isinstance(maps, np.ndarray | jax.Array) and np.ndim(maps) == 3:
        return [np.asarray(m, dtype=bool) for m in maps]
    if isinstance(maps, list | tuple) and maps:
        return [as_map_list(m)[0] for m in maps]
    raise EnvArgumentError(
        f"maps must be an ASCII string, an [H, W] bool array or a list of them; got {type(maps)}"
    )


def make_params(
    env: PathfindingEnv,
    *,
    density: float | None = None,
    max_steps: int | None = None,
    maps: Any = None,
    starts: Any = None,
    goals: Any = None,
    mode: str | None = None,
) -> PathfindingParams:
    """Params for ``env``, with tasks checked host-side.

    Args:
        density: obstacle density of random maps.
        max_steps: episode length limit.
        mode: one of :data:`MODES` (default: the env's ``mode``); a param, so one
            compiled program runs every mode.
        maps: ``map_type="fixed"`` only: one map (POGEMA ASCII string or bool ``[H, W]``)
            or a list / ``[M, H, W]`` array of maps of the env's size. ASCII maps that mark
            agents (``a..z``) and targets (``A..Z``) give the task too.
        starts: int ``[N, 2]`` (or ``[M, N, 2]``) start cells ``(row, col)``.
        goals: int ``[N, 2]``, ``[N, L, 2]`` goal sequences (lifelong), or with a leading ``M``.

    Raises:
        EnvArgumentError: maps of different sizes, cells off the map or on obstacles,
            repeated starts, unreachable goals, or more agents than free cells, each
            naming the map, agent and cell.
    """
    n, h, w, L = env.num_agents, env.height, env.width, env.goal_sequence_len
    density = env._init["density"] if density is None else density
    max_steps = env._init["max_steps"] if max_steps is None else max_steps
    mode = env.mode if mode is None else mode
    check_choice("mode", mode, MODES)
    if not 0.0 <= float(density) <= 1.0:
        raise EnvArgumentError(f"density must be in [0, 1], got {density}")
    if int(max_steps) < 1:
        raise EnvArgumentError(f"max_steps must be >= 1, got {max_steps}")
    if env.map_type != "fixed":
        if maps is not None:
            raise EnvArgumentError(f"maps= needs map_type='fixed' (this env generates {env.map_type!r} maps)")
        if h * w < 2 * n:
            raise EnvArgumentError(f"{n} agents need {2 * n} distinct free cells; a {h}x{w} map has {h * w}")
        return PathfindingParams(
            maps=jnp.zeros((1, h, w), bool),
            spawn=jnp.ones((1, h, w), bool),
            starts=jnp.zeros((1, n, 2), jnp.int32),
            goals=jnp.zeros((1, n, L, 2), jnp.int32),
            has_task=jnp.zeros((1,), bool),
            density=jnp.float32(density),
            max_steps=jnp.int32(max_steps),
            mode=jnp.int32(MODES.index(mode)),
        )
    maps = env._init["maps"] if maps is None else maps
    grids = as_map_list(maps)
    ascii_tasks = [M.parse_ascii_map(maps)] if isinstance(maps, str) else None
    for i, g in enumerate(grids):
        if g.shape != (h, w):
            raise EnvArgumentError(
                f"map {i} is {g.shape[0]}x{g.shape[1]} but the env is {h}x{w}; maps must share one size"
            )
    mcount = len(grids)
    if starts is None and goals is None and ascii_tasks and ascii_tasks[0].starts is not None:
        starts, goals = ascii_tasks[0].starts, ascii_tasks[0].goals
    if (starts is None) != (goals is None):
        raise EnvArgumentError("give both starts= and goals= (or neither)")
    spawn = []
    for i, g in enumerate(grids):
        labels = M.components(g)
        sizes = np.bincount(labels.ravel())[1:] if labels.max() > 0 else np.zeros(0, int)
        if starts is None:
            if sizes.size == 0 or sizes.max() < 2 * n:
                best = 0 if sizes.size == 0 else int(sizes.max())
                raise EnvArgumentError(
                    f"map {i}: {n} agents need {2 * n} distinct cells in one connected region; "
                    f"its largest region has {best} free cells"
                )
            spawn.append(labels == int(np.argmax(sizes)) + 1)
        else:
            spawn.append(~g)
    if starts is None:
        st = np.zeros((mcount, n, 2), np.int32)
        gl = np.zeros((mcount, n, L, 2), np.int32)
        has = np.zeros((mcount,), bool)
    else:
        st, gl = task_arrays(starts, goals, mcount)
        if st.shape != (mcount, n, 2) or gl.shape[:2] != (mcount, n) or gl.shape[-1] != 2:
            raise EnvArgumentError(
                f"starts must be [N, 2] (or [M, N, 2]) and goals [N, 2], [N, L, 2] (or with M) for "
                f"N={n} agents and M={mcount} maps; got starts {np.shape(starts)}, goals {np.shape(goals)}"
            )
        if gl.shape[2] != L:
            raise EnvArgumentError(
                f"goal sequences have length {gl.shape[2]} but the env was built with goal_sequence_len={L}"
            )
        for i, g in enumerate(grids):
            check_task(i, g, st[i], gl[i])
        st, gl = st.astype(np.int32), gl.astype(np.int32)
        has = np.ones((mcount,), bool)
    return PathfindingParams(
        maps=jnp.asarray(np.stack(grids)),
        spawn=jnp.asarray(np.stack(spawn)),
        starts=jnp.asarray(st),
        goals=jnp.asarray(gl),
        has_task=jnp.asarray(has),
        density=jnp.float32(density),
        max_steps=jnp.int32(max_steps),
        mode=jnp.int32(MODES.index(mode)),
    )


def task_arrays(starts: Any, goals: Any, mcount: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts ``[M, N, 2]`` and goal sequences ``[M, N, L, 2]`` from any accepted layout."""
    st = np.asarray(starts, dtype=np.int64)
    gl = np.asarray(goals, dtype=np.int64)
    per_map = st.ndim == 3
    if gl.ndim == st.ndim:  # single goals: add the sequence axis
        gl = gl[..., None, :]
    if not per_map:
        st, gl = st[None], gl[None]
    if st.shape[0] == 1 and mcount > 1:
        st = np.broadcast_to(st, (mcount, *st.shape[1:]))
        gl = np.broadcast_to(gl, (mcount, *gl.shape[1:]))
    return st, gl


def check_task(m: int, grid: np.ndarray, starts: np.ndarray, goals: np.ndarray) -> None:
    h, w = grid.shape

    def check_cell(what: str, i: int, cell) -> None:
        r, c = int(cell[0]), int(cell[1])
        if not (0 <= r < h and 0 <= c < w):
            raise EnvArgumentError(f"map {m}: agent {i}'s {what} ({r}, {c}) is off the {h}x{w} map")
        if grid[r, c]:
            raise EnvArgumentError(f"map {m}: agent {i}'s {what} ({r}, {c}) is on an obstacle")

    seen: dict[tuple[int, int], int] = {}
    for i, s in enumerate(starts):
        check_cell("start", i, s)
        key = (int(s[0]), int(s[1]))
        if key in seen:
            raise EnvArgumentError(f"map {m}: agents {seen[key]} and {i} both start at {key}")
        seen[key] = i
    for i, seq in enumerate(goals):
        dist = M.bfs_distance_host(grid, (int(starts[i][0]), int(starts[i][1])))
        for j, g in enumerate(seq):
            check_cell(f"goal {j}", i, g)
            if dist[int(g[0]), int(g[1])] < 0:
                raise EnvArgumentError(
                    f"map {m}: agent {i}'s goal {j} ({int(g[0])}, {int(g[1])}) is unreachable from its start "
                    f"({int(starts[i][0])}, {int(starts[i][1])})"
                )
