"""Tic-tac-toe: the perfect player against an independent solver and in play; text hooks.

Rules against OpenSpiel, illegal moves and the turn contract: tests/envs/games/test_board.py.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.board import play_games
from alem.envs.games.tic_tac_toe import MinimaxPlayer, best_moves, value_table
from alem.players import Player, RandomPlayer, make_player, player_names

pyspiel = pytest.importorskip("pyspiel")


@functools.cache
def solved() -> dict[str, tuple[float, set[int], np.ndarray]]:
    """Every reachable non-terminal position, solved by plain negamax over OpenSpiel states.

    Maps the board string to (value for the player to move, optimal actions, the
    mover's ego planes [3, 3, 3] built from the OpenSpiel board).
    """
    game = pyspiel.load_game("tic_tac_toe")
    memo: dict[str, float] = {}
    out: dict[str, tuple[float, set[int], np.ndarray]] = {}

    def negamax(st) -> float:
        key = str(st)
        if key in memo:
            return memo[key]
        if st.is_terminal():
            v = st.returns()[st.move_number() % 2]  # value for the player who would move next
        else:
            q = {}
            for a in st.legal_actions():
                child = st.child(a)
                q[a] = -negamax(child)
            v = max(q.values())
            cells = np.array([ch for ch in key if ch in ".xo"]).reshape(3, 3)
            me, them = ("x", "o") if st.current_player() == 0 else ("o", "x")
            planes = np.stack([cells == me, cells == them, cells == "."], -1).astype(np.float32)
            out[key] = (v, {a for a, x in q.items() if x == v}, planes)
        memo[key] = v
        return v

    assert negamax(game.new_initial_state()) == 0.0  # tic-tac-toe is a draw
    return out


def test_value_table_and_moves_are_optimal_in_every_position():
    positions = solved()
    assert len(positions) == 4520  # reachable non-terminal positions
    obs = jnp.asarray(np.stack([p[2] for p in positions.values()]))
    table = jnp.asarray(value_table())
    chosen = np.asarray(jax.jit(best_moves)(obs, table))
    pow3 = 3 ** np.arange(9)
    for (value, optimal, planes), ours in zip(positions.values(), chosen, strict=True):
        picks = set(np.flatnonzero(ours).tolist())
        assert picks and picks <= optimal
        ego = (planes[..., 0] + 2 * planes[..., 1]).reshape(-1).astype(int)
        assert np.sign(value_table()[ego @ pow3]) == value


class Mixed(Player):
    """Plays ``first`` on the first ``n`` rows of the batch and ``rest`` on the others."""

    def __init__(self, first: Player, rest: Player, n: int):
        self.first, self.rest, self.n = first, rest, n

    def act(self, key, turn):
        ka, kb = jax.random.split(key)
        rows = jnp.arange(turn.active.shape[0]) < self.n
        return jnp.where(rows, self.first.act(ka, turn), self.rest.act(kb, turn))


@pytest.fixture(scope="module")
def match_results():
    """Rows 0-999: minimax as X vs random; 1000-1999: random vs minimax as O; 2000-2199: self-play.

    One batch, so one compiled program."""
    env = alem.make("tic_tac_toe-v0")
    best, rnd = make_player("minimax", env), make_player("random", env)
    seat0 = Mixed(best, Mixed(rnd, best, 2000), 1000)
    seat1 = Mixed(rnd, best, 1000)
    returns = jax.device_get(jax.jit(lambda k: play_games(env, [seat0, seat1], k, 2200))(jax.random.key(0)))
    return returns[:1000], returns[1000:2000], returns[2000:]


def test_perfect_player_never_loses_to_random(match_results):
    as_x, as_o, _ = match_results
    assert (as_x[:, 0] >= 0).all() and (as_o[:, 1] >= 0).all()
    # and it wins most games (random play stumbles into a draw now and then)
    assert (as_x[:, 0] > 0).mean() > 0.9 and (as_o[:, 1] > 0).mean() > 0.7
    assert (as_x.sum(1) == 0).all()  # zero-sum


def test_perfect_player_draws_against_itself(match_results):
    self_play = match_results[2]
    assert (self_play == 0).all()


def test_perfect_player_takes_the_fastest_win_and_keeps_every_optimal_move():
    env = alem.make("tic_tac_toe-v0")
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    cases = [
        ([0, 3, 1, 4], {2}),  # X completes the top row (blocking at c2 would also still win, later)
        ([0, 4, 8], {1, 3, 5, 7}),  # O must take an edge: a corner loses
        ([4, 0, 8], {2, 6}),  # O must take a corner: an edge loses
    ]
    obs = []
    for moves, _ in cases:
        state, ts = reset(jax.random.key(0))
        for a in moves:
            state, ts = step(jax.random.key(0), state, jnp.array([a, a]))
        obs.append(ts.obs[len(moves) % 2])
    best = np.asarray(jax.jit(best_moves)(jnp.stack(obs), jnp.asarray(value_table())))
    assert [set(np.flatnonzero(row).tolist()) for row in best] == [cols for _, cols in cases]


def test_policies_registered():
    env = alem.make("tic_tac_toe-v0")
    assert {"minimax", "random"} <= set(player_names(env))
    assert isinstance(make_player("minimax", env), MinimaxPlayer)
    assert isinstance(make_player("random", env), RandomPlayer)


@pytest.mark.parametrize(
    "text,index",
    [
        ("a1", 0),
        ("B2", 4),
        ("c3", 8),
        ("top left", 0),
        ("top-right", 2),
        ("I'll take the bottom right corner.", 8),
        ("center", 4),
        ("the middle", 4),
        ("middle left", 3),
        ("I play the middle left cell", 3),
        ("bottom center", 7),
        ("1a", 0),
        ("row 3 column 1", 6),
        ("r2c3", 5),
        ("x(1,2)", 5),
        ("4", 4),  # a bare number is the action index (reading order)
        ("a1 or c3", None),
        ("pass", None),
        ("9", None),
    ],
)
def test_parse_action(text, index):
    assert alem.make("tic_tac_toe-v0").parse_action(text) == index


def test_render_text_and_names():
    env = alem.make("tic_tac_toe-v0")
    assert env.action_names() == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    state, _ = jax.jit(env.reset)(jax.random.key(0))
    for a in (4, 0):
        state, _ = jax.jit(env.step)(jax.random.key(0), state, jnp.array([a, a]))
    text = env.render_text(state, agent=0)
    assert "You are player 0 and play X" in text and "It is your turn." in text
    assert "1  O | . | ." in text and "2  . | X | ." in text
    assert "Waiting for player 0 (X)" in env.render_text(state, agent=1)
    assert env.legal_action_names(state, 0) == ["b1", "c1", "a2", "c2", "a3", "b3", "c3"]
    assert env.legal_action_names(state, 1) == []
    assert "b2" in env.rules_text(agent=1) and "You are player 1" in env.rules_text(agent=1)
