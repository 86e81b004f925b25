"""Multi-robot warehouse output (host-side): rules text, ASCII maps and RGB frames.

:class:`~alem.envs.coordination.rware.env.Warehouse`'s text hooks and ``render_rgb`` delegate here.
Robots are labelled ``A, B, C, ...`` (skipping the map's own letters), followed by an arrow for
their heading; a robot carrying a shelf is written in lower case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from alem.envs.coordination.rware.types import GLOBAL, INDIVIDUAL, NO_LIMIT, RwareParams, RwareState

if TYPE_CHECKING:
    from alem.envs.coordination.rware.env import Warehouse

__all__ = ["agent_label", "rules_text", "render_text", "render_rgb"]

_LETTERS = "ABCDEFHIJKLMNOPQTUVWXYZ"  # no G (goal), R (requested shelf) or S (shelf)
_ARROWS = "^v<>"


def agent_label(i: int) -> str:
    """Robot ``i``'s label in text: a letter, or ``#i`` past the alphabet."""
    return _LETTERS[i] if i < len(_LETTERS) else f"#{i}"


def rules_text(env: Warehouse, params: RwareParams, agent: int = 0) -> str:
    """The rules as told to ``agent``."""
    n, r = env.num_agents, env.sensor_range
    kind = int(params.reward_type)
    reward = {
        GLOBAL: "Every delivery gives +1 to every robot.",
        INDIVIDUAL: "A delivery gives +1 to the robot that made it.",
    }.get(
        kind, "A delivery gives +0.5 to the robot that made it, and +0.5 more when it next puts a shelf down."
    )
    limits = []
    if int(params.max_steps) < NO_LIMIT:
        limits.append(f"after {int(params.max_steps)} steps")
    if int(params.max_inactivity_steps) < NO_LIMIT:
        limits.append(f"after {int(params.max_inactivity_steps)} steps without a delivery")
    lines = [
        f"You are robot {agent_label(agent)} ({env.agents[agent]}) in a warehouse with {n} robot"
        f"{'s' if n > 1 else ''}, on a {env.rows} x {env.cols} grid (row 0 is the top, column 0 the left).",
        f"Shelves stand in blocks between corridors. At any time {env.request_queue_size} shelves are "
        f"requested: carry a requested shelf onto a goal cell (G, bottom row) to deliver it; another "
        "shelf is then requested in its place.",
        "Actions: noop (stay), forward (drive one cell the way you face), left / right (turn 90 degrees "
        "in place), toggle_load (pick up the shelf you stand under, or put your shelf down; shelves can "
        "only be put down on shelf cells, not in corridors).",
        "Without a shelf you drive under shelves; with a shelf you cannot enter a cell with a standing "
        "shelf. All robots move at once: robots cannot swap cells, two robots driving into the same "
        "cell cannot both get there, and you cannot drive into a robot that stays.",
        reward,
        f"You sense the {2 * r + 1} x {2 * r + 1} square around you.",
        ("The episode ends " + " or ".join(limits) + ".")
        if limits
        else "The episode does not end by itself.",
        "Deliver as many requested shelves as possible, together.",
    ]
    return "\n".join(lines)


def _host(env: Warehouse, state: RwareState):
    pos = np.asarray(state.agent_pos)
    direction = np.asarray(state.agent_dir)
    carrying = np.asarray(state.carrying)
    shelves = np.asarray(state.shelf_pos)
    queue = np.asarray(state.request_queue)
    return pos, direction, carrying, shelves, queue


def json_view(env: Warehouse, state: RwareState, agent: int, params: RwareParams) -> dict[str, Any]:
    """The warehouse as JSON (its map is fixed knowledge): ``step``, ``max_steps`` (null: no
    limit), ``goals``, ``shelves`` (``row``, ``column``, ``requested``) and ``robots`` (``robot``,
    ``you``, ``row``, ``column``, ``facing``, ``carrying``: the shelf's index or null). Rows grow
    down, columns right."""
    pos, direction, carrying, shelves, queue = _host(env, state)
    requested = set(int(q) for q in queue)
    facing = ("up", "down", "left", "right")
    return {
        "step": int(state.step),
        "max_steps": int(params.max_steps) if int(params.max_steps) < NO_LIMIT else None,
        "goals": [{"row": int(r), "column": int(c)} for r, c in env.layout.goals],
        "shelves": [
            {"row": int(r), "column": int(c), "requested": k in requested} for k, (r, c) in enumerate(shelves)
        ],
        "robots": [
            {
                "robot": agent_label(i),
                "you": i == agent,
                "row": int(r),
                "column": int(c),
                "facing": facing[int(direction[i])],
                "carrying": int(carrying[i]) if carrying[i] >= 0 else None,
            }
            for i, (r, c) in enumerate(pos)
        ],
    }


def render_text(env: Warehouse, state: RwareState, agent: int | None, params: RwareParams) -> str:
    """The whole map (robots' sensing is local, but the map is fixed knowledge) and a list of robots."""
    pos, direction, carrying, shelves, queue = _host(env, state)
    grid = np.where(env.layout.highway, ".", "_").astype(object)
    for g in env.layout.goals:
        grid[tuple(g)] = "G"
    requested = set(int(q) for q in queue)
    for k, (r, c) in enumerate(shelves):
        grid[r, c] = "R" if k in requested else "S"
    for i, (r, c) in enumerate(pos):
        label = agent_label(i)
        under = grid[r, c] if grid[r, c] in ("S", "R") else ""
        grid[r, c] = (label.lower() if carrying[i] >= 0 else label) + _ARROWS[direction[i]] + under
    width = max(3, max(len(t) for t in grid.ravel()) + 1)
    head = " " * 4 + "".join(f"{j:<{width}}" for j in range(env.cols)).rstrip()
    rows = [f"{i:>3} " + "".join(f"{t:<{width}}" for t in grid[i]).rstrip() for i in range(env.rows)]
    lines = [
        f"Step {int(state.step)}"
        + (f" of {int(params.max_steps)}." if int(params.max_steps) < NO_LIMIT else ".")
    ]
    if agent is not None:
        r, c = pos[agent]
        load = (
            "carrying a requested shelf"
            if carrying[agent] in requested
            else ("carrying a shelf" if carrying[agent] >= 0 else "not carrying a shelf")
        )
        lines.append(
            f"You are robot {agent_label(agent)} at row {r}, column {c}, facing "
            f"{('up', 'down', 'left', 'right')[direction[agent]]}, {load}."
        )
    lines += [head, *rows]
    lines.append(
        "Legend: . corridor, _ empty shelf cell, S shelf, R requested shelf, G goal, A^ robot A facing up "
        "(v down, < left, > right; lower case: carrying the shelf written after it, else under it)."
    )
    return "\n".join(lines)


def render_rgb(env: Warehouse, state: RwareState, cell: int = 24) -> np.ndarray:
    """uint8 ``[rows * cell, cols * cell, 3]``."""
    pos, direction, carrying, shelves, queue = _host(env, state)
    img = np.full((env.rows * cell, env.cols * cell, 3), 245, np.uint8)
    for r, c in np.argwhere(~env.layout.highway):
        img[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell] = (225, 225, 215)
    for r, c in env.layout.goals:
        img[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell] = (60, 60, 60)
    img[::cell, :] = 200
    img[:, ::cell] = 200
    m = max(2, cell // 8)
    requested = set(int(q) for q in queue)
    for k, (r, c) in enumerate(shelves):
        color = (0, 150, 150) if k in requested else (72, 61, 139)
        img[r * cell + m : (r + 1) * cell - m, c * cell + m : (c + 1) * cell - m] = color
    yy, xx = np.mgrid[0:cell, 0:cell]
    centre = (cell - 1) / 2
    disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.33 * cell) ** 2
    for i, (r, c) in enumerate(pos):
        tile = img[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell]
        tile[disc] = (200, 40, 40) if carrying[i] >= 0 else (240, 140, 20)
        dr, dc = ((-1, 0), (1, 0), (0, -1), (0, 1))[direction[i]]
        for t in range(int(0.15 * cell), int(0.45 * cell)):
            y, x = int(round(centre + dr * t)), int(round(centre + dc * t))
            tile[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = (20, 20, 20)
    return img
