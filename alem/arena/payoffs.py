"""What a tournament's games pay: the payoff matrix with CIs, each player's payoff against the
pool, Nash averaging, and GTBench's normalized relative advantage.

A game is ``(a, b, r_a, r_b)``: players ``a`` and ``b`` (in either seat) and their returns.
Win counts (:mod:`alem.arena.ratings`) are the right currency for games that are only won or
lost; in poker the chips are, and a player that wins fewer hands can win more chips. So the
arena ranks every tournament by payoff first:

- **Payoff matrix** ``M[i, j]``: the mean return of ``i`` in its games against ``j`` (both
  seatings pooled), with a 95% confidence half-width (Student t over those games).
- **Payoff against the pool**: the mean of ``M[i, j]`` over the opponents ``j`` that ``i``
  met, each opponent weighted equally; its half-width combines the cells' standard errors.
- **Nash averaging** (Balduzzi et al. 2018, "Re-evaluating evaluation"), for zero-sum games
  with every pair played: the maximum-entropy Nash equilibrium ``p`` of the symmetric
  zero-sum meta-game ``A = (M - M^T) / 2`` (pick a player, the opponent picks one, the payoff
  is ``A``), and each player's payoff against that mixture, ``(A p)_i``. Adding copies of a
  player to the pool does not change it, which the uniform average does not offer. ``p`` is
  found with SciPy: a linear program for the equilibrium value, then the entropy maximised
  over the equilibrium set (SLSQP); the meta-game is small (one row per player).
- **Normalized relative advantage** (GTBench, Duan et al. 2024), per pair:
  ``NRA(i, j) = (sum r_i - sum r_j) / (sum |r_i| + sum |r_j|)`` over their games, in
  ``[-1, 1]``; 0 when neither gains, 1 when ``i`` takes everything.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from alem.arena.stats import ci95

__all__ = ["PayoffGame", "payoff_matrix", "pool_payoff", "nash_average", "relative_advantage"]

#: One game: ``(player a, player b, a's return, b's return)``.
PayoffGame = tuple[int, int, float, float]


def payoff_matrix(games: Sequence[PayoffGame], n: int) -> dict[str, np.ndarray]:
    """``mean``, ``ci95`` (half-width), ``sem`` and ``games`` per ordered pair ``[n, n]``;
    cells without games are NaN (``games`` 0)."""
    cells: list[list[list[float]]] = [[[] for _ in range(n)] for _ in range(n)]
    for a, b, ra, rb in games:
        cells[a][b].append(float(ra))
        cells[b][a].append(float(rb))
    count = np.array([[len(c) for c in row] for row in cells], np.int64)
    mean, half, sem = (np.full((n, n), np.nan) for _ in range(3))
    for i in range(n):
        for j in range(n):
            x = np.asarray(cells[i][j])
            if x.size:
                mean[i, j] = x.mean()
            if x.size > 1:
                sem[i, j] = x.std(ddof=1) / np.sqrt(x.size)
                half[i, j] = ci95(x)
    return {"mean": mean, "ci95": half, "sem": sem, "games": count}


def pool_payoff(pm: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per player: the mean payoff against the opponents it met (equal weights) and its 95%
    half-width (normal, from the cells' standard errors; NaN when a cell has one game)."""
    met = pm["games"] > 0
    k = met.sum(1)
    mean = np.where(k > 0, np.nansum(np.where(met, pm["mean"], 0.0), 1) / np.maximum(k, 1), np.nan)
    var = np.where(met, pm["sem"] ** 2, 0.0).sum(1) / np.maximum(k, 1) ** 2
    return mean, np.where(k > 0, 1.959964 * np.sqrt(var), np.nan)


def nash_average(payoff: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray] | None:
    """``(p, skill)`` for the antisymmetric part of ``payoff`` (a full ``[n, n]`` matrix of a
    zero-sum game; the diagonal is ignored): the maximum-entropy Nash equilibrium ``p`` and
    ``skill = A p``. None when a cell off the diagonal is missing."""
    from scipy.optimize import linprog, minimize

    m = np.array(payoff, float)
    n = m.shape[0]
    np.fill_diagonal(m, 0.0)
    if np.isnan(m).any():
        return None
    a = (m - m.T) / 2.0
    # The symmetric game's value is 0; an equilibrium p has (A^T p)_j >= 0 for every j (it never
    # loses on average to any pure reply). First any such p, by maximising the worst reply's payoff.
    res = linprog(
        np.r_[np.zeros(n), -1.0],
        A_ub=np.c_[-a.T, np.ones(n)],
        b_ub=np.zeros(n),
        A_eq=np.r_[np.ones(n), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, 1)] * n + [(None, None)],
        method="highs",
    )
    if not res.success:
        return None
    p0 = np.clip(res.x[:n], 0.0, 1.0)
    slack = min(0.0, float(res.x[n])) - tol  # numerical value, about 0

    def neg_entropy(p: np.ndarray) -> float:
        q = np.clip(p, 1e-12, 1.0)
        return float((q * np.log(q)).sum())

    opt = minimize(
        neg_entropy,
        p0,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[
            {"type": "eq", "fun": lambda p: p.sum() - 1.0},
            {"type": "ineq", "fun": lambda p: a.T @ p - slack},
        ],
        options={"maxiter": 500, "ftol": 1e-12},
    )
    p = opt.x if opt.success and (a.T @ opt.x >= slack - 1e-6).all() else p0
    p = np.clip(p, 0.0, None)
    p = p / p.sum()
    return p, a @ p


def relative_advantage(games: Sequence[PayoffGame], n: int) -> np.ndarray:
    """``NRA[i, j]`` over the games between ``i`` and ``j`` (NaN without games; 0 when every
    return was 0)."""
    gain = np.zeros((n, n))
    size = np.zeros((n, n))
    met = np.zeros((n, n), bool)
    for a, b, ra, rb in games:
        for i, j, ri, rj in ((a, b, ra, rb), (b, a, rb, ra)):
            gain[i, j] += ri - rj
            size[i, j] += abs(ri) + abs(rj)
            met[i, j] = True
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(size > 0, gain / np.where(size > 0, size, 1.0), 0.0)
    return np.where(met, out, np.nan)
