"""Pathfinding text output (host-side): the rules and ASCII views of a state.

:class:`~alem.envs.pathfinding.env.PathfindingEnv`'s text hooks delegate here. The whole
grid marks agents ``0-9a-zA-Z`` (index mod 62) and active goals ``*``; an agent's view is
its ``(2R+1) x (2R+1)`` window with ``@`` itself, ``G`` its goal, ``a`` other agents and
``#`` walls (outside the map too).
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np

from alem.envs.pathfinding.types import MODES, PathfindingParams, PathfindingState

if TYPE_CHECKING:
    from alem.envs.pathfinding.env import PathfindingEnv

__all__ = ["GOAL_RULES", "rules_text", "render_text"]

#: The goal rule of each mode, as told to agents.
GOAL_RULES = {
    "one_shot": "Reach your goal and stay there; the team succeeds when every agent is on its goal at once.",
    "lifelong": "Each time you reach your goal you score 1 and get a new goal.",
    "disappear": "When you reach your goal you score 1 and leave the map.",
}
#: Labels of agents in the whole-grid view (index mod 62).
_LABELS = string.digits + string.ascii_letters


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
    r0 = env.obs_radius
    h, w = env.height, env.width
    view = []
    me = pos[agent]
    others = {tuple(p) for i, p in enumerate(pos) if active[i] and i != agent}
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
    dr, dc = (goal[agent] - me).tolist()
    status = (
        "you have left the map (goal reached)"
        if not active[agent]
        else f"goal offset: {dr:+d} rows, {dc:+d} cols"
    )
    return f"step {int(state.t)}; you are at row {me[0]}, col {me[1]}; {status}\n" + "\n".join(view)
