"""Hanabi's picture: every hand, the fireworks, tokens and lives."""

from __future__ import annotations

import numpy as np

from alem.envs.games.hanabi.types import HanabiParams, HanabiState


class HanabiViewer:
    """``render_rgb`` of :class:`~alem.envs.games.hanabi.env.Hanabi` (a mixin)."""

    def render_rgb(self, state: HanabiState, params: HanabiParams | None = None) -> np.ndarray:
        """Every hand (a row of cards in their colour, height = rank; grey: empty slot), the
        fireworks below, then tokens (blue) and lives (red) as pips."""
        palette = np.array(
            [[220, 60, 50], [235, 200, 40], [60, 170, 80], [235, 235, 235], [60, 110, 220]], np.uint8
        )
        cw, chh, pad = 24, 36, 6
        P, H, R = self.num_players, self.hand_size, self.ranks
        width = max(H, self.colours, self.max_info + self.max_life + 1) * (cw + pad) + pad
        height = (P + 1) * (chh + pad) + pad + 14
        img = np.full((height, width, 3), 30, np.uint8)

        def card(y0, x0, colour, rank):
            img[y0 : y0 + chh, x0 : x0 + cw] = 70
            if colour >= 0:
                fill = max(4, chh * (rank + 1) // R)
                img[y0 + chh - fill : y0 + chh, x0 : x0 + cw] = palette[colour]

        hands = np.asarray(state.hands)
        for q in range(P):
            for s in range(H):
                t = int(hands[q, s])
                card(pad + q * (chh + pad), pad + s * (cw + pad), t // R if t >= 0 else -1, t % R)
        for c, n in enumerate(np.asarray(state.fireworks)):
            card(pad + P * (chh + pad), pad + c * (cw + pad), c if n else -1, max(int(n) - 1, 0))
        y0 = height - 12
        for i in range(int(state.info_tokens)):
            img[y0 : y0 + 8, pad + i * 12 : pad + i * 12 + 8] = (80, 140, 255)
        for i in range(int(state.life_tokens)):
            x0 = width - pad - (i + 1) * 12
            img[y0 : y0 + 8, x0 : x0 + 8] = (230, 60, 60)
        return img
