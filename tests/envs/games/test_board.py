"""Tic-tac-toe and connect four against OpenSpiel, move by move, and the shared board-game contract.

Our action indices are OpenSpiel's (tic-tac-toe: cell row * 3 + col, row 0 on top;
connect four: column 0..6), so the index mapping below is the identity; it is
written out so a change of numbering on either side shows up here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.rollout import random_legal_actions

pyspiel = pytest.importorskip("pyspiel")

GAMES = {"tic_tac_toe-v0": "tic_tac_toe", "connect_four-v0": "connect_four"}
#: our action index -> OpenSpiel action id
TO_OPENSPIEL = {"tic_tac_toe-v0": np.arange(9), "connect_four-v0": np.arange(7)}

# Hand-picked games: (moves, expected returns of player 0 and 1), all also checked against OpenSpiel.
SEQUENCES = {
    "tic_tac_toe-v0": [
        ([0, 1, 2, 4, 3, 5, 7, 6, 8], (0, 0)),  # full board, no line: draw
        ([0, 1, 2, 3, 4, 5, 7, 6, 8], (1, -1)),  # X completes the 0-4-8 diagonal with the ninth mark
        ([0, 3, 1, 4, 2], (1, -1)),  # top row
        ([0, 1, 3, 2, 6], (1, -1)),  # left column
        ([1, 2, 0, 4, 3, 6], (-1, 1)),  # O on the anti-diagonal 2-4-6
        ([4, 0, 1, 8, 7], (1, -1)),  # middle column
    ],
    "connect_four-v0": [
        ([0, 0, 1, 1, 2, 2, 3], (1, -1)),  # bottom row
        ([0, 1, 0, 1, 0, 1, 0], (1, -1)),  # column
        ([0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3], (1, -1)),  # diagonal up to the right
        ([6, 5, 5, 4, 4, 3, 4, 3, 3, 1, 3], (1, -1)),  # diagonal up to the left
        ([6, 0, 6, 1, 5, 2, 5, 3], (-1, 1)),  # O wins a row
        # full board without four in a row: draw
        (
            [1, 6, 4, 1, 4, 1, 6, 6, 1, 3, 2, 6, 6, 0, 5, 6, 2, 2, 1, 1, 0]
            + [3, 0, 5, 0, 5, 4, 4, 5, 2, 3, 5, 3, 3, 5, 4, 2, 0, 2, 3, 4, 0],
            (0, 0),
        ),
        # the 42nd piece makes four: a win, not a draw
        (
            [5, 0, 2, 5, 1, 4, 1, 0, 2, 4, 5, 2, 6, 2, 3, 5, 6, 2, 4, 5, 1]
            + [4, 0, 1, 3, 5, 4, 6, 1, 3, 3, 3, 1, 0, 0, 4, 2, 3, 6, 0, 6, 6],
            (-1, 1),
        ),
    ],
}

_JIT: dict = {}


def jitted(env_id: str, illegal_action: str = "replace"):
    """(env, reset, step) with compiled reset/step, shared across tests."""
    key = (env_id, illegal_action)
    if key not in _JIT:
        env = alem.make(env_id, illegal_action=illegal_action)
        _JIT[key] = (env, jax.jit(env.reset), jax.jit(env.step))
    return _JIT[key]


def play(env_id: str, moves, illegal_action: str = "replace"):
    """States and timesteps along ``moves`` (both agents' entries carry the move; one is ignored)."""
    env, reset, step = jitted(env_id, illegal_action)
    state, ts = reset(jax.random.key(0))
    out = [(state, ts)]
    for a in moves:
        state, ts = step(jax.random.key(1), state, jnp.array([a, a], jnp.int32))
        out.append((state, ts))
    return out


def random_trajectories(env_id: str, num: int, seed: int):
    """``num`` random legal games in one jitted vmapped scan; host arrays ``[T, num, ...]``."""
    key = ("traj", env_id)
    if key not in _JIT:
        env = alem.make(env_id)

        def run(key, num):
            s, ts = jax.vmap(env.reset)(jax.random.split(key, num))

            def body(carry, k):
                s, ts = carry
                ka, ks = jax.random.split(k)
                a = random_legal_actions(ka, ts.action_mask)
                s2, ts2 = jax.vmap(env.step)(jax.random.split(ks, num), s, a)
                rec = (ts.action_mask, ts.acting, a, ts2.terminated, ts2.reward, ts2.info["illegal_action"])
                return (s2, ts2), rec

            return jax.lax.scan(body, (s, ts), jax.random.split(key, env.num_cells))[1]

        _JIT[key] = jax.jit(run, static_argnums=1)
    return jax.device_get(_JIT[key](jax.random.key(seed), num))


def replay_in_openspiel(env_id: str, num: int, seed: int) -> int:
    """Assert the lock-step agreement of ``num`` random games; returns the number of moves checked."""
    game = pyspiel.load_game(GAMES[env_id])
    to_os = TO_OPENSPIEL[env_id]
    mask, acting, act, term, reward, illegal = random_trajectories(env_id, num, seed)
    assert not illegal.any()
    checked = 0
    for b in range(num):
        st = game.new_initial_state()
        ret = np.zeros(2)
        for t in range(mask.shape[0]):
            if st.is_terminal():
                assert not acting[t, b].any() and not mask[t, b].any(), (b, t)
                assert reward[t, b].tolist() == [0.0, 0.0]
                continue
            p = st.current_player()
            assert acting[t, b].tolist() == [p == 0, p == 1], (b, t)
            ours = sorted(to_os[np.flatnonzero(mask[t, b, p])].tolist())
            assert ours == st.legal_actions(), (b, t)
            assert not mask[t, b, 1 - p].any()
            st.apply_action(int(to_os[act[t, b, p]]))
            ret += reward[t, b]
            checked += 1
            assert bool(term[t, b]) == st.is_terminal(), (b, t)
        assert st.is_terminal()
        assert ret.tolist() == st.returns(), b
    return checked


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_random_games_match_openspiel(env_id):
    assert replay_in_openspiel(env_id, 256, seed=0) > 256 * 5


@pytest.mark.exhaustive
@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_many_random_games_match_openspiel(env_id):
    for seed in range(1, 5):
        replay_in_openspiel(env_id, 2000, seed=seed)


@pytest.mark.parametrize(
    "env_id,moves,returns", [(e, m, r) for e, cases in SEQUENCES.items() for m, r in cases]
)
def test_hand_picked_games(env_id, moves, returns):
    st = pyspiel.load_game(GAMES[env_id]).new_initial_state()
    steps = play(env_id, moves)
    for i, a in enumerate(moves):
        assert not st.is_terminal()
        st.apply_action(int(TO_OPENSPIEL[env_id][a]))
        _, ts = steps[i + 1]
        assert bool(ts.terminated) == st.is_terminal() == (i == len(moves) - 1)
        assert not bool(ts.info["illegal_action"].any())
    assert tuple(st.returns()) == returns
    assert tuple(np.asarray(steps[-1][1].reward).tolist()) == returns
    state = steps[-1][0]
    assert int(state.winner) == {(0, 0): -1, (1, -1): 0, (-1, 1): 1}[returns]


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_turns_masks_and_ego_observation(env_id):
    steps = play(env_id, [2, 0])
    env = jitted(env_id)[0]
    for t, (_, ts) in enumerate(steps):
        mover = t % 2
        assert ts.acting.tolist() == [mover == 0, mover == 1]
        assert not ts.action_mask[1 - mover].any() and ts.action_mask[mover].any()
    state, ts = steps[2]
    board = np.asarray(state.board)
    # X (player 0) played first, O second; each player sees its own pieces in plane 0.
    obs = np.asarray(ts.obs).reshape(2, -1, 3)
    np.testing.assert_array_equal(obs[0, :, 0], board == 1)
    np.testing.assert_array_equal(obs[0, :, 1], board == 2)
    np.testing.assert_array_equal(obs[1, :, 0], board == 2)
    np.testing.assert_array_equal(obs[1, :, 1], board == 1)
    np.testing.assert_array_equal(obs[:, :, 2], np.broadcast_to(board == 0, (2, env.num_cells)))
    assert obs.sum() == 2 * env.num_cells


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_waiting_players_action_is_ignored(env_id):
    env, _, step = jitted(env_id)
    state, ts = play(env_id, [1])[-1]  # player 1 to move
    outcomes = []
    for other in (-5, 0, 1, env.num_actions - 1, 99):
        s2, ts2 = step(jax.random.key(1), state, jnp.array([other, 2], jnp.int32))
        assert not bool(ts2.info["illegal_action"].any())
        outcomes.append((np.asarray(s2.board), np.asarray(ts2.obs)))
    for board, obs in outcomes[1:]:
        np.testing.assert_array_equal(board, outcomes[0][0])
        np.testing.assert_array_equal(obs, outcomes[0][1])
    # the random sampler gives the waiting player action 0 and the mover a legal move
    acts = random_legal_actions(jax.random.key(3), ts.action_mask)
    assert int(acts[0]) == 0 and bool(ts.action_mask[1, acts[1]])


def _full_spot(env_id: str) -> tuple[list[int], int]:
    """A position (moves) and an illegal move in it for player 0: an occupied cell / a full column."""
    return ([4, 0], 4) if env_id == "tic_tac_toe-v0" else ([0] * 6, 0)


@pytest.mark.parametrize("env_id", sorted(GAMES))
@pytest.mark.parametrize("kind", ["occupied", "too_large", "negative"])
def test_illegal_move_replaced_by_first_legal(env_id, kind):
    env, _, step = jitted(env_id)
    moves, occupied = _full_spot(env_id)
    state, ts = play(env_id, moves)[-1]
    bad = {"occupied": occupied, "too_large": env.num_actions + 5, "negative": -3}[kind]
    first = int(np.argmax(np.asarray(ts.action_mask[0])))
    assert first != bad
    s_bad, ts_bad = step(jax.random.key(1), state, jnp.array([bad, 0], jnp.int32))
    s_ok, ts_ok = step(jax.random.key(1), state, jnp.array([first, 0], jnp.int32))
    assert ts_bad.info["illegal_action"].tolist() == [True, False]
    for x, y in zip(jax.tree.leaves(s_bad), jax.tree.leaves(s_ok), strict=True):
        np.testing.assert_array_equal(x, y)
    board = np.asarray(s_bad.board)
    assert set(np.unique(board)) <= {0, 1, 2} and (board != 0).sum() == len(moves) + 1


@pytest.mark.parametrize("env_id", sorted(GAMES))
@pytest.mark.parametrize("kind", ["occupied", "too_large", "negative"])
def test_illegal_move_loses_in_lose_mode(env_id, kind):
    env, _, step = jitted(env_id, "lose")
    moves, occupied = _full_spot(env_id)
    state, ts = play(env_id, moves, "lose")[-1]
    bad = {"occupied": occupied, "too_large": env.num_actions + 5, "negative": -3}[kind]
    s2, ts2 = step(jax.random.key(1), state, jnp.array([bad, 0], jnp.int32))
    assert bool(ts2.terminated) and not bool(ts2.truncated)
    assert ts2.reward.tolist() == [-1.0, 1.0]
    assert ts2.info["illegal_action"].tolist() == [True, False]
    assert not ts2.acting.any() and not ts2.action_mask.any()
    np.testing.assert_array_equal(s2.board, state.board)  # the illegal move left no piece
    assert int(s2.winner) == 1 and int(s2.num_moves) == len(moves)
    # a finished game does not move on
    s3, ts3 = step(jax.random.key(2), s2, jnp.array([1, 1], jnp.int32))
    np.testing.assert_array_equal(s3.board, s2.board)
    assert ts3.reward.tolist() == [0.0, 0.0] and bool(ts3.terminated)
    # a legal move in lose mode is an ordinary move
    s4, ts4 = step(jax.random.key(1), state, jnp.array([1, 0], jnp.int32))
    assert not bool(ts4.terminated) and int(s4.num_moves) == len(moves) + 1


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_lose_mode_player_one(env_id):
    """The loser is whoever moved, here player 1."""
    env, _, step = jitted(env_id, "lose")
    state, _ = play(env_id, [1], "lose")[-1]
    _, ts = step(jax.random.key(1), state, jnp.array([0, 1], jnp.int32))  # player 1 picks an occupied spot
    occupied = env_id == "tic_tac_toe-v0"
    if occupied:
        assert ts.reward.tolist() == [1.0, -1.0] and bool(ts.terminated)
    else:  # column 1 holds one piece: legal
        assert not bool(ts.terminated)


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_unknown_illegal_mode_is_rejected(env_id):
    with pytest.raises(alem.EnvArgumentError, match="illegal_action"):
        alem.make(env_id, illegal_action="forfeit")


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_render_rgb_shows_pieces(env_id):
    env = jitted(env_id)[0]
    state, _ = play(env_id, [1, 2])[-1]
    empty_img = env.render_rgb(play(env_id, [])[0][0])
    img = env.render_rgb(state)
    assert img.dtype == np.uint8 and img.shape == empty_img.shape and img.shape[2] == 3
    cell = img.shape[0] // env.height
    changed = np.argwhere((img != empty_img).any(-1)) // cell
    cells = {int(r) * env.width + int(c) for r, c in changed}
    board = np.asarray(state.board)
    assert cells == set(np.flatnonzero(board).tolist())
