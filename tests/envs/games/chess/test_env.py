"""The chess env around the rules: observations (planes and board), the turn contract, illegal
moves under both modes, truncation, constructor arguments."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.chess import Chess
from alem.envs.games.chess.env import ChessParams

E2E4 = E7E5 = 2426  # ids are seen from the mover's side: black's e7e5 is white's e2e4


@pytest.fixture(scope="module")
def planes():
    env = Chess(history=2)
    return env, jax.jit(env.step)


def _after(env, step, actions):
    state, ts = env.reset(jax.random.key(0))
    for a in actions:
        state, ts = step(jax.random.key(0), state, jnp.array([a, a]))
    return state, ts


def test_planes_show_each_agent_its_own_pieces_first_from_its_side(planes):
    env, step = planes
    state, ts = _after(env, step, [E2E4])
    obs = np.asarray(ts.obs)
    assert obs.shape == (2, 8, 8, 14 * 2 + 23) == env.observation_space().shape
    white, black = obs[0], obs[1]
    # [rank, file, plane]: white's pawns on its rank 2 but e2, and on e4; black sees them as rank 7/5.
    assert white[1, :, 0].tolist() == [True] * 4 + [False] + [True] * 3 and white[3, 4, 0]
    assert black[6, :, 6].tolist() == white[1, :, 0].tolist() and black[4, 4, 6]
    assert black[1, :, 0].all() and white[6, :, 6].all()  # black's own pawns, unmoved
    assert white[0, 4, 5] and black[0, 4, 5]  # each king on its own first rank, e-file
    # The previous position (history 2): white's e-pawn still on e2.
    assert white[1, 4, 14] and not white[3, 4, 14]
    flags = obs[:, 0, 0, 28:]
    assert flags[:, 0].tolist() == [False, True]  # plays black
    assert flags[:, 1].tolist() == [False, True]  # to move
    assert flags[:, 2:6].all()  # every castling right
    assert not flags[:, 6:13].any()  # half-move clock 0 (a pawn moved)
    assert flags[:, 13:23].tolist() == [[True] + [False] * 9] * 2  # full-move number 1


def test_planes_count_repetitions_and_the_clock(planes):
    env, step = planes
    spiel = pytest.importorskip("pyspiel").load_game("chess").new_initial_state()
    ids = []
    for san in ["Nf3", "Nf6", "Ng1", "Ng8"]:
        (a,) = [a for a in spiel.legal_actions() if spiel.action_to_string(a) == san]
        spiel.apply_action(a)
        ids.append(a)
    state, ts = _after(env, step, ids)
    assert int(state.repetitions) == 1 and not bool(state.terminated)
    obs = np.asarray(ts.obs)
    assert obs[:, :, :, 12].all() and not obs[:, :, :, 13].any()  # seen once before, not twice
    clock = obs[0, 0, 0, 28 + 6 : 28 + 13]
    assert clock.tolist() == [False, False, True, False, False, False, False]  # 4 plies


def test_board_observation_is_signed_piece_codes_per_side():
    env = Chess(observation="board")
    state, ts = env.reset(jax.random.key(0))
    obs = np.asarray(ts.obs)
    assert obs.shape == (2, 8, 8) and obs.dtype == np.int8
    assert obs[0, 0].tolist() == [4, 2, 3, 5, 6, 3, 2, 4] and (obs[0, 7] == -obs[0, 0]).all()
    np.testing.assert_array_equal(obs[0], obs[1])  # the start looks the same from both sides


def test_turn_contract_and_the_waiting_row(planes):
    env, step = planes
    state, ts = _after(env, step, [E2E4])
    assert ts.acting.tolist() == [False, True]
    assert not ts.action_mask[0].any() and int(ts.action_mask[1].sum()) == 20
    # The waiting player's action is ignored; black's e7e5 is the same id as white's e2e4.
    state, ts = step(jax.random.key(0), state, jnp.array([0, E7E5]))
    assert (
        env.to_fen(state) == "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    )  # no white pawn beside e5: no square


def test_illegal_moves_replace_or_lose():
    lose = Chess(observation="board", illegal_action="lose")
    state, ts = lose.reset(jax.random.key(0))
    state2, ts2 = lose.step(jax.random.key(0), state, jnp.array([0, 0]))  # a1 "move": illegal
    assert bool(ts2.terminated) and ts2.reward.tolist() == [-1.0, 1.0]
    assert ts2.info["illegal_action"].tolist() == [True, False]
    assert lose.to_fen(state2) == lose.to_fen(state) and not ts2.acting.any()
    replace = Chess(observation="board")
    state, ts = replace.reset(jax.random.key(0))
    state2, ts2 = replace.step(jax.random.key(0), state, jnp.array([99_999, 0]))
    assert ts2.info["illegal_action"].tolist() == [True, False] and not bool(ts2.terminated)
    assert replace.uci(state, int(np.argmax(state.legal))) == "a2a3"
    assert replace.to_fen(state2).startswith("rnbqkbnr/pppppppp/8/8/8/P7/1PPPPPPP/")
    # Stepping a finished game changes nothing and pays nothing.
    mate = replace.from_fen("R6k/8/6K1/8/8/8/8/8 b - - 1 60")
    assert bool(mate.terminated) and int(mate.winner) == 0
    after, ts3 = replace.step(jax.random.key(0), mate, jnp.array([0, 0]))
    assert ts3.reward.tolist() == [0.0, 0.0] and replace.to_fen(after) == replace.to_fen(mate)


def test_truncation_after_max_steps_plies():
    env = Chess(observation="board")
    params = ChessParams(max_steps=2)
    state, ts = env.reset(jax.random.key(0), params)
    state, ts = env.step(jax.random.key(0), state, jnp.array([E2E4, 0]), params)
    assert not bool(ts.truncated)
    state, ts = env.step(jax.random.key(0), state, jnp.array([0, E7E5]), params)
    assert bool(ts.truncated) and not bool(ts.terminated)
    with pytest.raises(alem.EnvArgumentError, match="max_steps=0 is out of range"):
        env.reset(jax.random.key(0), ChessParams(max_steps=0))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"observation": "pixels"}, "observation='pixels'"),
        ({"history": 0}, "history=0"),
        ({"history": 2.5}, "history=2.5"),
        ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(alem.EnvArgumentError, match=match):
        Chess(**kwargs)
