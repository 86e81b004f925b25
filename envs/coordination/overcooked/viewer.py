"""Overcooked output (host-side): rules text, the ASCII kitchen and RGB frames.

:class:`~alem.envs.coordination.overcooked.env.Overcooked`'s text hooks and ``render_rgb``
delegate here. Cooks are ``A`` (agent_0) and ``B`` (agent_1); the kitchen is drawn with
overcooked-ai's tile letters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from alem.envs.coordination.overcooked.types import (
    COUNTER,
    DIRECTION_NAMES,
    DIRECTIONS,
    DISH,
    DISH_DISPENSER,
    NOTHING,
    ONION,
    ONION_DISPENSER,
    POT,
    SERVING,
    SOUP,
    TILE_CHARS,
    TOMATO,
    TOMATO_DISPENSER,
    OvercookedParams,
    OvercookedState,
)

if TYPE_CHECKING:
    from alem.envs.coordination.overcooked.env import Overcooked

__all__ = ["rules_text", "render_text", "render_rgb", "describe_object"]

_LABELS = "AB"
_ARROWS = "^v><"
_OBJ_CHAR = {ONION: "o", TOMATO: "t", DISH: "d", SOUP: "s"}


def _soup_name(onions: int, tomatoes: int) -> str:
    parts = [f"{onions} onion{'s' if onions != 1 else ''}"] if onions else []
    parts += [f"{tomatoes} tomato{'es' if tomatoes != 1 else ''}"] if tomatoes else []
    return " and ".join(parts) or "nothing"


def describe_object(kind: int, onions: int = 0, tomatoes: int = 0) -> str:
    """A held or placed object in words."""
    if kind == SOUP:
        return f"a soup of {_soup_name(onions, tomatoes)} (on a dish)"
    return {NOTHING: "nothing", ONION: "an onion", TOMATO: "a tomato", DISH: "a dish"}[kind]


def rules_text(env: Overcooked, params: OvercookedParams, agent: int = 0) -> str:
    """The rules as told to ``agent``."""
    value = np.asarray(params.recipe_value)
    time = np.asarray(params.cook_time)
    paying = [
        f"{_soup_name(o, t)}: {value[o, t]:g} (cooks {time[o, t]} steps)"
        for o in range(4)
        for t in range(4 - o)
        if o + t and value[o, t] > 0
    ]
    has_tomato = bool((env._terrain == TOMATO_DISPENSER).any())
    shaping = float(params.shaping_factor)
    lines = [
        f"You are cook {_LABELS[agent]} ({env.agents[agent]}) in Overcooked, a cooperative kitchen game for "
        f"two cooks on the {env.layout.name} layout ({env.width} columns x {env.height} rows; row 0 is the top).",
        "Make soup: put ingredients (up to 3) into a pot, start cooking it by interacting with the pot "
        "with empty hands, wait until it is cooked, scoop it into a dish, and serve it at a serving window (S).",
        "Tiles: X counter (put things down or pick them up), P pot, O onion dispenser"
        + (", T tomato dispenser" if has_tomato else "")
        + ", D dish dispenser, S serving window; blank cells are floor.",
        "Actions: up, down, left, right (turn to face that way and step if the cell is floor; otherwise "
        "only turn), stay, interact (with the tile you face). Both cooks act at once; if you would "
        "bump into each other or swap places, neither moves.",
        "Served soups pay both cooks: " + "; ".join(paying) + ". Other soups pay nothing.",
    ]
    if shaping > 0:
        lines.append(
            f"Helper rewards (times {shaping:g}, to the cook who acts): {float(params.placement_in_pot_rew):g} "
            f"per ingredient put in a pot, {float(params.dish_pickup_rew):g} for a useful dish pickup, "
            f"{float(params.soup_pickup_rew):g} for scooping a cooked soup."
        )
    lines.append(
        f"The episode lasts {int(params.max_steps)} steps. Serve as many paying soups as you can, together."
    )
    return "\n".join(lines)


def _host(state: OvercookedState):
    return {
        k: np.asarray(getattr(state, k)) for k in ("pos", "dir", "held", "held_soup", "obj", "soup", "tick")
    }


def render_text(env: Overcooked, state: OvercookedState, agent: int | None, params: OvercookedParams) -> str:
    """The kitchen grid, each cook's cell, orientation and held item, and every pot."""
    s = _host(state)
    cook_time = np.asarray(params.cook_time)
    grid = _grid(env, s)
    for i in range(env.num_agents):
        x, y = s["pos"][i]
        grid[y][x] = _LABELS[i]
    head = "    " + "".join(f"{x:<2}" for x in range(env.width)).rstrip()
    rows = [f"{y:>3} " + " ".join(row) for y, row in enumerate(grid)]
    lines = [
        f"Step {int(state.time)} of {int(params.max_steps)}. Soups served: {int(state.delivered)}.",
        head,
        *rows,
    ]
    lines.append(
        "Legend: X counter, P pot, O onion dispenser, T tomato dispenser, D dish dispenser, S serving window, "
        ". floor, A/B cooks; on counters o onion, t tomato, d dish, s soup."
    )
    for i in range(env.num_agents):
        x, y = s["pos"][i]
        d = int(s["dir"][i])
        fx, fy = s["pos"][i] + DIRECTIONS[d]
        faced = env._terrain[fy, fx] if 0 <= fx < env.width and 0 <= fy < env.height else -1
        tile = _TILE_NAMES.get(int(faced), "the wall")
        who = f"You ({_LABELS[i]}) are" if agent == i else f"Cook {_LABELS[i]} is"
        held = describe_object(int(s["held"][i]), *map(int, s["held_soup"][i]))
        lines.append(
            f"{who} at column {x}, row {y}, facing {DIRECTION_NAMES[d]} "
            f"({_ARROWS[d]}, towards {tile} at column {fx}, row {fy}), holding {held}."
        )
    for y, x in zip(*np.nonzero(env._terrain == POT), strict=True):
        lines.append(f"Pot at column {x}, row {y}: {_pot_status(s, y, x, cook_time)}.")
    return "\n".join(lines)


def _grid(env: Overcooked, s: dict[str, np.ndarray]) -> list[list[str]]:
    """Tile characters, with what lies on counters (cooks not drawn)."""
    grid = [[TILE_CHARS[t] if t else "." for t in row] for row in env._terrain]
    for (y, x), kind in np.ndenumerate(s["obj"]):
        if kind and env._terrain[y, x] == COUNTER:
            grid[y][x] = _OBJ_CHAR[int(kind)]
    return grid


def _pot_status(s: dict[str, np.ndarray], y: int, x: int, cook_time: np.ndarray) -> str:
    if s["obj"][y, x] != SOUP:
        return "empty"
    o, t = map(int, s["soup"][y, x])
    tick, need = int(s["tick"][y, x]), int(cook_time[o, t])
    if tick < 0:
        return f"{_soup_name(o, t)}, not cooking yet (interact with empty hands to start)"
    if tick < need:
        return f"{_soup_name(o, t)}, cooking, {need - tick} more step{'s' if need - tick != 1 else ''}"
    return f"{_soup_name(o, t)}, cooked: scoop it with a dish"


def json_view(
    env: Overcooked, state: OvercookedState, agent: int, params: OvercookedParams
) -> dict[str, Any]:
    """The kitchen as JSON (it is fully observed): ``step``, ``max_steps``, ``served``, ``grid``
    (rows top to bottom; the characters of :func:`render_text`'s legend, cooks excluded),
    ``cooks`` (``cook``, ``you``, ``column``, ``row``, ``facing``, ``holding``) and ``pots``
    (``column``, ``row``, ``status``). Columns grow east, rows south."""
    s = _host(state)
    cook_time = np.asarray(params.cook_time)
    grid = _grid(env, s)
    cooks = []
    for i in range(env.num_agents):
        x, y = map(int, s["pos"][i])
        held = describe_object(int(s["held"][i]), *map(int, s["held_soup"][i]))
        facing = DIRECTION_NAMES[int(s["dir"][i])]
        cooks.append(
            {"cook": _LABELS[i], "you": i == agent, "column": x, "row": y, "facing": facing, "holding": held}
        )
    pots = [
        {"column": int(x), "row": int(y), "status": _pot_status(s, y, x, cook_time)}
        for y, x in zip(*np.nonzero(env._terrain == POT), strict=True)
    ]
    return {
        "step": int(state.time),
        "max_steps": int(params.max_steps),
        "served": int(state.delivered),
        "grid": ["".join(row) for row in grid],
        "cooks": cooks,
        "pots": pots,
    }


_TILE_NAMES = {
    0: "the floor",
    COUNTER: "a counter",
    POT: "a pot",
    ONION_DISPENSER: "the onion dispenser",
    TOMATO_DISPENSER: "the tomato dispenser",
    DISH_DISPENSER: "the dish dispenser",
    SERVING: "the serving window",
}
_TILE_RGB = np.array(
    [
        [238, 232, 213],  # floor
        [160, 120, 80],  # counter
        [70, 70, 70],  # pot
        [200, 170, 60],  # onion dispenser
        [200, 60, 50],  # tomato dispenser
        [180, 200, 220],  # dish dispenser
        [90, 160, 90],  # serving window
    ],
    np.uint8,
)
_OBJ_RGB = {ONION: (240, 210, 80), TOMATO: (220, 40, 40), DISH: (250, 250, 250), SOUP: (230, 140, 40)}
_COOK_RGB = np.array([[52, 101, 164], [204, 0, 0]], np.uint8)


def render_rgb(
    env: Overcooked, state: OvercookedState, params: OvercookedParams, cell: int = 32
) -> np.ndarray:
    """uint8 ``[H * cell, W * cell, 3]``: tiles, objects as small squares, cooks as discs with a facing mark,
    pots with a progress bar (green when cooked)."""
    s = _host(state)
    cook_time = np.asarray(params.cook_time)
    img = np.repeat(np.repeat(_TILE_RGB[env._terrain], cell, 0), cell, 1).copy()
    img[::cell, :] = 120
    img[:, ::cell] = 120
    m = max(2, cell // 4)

    def square(x, y, rgb, shrink=m):
        img[y * cell + shrink : (y + 1) * cell - shrink, x * cell + shrink : (x + 1) * cell - shrink] = rgb

    for (y, x), kind in np.ndenumerate(s["obj"]):
        if not kind:
            continue
        square(x, y, _OBJ_RGB[int(kind)])
        if env._terrain[y, x] == POT and kind == SOUP:
            o, t = s["soup"][y, x]
            tick, need = int(s["tick"][y, x]), int(cook_time[o, t])
            frac = 0.0 if tick < 0 else min(1.0, tick / max(need, 1))
            bar = int(round(frac * (cell - 2)))
            colour = (60, 200, 60) if tick >= need else (240, 240, 240)
            img[y * cell + cell - 4 : y * cell + cell - 1, x * cell + 1 : x * cell + 1 + bar] = colour
            filled = int(o + t)
            for k in range(filled):
                img[y * cell + 2 : y * cell + 6, x * cell + 2 + 6 * k : x * cell + 6 + 6 * k] = (
                    _OBJ_RGB[ONION] if k < o else _OBJ_RGB[TOMATO]
                )
    yy, xx = np.mgrid[0:cell, 0:cell]
    c = (cell - 1) / 2
    disc = (yy - c) ** 2 + (xx - c) ** 2 <= (0.4 * cell) ** 2
    for i in range(env.num_agents):
        x, y = s["pos"][i]
        block = img[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell]
        block[disc] = _COOK_RGB[i % len(_COOK_RGB)]
        dx, dy = DIRECTIONS[int(s["dir"][i])]
        fy, fx = int(c + dy * 0.3 * cell), int(c + dx * 0.3 * cell)
        block[max(fy - 2, 0) : fy + 3, max(fx - 2, 0) : fx + 3] = (255, 255, 255)
        if s["held"][i]:
            q = cell // 3
            block[q : cell - q, q : cell - q] = _OBJ_RGB[int(s["held"][i])]
    return img
