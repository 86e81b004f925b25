"""alem.arena.payoffs: the payoff matrix and its CIs, the pool payoff, Nash averaging, NRA."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from alem.arena.payoffs import nash_average, payoff_matrix, pool_payoff, relative_advantage

RPS = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


def test_the_matrix_pools_both_seatings_with_student_t_intervals():
    games = [(0, 1, 2.0, -2.0), (1, 0, 1.0, -1.0), (0, 1, -1.0, 1.0), (0, 2, 1.0, -1.0)]
    pm = payoff_matrix(games, 3)
    zero_vs_one = [2.0, -1.0, -1.0]  # player 0's returns against 1, from either seat
    assert pm["mean"][0, 1] == pytest.approx(np.mean(zero_vs_one))
    assert pm["mean"][1, 0] == pytest.approx(-np.mean(zero_vs_one))
    low, high = stats.t.interval(0.95, 2, loc=np.mean(zero_vs_one), scale=stats.sem(zero_vs_one))
    assert pm["ci95"][0, 1] == pytest.approx((high - low) / 2)
    assert pm["games"].tolist() == [[0, 3, 1], [3, 0, 0], [1, 0, 0]]
    assert np.isnan(pm["mean"][1, 2]) and np.isnan(pm["ci95"][0, 2])  # one game: no interval
    mean, half = pool_payoff(pm)
    assert mean[0] == pytest.approx((np.mean(zero_vs_one) + 1.0) / 2)  # each opponent weighs the same
    assert mean[2] == pytest.approx(-1.0) and np.isnan(half[2])


def test_nash_averaging_finds_the_cycle_the_top_dog_and_ignores_copies():
    p, skill = nash_average(RPS)
    np.testing.assert_allclose(p, [1 / 3] * 3, atol=1e-6)
    np.testing.assert_allclose(skill, 0.0, atol=1e-6)
    # Transitive: the best player takes all the weight and the rest are scored against it.
    p, skill = nash_average(np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0], [-2.0, -1.0, 0.0]]))
    np.testing.assert_allclose(p, [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(skill, [0, -1, -2], atol=1e-6)
    # A copy of scissors splits scissors' weight (maximum entropy) and changes nobody's skill:
    # the invariance Nash averaging is for; the uniform average over the pool moves.
    four = np.array([[0, 1, -1, -1], [-1, 0, 1, 1], [1, -1, 0, 0], [1, -1, 0, 0]], float)
    p, skill = nash_average(four)
    np.testing.assert_allclose(p, [1 / 3, 1 / 3, 1 / 6, 1 / 6], atol=1e-5)
    np.testing.assert_allclose(skill, 0.0, atol=1e-6)
    assert four[0].mean() < four[1].mean()  # the uniform average ranks rock below paper
    missing = RPS.copy()
    missing[0, 2] = np.nan
    assert nash_average(missing) is None


def test_relative_advantage_is_gain_over_stakes_in_minus_one_to_one():
    games = [(0, 1, 2.0, -2.0), (1, 0, 1.0, -1.0), (0, 1, 0.0, 0.0)]
    nra = relative_advantage(games, 3)
    # player 0 won 2 and lost 1 against 1: (1 - (-1)) / (3 + 3)
    assert nra[0, 1] == pytest.approx((1.0 - -1.0) / 6.0) and nra[1, 0] == pytest.approx(-nra[0, 1])
    assert np.isnan(nra[0, 2])
    assert relative_advantage([(0, 1, 0.0, 0.0)], 2)[0, 1] == 0.0
    assert relative_advantage([(0, 1, 3.0, 1.0)], 2)[0, 1] == pytest.approx(0.5)  # general-sum
