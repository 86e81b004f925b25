"""The mcts player (alem/search/mcts.py): legal moves, immediate wins and blocks, jit and vmap,
and (exhaustive) its strength against random at tic-tac-toe and greedy at connect four."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.board import play_games
from alem.players import Turn, make_player, player_names
from alem.search.mcts import MCTSPlayer, _score

pytest.importorskip("mctx")

TTT = alem.make("tic_tac_toe-v0")
C4 = alem.make("connect_four-v0")
BARGAINING = alem.make("bargaining-v0")


def positions(env, games):
    """A batch ``[B]`` of (state, timestep) after each fixed move sequence."""
    out = []
    for moves in games:
        state, ts = env.reset(jax.random.key(0))
        for a in moves:
            state, ts = env.step(jax.random.key(0), state, jnp.array([a, a]))
        out.append((state, ts))
    return jax.tree.map(lambda *x: jnp.stack(x), *out)


def turn(env, batch, agent):
    state, ts = batch
    return Turn(
        env, env.default_params, agent, state, ts, ts.acting[:, agent], jnp.arange(ts.reward.shape[0])
    )


# (moves so far, the moves a good player must choose from): the mover wins at once, or must block.
# O moves next in every position (one seat: one compiled search per game).
TTT_O = [([4, 0, 8, 1, 6], {2}), ([0, 4, 1], {2}), ([8, 4, 6], {7}), ([4, 2, 5], {3})]  # O wins; O blocks
C4_O = [([6, 0, 6, 0, 5, 0, 2], {0}), ([0, 6, 0, 6, 0], {0}), ([0, 6, 1, 6, 2], {3})]  # O wins; O blocks


@pytest.mark.parametrize(
    "env,games",
    [(TTT, TTT_O), pytest.param(C4, C4_O, marks=pytest.mark.exhaustive)],
    ids=["tic_tac_toe", "connect_four"],
)
def test_takes_an_immediate_win_and_blocks_an_immediate_loss(env, games):
    player = make_player("mcts", env)  # the defaults: 100 simulations, 16 playouts per leaf
    batch = positions(env, [moves for moves, _ in games])
    chosen = np.asarray(jax.jit(lambda k, b: player.act(k, turn(env, b, 1)))(jax.random.key(0), batch))
    assert [int(c) in good for c, (_, good) in zip(chosen, games, strict=True)] == [True] * len(games), chosen


@pytest.mark.exhaustive  # another compiled search (~14 s); the default tier keeps one
def test_plays_legal_moves_row_by_row_under_vmap():
    """Positions at several depths, one row at a time under ``vmap`` (``B = 1`` per row, as the
    evaluator's lock-step loop calls a device player): only legal moves, and a finished row (no
    legal move) does not break the batch. The jitted batch ``[B]`` path is the test above."""
    player = MCTSPlayer(TTT, num_simulations=16, rollout_steps=0)  # a small program: no playouts
    games = [[4, 0, 8], [0], [0, 1, 2, 4, 3, 5, 7], [4, 0, 8, 1, 6], [0, 1, 3, 4, 6]]  # the last: X won
    state, ts = positions(TTT, games)

    def one(k, st, t):
        row = jax.tree.map(lambda x: x[None], (st, t))
        return player.act(k, turn(TTT, row, 1))[0]

    picked = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(7), len(games)), state, ts))
    mask, active = np.asarray(ts.action_mask[:, 1]), np.asarray(ts.acting[:, 1])
    assert active.tolist() == [True, True, True, True, False]
    assert all(mask[i, picked[i]] for i in range(4))


def test_registered_with_its_budget_and_refuses_bad_settings():
    for env in (TTT, C4, BARGAINING):
        assert "mcts" in player_names(env)
        p = make_player("mcts", env, num_simulations=7, rollout_steps=0)
        assert isinstance(p, MCTSPlayer) and p.num_simulations == 7 and p.rollout_steps == 0
    assert make_player("mcts", TTT).num_simulations == 100
    for bad in ({"num_simulations": 0}, {"num_rollouts": 0}, {"rollout_steps": -1}, {"pb_c_init": 0.0}):
        with pytest.raises(alem.EnvArgumentError):
            MCTSPlayer(TTT, **bad)
    with pytest.raises(alem.EnvArgumentError, match="turn-based"):
        MCTSPlayer(alem.make("iterated_prisoners_dilemma-v0"))
    with pytest.raises(alem.EnvArgumentError, match="objective"):
        MCTSPlayer(TTT, objective="theirs")
    # Zero-sum games search the seat's own return; bargaining (general-sum) its margin.
    assert make_player("mcts", TTT).objective == "own"
    assert make_player("mcts", BARGAINING).objective == "margin"
    assert make_player("mcts", BARGAINING, objective="own").objective == "own"


def test_margin_scores_the_root_seat_against_the_mean_of_the_others():
    reward = jnp.array([[3.0, 1.0, 2.0], [0.0, 4.0, 0.0]])
    np.testing.assert_allclose(_score(reward, 0, "own"), [3.0, 0.0])
    np.testing.assert_allclose(_score(reward, 0, "margin"), [3.0 - 1.5, 0.0 - 2.0])
    np.testing.assert_allclose(_score(reward[:, :2], 1, "margin"), [1.0 - 3.0, 4.0])


@pytest.mark.exhaustive
def test_never_loses_to_random_at_tic_tac_toe_from_both_seats():
    """150 games per seat at 100 simulations (about 20 s per seat on 2 cores)."""
    best, rnd = make_player("mcts", TTT), make_player("random", TTT)
    run = jax.jit(lambda k, a, b: play_games(TTT, [a, b], k, 150), static_argnums=(1, 2))
    as_x = np.asarray(run(jax.random.key(0), best, rnd))
    as_o = np.asarray(run(jax.random.key(1), rnd, best))
    assert (as_x[:, 0] < 0).sum() == 0 and (as_o[:, 1] < 0).sum() == 0
    assert (as_x[:, 0] > 0).mean() > 0.9 and (as_o[:, 1] > 0).mean() > 0.8


@pytest.mark.exhaustive
def test_beats_greedy_at_connect_four_from_both_seats():
    """50 games per seat at 100 simulations against the one-ply greedy player (measured over 100
    games per seat: 99% wins as X, 86% as O; about 75 s per seat on 2 cores)."""
    best, greedy = make_player("mcts", C4), make_player("greedy", C4)
    run = jax.jit(lambda k, a, b: play_games(C4, [a, b], k, 50), static_argnums=(1, 2))
    as_x = np.asarray(run(jax.random.key(0), best, greedy))
    as_o = np.asarray(run(jax.random.key(1), greedy, best))
    assert (as_x[:, 0] > 0).mean() > 0.75 and (as_o[:, 1] > 0).mean() > 0.7


@pytest.mark.exhaustive
def test_outscores_random_at_bargaining_from_both_seats():
    """30 deals per seat at 100 simulations (the margin objective; about 15 s per seat on 2 cores):
    the search scores more than random does against it, and more than random scores against
    random on the same deals (measured over 100 deals: 6.6 and 7.3 points, random 2.7 and 2.5;
    random against random 2.0 and 1.8)."""
    best, rnd = make_player("mcts", BARGAINING), make_player("random", BARGAINING)
    moves = BARGAINING.max_turns + 1  # every offer, then "agree"
    run = jax.jit(
        lambda k, a, b: play_games(BARGAINING, [a, b], k, 30, max_moves=moves), static_argnums=(1, 2)
    )
    for seat, key in ((0, jax.random.key(0)), (1, jax.random.key(1))):
        pair = [best, rnd] if seat == 0 else [rnd, best]
        ret = np.asarray(run(key, *pair))
        base = np.asarray(run(key, rnd, rnd))  # the same deals (the reset keys), random in both seats
        assert ret[:, seat].mean() > ret[:, 1 - seat].mean() + 2.0
        assert ret[:, seat].mean() > base[:, seat].mean() + 2.0
