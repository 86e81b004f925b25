"""Connect four: gravity and full columns, the minimax player, text hooks.

Rules against OpenSpiel (random games, rows, columns, both diagonals, full-board
draw, win with the last piece), illegal moves and the turn contract:
tests/envs/games/test_board.py.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.board import play_games
from alem.envs.games.connect_four import MinimaxPlayer, greedy_player, search_values
from alem.players import make_player, player_names

pyspiel = pytest.importorskip("pyspiel")

ENV = alem.make("connect_four-v0")
RESET, STEP = jax.jit(ENV.reset), jax.jit(ENV.step)


def position(moves):
    state, ts = RESET(jax.random.key(0))
    for a in moves:
        state, ts = STEP(jax.random.key(0), state, jnp.array([a, a]))
    return state, ts


def test_pieces_fall_and_full_columns_close():
    state, ts = position([3, 3, 3])
    board = np.asarray(state.board).reshape(6, 7)
    assert board[5, 3] == 1 and board[4, 3] == 2 and board[3, 3] == 1 and (board != 0).sum() == 3
    state, ts = position([0] * 6)
    assert ts.action_mask[0].tolist() == [False] + [True] * 6
    st = pyspiel.load_game("connect_four").new_initial_state()
    for _ in range(6):
        st.apply_action(0)
    assert st.legal_actions() == list(range(1, 7))


# (moves so far, the columns a good player must choose from there)
WINS = [([0, 0, 1, 1, 2, 2], {3}), ([6, 0, 6, 0, 5, 0, 2], {0})]  # X's bottom row; O's column 1
BLOCKS = [([0, 6, 0, 6, 0], {0}), ([0, 6, 1, 6, 2], {3})]  # O stops X's column 1 / bottom row
# X with two in the bottom row (columns 3, 4): columns 2 or 5 make an open three, a win in 3 plies.
TRAPS = [([2, 6, 3, 6], {1, 4})]


@functools.cache
def best_columns(depth: int) -> list[set[int]]:
    """Columns of best search value, seen by the player to move, for every position above."""
    boards = []
    for moves, _ in WINS + BLOCKS + TRAPS:
        _, ts = position(moves)
        ego = np.asarray(ts.obs[len(moves) % 2])  # the mover's planes [6, 7, 3]
        boards.append((ego[..., 0] + 2 * ego[..., 1]).reshape(-1))
    q, _ = jax.jit(search_values, static_argnums=1)(jnp.asarray(np.stack(boards), jnp.int8), depth)
    q = np.asarray(q)
    return [set(np.flatnonzero(row == row.max()).tolist()) for row in q]


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_search_takes_an_immediate_win(depth):
    assert best_columns(depth)[: len(WINS)] == [cols for _, cols in WINS]


@pytest.mark.parametrize("depth", [2, 4])
def test_search_blocks_an_immediate_threat(depth):
    assert best_columns(depth)[len(WINS) : len(WINS) + len(BLOCKS)] == [cols for _, cols in BLOCKS]


def test_search_sees_a_forced_win_at_depth_4():
    assert best_columns(4)[-len(TRAPS) :] == [cols for _, cols in TRAPS]


@pytest.fixture(scope="module")
def vs_random():
    best, rnd = make_player("minimax", ENV), make_player("random", ENV)

    @jax.jit
    def run(key):
        k = jax.random.split(key)
        return play_games(ENV, [best, rnd], k[0], 20), play_games(ENV, [rnd, best], k[1], 20)

    return jax.device_get(run(jax.random.key(0)))


def test_minimax_beats_random_from_both_seats(vs_random):
    as_x, as_o = vs_random
    assert (as_x[:, 0] > 0).mean() >= 0.95 and (as_o[:, 1] > 0).mean() >= 0.95


@pytest.mark.exhaustive
def test_minimax_strength_many_games():
    best, rnd, greedy = make_player("minimax", ENV), make_player("random", ENV), make_player("greedy", ENV)
    run = jax.jit(lambda k, a, b, n: play_games(ENV, [a, b], k, n), static_argnums=(1, 2, 3))
    keys = jax.random.split(jax.random.key(1), 4)
    as_x = np.asarray(run(keys[0], best, rnd, 500))
    as_o = np.asarray(run(keys[1], rnd, best, 500))
    assert (as_x[:, 0] > 0).mean() >= 0.95 and (as_o[:, 1] > 0).mean() >= 0.95
    gx = np.asarray(run(keys[2], best, greedy, 200))
    go = np.asarray(run(keys[3], greedy, best, 200))
    assert (gx[:, 0] > 0).mean() > 0.6 and (go[:, 1] > 0).mean() > 0.6


def test_policies_registered():
    assert {"minimax", "greedy", "random"} <= set(player_names(ENV))
    assert make_player("minimax", ENV).depth == 4 and make_player("greedy", ENV).depth == 1
    assert isinstance(greedy_player(ENV), MinimaxPlayer)
    with pytest.raises(alem.EnvArgumentError, match="depth"):
        MinimaxPlayer(ENV, depth=0)


@pytest.mark.parametrize(
    "text,index",
    [
        ("column 1", 0),
        ("Column 7", 6),
        ("3", 2),  # a bare number is a column number 1-7
        ("c3", 2),
        ("col 4", 3),
        ("column4", 3),
        ("I drop my piece in column 5.", 4),
        ("action 2", 2),  # an explicit index
        ("0", None),
        ("8", None),
        ("column 3 or column 4", None),
        ("left", None),
    ],
)
def test_parse_action(text, index):
    assert ENV.parse_action(text) == index


def test_render_text_and_names():
    assert ENV.action_names() == [f"column {c}" for c in range(1, 8)]
    state, _ = position([3, 3, 0])
    text = ENV.render_text(state, agent=1)
    lines = text.splitlines()
    assert " 1 2 3 4 5 6 7" in lines
    assert "|X . . X . . .|" in lines and "|. . . O . . .|" in lines
    assert "You are player 1 and play O" in text and "It is your turn." in text
    state, _ = position([0] * 6)
    assert ENV.legal_action_names(state, 0) == [f"column {c}" for c in range(2, 8)]
    assert "Columns are numbered 1 to 7" in ENV.rules_text(agent=0)
