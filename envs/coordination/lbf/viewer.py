"""Level-Based Foraging output (host-side): rules text, ASCII views and RGB frames.

:class:`~alem.envs.coordination.lbf.env.LevelBasedForaging`'s text hooks and
``render_rgb`` delegate here. Agents are labelled ``A, B, C, ...`` (no ``F``, which marks
food); a view limited to an agent's sight follows lbforaging's visibility rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from alem.envs.coordination.lbf.types import LBFParams, LBFState

if TYPE_CHECKING:
    from alem.envs.coordination.lbf.env import LevelBasedForaging

__all__ = ["agent_label", "rules_text", "host_view", "render_text", "render_rgb"]

# Agent labels in text; no "F", which marks food.
_LETTERS = "ABCDEGHIJKLMNOPQRSTUVWXYZ"


def agent_label(i: int) -> str:
    """Agent ``i``'s label in text: a letter, or ``#i`` past the alphabet."""
    return _LETTERS[i] if i < len(_LETTERS) else f"#{i}"


def rules_text(env: LevelBasedForaging, params: LBFParams, agent: int = 0) -> str:
    """The rules as told to ``agent``."""
    n, r, c, s = env.num_agents, env.rows, env.cols, env.sight
    coop = bool(params.force_coop)
    pen = float(params.penalty)
    sees_all = s >= max(r, c)
    lines = [
        f"You are agent {agent_label(agent)} ({env.agents[agent]}) in Level-Based Foraging, a "
        f"cooperative grid game for {n} agent{'s' if n > 1 else ''} on a {r} x {c} grid "
        f"(row 0 is the north edge, column 0 the west edge).",
        "Every agent and every food item has a level. Food is collected by agents standing next to it "
        "(north, south, west or east of it, not diagonally) that choose load in the same step: it is "
        "collected when their levels add up to at least the food's level"
        + (f"; if they do not, each of them loses {pen:g}." if pen > 0 else "; otherwise nothing happens."),
        "Food above your own level needs other agents to load it with you."
        + (" Every food item here needs the combined levels of several agents." if coop else ""),
        "When food is collected, each agent that loaded it is rewarded in proportion to its level"
        + (
            " (rewards are scaled so that all food of an episode is worth 1 in total)."
            if bool(params.normalize_reward)
            else " (the reward is its level times the food level)."
        ),
        "Actions: noop (stay), north (up), south (down), west (left), east (right), load. A move off "
        "the grid or onto food does nothing, and so does load with no food next to you. All agents "
        "move at once: when two agents try to enter the same cell neither moves, and nobody can "
        "enter the cell of an agent that stays.",
        "You see the whole grid."
        if sees_all
        else f"You only see food within {s} cell{'s' if s > 1 else ''} of you in each direction "
        "('?' marks what you cannot see).",
        f"The episode ends when all food is collected or after {int(params.max_steps)} steps. "
        "The goal is to collect as much food as possible, together.",
    ]
    return "\n".join(lines)


def host_view(env: LevelBasedForaging, state: LBFState, agent: int | None):
    """Host arrays and what ``agent`` sees (everything when ``agent`` is None)."""
    pos = np.asarray(state.agent_pos)
    lvl = np.asarray(state.agent_level)
    fpos = np.asarray(state.food_pos)
    flvl = np.asarray(state.food_level)
    alive = flvl > 0
    rr, cc = np.meshgrid(np.arange(env.rows), np.arange(env.cols), indexing="ij")
    if agent is None:
        return pos, lvl, fpos, flvl, alive, np.ones(env.num_agents, bool), np.ones_like(rr, bool)
    s, me = env.sight, pos[agent]
    in_sight = (np.abs(rr - me[0]) <= s) & (np.abs(cc - me[1]) <= s)
    seen_food = alive & (np.abs(fpos - me) <= s).all(-1)
    rel = pos - np.maximum(me - s, 0)  # lbforaging's agent-visibility rule (see the card)
    seen_agents = (rel >= 0).all(-1) & (rel <= 2 * s).all(-1)
    return pos, lvl, fpos, flvl, seen_food, seen_agents, in_sight


def json_view(env: LevelBasedForaging, state: LBFState, agent: int, params: LBFParams) -> dict[str, Any]:
    """What ``agent`` sees as JSON: ``step``, ``max_steps``, ``you`` (row, column, level), ``food``
    and ``agents`` in sight (row, column, level; levels of others only where the env shows them).
    Rows grow south, columns east."""
    pos, lvl, fpos, flvl, seen_food, seen_agents, _ = host_view(env, state, agent)
    cell = lambda p: {"row": int(p[0]), "column": int(p[1])}
    level = lambda i: {"level": int(lvl[i])} if env.observe_agent_levels else {}
    return {
        "step": int(state.step),
        "max_steps": int(params.max_steps),
        "you": {**cell(pos[agent]), **level(agent)},
        "food": [{**cell(fpos[f]), "level": int(flvl[f])} for f in np.flatnonzero(seen_food)],
        "agents": [
            {"agent": agent_label(i), **cell(pos[i]), **level(i)}
            for i in np.flatnonzero(seen_agents)
            if i != agent
        ],
    }


def render_text(env: LevelBasedForaging, state: LBFState, agent: int | None, params: LBFParams) -> str:
    """The grid (limited to ``agent``'s sight; everything for ``None``) and lists of food and agents."""
    pos, lvl, fpos, flvl, seen_food, seen_agents, in_sight = host_view(env, state, agent)
    show_lvl = env.observe_agent_levels or agent is None

    def who(i: int) -> str:
        return agent_label(i) + (str(lvl[i]) if show_lvl else "")

    grid = np.where(in_sight, ".", "?").astype(object)
    for f in np.flatnonzero(seen_food):
        grid[tuple(fpos[f])] = f"F{flvl[f]}"
    taken: set[tuple[int, int]] = set()
    for i in np.flatnonzero(seen_agents):
        cell = (int(pos[i][0]), int(pos[i][1]))
        grid[cell] = "**" if cell in taken else who(i)
        taken.add(cell)
    width = max(3, max(len(t) for t in grid.ravel()) + 1)
    head = " " * 4 + "".join(f"{j:<{width}}" for j in range(env.cols)).rstrip()
    rows = [f"{i:>3} " + "".join(f"{t:<{width}}" for t in grid[i]).rstrip() for i in range(env.rows)]

    step, limit = int(state.step), int(params.max_steps)
    lines = [f"Step {step} of {limit}. Food left: {int((flvl > 0).sum())}."]
    if agent is not None:
        me = pos[agent]
        mine = f", level {lvl[agent]}," if env.observe_agent_levels else ""
        lines.append(f"You are agent {agent_label(agent)}{mine} at row {me[0]}, column {me[1]}.")
    lines += [head, *rows]
    legend = "Legend: . empty, F3 food of level 3"
    legend += ", A2 agent A with level 2" if show_lvl else ", A agent A"
    legend += ", ** two agents on one cell"
    lines.append(legend + (", ? outside your sight." if agent is not None else "."))

    def where(p) -> str:
        text = f"row {p[0]}, column {p[1]}"
        if agent is None:
            return text
        dr, dc = int(p[0] - pos[agent][0]), int(p[1] - pos[agent][1])
        rel = [f"{abs(dr)} {'south' if dr > 0 else 'north'}"] if dr else []
        rel += [f"{abs(dc)} {'east' if dc > 0 else 'west'}"] if dc else []
        return f"{text} ({', '.join(rel) or 'here'})"

    shown = sorted(np.flatnonzero(seen_food), key=lambda f: (fpos[f][0], fpos[f][1]))
    foods = [f"level {flvl[f]} at {where(fpos[f])}" for f in shown]
    lines.append(("Food: " + "; ".join(foods) + ".") if foods else "No food in sight.")
    others = [i for i in np.flatnonzero(seen_agents) if i != agent]
    if others:
        desc = [
            f"{agent_label(i)}" + (f" (level {lvl[i]})" if show_lvl else "") + f" at {where(pos[i])}"
            for i in others
        ]
        lines.append(("Other agents: " if agent is not None else "Agents: ") + "; ".join(desc) + ".")
    return "\n".join(lines)


def render_rgb(env: LevelBasedForaging, state: LBFState, cell: int = 32) -> np.ndarray:
    """uint8 ``[rows * cell, cols * cell, 3]``: food green squares, agents coloured discs, levels as digits."""
    pos, lvl, fpos, flvl, alive, _, _ = host_view(env, state, None)
    img = np.full((env.rows * cell, env.cols * cell, 3), 238, np.uint8)
    img[::cell, :] = 190
    img[:, ::cell] = 190
    yy, xx = np.mgrid[0:cell, 0:cell]
    centre = (cell - 1) / 2
    disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.42 * cell) ** 2
    for f in np.flatnonzero(alive):
        y, x = fpos[f] * cell
        m = max(2, cell // 8)
        img[y + m : y + cell - m, x + m : x + cell - m] = (70, 160, 70)
        _draw_number(img, y, x, cell, int(flvl[f]), (255, 255, 255))
    for i in range(env.num_agents):
        y, x = pos[i] * cell
        img[y : y + cell, x : x + cell][disc] = _PALETTE[i % len(_PALETTE)]
        _draw_number(img, y, x, cell, int(lvl[i]), (255, 255, 255))
    return img


_PALETTE = np.array(
    [[52, 101, 164], [204, 0, 0], [245, 121, 0], [117, 80, 123], [193, 125, 17], [32, 74, 135], [164, 0, 0]],
    np.uint8,
)
# 3 x 5 pixel digits, one string of 15 bits per digit (rows top to bottom).
_DIGITS = np.array(
    [
        [int(b) for b in bits]
        for bits in (
            "111101101101111",
            "010110010010111",
            "111001111100111",
            "111001111001111",
            "101101111001001",
            "111100111001111",
            "111100111101111",
            "111001001001001",
            "111101111101111",
            "111101111001111",
        )
    ],
    bool,
).reshape(10, 5, 3)


def _draw_number(img: np.ndarray, y: int, x: int, cell: int, value: int, color) -> None:
    """Draw ``value`` centred in the cell whose top-left pixel is (y, x)."""
    text = str(value)
    scale = max(1, cell // 12)
    w = len(text) * 4 * scale - scale
    h = 5 * scale
    y0, x0 = y + (cell - h) // 2, x + (cell - w) // 2
    for k, ch in enumerate(text):
        glyph = np.kron(_DIGITS[int(ch)], np.ones((scale, scale), bool))
        gx = x0 + k * 4 * scale
        region = img[y0 : y0 + h, gx : gx + 3 * scale]
        region[glyph[: region.shape[0], : region.shape[1]]] = color
