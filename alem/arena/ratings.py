"""Ratings with uncertainty for the players of a tournament, from its games.

- :func:`bradley_terry`: maximum-a-posteriori Bradley–Terry strengths on the Elo scale, from
  two-player games (:class:`Game`), fitted with L-BFGS-B.
- :func:`bootstrap_ci`: percentile-bootstrap confidence intervals of those ratings (games resampled).
- :func:`openskill_ratings` / :func:`rate_ffa`: online Weng–Lin ratings (``mu``, ``sigma``) from the
  ``openskill`` library, in game order; :func:`rate_ffa` also takes n-player games (public goods,
  3-player Kuhn), which pairwise Bradley–Terry cannot.
- :func:`win_matrix`: mean score and game count of every pair.
- :func:`rate`: all of the above as one row per player, best first (the tournament table).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "ELO_SCALE",
    "Game",
    "bootstrap_ci",
    "bradley_terry",
    "openskill_ratings",
    "rate",
    "rate_ffa",
    "win_matrix",
]

#: Elo points per natural-log odds unit: a 400-point gap is 10:1 odds.
ELO_SCALE = 400.0 / math.log(10.0)


class Game(NamedTuple):
    """One two-player result: players ``a`` and ``b`` (indices) and ``a``'s score:
    1.0 win, 0.5 draw, 0.0 loss (any value in [0, 1] is accepted as a fractional result)."""

    a: int
    b: int
    score: float


# ---------------------------------------------------------------------------------------- checks


def _check_num_players(num_players: Any) -> int:
    if isinstance(num_players, bool) or not isinstance(num_players, numbers.Integral) or num_players < 1:
        raise ValueError(f"num_players must be an integer >= 1, got {num_players!r}")
    return int(num_players)


def _check_player(p: Any, num_players: int, what: str) -> int:
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or not 0 <= p < num_players:
        raise ValueError(f"{what}: player index {p!r} is out of range for num_players={num_players}")
    return int(p)


def _check_games(games: Sequence[Any], num_players: Any) -> tuple[list[Game], int]:
    """``games`` as :class:`Game` tuples, validated (ValueError names the game and the problem)."""
    n = _check_num_players(num_players)
    out = []
    for g, game in enumerate(games):
        try:
            a, b, s = game
        except (TypeError, ValueError):
            raise ValueError(f"game {g}: expected (a, b, score), got {game!r}") from None
        a = _check_player(a, n, f"game {g} (a)")
        b = _check_player(b, n, f"game {g} (b)")
        if a == b:
            raise ValueError(f"game {g}: a player cannot play itself (a == b == {a})")
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not 0.0 <= s <= 1.0:
            raise ValueError(f"game {g}: score {s!r} is outside [0, 1]")
        out.append(Game(a, b, float(s)))
    return out, n


def _check_anchor(anchor: int | None, n: int) -> int | None:
    return None if anchor is None else _check_player(anchor, n, "anchor")


# ---------------------------------------------------------------------------------- Bradley-Terry


class _Pairs(NamedTuple):
    """Games folded per unordered pair ``i < j``: which pair each game is, and its score for ``i``."""

    i: np.ndarray  # [pairs]
    j: np.ndarray  # [pairs]
    game_pair: np.ndarray  # [games] pair index of each game
    game_score: np.ndarray  # [games] score of the pair's ``i`` in that game

    def totals(self, idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Games and ``i``'s total score per pair ``[pairs]``, over the games ``idx`` (default all)."""
        gp, gs = (
            (self.game_pair, self.game_score) if idx is None else (self.game_pair[idx], self.game_score[idx])
        )
        k = len(self.i)
        return np.bincount(gp, minlength=k).astype(np.float64), np.bincount(gp, weights=gs, minlength=k)


def _pairs(games: list[Game]) -> _Pairs:
    ab = np.array([(g.a, g.b) for g in games], np.int64).reshape(-1, 2)
    s = np.array([g.score for g in games], np.float64)
    lo, hi = ab.min(axis=1), ab.max(axis=1)
    s_lo = np.where(ab[:, 0] == lo, s, 1.0 - s)
    keys, game_pair = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    keys = keys.reshape(-1, 2)
    return _Pairs(keys[:, 0], keys[:, 1], game_pair.reshape(-1), s_lo)


def _fit(
    pairs: _Pairs, cnt: np.ndarray, won: np.ndarray, n: int, prior_sd: float, x0: np.ndarray
) -> np.ndarray:
    """MAP log-strengths ``[R, n]`` (natural-log odds units) of ``R`` data sets given as games and
    score per pair (``cnt``, ``won``: ``[R, pairs]``), fitted as one separable problem: a single
    L-BFGS-B run for all of them, as ``R`` short runs would cost more in per-run overhead."""
    from scipy.optimize import minimize

    k, reps = len(pairs.i), len(cnt)
    inc = np.zeros((k, n))  # d = x_i - x_j per pair
    inc[np.arange(k), pairs.i], inc[np.arange(k), pairs.j] = 1.0, -1.0
    prec = (ELO_SCALE / prior_sd) ** 2  # prior precision in log-odds units

    def nll(flat: np.ndarray) -> tuple[float, np.ndarray]:
        x = flat.reshape(reps, n)
        d = x @ inc.T
        # -(s log p + (1 - s) log(1 - p)) with p = sigmoid(d), summed per pair; logaddexp is stable.
        f = float(np.sum(cnt * np.logaddexp(0.0, d) - won * d)) + 0.5 * prec * float(np.sum(x * x))
        grad = prec * x + (cnt / (1.0 + np.exp(-d)) - won) @ inc
        return f, grad.reshape(-1)

    opts = {"maxiter": 5000, "gtol": 1e-10, "ftol": 1e-15}
    res = minimize(nll, np.asarray(x0, np.float64).reshape(-1), jac=True, method="L-BFGS-B", options=opts)
    return res.x.reshape(reps, n)


def _centre(x: np.ndarray, played: np.ndarray, anchor: int | None) -> np.ndarray:
    """Elo ratings: mean 0 over players with games (or ``anchor`` at 0); unplayed players 0."""
    r = x * ELO_SCALE
    r = r - (r[anchor] if anchor is not None else r[played].mean() if played.any() else 0.0)
    return np.where(played, r, 0.0)


def _played(games: list[Game], n: int) -> np.ndarray:
    played = np.zeros(n, bool)
    for g in games:
        played[[g.a, g.b]] = True
    return played


def _check_prior(prior_sd: float) -> float:
    if not (isinstance(prior_sd, numbers.Real) and math.isfinite(prior_sd) and prior_sd > 0):
        raise ValueError(f"prior_sd must be a finite number > 0 (Elo points), got {prior_sd!r}")
    return float(prior_sd)


def bradley_terry(
    games: Sequence[Game], num_players: int, *, prior_sd: float = 1000.0, anchor: int | None = None
) -> np.ndarray:
    """Bradley–Terry ratings on the Elo scale, ``[num_players]`` float64.

    Model: P(a beats b) = 1 / (1 + 10 ** ((r_b - r_a) / 400)). A game's score ``s`` (1 win,
    0.5 draw, 0 loss) enters through the fractional-outcome log-likelihood
    ``s log p + (1 - s) log(1 - p)``, so a draw counts as half a win and half a loss.

    The fit is maximum a posteriori under an independent Gaussian prior N(0, ``prior_sd``²) on
    each rating (Elo points; the default 1000 barely moves ratings backed by a few games but keeps
    a player who wins, or loses, every game finite), by L-BFGS-B with the analytic gradient.
    Ratings are then shifted so that the players with games have mean 0, or so that ``anchor``
    is at 0. Players without games get 0 (they have no rating, not an average one).
    """
    games, n = _check_games(games, num_players)
    anchor, prior_sd = _check_anchor(anchor, n), _check_prior(prior_sd)
    played = _played(games, n)
    if anchor is not None and not played[anchor]:
        raise ValueError(f"anchor: player {anchor} has no games")
    if not games:
        return np.zeros(n)
    pairs = _pairs(games)
    cnt, won = pairs.totals()
    x = _fit(pairs, cnt[None], won[None], n, prior_sd, np.zeros((1, n)))
    return _centre(x[0], played, anchor)


def bootstrap_ci(
    games: Sequence[Game],
    num_players: int,
    *,
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
    anchor: int | None = None,
    prior_sd: float = 1000.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap confidence intervals ``(low, high)`` of :func:`bradley_terry`'s ratings.

    Each of ``reps`` replicates resamples the game list with replacement (a tournament's games
    are the unit of sampling) and refits, warm-started from the point estimate; the bounds are
    the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of each player's replicates.
    A replicate in which a player has no games does not count for that player (and with an
    ``anchor`` who has none, not at all). Players without games, in the data or in every
    replicate, get NaN; the anchor's interval is [0, 0]. Deterministic for a ``seed``. All
    replicates are fitted in one L-BFGS-B run (they are independent, so the sum separates).
    """
    games, n = _check_games(games, num_players)
    anchor, prior_sd = _check_anchor(anchor, n), _check_prior(prior_sd)
    if isinstance(reps, bool) or not isinstance(reps, numbers.Integral) or reps < 1:
        raise ValueError(f"reps must be an integer >= 1, got {reps!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    nan = np.full(n, np.nan)
    if not games:
        return nan, nan.copy()
    if anchor is not None and not _played(games, n)[anchor]:
        raise ValueError(f"anchor: player {anchor} has no games")
    pairs = _pairs(games)
    cnt, won = pairs.totals()
    x0 = _fit(pairs, cnt[None], won[None], n, prior_sd, np.zeros((1, n)))
    rng = np.random.default_rng(seed)
    resampled = [pairs.totals(rng.integers(0, len(games), len(games))) for _ in range(reps)]
    cnt, won = np.stack([c for c, _ in resampled]), np.stack([w for _, w in resampled])
    xs = _fit(pairs, cnt, won, n, prior_sd, np.repeat(x0, reps, axis=0))
    out = np.full((reps, n), np.nan)
    for rep in range(reps):
        played = np.zeros(n, bool)
        met = cnt[rep] > 0
        played[pairs.i[met]] = played[pairs.j[met]] = True
        if anchor is None or played[anchor]:
            out[rep] = np.where(played, _centre(xs[rep], played, anchor), np.nan)
    q = 100.0 * np.array([(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    some = ~np.all(np.isnan(out), axis=0)
    low, high = nan.copy(), nan.copy()
    if some.any():
        low[some], high[some] = np.nanpercentile(out[:, some], q, axis=0)
    return low, high


# -------------------------------------------------------------------------------------- openskill


def _model(model: str) -> Any:
    from openskill.models import MODELS

    by_name = {m.__name__: m for m in MODELS}
    if model not in by_name:
        raise ValueError(f"unknown openskill model {model!r}; one of {sorted(by_name)}")
    return by_name[model]()


def rate_ffa(
    results: Sequence[Sequence[float]],
    num_players: int | None = None,
    *,
    seats: Sequence[Sequence[int]] | None = None,
    model: str = "PlackettLuce",
) -> list[tuple[float, float]]:
    """Weng–Lin ratings ``[(mu, sigma)]`` per player from n-player free-for-all games (``openskill``).

    ``results[g][k]`` is the score of seat ``k`` in game ``g`` (e.g. its return; higher is better;
    equal scores are ties). ``seats[g][k]`` is the player in that seat; without ``seats``, seat
    ``k`` is player ``k`` in every game. Games are rated one after another in the given order
    (the online update is order-dependent). ``model``: an ``openskill.models`` class name
    (PlackettLuce, BradleyTerryFull, ThurstoneMostellerFull, ...). Players without games keep the
    model's prior (mu 25, sigma 25/3).
    """
    if num_players is None:
        if seats is not None:
            raise ValueError("num_players is required with seats")
        num_players = len(results[0]) if len(results) else 1
    n = _check_num_players(num_players)
    if seats is not None and len(seats) != len(results):
        raise ValueError(f"seats has {len(seats)} games, results has {len(results)}")
    m = _model(model)
    ratings = [m.rating() for _ in range(n)]
    for g, scores in enumerate(results):
        who = list(range(len(scores))) if seats is None else seats[g]
        if len(who) != len(scores) or len(scores) < 2:
            raise ValueError(f"game {g}: needs >= 2 seats with one player each, got {len(scores)} scores")
        who = [_check_player(p, n, f"game {g}") for p in who]
        if len(set(who)) != len(who):
            raise ValueError(f"game {g}: a player sits in two seats ({who})")
        for s in scores:
            if isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s):
                raise ValueError(f"game {g}: score {s!r} is not a finite number")
        ranks = [float(sum(o > s for o in scores)) for s in scores]  # 0 = best; ties share a rank
        new = m.rate([[ratings[p]] for p in who], ranks=ranks)
        for p, (r,) in zip(who, new, strict=True):
            ratings[p] = r
    return [(float(r.mu), float(r.sigma)) for r in ratings]


def openskill_ratings(
    games: Sequence[Game], num_players: int, *, model: str = "PlackettLuce"
) -> list[tuple[float, float]]:
    """Weng–Lin ratings ``[(mu, sigma)]`` per player from two-player games, in the given order.

    A score above 0.5 is a win for ``a``, below 0.5 a win for ``b``, exactly 0.5 a draw (equal
    ranks); see :func:`rate_ffa`.
    """
    games, n = _check_games(games, num_players)
    return rate_ffa(
        [[g.score - 0.5, 0.5 - g.score] for g in games],
        n,
        seats=[[g.a, g.b] for g in games],
        model=model,
    )


# ------------------------------------------------------------------------------------ tabulation


def win_matrix(games: Sequence[Game], num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, counts)``, both ``[P, P]``: the mean score of the row player against the column
    player (NaN where they never met, so also on the diagonal) and the number of games they played."""
    games, n = _check_games(games, num_players)
    total, counts = np.zeros((n, n)), np.zeros((n, n), np.int64)
    for a, b, s in games:
        total[a, b] += s
        total[b, a] += 1.0 - s
        counts[a, b] += 1
        counts[b, a] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
    return scores, counts


def rate(
    games: Sequence[Game],
    labels: Sequence[str],
    *,
    reps: int = 200,
    level: float = 0.95,
    seed: int = 0,
    anchor: int | None = None,
    prior_sd: float = 1000.0,
    model: str = "PlackettLuce",
) -> list[dict[str, Any]]:
    """One row per player (``labels[i]`` is player ``i``), sorted by Elo, best first.

    Keys: ``player`` (index), ``label``, ``elo`` (:func:`bradley_terry`), ``ci_low``, ``ci_high``
    (:func:`bootstrap_ci` at ``level``), ``mu``, ``sigma`` (:func:`openskill_ratings`), ``games``,
    ``wins``, ``draws``, ``losses`` (a score above 0.5 is a win, 0.5 a draw, below a loss).
    """
    games, n = _check_games(games, len(labels))
    elo = bradley_terry(games, n, prior_sd=prior_sd, anchor=anchor)
    low, high = bootstrap_ci(games, n, reps=reps, level=level, seed=seed, anchor=anchor, prior_sd=prior_sd)
    skill = openskill_ratings(games, n, model=model)
    wdl = np.zeros((n, 3), np.int64)  # wins, draws, losses
    for a, b, s in games:
        col = 0 if s > 0.5 else 1 if s == 0.5 else 2
        wdl[a, col] += 1
        wdl[b, 2 - col] += 1
    rows = [
        {
            "player": i,
            "label": str(labels[i]),
            "elo": float(elo[i]),
            "ci_low": float(low[i]),
            "ci_high": float(high[i]),
            "mu": skill[i][0],
            "sigma": skill[i][1],
            "games": int(wdl[i].sum()),
            "wins": int(wdl[i, 0]),
            "draws": int(wdl[i, 1]),
            "losses": int(wdl[i, 2]),
        }
        for i in range(n)
    ]
    return sorted(rows, key=lambda r: -r["elo"])
