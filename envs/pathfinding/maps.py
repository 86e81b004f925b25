"""Maps for the pathfinding envs: generators inside jit, fixed layouts, and file loaders.

Obstacle maps are bool ``[H, W]`` arrays, True = obstacle, ``(row, col)`` with ``(0, 0)``
top-left.

- In jit, from a key: :func:`random_map` (independent obstacles with a given density,
  as POGEMA generates them) and :func:`maze_map` (a perfect maze: every free cell is
  reachable from every other).
- Host-side (NumPy): :func:`warehouse_map`, :func:`parse_ascii_map` (POGEMA's string
  format), :func:`load_movingai_map` / :func:`parse_movingai_map` and
  :func:`load_movingai_scen` / :func:`parse_movingai_scen` (MovingAI benchmark formats),
  :func:`components` (connected components, for checking tasks).

Parsers raise :class:`MapFormatError` naming the file (or ``<string>``), the line and
what was wrong. Files are read as UTF-8 (a leading byte-order mark is ignored) by
:func:`read_map_text`.
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, PRNGKeyArray

from alem.errors import MapFormatError

__all__ = [
    "MapFormatError",
    "random_map",
    "maze_map",
    "warehouse_map",
    "parse_ascii_map",
    "AsciiMap",
    "parse_movingai_map",
    "load_movingai_map",
    "ScenarioTask",
    "parse_movingai_scen",
    "load_movingai_scen",
    "read_map_text",
    "components",
    "bfs_distance_host",
    "map_to_ascii",
]



# ------------------------------------------------------------------------------------ in jit
def random_map(key: PRNGKeyArray, height: int, width: int, density: jax.Array) -> Bool[Array, "H W"]:
    """Each cell is an obstacle independently with probability ``density``."""
    return jax.random.bernoulli(key, density, (height, width))


def maze_map(key: PRNGKeyArray, height: int, width: int) -> Bool[Array, "H W"]:
    """A perfect maze (a spanning tree of the cells at even coordinates), in one vectorised draw.

    Cells sit at even ``(row, col)``; walls at odd-odd coordinates are obstacles, and each
    cell opens the wall towards its upper or its left neighbour at random (the binary-tree
    algorithm; the first row opens left, the first column up). The maze is then flipped
    at random along each axis so corridors do not always run along the same two borders.
    With an even size the last row/column is solid wall.
    """
    k_dir, k_flip = jax.random.split(key)
    ch, cw = (height + 1) // 2, (width + 1) // 2
    up = jax.random.bernoulli(k_dir, 0.5, (ch, cw))
    ci, cj = jnp.meshgrid(jnp.arange(ch), jnp.arange(cw), indexing="ij")
    up = jnp.where(ci == 0, False, jnp.where(cj == 0, True, up))
    left = ~up & (cj > 0)
    up = up & (ci > 0)
    r, c = jnp.meshgrid(jnp.arange(height), jnp.arange(width), indexing="ij")
    cell = (r % 2 == 0) & (c % 2 == 0)
    # A vertical passage (odd row, even col) is open when the cell below opens up.
    below = jnp.minimum((r + 1) // 2, ch - 1), jnp.minimum(c // 2, cw - 1)
    vpass = (r % 2 == 1) & (c % 2 == 0) & (r + 1 < height) & up[below]
    right = jnp.minimum(r // 2, ch - 1), jnp.minimum((c + 1) // 2, cw - 1)
    hpass = (r % 2 == 0) & (c % 2 == 1) & (c + 1 < width) & left[right]
    obstacles = ~(cell | vpass | hpass)
    flips = jax.random.bernoulli(k_flip, 0.5, (2,))
    # A flip only keeps the maze intact when the size is odd (cells at both borders).
    flip_r = flips[0] & (height % 2 == 1)
    flip_c = flips[1] & (width % 2 == 1)
    obstacles = jnp.where(flip_r, obstacles[::-1], obstacles)
    return jnp.where(flip_c, obstacles[:, ::-1], obstacles)


# ------------------------------------------------------------------------------------ host side
def warehouse_map(
    shelf_rows: int = 3,
    shelf_cols: int = 3,
    shelf_length: int = 5,
    corridor: int = 1,
    margin: int = 2,
) -> np.ndarray:
    """A warehouse: ``shelf_rows x shelf_cols`` horizontal shelves separated by corridors.

    Each shelf is a 1 x ``shelf_length`` block of obstacles; shelves are ``corridor``
    cells apart vertically and horizontally, with ``margin`` free cells around the
    block (the staging area). Every free cell is reachable.
    """
    for name, v, lo in (
        ("shelf_rows", shelf_rows, 1),
        ("shelf_cols", shelf_cols, 1),
        ("shelf_length", shelf_length, 1),
        ("corridor", corridor, 1),
        ("margin", margin, 1),
    ):
        if int(v) < lo:
            raise ValueError(f"warehouse_map: {name} must be >= {lo}, got {v}")
    h = 2 * margin + shelf_rows + (shelf_rows - 1) * corridor
    w = 2 * margin + shelf_cols * shelf_length + (shelf_cols - 1) * corridor
    out = np.zeros((h, w), dtype=bool)
    for i in range(shelf_rows):
        r = margin + i * (1 + corridor)
        for j in range(shelf_cols):
            c = margin + j * (shelf_length + corridor)
            out[r, c : c + shelf_length] = True
    return out


def map_to_ascii(obstacles: np.ndarray) -> str:
    """``#`` for obstacles, ``.`` for free cells, one line per row (POGEMA's format)."""
    return "\n".join("".join("#" if v else "." for v in row) for row in np.asarray(obstacles))


@dataclasses.dataclass(frozen=True)
class AsciiMap:
    """A parsed POGEMA-style map: obstacles and, when the text marks them, agents and targets.

    Attributes:
        obstacles: bool ``[H, W]``.
        starts: int ``[K, 2]`` agent cells from letters ``a..z`` (sorted by letter), or ``None``.
        goals: int ``[K, 2]`` target cells from letters ``A..Z``, or ``None``.
    """

    obstacles: np.ndarray
    starts: np.ndarray | None
    goals: np.ndarray | None


def parse_ascii_map(text: str, source: str = "<string>") -> AsciiMap:
    """Parse POGEMA's ASCII map format.

    ``.`` free, ``#`` obstacle, ``a..z`` an agent's start (free), ``A..Z`` the target of
    the agent with the same letter (free). Rows are whitespace-separated; all rows must
    have the same length. ``@``/``$``/``!`` (POGEMA's possible-position marks) are read as
    free cells.
    """
    text = text.removeprefix("\ufeff")  # a BOM kept by a reader that decoded with plain "utf-8"
    rows = text.split()
    if not rows:
        raise MapFormatError(f"{source}: the map is empty")
    width = len(rows[0])
    grid = np.zeros((len(rows), width), dtype=bool)
    starts: dict[str, tuple[int, int]] = {}
    goals: dict[str, tuple[int, int]] = {}
    for r, line in enumerate(rows):
        if len(line) != width:
            raise MapFormatError(
                f"{source}: row {r + 1} has {len(line)} cells but row 1 has {width}; all rows must have one length"
            )
        for c, ch in enumerate(line):
            if ch == "#":
                grid[r, c] = True
            elif ch in ".@$!":
                pass
            elif "a" <= ch <= "z" or "A" <= ch <= "Z":
                table = starts if ch.islower() else goals
                if ch.lower() in table:
                    raise MapFormatError(
                        f"{source}: row {r + 1}, column {c + 1}: letter {ch!r} appears twice"
                    )
                table[ch.lower()] = (r, c)
            else:
                raise MapFormatError(
                    f"{source}: row {r + 1}, column {c + 1}: unknown character {ch!r} "
                    "(expected '.', '#', a-z for agents, A-Z for their targets)"
                )
    if set(starts) != set(goals):
        raise MapFormatError(
            f"{source}: agents {sorted(starts)} and targets {sorted(goals)} do not match "
            "(each agent letter a-z needs its target A-Z)"
        )
    if not starts:
        return AsciiMap(grid, None, None)
    keys = sorted(starts)
    return AsciiMap(grid, np.array([starts[k] for k in keys]), np.array([goals[k] for k in keys]))


def parse_movingai_map(text: str, source: str = "<string>") -> np.ndarray:
    """Parse a MovingAI ``.map``: ``type octile``, ``height H``, ``width W``, ``map``, then H rows.

    ``.`` and ``G`` are free; ``@``, ``O``, ``T``, ``S`` and ``W`` are obstacles (for
    4-connected MAPF, swamp and water are not passable).
    """
    text = text.removeprefix("\ufeff")  # a BOM kept by a reader that decoded with plain "utf-8"
    lines = text.splitlines()
    header: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if line == "map":
            break
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("type", "height", "width"):
            raise MapFormatError(
                f"{source}: line {i}: expected a header line 'type octile', 'height H', 'width W' or 'map', got {line!r}"
            )
        header[parts[0]] = parts[1]
    else:
        raise MapFormatError(f"{source}: no 'map' line after the header")
    for field in ("type", "height", "width"):
        if field not in header:
            raise MapFormatError(f"{source}: header has no '{field}' line")
    try:
        h, w = int(header["height"]), int(header["width"])
    except ValueError:
        raise MapFormatError(
            f"{source}: height and width must be integers, got {header['height']!r}, {header['width']!r}"
        ) from None
    if h < 1 or w < 1:
        raise MapFormatError(f"{source}: height and width must be >= 1, got {h} x {w}")
    body = [ln.rstrip("\r\n") for ln in lines[i:]]
    while body and not body[-1].strip():
        body.pop()
    if len(body) != h:
        raise MapFormatError(f"{source}: header says height {h} but {len(body)} map rows follow")
    out = np.zeros((h, w), dtype=bool)
    for r, line in enumerate(body):
        if len(line) != w:
            raise MapFormatError(
                f"{source}: line {i + r + 1}: row has {len(line)} cells, header says width {w}"
            )
        for c, ch in enumerate(line):
            if ch in ".G":
                continue
            if ch in "@OTSW":
                out[r, c] = True
            else:
                raise MapFormatError(
                    f"{source}: line {i + r + 1}, column {c + 1}: unknown terrain {ch!r} (expected one of .G@OTSW)"
                )
    return out


def read_map_text(path: str | os.PathLike) -> str:
    """A map or scenario file's text: UTF-8, with a leading byte-order mark dropped.

    The encoding is fixed (not the locale's) so a file reads the same on every system.

    Raises:
        MapFormatError: the file is not valid UTF-8 (naming the file and the byte offset).
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        # The offset counts from the start of the file, BOM included (decode() strips it first).
        offset = e.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        raise MapFormatError(
            f"{os.fspath(path)}: not valid UTF-8 text at byte offset {offset} "
            f"(byte {data[offset : offset + 1]!r}: {e.reason}); save the file as UTF-8 or ASCII"
        ) from None


def load_movingai_map(path: str | os.PathLike) -> np.ndarray:
    """Read a MovingAI ``.map`` file (UTF-8, see :func:`read_map_text`; :func:`parse_movingai_map`)."""
    return parse_movingai_map(read_map_text(path), source=os.fspath(path))


@dataclasses.dataclass(frozen=True)
class ScenarioTask:
    """One row of a MovingAI ``.scen``: start and goal as ``(row, col)``, in file order."""

    bucket: int
    map_name: str
    start: tuple[int, int]
    goal: tuple[int, int]
    octile_length: float


def parse_movingai_scen(text: str, source: str = "<string>") -> list[ScenarioTask]:
    """Parse a MovingAI ``.scen``: ``version 1`` then rows of 9 tab/space separated fields.

    Fields: ``bucket map width height start_x start_y goal_x goal_y optimal_length`` with
    ``x`` the column and ``y`` the row; returned cells are ``(row, col)``. The optimal
    length assumes octile moves; recompute 4-connected distances with
    :func:`bfs_distance_host`.
    """
    text = text.removeprefix("\ufeff")  # a BOM kept by a reader that decoded with plain "utf-8"
    lines = [ln for ln in text.splitlines()]
    if not lines or not lines[0].strip().startswith("version"):
        raise MapFormatError(f"{source}: line 1: expected 'version 1', got {lines[0] if lines else ''!r}")
    tasks = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 9:
            raise MapFormatError(f"{source}: line {n}: expected 9 fields, got {len(parts)}: {line!r}")
        try:
            bucket, w, h, sx, sy, gx, gy = (int(p) for p in (parts[0], *parts[2:8]))
            length = float(parts[8])
        except ValueError:
            raise MapFormatError(f"{source}: line {n}: non-numeric field in {line!r}") from None
        for name, v, hi in (("start_x", sx, w), ("goal_x", gx, w), ("start_y", sy, h), ("goal_y", gy, h)):
            if not 0 <= v < hi:
                raise MapFormatError(f"{source}: line {n}: {name}={v} is outside the {w} x {h} map")
        tasks.append(ScenarioTask(bucket, parts[1], (sy, sx), (gy, gx), length))
    return tasks


def load_movingai_scen(path: str | os.PathLike) -> list[ScenarioTask]:
    """Read a MovingAI ``.scen`` file (UTF-8, see :func:`read_map_text`; :func:`parse_movingai_scen`)."""
    return parse_movingai_scen(read_map_text(path), source=os.fspath(path))


_NEIGHBOURS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def bfs_distance_host(obstacles: np.ndarray, source: tuple[int, int]) -> np.ndarray:
    """4-connected BFS distances (``-1`` unreachable) from ``source`` on a host map."""
    obstacles = np.asarray(obstacles, dtype=bool)
    h, w = obstacles.shape
    dist = np.full((h, w), -1, dtype=np.int64)
    if obstacles[source]:
        return dist
    dist[source] = 0
    q = deque([source])
    while q:
        r, c = q.popleft()
        for dr, dc in _NEIGHBOURS:
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and not obstacles[nr, nc] and dist[nr, nc] < 0:
                dist[nr, nc] = dist[r, c] + 1
                q.append((nr, nc))
    return dist


def components(obstacles: np.ndarray) -> np.ndarray:
    """Label each free cell with its 4-connected component (1, 2, ...); obstacles get 0."""
    obstacles = np.asarray(obstacles, dtype=bool)
    labels = np.zeros(obstacles.shape, dtype=np.int64)
    nxt = 0
    for start in zip(*np.nonzero(~obstacles), strict=True):
        if labels[start]:
            continue
        nxt += 1
        reach = bfs_distance_host(obstacles, start) >= 0
        labels[reach] = nxt
    return labels
