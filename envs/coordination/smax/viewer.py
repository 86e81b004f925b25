"""SMAX output (host-side): RGB frames of a battle.

:meth:`~alem.envs.coordination.smax.env.SMAX.render_rgb` delegates here. The map is drawn with north
up; each live unit is a disc of its body radius (allies blue, enemies red) with a health bar above it
and a dark rim while its weapon cools down; dead units leave a small grey cross.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import numpy as np

from alem.envs.coordination.smax.types import UNIT_STATS, SmaxState

if TYPE_CHECKING:
    from alem.envs.coordination.smax.env import SMAX

__all__ = ["render_rgb"]

_TEAM_COLOURS = ((40, 90, 220), (210, 50, 40))
_BACKGROUND = (236, 228, 204)


def render_rgb(env: SMAX, state: SmaxState, scale: int = 16) -> np.ndarray:
    """uint8 ``[map_height * scale, map_width * scale, 3]``."""
    s = jax.device_get(state)
    pos, health, alive, kind = (np.asarray(x) for x in (s.pos, s.health, s.alive, s.unit_type))
    cooldown = np.asarray(s.cooldown)
    if pos.ndim != 2:
        raise ValueError("render_rgb takes one state (not a batch)")
    h, w = env.map_height * scale, env.map_width * scale
    img = np.empty((h, w, 3), np.uint8)
    img[:] = _BACKGROUND
    img[:: 4 * scale, :] = (222, 212, 184)  # grid every 4 map units
    img[:, :: 4 * scale] = (222, 212, 184)
    yy, xx = np.mgrid[0:h, 0:w]
    for i in range(env.num_units):
        cx, cy = pos[i, 0] * scale, h - pos[i, 1] * scale  # image rows grow southwards
        if not alive[i]:
            r = max(2, scale // 4)
            for d in range(-r, r + 1):
                for y, x in ((cy + d, cx + d), (cy + d, cx - d)):
                    if 0 <= int(y) < h and 0 <= int(x) < w:
                        img[int(y), int(x)] = (150, 150, 150)
            continue
        radius = float(UNIT_STATS.radius[kind[i]]) * scale
        d2 = (yy - cy) ** 2 + (xx - cx) ** 2
        img[d2 <= radius**2] = _TEAM_COLOURS[int(env.team[i])]
        if cooldown[i] > 0:
            ring = (d2 <= radius**2) & (d2 >= (radius - max(1.0, scale / 8)) ** 2)
            img[ring] = (30, 30, 30)
        frac = float(health[i] / UNIT_STATS.health[kind[i]])
        top = int(cy - radius - max(3, scale // 4))
        left, width = int(cx - radius), max(2, int(2 * radius))
        if 0 <= top < h:
            x0, x1 = max(left, 0), min(left + width, w)
            img[top, x0:x1] = (200, 0, 0)
            img[top, x0 : max(x0, min(left + int(round(frac * width)), w))] = (0, 170, 0)
    return img
