"""Pathfinding output (host-side): the rules, ASCII views and RGB pictures of a state.

:class:`~alem.envs.pathfinding.env.PathfindingEnv`'s text hooks and ``render_rgb`` delegate
here. The whole grid marks agents ``0-9a-zA-Z`` (index mod 62) and active goals ``*``; an
agent's view is its ``(2R+1) x (2R+1)`` window with ``@`` itself, ``G`` its goal, ``a``
other agents and ``#`` walls (outside the map too). The picture draws walls dark, free
cells light, each active agent as a disc of its colour (:data:`AGENT_COLOURS`, cycling) and
its goal as a hollow square of the same colour.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

import numpy as np

from alem.envs.pathfinding.types import MODES, PathfindingParams, PathfindingState

if TYPE_CHECKING:
    from alem.envs.pathfinding.env import PathfindingEnv

__all__ = [
    "AGENT_COLOURS",
    "FREE_COLOUR",
    "GOAL_RULES",
    "WALL_COLOUR",
    "cell_size",
    "render_rgb",
    "render_text",
    "rules_text",
]

#: The goal rule of each mode, as told to agents.
GOAL_RULES = {
    "one_shot": "Reach your goal and stay there; the team succeeds when every agent is on its goal at once.",
    "lifelong": "Each time you reach your goal you score 1 and get a new goal.",
    "disappear": "When you reach your goal you score 1 and leave the map.",
}
#: Labels of agents in the whole-grid view (index mod 62).
_LABELS = string.digits + string.ascii_letters
#: uint8 ``[10, 3]`` agent colours of the picture: agent ``i`` has colour ``i % 10``.
AGENT_COLOURS = np.array(
    [
        [31, 119, 180],
        [255, 127, 14],
        [44, 160, 44],
        [214, 39, 40],
        [148, 103, 189],
        [140, 86, 75],
        [227, 119, 194],
        [188, 189, 34],
        [23, 190, 207],
        [127, 127, 127],
    ],
    np.uint8,
)
WALL_COLOUR = (40, 44, 52)
FREE_COLOUR = (236, 236, 236)
_GRID_COLOUR = (214, 214, 214)


def rules_text(env: PathfindingEnv, params: PathfindingParams, agent: int = 0) -> str:
    """The rules as told to ``agent``."""
    goal_rule = GOAL_RULES[MODES[int(params.mode)]]
    return (
        f"You are agent {agent} of {env.num_agents} on a {env.height}x{env.width} grid. "
        "Each step every agent picks one action: wait, up, down, left or right. "
        "Moving into a wall (#) or off the map means waiting. "
        f"{goal_rule} Two agents cannot enter the same cell or swap cells; when two agents "
        f"want one cell the lower-numbered agent gets it ({env.collision} collision rules). "
        f"The episode lasts at most {int(params.max_steps)} steps. In the view, '@' is you, "
        "'G' your goal, 'a' another agent, '#' a wall, '.' free."
    )


def render_text(env: PathfindingEnv, state: PathfindingState, agent: int | None = None) -> str:
    """The whole grid (``agent=None``) or ``agent``'s window, with a status line."""
    pos = np.asarray(state.pos)
    goal = np.asarray(state.goal)
    active = np.asarray(state.active)
    obst = np.asarray(env.obstacles(state))
    rows = [["#" if o else "." for o in row] for row in obst]
    if agent is None:
        for i in range(env.num_agents):
            if active[i]:
                r, c = goal[i]
                if rows[r][c] == ".":
                    rows[r][c] = "*"
        for i in range(env.num_agents):
            if active[i]:
                rows[pos[i][0]][pos[i][1]] = _LABELS[i % len(_LABELS)]
        text = "\n".join("".join(r) for r in rows)
        return f"step {int(state.t)}; agents 0-9a-zA-Z (mod 62), '*' goals\n{text}"
    view, me = _window(env, state, agent, rows), pos[agent]
    dr, dc = (goal[agent] - me).tolist()
    status = (
        "you have left the map (goal reached)"
        if not active[agent]
        else f"goal offset: {dr:+d} rows, {dc:+d} cols"
    )
    return f"step {int(state.t)}; you are at row {me[0]}, col {me[1]}; {status}\n" + "\n".join(view)


def _window(env: PathfindingEnv, state: PathfindingState, agent: int, rows: list[list[str]]) -> list[str]:
    """``agent``'s (2r+1)^2 window: ``@`` itself, ``a`` other agents, ``G`` its goal, ``#`` walls."""
    pos, goal, active = np.asarray(state.pos), np.asarray(state.goal), np.asarray(state.active)
    r0, h, w = env.obs_radius, env.height, env.width
    me = pos[agent]
    others = {tuple(p) for i, p in enumerate(pos) if active[i] and i != agent}
    view = []
    for dr in range(-r0, r0 + 1):
        line = []
        for dc in range(-r0, r0 + 1):
            rr, cc = me[0] + dr, me[1] + dc
            if not (0 <= rr < h and 0 <= cc < w):
                line.append("#")
            elif (dr, dc) == (0, 0):
                line.append("@")
            elif (rr, cc) in others:
                line.append("a")
            elif (rr, cc) == tuple(goal[agent]):
                line.append("G")
            else:
                line.append(rows[rr][cc])
        view.append("".join(line))
    return view


def json_view(env: PathfindingEnv, state: PathfindingState, agent: int) -> dict[str, Any]:
    """What ``agent`` sees as JSON: ``step``, ``you`` (``row``, ``column``), ``on_map`` (false once
    it left at its goal), ``goal_offset`` (``rows`` down, ``columns`` right) and ``window``
    (rows of its (2r+1)^2 view: ``@`` you, ``a`` another agent, ``G`` your goal, ``#`` wall or
    off the map, ``.`` free)."""
    pos, goal = np.asarray(state.pos), np.asarray(state.goal)
    rows = [["#" if o else "." for o in row] for row in np.asarray(env.obstacles(state))]
    dr, dc = (goal[agent] - pos[agent]).tolist()
    return {
        "step": int(state.t),
        "you": {"row": int(pos[agent][0]), "column": int(pos[agent][1])},
        "on_map": bool(np.asarray(state.active)[agent]),
        "goal_offset": {"rows": int(dr), "columns": int(dc)},
        "window": _window(env, state, agent, rows),
    }


def cell_size(height: int, width: int) -> int:
    """Pixels per cell of the picture: 16, less on big maps so the long side stays <= 512 (at least 2)."""
    return int(min(16, max(2, 512 // max(height, width))))


def render_rgb(env: PathfindingEnv, state: PathfindingState, cell: int | None = None) -> np.ndarray:
    """uint8 ``[H * cell, W * cell, 3]`` (``cell``: :func:`cell_size` by default): walls dark,
    free cells light, active agents as discs of their colour, their goals as hollow squares."""
    cell = cell_size(env.height, env.width) if cell is None else int(cell)
    pos = np.asarray(state.pos)
    goal = np.asarray(state.goal)
    active = np.asarray(state.active)
    obst = np.asarray(env.obstacles(state))
    tile = np.empty((cell, cell, 3), np.uint8)
    tile[:] = FREE_COLOUR
    if cell >= 8:  # faint grid lines between free cells
        tile[0, :] = tile[:, 0] = _GRID_COLOUR
    img = np.tile(tile, (env.height, env.width, 1))
    img[np.kron(obst, np.ones((cell, cell), bool))] = WALL_COLOUR
    yy, xx = np.mgrid[0:cell, 0:cell]
    border = np.minimum(np.minimum(yy, xx), np.minimum(cell - 1 - yy, cell - 1 - xx))
    ring = border < max(1, cell // 8)  # the goal's outline
    centre = (cell - 1) / 2
    disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.38 * cell) ** 2 if cell >= 6 else ~ring
    pale = cell < 4  # too small for an outline: a goal is a pale square, an agent a full one
    if pale:
        ring = disc = np.ones_like(ring)
    for i in np.flatnonzero(active):
        r, c = goal[i] * cell
        colour = AGENT_COLOURS[i % len(AGENT_COLOURS)]
        img[r : r + cell, c : c + cell][ring] = (colour // 2 + 120) if pale else colour
    for i in np.flatnonzero(active):
        r, c = pos[i] * cell
        img[r : r + cell, c : c + cell][disc] = AGENT_COLOURS[i % len(AGENT_COLOURS)]
    return img
