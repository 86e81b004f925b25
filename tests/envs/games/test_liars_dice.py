"""Liar's dice: transition-by-transition exactness against OpenSpiel, bad input, text, rendering."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.liars_dice import LiarsDice, openspiel_action
from alem.errors import EnvArgumentError
from alem.rollout import random_legal_actions

pyspiel = pytest.importorskip("pyspiel")

# Written out here (not taken from the env) so names and numbering are checked independently.
FACES = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


def expected_name(q: int, f: int) -> str:
    return f"bid {q} {FACES[f - 1]}{'es' if q > 1 and f == 6 else 's' if q > 1 else ''}"


@functools.cache
def make_env(dice: int, sides: int = 6, illegal_action: str = "replace") -> LiarsDice:
    return alem.make("liars_dice-v0", dice_per_player=dice, dice_sides=sides, illegal_action=illegal_action)


@functools.cache
def jitted(dice: int, sides: int = 6, illegal_action: str = "replace"):
    """``(reset, step)`` of the env, jitted once per configuration and shared by the tests."""
    env = make_env(dice, sides, illegal_action)
    return jax.jit(env.reset), jax.jit(env.step)


@functools.cache
def openspiel_game(dice: int, sides: int = 6):
    return pyspiel.load_game("liars_dice", {"numdice": dice, "dice_sides": sides})


@functools.cache
def action_map(dice: int, sides: int = 6) -> np.ndarray:
    """alem action -> OpenSpiel action, built from OpenSpiel's action strings and our names."""
    env, game = make_env(dice, sides), openspiel_game(dice, sides)
    assert env.num_actions == game.num_distinct_actions()
    names = env.action_names()
    state = game.new_initial_state()
    for _ in range(2 * dice):
        state.apply_action(0)
    mapping = np.full(env.num_actions, -1)
    for os_action in range(game.num_distinct_actions()):
        text = state.action_to_string(0, os_action)
        if text == "Liar":
            ours = names.index("liar")
        else:
            q, f = map(int, text.split("-"))
            ours = names.index(expected_name(q, f))
        mapping[ours] = os_action
    assert sorted(mapping) == list(range(env.num_actions))
    return mapping


# -------------------------------------------------------------------------- trajectories

# Player styles (one per game, game index mod 4), so that rare cases appear in every batch:
UNIFORM, CREEP, CALL_AT_ONCE, TOP_FIRST = range(4)


@functools.cache
def rollout_fn(dice: int, sides: int, num_games: int):
    """Jitted: ``num_games`` games, vmapped, scanned to the maximum game length (no auto-reset)."""
    env = make_env(dice, sides)
    params = env.default_params
    a = env.num_actions
    liar = a - 1
    steps = a  # at most B bids and one call

    def policy(key, style, ts):
        k_uniform, k_u, k_junk = jax.random.split(key, 3)
        mask = ts.action_mask.any(0)  # the mover's legal moves (only one player has any)
        mover = jnp.argmax(ts.acting)
        uniform = random_legal_actions(k_uniform, ts.action_mask)[mover]
        bid_mask = mask.at[liar].set(False)
        lowest_bid = jnp.where(bid_mask.any(), jnp.argmax(bid_mask), liar)
        can_call = mask[liar]
        u = jax.random.uniform(k_u)
        choice = jnp.select(
            [style == CREEP, style == CALL_AT_ONCE, style == TOP_FIRST],
            [
                jnp.where(can_call & (u < 0.1), liar, lowest_bid),
                jnp.where(can_call, liar, uniform),
                jnp.where(can_call, uniform, liar - 1),
            ],
            uniform,
        )
        # The player not to move sends junk (out of range too); the env must ignore it.
        junk = jax.random.randint(k_junk, (2,), -3, a + 3)
        return jnp.where(ts.acting, choice, junk).astype(jnp.int32)

    def one_game(key, style):
        k_reset, k_run = jax.random.split(key)
        state, ts = env.reset(k_reset, params)

        def body(carry, k):
            state, ts = carry
            k_act, k_env = jax.random.split(k)
            actions = policy(k_act, style, ts)
            state, ts = env.step(k_env, state, actions, params)
            return (state, ts), (actions, state, ts)

        first = state
        _, (actions, states, traj) = jax.lax.scan(body, (state, ts), jax.random.split(k_run, steps))
        return first, ts, actions, states, traj

    return jax.jit(jax.vmap(one_game))


@functools.cache
def trajectories(dice: int, num_games: int, seed: int, sides: int = 6):
    keys = jax.random.split(jax.random.key(seed), num_games)
    styles = jnp.arange(num_games) % 4
    return jax.device_get(rollout_fn(dice, sides, num_games)(keys, styles))


def replay_in_openspiel(dice: int, num_games: int, seed: int, sides: int = 6) -> dict[str, int]:
    """Replay every game in OpenSpiel in lock step; assert equality; return coverage counts."""
    env = make_env(dice, sides)
    game = openspiel_game(dice, sides)
    to_os = action_map(dice, sides)
    liar = env.num_actions - 1
    first, ts0, actions, _, traj = trajectories(dice, num_games, seed, sides)
    rolls = first.dice
    seen = {"top_bid": 0, "immediate_liar": 0, "bid_true": 0, "bid_false": 0, "wild_decides": 0}

    def check(g: int, t: int | None, st) -> None:
        ts = ts0 if t is None else traj
        sel = (g,) if t is None else (g, t)
        where = f"game {g}, step {t}, history {st.history()}"
        terminal = st.is_terminal()
        assert bool(ts.terminated[sel]) == terminal, where
        assert not bool(ts.truncated[sel])
        for p in range(2):
            np.testing.assert_array_equal(ts.obs[sel][p], st.information_state_tensor(p), err_msg=where)
        if terminal:
            assert not ts.acting[sel].any() and not ts.action_mask[sel].any(), where
            return
        mover = st.current_player()
        assert ts.acting[sel].tolist() == [p == mover for p in range(2)], where
        ours = {int(to_os[j]) for j in np.flatnonzero(ts.action_mask[sel][mover])}
        assert ours == set(st.legal_actions()), where
        assert not ts.action_mask[sel][1 - mover].any(), where

    for g in range(num_games):
        st = game.new_initial_state()
        for p in range(2):
            for d in range(dice):
                assert st.is_chance_node()
                st.apply_action(int(rolls[g, p, d]) - 1)
        check(g, None, st)
        standing = None
        for t in range(actions.shape[1]):
            if st.is_terminal():  # finished games are absorbing
                assert traj.terminated[g, t] and not traj.reward[g, t].any()
                assert not traj.info["illegal_action"][g, t].any()
                continue
            mover = st.current_player()
            action = int(actions[g, t, mover])
            assert not traj.info["illegal_action"][g, t].any()
            if action == liar:
                q, f = standing
                all_dice = rolls[g].ravel()
                exact = int((all_dice == f).sum())
                wild = int((all_dice == sides).sum()) if f != sides else 0
                seen["immediate_liar"] += t == 1
                seen["bid_true" if exact + wild >= q else "bid_false"] += 1
                seen["wild_decides"] += (exact < q) and (exact + wild >= q)
            else:
                standing = action // sides + 1, action % sides + 1
            seen["top_bid"] += action == liar - 1
            st.apply_action(int(to_os[action]))
            check(g, t, st)
            expected = st.returns() if st.is_terminal() else [0.0, 0.0]
            np.testing.assert_array_equal(traj.reward[g, t], expected)
        assert st.is_terminal(), f"game {g} did not end within {actions.shape[1]} moves"
    return seen


def assert_covered(seen: dict[str, int]) -> None:
    for case, count in seen.items():
        assert count > 0, f"no trajectory covered {case}: {seen}"


def test_action_numbering_is_openspiels():
    for dice in (1, 2):
        np.testing.assert_array_equal(action_map(dice), np.arange(make_env(dice).num_actions))
        assert [openspiel_action(j) for j in range(make_env(dice).num_actions)] == list(action_map(dice))
    assert make_env(1).action_names()[-3:] == ["bid 2 fives", "bid 2 sixes", "liar"]


def test_matches_openspiel_one_die():
    assert_covered(replay_in_openspiel(dice=1, num_games=400, seed=0))


def test_matches_openspiel_two_dice():
    assert_covered(replay_in_openspiel(dice=2, num_games=200, seed=1))


@pytest.mark.exhaustive
@pytest.mark.parametrize("dice, sides, num_games", [(1, 6, 4000), (2, 6, 4000), (3, 6, 1000), (2, 4, 2000)])
def test_matches_openspiel_many(dice, sides, num_games):
    assert_covered(replay_in_openspiel(dice=dice, num_games=num_games, seed=100 + dice, sides=sides))


# -------------------------------------------------------------------------- chance and keys


def test_dice_come_from_the_reset_key_sorted_and_uniform():
    env = make_env(2)
    reset = jax.jit(jax.vmap(env.reset, (0, None)))
    keys = jax.random.split(jax.random.key(5), 3000)
    a, _ = reset(keys, env.default_params)
    b, _ = reset(keys, env.default_params)
    np.testing.assert_array_equal(a.dice, b.dice)
    c, _ = reset(jax.random.split(jax.random.key(6), 3000), env.default_params)
    assert not np.array_equal(a.dice, c.dice)
    dice = np.asarray(a.dice)
    assert (np.diff(dice, axis=-1) >= 0).all() and dice.min() == 1 and dice.max() == 6
    # Unsorted pairs are uniform over 36 outcomes: each sorted non-double pair has probability 2/36.
    pairs = dice[:, 0, 0] * 10 + dice[:, 0, 1]
    freq = np.mean(pairs == 12)
    assert abs(freq - 2 / 36) < 0.02
    counts = np.bincount(dice.ravel(), minlength=7)[1:]
    assert np.abs(counts / counts.sum() - 1 / 6).max() < 0.02


# -------------------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def opened():
    """A 1-die game after player 0 bid 2 threes (action 8): player 1 to move."""
    reset, step = jitted(1)
    state, _ = reset(jax.random.key(3))
    state, ts = step(jax.random.key(0), state, jnp.array([8, 0]))
    assert ts.acting.tolist() == [False, True]
    return state, ts


def test_actions_of_the_player_not_to_move_are_ignored(opened):
    state, ts = opened
    for mode in ("replace", "lose"):
        _, step = jitted(1, illegal_action=mode)
        base_state, base_ts = step(jax.random.key(1), state, jnp.array([0, 10]))
        for junk in (-100, -1, 0, 8, 12, 13, 10**6):
            s, t = step(jax.random.key(1), state, jnp.array([junk, 10]))
            assert not t.info["illegal_action"].any()
            for x, y in zip(jax.tree.leaves((s, t)), jax.tree.leaves((base_state, base_ts)), strict=True):
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("bad", [-1, -50, 13, 99, 2**31 - 1, 5, 8])
def test_illegal_and_out_of_range_actions_are_replaced_by_the_lowest_legal_bid(opened, bad):
    _, step = jitted(1)
    state, _ = opened
    s, ts = step(jax.random.key(1), state, jnp.array([0, bad], jnp.int32))
    assert ts.info["illegal_action"].tolist() == [False, True]
    # Lowest legal move after a bid of 2 threes (action 8) is 2 fours (action 9).
    assert int(s.current_bid) == 9 and int(s.player) == 0 and np.flatnonzero(s.taken).tolist() == [8, 9]
    assert not bool(ts.terminated) and not ts.reward.any()


@pytest.mark.parametrize("bad", [-1, 13, 10**6, 3, 8])
def test_illegal_action_lose_mode_ends_the_game_without_applying_the_move(opened, bad):
    env = make_env(1, illegal_action="lose")
    _, step = jitted(1, illegal_action="lose")
    state, _ = opened
    s, ts = step(jax.random.key(1), state, jnp.array([0, bad], jnp.int32))
    assert ts.info["illegal_action"].tolist() == [False, True]
    assert bool(ts.terminated) and ts.reward.tolist() == [1.0, -1.0]
    assert np.flatnonzero(s.taken).tolist() == [8] and int(s.current_bid) == 8  # history untouched
    assert not ts.acting.any() and not ts.action_mask.any()
    assert "forfeited" in env.render_text(s, 1)
    # An absorbing end: another step changes nothing and pays nothing.
    s2, ts2 = step(jax.random.key(2), s, jnp.array([9, 9]))
    assert bool(ts2.terminated) and not ts2.reward.any() and not ts2.info["illegal_action"].any()
    # A legal move in lose mode is played normally.
    s3, ts3 = step(jax.random.key(1), state, jnp.array([0, 12]))
    assert bool(ts3.terminated) and not ts3.info["illegal_action"].any()
    assert np.flatnonzero(s3.taken).tolist() == [8, 12]


def test_opening_liar_call_is_illegal():
    for mode, terminated in (("replace", False), ("lose", True)):
        reset, step = jitted(1, illegal_action=mode)
        state, ts = reset(jax.random.key(0))
        assert not ts.action_mask[0, -1] and ts.action_mask[0, :-1].all()
        s, ts = step(jax.random.key(1), state, jnp.array([12, 0]))
        assert ts.info["illegal_action"].tolist() == [True, False]
        assert bool(ts.terminated) == terminated
        if mode == "replace":
            assert int(s.current_bid) == 0  # "bid 1 one"
        else:
            assert ts.reward.tolist() == [-1.0, 1.0]


def test_bad_constructor_arguments_name_the_argument():
    with pytest.raises(EnvArgumentError, match="dice_per_player"):
        alem.make("liars_dice-v0", dice_per_player=0)
    with pytest.raises(EnvArgumentError, match="dice_sides"):
        alem.make("liars_dice-v0", dice_sides=1)
    with pytest.raises(EnvArgumentError, match="illegal_action"):
        alem.make("liars_dice-v0", illegal_action="forfeit")
    with pytest.raises(ValueError, match="no bid"):
        make_env(1).bid_action(3, 1)


# -------------------------------------------------------------------------- hidden information


@pytest.fixture(scope="module")
def many_states():
    """Every state (reset and after each step) of 40 two-dice games, unbatched."""
    first, _, _, states, traj = trajectories(2, 200, seed=1)  # shared with the OpenSpiel test
    out = []
    for g in range(40):
        out.append(jax.tree.map(lambda x, g=g: x[g], first))
        for t in range(traj.terminated.shape[1]):
            out.append(jax.tree.map(lambda x, i=(g, t): x[i], states))
            if traj.terminated[g, t]:
                break
    return out


def test_views_never_show_the_opponents_dice(many_states):
    env = make_env(2)
    observe = jax.jit(env.observe)
    rng = np.random.default_rng(0)
    assert sum(bool(s.loser >= 0) for s in many_states) >= 30  # terminal views are covered too
    for state in many_states:
        obs = np.asarray(observe(state, env.default_params))
        for agent in (0, 1):
            text = env.render_text(state, agent)
            own = " ".join(map(str, np.asarray(state.dice[agent])))
            assert f"Your dice: {own}." in text
            for _ in range(2):
                dice = np.array(state.dice)
                dice[1 - agent] = np.sort(rng.integers(1, 7, size=2))
                swapped = state.replace(dice=dice)
                assert env.render_text(swapped, agent) == text
                np.testing.assert_array_equal(
                    np.asarray(observe(swapped, env.default_params))[agent], obs[agent]
                )
    # The spectator view (agent=None) does show every die.
    s = many_states[0]
    full = env.render_text(s)
    assert all(f"Player {p}'s dice: {' '.join(map(str, np.asarray(s.dice[p])))}." in full for p in (0, 1))


def test_render_text_tells_the_outcome():
    env = make_env(1)
    reset, step = jitted(1)
    state, _ = reset(jax.random.key(0))
    state = state.replace(dice=jnp.array([[2], [6]]))
    state, _ = step(jax.random.key(0), state, jnp.array([7, 0]))  # player 0: 2 twos (a 6 is wild)
    view = env.render_text(state, 1)
    assert "player 0: 2 twos" in view and "It is your turn." in view
    state, ts = step(jax.random.key(0), state, jnp.array([0, 12]))  # player 1 calls liar
    assert ts.reward.tolist() == [1.0, -1.0]  # 2 + wild 6 make two twos: the bid holds
    assert "You called liar on player 0's bid of 2 twos; the bid was true." in env.render_text(state, 1)
    assert "Game over: player 0 won (+1), you lost (-1)." in env.render_text(state, 1)
    assert "Player 1 called liar on your bid" in env.render_text(state, 0)


# -------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("bid 2 fours", (2, 4)),
        ("2 fours", (2, 4)),
        ("bid 2x4", (2, 4)),
        ("Bid 2 x 4", (2, 4)),
        ("two 4s", (2, 4)),
        ("two 4's", (2, 4)),
        ("2-4", (2, 4)),
        ("I bid two fours.", (2, 4)),
        ("at least 2 of 4", (2, 4)),
        ("bid 1 six", (1, 6)),
        ("one 6", (1, 6)),
        ("bid 2 sixes", (2, 6)),
        ("liar", "liar"),
        ("Liar!", "liar"),
        ("call liar", "liar"),
        ("I call", "liar"),
        ("challenge", "liar"),
        ("I challenge your bid", "liar"),
        ("dudo", "liar"),
        ("12", "liar"),
        ("action 3", (1, 4)),
        ("bid 3 fours", None),  # only 2 dice in play
        ("bid 2 sevens", None),  # no face 7
        ("2 fours or 2 fives", None),
        ("liar, no wait, 2 fours", None),
        ("what a nice day", None),
        ("13", None),
    ],
)
def test_parser_accepts_variants(text, expected):
    env = make_env(1)
    want = None if expected is None else 12 if expected == "liar" else (expected[0] - 1) * 6 + expected[1] - 1
    assert env.parse_action(text) == want


def test_parser_with_more_dice_and_sides():
    env = make_env(3, sides=8)
    assert env.num_actions == 6 * 8 + 1
    assert env.parse_action("bid 6 eights") == 6 * 8 - 1
    assert env.parse_action("five 7s") == 4 * 8 + 6
    assert env.action_names()[4 * 8 + 6] == "bid 5 sevens"
    assert env.parse_action("liar") == 48


def test_rules_text_names_the_wild_face_and_highest_bid():
    rules = make_env(2).rules_text(agent=1)
    assert "player 1" in rules and "Face 6 is wild" in rules and "4 sixes" in rules


def test_legal_action_names_follow_the_mask(opened):
    env = make_env(1)
    state, _ = opened
    assert env.legal_action_names(state, 1) == ["bid 2 fours", "bid 2 fives", "bid 2 sixes", "liar"]
    assert env.legal_action_names(state, 0) == []


def test_render_rgb_shows_the_state(opened):
    env = make_env(1)
    state, _ = opened
    img = env.render_rgb(state)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    fresh, _ = jitted(1)[0](jax.random.key(3))
    assert img.shape == env.render_rgb(fresh).shape and not np.array_equal(img, env.render_rgb(fresh))
    other = state.replace(dice=jnp.array([[1], [5]]))
    assert not np.array_equal(img, env.render_rgb(other))
    assert env.render_rgb(jitted(2, sides=12)[0](jax.random.key(0))[0]).shape[2] == 3
