"""alem.arena.ratings: Bradley-Terry Elo with bootstrap CIs, openskill ratings, win matrix, the table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alem.arena.ratings import (
    Game,
    bootstrap_ci,
    bradley_terry,
    openskill_ratings,
    rate,
    rate_ffa,
    win_matrix,
)

FLAT = 1e7  # a prior this wide has no visible influence


def _simulated(true_elo, games: int, seed: int) -> list[Game]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        a, b = rng.choice(len(true_elo), 2, replace=False)
        p = 1.0 / (1.0 + 10.0 ** ((true_elo[b] - true_elo[a]) / 400.0))
        out.append(Game(int(a), int(b), float(rng.random() < p)))
    return out


def test_known_answers():
    three_of_four = [Game(0, 1, 1.0)] * 2 + [Game(1, 0, 0.0), Game(1, 0, 1.0)]
    r = bradley_terry(three_of_four, 2, prior_sd=FLAT)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert r.sum() == pytest.approx(0.0, abs=1e-9)
    # a draw is half a win: 2 wins + 2 draws of 4 is a 3:1 score too
    r2 = bradley_terry([Game(0, 1, 1.0)] * 2 + [Game(0, 1, 0.5)] * 2, 2, prior_sd=FLAT)
    assert r2[0] - r2[1] == pytest.approx(400 * math.log10(3), abs=1e-3)
    # symmetric results (each beats each other once, a cycle) and draws only: all equal
    cycle = [Game(a, b, 1.0) for a, b in [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)]]
    assert bradley_terry(cycle, 3, prior_sd=FLAT) == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    assert bradley_terry([Game(0, 1, 0.5)] * 5, 2) == pytest.approx([0.0, 0.0], abs=1e-6)
    # a player with no games gets 0 and is not in the mean; anchor shifts the others
    r3 = bradley_terry(three_of_four, 3, prior_sd=FLAT, anchor=1)
    assert r3 == pytest.approx([400 * math.log10(3), 0.0, 0.0], abs=1e-3)


def test_recovers_simulated_strengths_with_bootstrap_cis():
    true = np.array([0.0, 200.0, 400.0])
    games = _simulated(true, 3000, seed=0)
    r = bradley_terry(games, 3, anchor=0)
    assert list(np.argsort(r)) == [0, 1, 2]
    assert np.abs(r - true).max() < 40
    low, high = bootstrap_ci(games, 3, reps=200, anchor=0)
    assert np.all(low <= true) and np.all(true <= high), (low, high)
    assert np.all(low <= r) and np.all(r <= high)
    assert low[1] > 0 and low[2] > high[1]  # 200 points apart: the intervals do not overlap
    assert 0 < high[2] - low[2] < 100
    again = bootstrap_ci(games, 3, reps=200, anchor=0)
    assert np.array_equal(low, again[0]) and np.array_equal(high, again[1])  # deterministic
    other = bootstrap_ci(games, 3, reps=200, anchor=0, seed=1)
    assert not np.array_equal(low, other[0])
    narrow = bootstrap_ci(games, 3, reps=200, anchor=0, level=0.5)
    assert np.all(narrow[0][1:] > low[1:]) and np.all(narrow[1][1:] < high[1:])


def test_unbeaten_player_is_finite_and_on_top():
    games = [Game(0, 1, 1.0)] * 5 + [Game(2, 0, 0.0)] * 5 + [Game(1, 2, 1.0), Game(1, 2, 0.0)]
    r = bradley_terry(games, 3)
    assert np.all(np.isfinite(r)) and r[0] > max(r[1], r[2]) + 200
    assert bradley_terry(games, 3, anchor=0)[0] == 0.0
    low, high = bootstrap_ci(games, 3, reps=50)
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and low[0] > high[1] - 1e-9


def test_openskill_ratings():
    (mu0, s0), (mu1, s1), (mu2, s2) = openskill_ratings([Game(0, 1, 1.0), Game(1, 0, 0.0)] * 5, 3)
    assert mu0 > mu1 and s0 < s2 and s1 < s2
    assert (mu2, s2) == (25.0, pytest.approx(25 / 3))  # never played: the prior
    (d0, _), (d1, _) = openskill_ratings([Game(0, 1, 0.5)] * 5, 2)
    assert d0 == pytest.approx(d1)
    (b0, _), (b1, _) = openskill_ratings([Game(0, 1, 1.0)] * 5, 2, model="BradleyTerryFull")
    assert b0 > b1
    with pytest.raises(ValueError, match="unknown openskill model"):
        openskill_ratings([], 2, model="Elo")


def test_rate_ffa_orders_by_finishing_place():
    # seat k is player k; scores (higher is better): player 1 first, then 2, then 0
    mus = [mu for mu, _ in rate_ffa([[1.0, 5.0, 3.0]] * 6)]
    assert mus[1] > mus[2] > mus[0]
    # rotating seats: player 2 always wins whichever seat it is in, 0 always second
    seats = [[0, 1, 2], [2, 0, 1], [1, 2, 0]]
    scores = [[2.0, 1.0, 3.0], [3.0, 2.0, 1.0], [1.0, 3.0, 2.0]]
    mus = [mu for mu, _ in rate_ffa(scores * 3, 3, seats=seats * 3)]
    assert mus[2] > mus[0] > mus[1]
    tied = rate_ffa([[1.0, 1.0, 0.0]] * 4)
    assert tied[0][0] == pytest.approx(tied[1][0]) and tied[0][0] > tied[2][0]


def test_win_matrix():
    games = [Game(0, 1, 1.0), Game(1, 0, 0.5), Game(0, 1, 0.0), Game(2, 0, 1.0)]
    scores, counts = win_matrix(games, 4)
    assert counts.tolist() == [[0, 3, 1, 0], [3, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    assert scores[0, 1] == pytest.approx(1.5 / 3) and scores[1, 0] == pytest.approx(1.5 / 3)
    assert scores[0, 2] == 0.0 and scores[2, 0] == 1.0
    assert np.isnan(scores[1, 2]) and np.isnan(scores[3, 3]) and np.isnan(scores[0, 0])


def test_rate_table():
    games = [Game(0, 1, 1.0)] * 3 + [Game(1, 0, 0.5), Game(2, 1, 1.0), Game(2, 0, 0.0)]
    rows = rate(games, ["a", "b", "c"], reps=50)
    assert [r["label"] for r in rows] == ["a", "c", "b"]
    assert [r["elo"] for r in rows] == sorted((r["elo"] for r in rows), reverse=True)
    a = rows[0]
    assert (a["player"], a["games"], a["wins"], a["draws"], a["losses"]) == (0, 5, 4, 1, 0)
    b = rows[2]
    assert (b["games"], b["wins"], b["draws"], b["losses"]) == (5, 0, 1, 4)
    assert all(r["ci_low"] <= r["elo"] <= r["ci_high"] for r in rows)
    assert a["mu"] > b["mu"] and a["sigma"] > 0


@pytest.mark.parametrize(
    ("games", "num_players", "match"),
    [
        ([Game(0, 2, 1.0)], 2, r"game 0 \(b\): player index 2 is out of range"),
        ([Game(0, 1, 1.0), Game(-1, 1, 1.0)], 2, r"game 1 \(a\): player index -1 is out of range"),
        ([Game(0, 1, 1.5)], 2, r"game 0: score 1.5 is outside \[0, 1\]"),
        ([Game(0, 1, -0.1)], 2, r"score -0.1 is outside"),
        ([Game(0, 1, float("nan"))], 2, r"score nan is outside"),
        ([Game(1, 1, 1.0)], 2, "cannot play itself"),
        ([], 0, "num_players must be an integer >= 1, got 0"),
    ],
)
def test_bad_input(games, num_players, match):
    for fn in (bradley_terry, bootstrap_ci, openskill_ratings, win_matrix):
        with pytest.raises(ValueError, match=match):
            fn(games, num_players)


def test_bad_options():
    games = [Game(0, 1, 1.0)]
    with pytest.raises(ValueError, match="anchor: player index 5"):
        bradley_terry(games, 2, anchor=5)
    with pytest.raises(ValueError, match="anchor: player 2 has no games"):
        bradley_terry(games, 3, anchor=2)
    with pytest.raises(ValueError, match="prior_sd"):
        bradley_terry(games, 2, prior_sd=0.0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(games, 2, level=1.0)
    with pytest.raises(ValueError, match="reps"):
        bootstrap_ci(games, 2, reps=0)
    with pytest.raises(ValueError, match="a player sits in two seats"):
        rate_ffa([[1.0, 2.0]], 3, seats=[[1, 1]])
    with pytest.raises(ValueError, match=r"game 0: player index 3 is out of range"):
        rate_ffa([[1.0, 2.0]], 3, seats=[[0, 3]])
    with pytest.raises(ValueError, match="needs >= 2 seats"):
        rate_ffa([[1.0]])
    with pytest.raises(ValueError, match="num_players must be"):
        rate([], [])
