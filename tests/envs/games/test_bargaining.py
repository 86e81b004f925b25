"""Bargaining: transition-by-transition exactness against OpenSpiel, bad input, hidden values, text."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.bargaining import AGREE, OFFERS, Bargaining, load_instances, viewer
from alem.errors import EnvArgumentError

pyspiel = pytest.importorskip("pyspiel")

DEFAULT = ()
# discount, prob_end, a shorter game and the information-state tensor together.
VARIANT = (("discount", 0.9), ("max_turns", 6), ("observation_type", "information_state"), ("prob_end", 0.3))


@functools.cache
def make_env(kwargs: tuple = DEFAULT) -> Bargaining:
    return alem.make("bargaining-v0", **dict(kwargs))


@functools.cache
def jitted(kwargs: tuple = DEFAULT):
    env = make_env(kwargs)
    return jax.jit(env.reset), jax.jit(env.step)


@functools.cache
def spiel_game(kwargs: tuple = DEFAULT):
    return pyspiel.load_game("bargaining", make_env(kwargs).openspiel_params())


# -------------------------------------------------------------------------- trajectories


@functools.cache
def playouts(kwargs: tuple, num_games: int, seed: int):
    """``num_games`` games, vmapped and scanned to the turn limit. The player to move: 1 in 8 an
    arbitrary index (often illegal: out of range, "agree" before any offer, more items than
    the pool), else "agree" with probability 0.25 when legal, else a uniform legal offer. The
    other player sends junk, which must be ignored. The choices are drawn up front with NumPy
    (threefry in the jitted program would triple its compile time)."""
    env = make_env(kwargs)
    steps, a = env.max_turns + 1, env.num_actions
    rng = np.random.default_rng(seed)
    u, v = rng.random((num_games, steps)), rng.random((num_games, steps))
    bad = rng.random((num_games, steps)) < 0.125
    junk = rng.integers(-3, a + 3, (num_games, steps, 2))
    junk = np.where(rng.random((num_games, steps, 2)) < 0.3, AGREE, junk).astype(np.int32)

    def one(k, u, v, bad, junk):
        k_reset, k_steps = jax.random.split(k)
        state, ts = env.reset(k_reset)

        def body(carry, x):
            state, ts = carry
            u, v, bad, junk, key = x
            mover = jnp.argmax(ts.acting)
            mask = ts.action_mask[mover]
            offers = mask.at[AGREE].set(False)
            count = offers.sum()
            pick = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
            uniform = jnp.argmax(jnp.cumsum(offers) > pick).astype(jnp.int32)
            choice = jnp.where(mask[AGREE] & (v < 0.25), AGREE, uniform)
            acts = jnp.where(ts.acting & ~bad, choice, junk)
            state, ts = env.step(key, state, acts)
            return (state, ts), (acts, state, ts)

        keys = jax.random.split(k_steps, steps)
        _, traj = jax.lax.scan(body, (state, ts), (u, v, bad, junk, keys))
        return state, ts, traj

    run = jax.jit(jax.vmap(one))
    return jax.device_get(run(jax.random.split(jax.random.key(seed), num_games), u, v, bad, junk))


def lockstep(kwargs: tuple, num_games: int, seed: int) -> dict[str, int]:
    """Replay alem's games in OpenSpiel (fed alem's instance and break-offs); assert equality at
    every node; return how often each way of ending (and an illegal move) occurred."""
    env, game = make_env(kwargs), spiel_game(kwargs)
    info_state = env.observation_type == "information_state"
    num_instances = len(env.instances)
    state0, ts0, (acts, states, tss) = playouts(kwargs, num_games, seed)
    seen = {"agreed": 0, "turn_limit": 0, "broke_off": 0, "illegal": 0, "agree_illegal": 0}

    def check(spiel, ts, sel, where):
        terminal = spiel.is_terminal()
        assert bool(ts.terminated[sel]) == terminal, where
        assert not bool(ts.truncated[sel]), where
        for p in range(2):
            theirs = spiel.information_state_tensor(p) if info_state else spiel.observation_tensor(p)
            np.testing.assert_array_equal(ts.obs[sel][p], theirs, err_msg=where)
        if terminal:
            assert not ts.acting[sel].any() and not ts.action_mask[sel].any(), where
            return
        mover = spiel.current_player()
        assert ts.acting[sel].tolist() == [p == mover for p in range(2)], where
        assert np.flatnonzero(ts.action_mask[sel][mover]).tolist() == spiel.legal_actions(), where
        assert not ts.action_mask[sel][1 - mover].any(), where

    for g in range(num_games):
        spiel = game.new_initial_state()
        spiel.apply_action(int(state0.instance[g]))  # the chance node: alem's instance
        inst = spiel.instance()
        np.testing.assert_array_equal(state0.pool[g], inst.pool)
        np.testing.assert_array_equal(state0.values[g], np.array(inst.values))
        check(spiel, ts0, (g,), f"game {g} start")
        for t in range(acts.shape[1]):
            sel, where = (g, t), f"game {g} step {t}: {spiel.history()}"
            if spiel.is_terminal():  # a finished game is absorbing
                assert tss.terminated[sel] and not tss.reward[sel].any(), where
                assert not tss.info["illegal_action"][sel].any(), where
                continue
            player, legal = spiel.current_player(), spiel.legal_actions()
            played = int(acts[g, t, player])
            illegal = played not in legal
            seen["illegal"] += illegal
            seen["agree_illegal"] += played == AGREE and illegal
            assert tss.info["illegal_action"][sel].tolist() == [p == player and illegal for p in range(2)], (
                where
            )
            spiel.apply_action(legal[0] if illegal else played)
            while spiel.is_chance_node():  # prob_end > 0: continue or break off, as alem drew
                spiel.apply_action(num_instances + int(bool(states.ended[sel])))
            check(spiel, tss, sel, where)
            expected = spiel.returns() if spiel.is_terminal() else [0.0, 0.0]
            np.testing.assert_allclose(tss.reward[sel], expected, rtol=1e-6, atol=0, err_msg=where)
            if spiel.is_terminal():
                if bool(states.agreed[sel]):
                    seen["agreed"] += 1
                elif bool(states.ended[sel]):
                    seen["broke_off"] += 1
                else:
                    assert len(spiel.offers()) == env.max_turns
                    seen["turn_limit"] += 1
        assert spiel.is_terminal(), f"game {g} did not end"
    return seen


def test_matches_openspiel_default():
    seen = lockstep(DEFAULT, num_games=40, seed=0)
    assert seen["agreed"] and seen["turn_limit"] and seen["agree_illegal"], seen
    assert not seen["broke_off"]


def test_matches_openspiel_discount_prob_end_information_state():
    seen = lockstep(VARIANT, num_games=40, seed=1)
    assert seen["agreed"] and seen["broke_off"] and seen["illegal"], seen


@pytest.mark.exhaustive
@pytest.mark.parametrize(
    "kwargs",
    [
        DEFAULT,
        VARIANT,
        (("observation_type", "information_state"),),
        (("discount", 0.5), ("max_turns", 3), ("prob_end", 0.9)),
        (("max_num_instances", 20), ("max_turns", 12)),
    ],
    ids=["default", "variant", "info_state", "short", "few_instances"],
)
def test_matches_openspiel_thousands_of_games(kwargs):
    seen = lockstep(kwargs, num_games=2000, seed=7)
    assert seen["agreed"] and seen["illegal"] and (seen["turn_limit"] or seen["broke_off"]), seen


def test_instances_file_as_openspiel_reads_it(tmp_path):
    path = tmp_path / "three.txt"
    path.write_text("1,2,3 8,1,0 4,0,2\n4,1,1 2,1,1 1,0,6\n\n2,2,1 1,1,6 0,4,2\n")
    env = Bargaining(instances_file=str(path))
    game = pyspiel.load_game("bargaining", env.openspiel_params())
    assert len(env.instances) == 3 == len(game.all_instances())
    for ours, theirs in zip(env.instances, game.all_instances(), strict=True):
        assert ours[0].tolist() == list(theirs.pool) and ours[1:].tolist() == [list(v) for v in theirs.values]
    path.write_text("1,2,3 8,1,0\n")
    with pytest.raises(EnvArgumentError, match="is not"):
        Bargaining(instances_file=str(path))
    path.write_text("9,2,3 8,1,0 4,0,2\n")
    with pytest.raises(EnvArgumentError, match="out of range"):
        Bargaining(instances_file=str(path))


# -------------------------------------------------------------------------- tables and chance


def test_offer_numbering_names_and_instances_are_openspiels():
    env, game = make_env(), spiel_game()
    assert game.num_distinct_actions() == env.num_actions == AGREE + 1 == 121
    assert [list(o.quantities) for o in game.all_offers()] == OFFERS.tolist()
    state = game.new_initial_state()
    state.apply_action(0)
    names = env.action_names()
    for j in range(AGREE):
        # OpenSpiel: "Offer: Book: 1, Hat: 2, Basketball: 0"; ours: "I get 1 book, 2 hats, 0 balls".
        counts = [int(part.split(": ")[-1]) for part in state.action_to_string(0, j).split(", ")]
        assert counts == OFFERS[j].tolist()
        assert [int(w) for w in names[j].split() if w.isdigit()] == counts
    assert state.action_to_string(0, AGREE) == "Agree" and names[AGREE] == "agree"
    instances = load_instances()
    assert instances.shape == (1000, 3, 3)
    for ours, theirs in zip(instances, game.all_instances(), strict=True):
        assert ours[0].tolist() == list(theirs.pool) and ours[1:].tolist() == [list(v) for v in theirs.values]
    assert game.observation_tensor_shape() == [93] and env.observation_space(0).shape == (93,)
    info = make_env((("observation_type", "information_state"),))
    assert info.observation_space(0).shape == (309,) == tuple(game.information_state_tensor_shape())


def test_instances_come_from_the_reset_key_uniformly():
    env = make_env()
    reset = jax.jit(jax.vmap(env.reset))
    keys = jax.random.split(jax.random.key(3), 3000)
    a, _ = reset(keys)
    b, _ = reset(keys)
    np.testing.assert_array_equal(a.instance, b.instance)
    idx = np.asarray(a.instance)
    assert idx.min() >= 0 and idx.max() < 1000 and len(np.unique(idx)) > 900
    table = load_instances()
    np.testing.assert_array_equal(a.pool, table[idx, 0])
    np.testing.assert_array_equal(a.values, table[idx, 1:])
    few = Bargaining(max_num_instances=5)
    assert set(np.asarray(jax.jit(jax.vmap(few.reset))(keys[:200])[0].instance).tolist()) == set(range(5))


# -------------------------------------------------------------------------- bad input and the end


def offer(books: int, hats: int, balls: int) -> int:
    return int(np.flatnonzero(((books, hats, balls) == OFFERS).all(1))[0])


def play(moves, instance=0, **params):
    """Play ``moves`` (the mover's action each step; the other seat sends 7) from ``instance`` of
    the default game, with ``params`` replaced (one compiled step for all)."""
    env = make_env()
    reset, step = jitted()
    params = env.default_params.replace(**{k: jnp.float32(x) for k, x in params.items()})
    state, ts = reset(jax.random.key(0), env.default_params)
    table = env.instances
    state = state.replace(instance=jnp.int32(instance), pool=table[instance, 0], values=table[instance, 1:])
    out = [(state, ts)]
    for k, move in enumerate(moves):
        acts = jnp.full((2,), 7, jnp.int32).at[int(state.player)].set(move)
        state, ts = step(jax.random.key(k), state, acts, params)
        out.append((state, ts))
    return out


def test_illegal_moves_are_replaced_by_the_empty_offer_and_flagged():
    # Instance 0: pool 1 book, 2 hats, 3 balls; player 0 values 8,1,0; player 1 values 4,0,2.
    (_, ts0), (s1, ts1) = play([AGREE])  # agree before any offer
    assert not ts0.action_mask[0, AGREE] and ts0.action_mask[0, 0]
    assert ts1.info["illegal_action"].tolist() == [True, False]
    assert int(s1.num_offers) == 1 and s1.offers[0].tolist() == [0, 0, 0] and int(s1.player) == 1
    for bad in (2, -1, 121, 10**6):  # 2 books (the pool has 1), out of range
        _, (s, ts) = play([bad])
        assert ts.info["illegal_action"].tolist() == [True, False] and s.offers[0].tolist() == [0, 0, 0]
    # The waiting seat's actions are ignored: play() sends 7 from it; any value gives the same step.
    _, (s, ts) = play([1])
    assert not ts.info["illegal_action"].any() and s.offers[0].tolist() == [1, 0, 0]


def test_agreement_pays_each_side_its_values_and_ends_the_game():
    steps = play([1, AGREE])  # player 0 asks for the book; player 1 agrees
    state, ts = steps[-1]
    assert bool(ts.terminated) and bool(state.agreed) and ts.reward.tolist() == [8.0, 6.0]
    assert not ts.acting.any() and not ts.action_mask.any()
    assert "Player 1 agreed to player 0's offer." in make_env().render_text(state)
    assert "Deal: player 0 8, you 6." in make_env().render_text(state, 1)
    # Absorbing: another step changes nothing and pays nothing.
    _, step = jitted()
    s2, ts2 = step(jax.random.key(5), state, jnp.array([1, 1]), make_env().default_params)
    assert bool(ts2.terminated) and not ts2.reward.any() and not ts2.info["illegal_action"].any()
    assert all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(s2), jax.tree.leaves(state), strict=True))


def test_the_turn_limit_ends_without_a_deal():
    steps = play([1] * 10)
    for k, (state, ts) in enumerate(steps[:-1]):
        assert not bool(ts.terminated) and int(state.num_offers) == k
    state, ts = steps[-1]
    assert bool(ts.terminated) and not ts.reward.any() and not ts.action_mask.any()
    assert "No deal after 10 offers" in make_env().render_text(state, 0)


def test_discount_from_the_third_move():
    # discount 0.9: player 1 agrees on move 2 (no discount); player 0 agrees on move 3 (x 0.9).
    assert play([1, AGREE], discount=0.9)[-1][1].reward.tolist() == [8.0, 6.0]
    np.testing.assert_allclose(play([1, 1, AGREE], discount=0.9)[-1][1].reward, [0.9 * 2, 0.9 * 4], rtol=1e-6)
    # Three moves, each discounting: player 1 agrees to its opponent's third offer.
    np.testing.assert_allclose(play([1, 1, 1, AGREE], discount=0.5)[-1][1].reward, [2.0, 1.5], rtol=1e-6)


def test_prob_end_breaks_off_after_each_offer_but_the_first():
    steps = play([1, 1, 1, 1], prob_end=1.0)
    assert not bool(steps[1][1].terminated)  # the first offer is never cut
    state, ts = steps[2]
    assert bool(ts.terminated) and bool(state.ended) and not ts.reward.any()
    assert "broke off by chance" in make_env().render_text(state, 0)


def test_bad_arguments_and_params_name_the_problem():
    with pytest.raises(EnvArgumentError, match="max_turns"):
        Bargaining(max_turns=0)
    with pytest.raises(EnvArgumentError, match="discount"):
        Bargaining(discount=1.5)
    with pytest.raises(EnvArgumentError, match="max_num_instances"):
        Bargaining(max_num_instances=1001)
    with pytest.raises(EnvArgumentError, match="observation_type"):
        Bargaining(observation_type="full")
    with pytest.raises(EnvArgumentError, match="illegal_action"):
        Bargaining(illegal_action="lose")
    env = make_env()
    with pytest.raises(EnvArgumentError, match=r"params\.prob_end=2\.0"):
        env.check_params(env.default_params.replace(prob_end=jnp.float32(2.0)))


# -------------------------------------------------------------------------- hidden values


def test_views_never_show_the_other_players_values():
    env = make_env()
    observe = jax.jit(env.observe)
    _, _, (_, states, _) = playouts(DEFAULT, 40, 0)
    rng = np.random.default_rng(0)
    for g in range(0, 40, 4):
        for t in range(0, 11, 3):
            state = jax.tree.map(lambda x, i=(g, t): x[i], states)
            obs = np.asarray(observe(state, env.default_params))
            live = not (bool(state.agreed) or int(state.num_offers) >= env.max_turns)
            for agent in (0, 1):
                text = env.render_text(state, agent) if live else ""  # the end tells both scores
                values = np.array(state.values)
                values[1 - agent] = rng.integers(0, 11, 3)
                other = state.replace(values=values)
                assert (env.render_text(other, agent) if live else "") == text
                np.testing.assert_array_equal(
                    np.asarray(observe(other, env.default_params))[agent], obs[agent]
                )
    full = env.render_text(state)
    assert "Player 0's values" in full and "Player 1's values" in full


# -------------------------------------------------------------------------- text


def test_every_name_parses_back_and_views_name_both_shares():
    env = make_env()
    names = env.action_names()
    assert names[9] == "I get 1 book, 1 hat, 0 balls" and names[AGREE] == "agree"
    for j, name in enumerate(names):
        assert env.parse_action(name) == j
        assert env.parse_action(f"{name.upper()}. That is my final word, take it or leave it!") == j
    state, _ = play([offer(1, 0, 0), offer(0, 2, 0)])[-1]
    view = env.render_text(state, 0)
    assert "  you: you get 1 book, 0 hats, 0 balls; player 1 gets 0 books, 2 hats, 3 balls" in view
    assert "  player 1: player 1 gets 0 books, 2 hats, 0 balls; you get 1 book, 0 hats, 3 balls" in view
    assert "It is your turn (offer 3 of at most 10)." in view
    legal = env.legal_action_names(state, 0)
    assert legal[-1] == "agree" and len(legal) == 2 * 3 * 4 + 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I get 2 books, 1 hat, 0 balls", (2, 1, 0)),
        ("I get 2 books, 1 hat, 0 balls; you get 0 books, 1 hat, 3 balls", (2, 1, 0)),
        ("You get 0 books, 1 hat and 3 balls, I get 2 books and one hat.", (2, 1, 0)),
        ("I'll take two books and a hat", (2, 1, 0)),
        ("My offer: 3 balls for me", (0, 0, 3)),
        ("1 book, 2 hats, 0 balls", (1, 2, 0)),
        ("I want no books, 2 hats and 3 basketballs.", (0, 2, 3)),
        ('{"action": "I get 1 book, 2 hats, 0 balls"}', (1, 2, 0)),
        ("I don't agree. I get 3 balls.", (0, 0, 3)),
        ("agree", "agree"),
        ("I accept your offer, thanks!", "agree"),
        ("Deal.", "agree"),
        ("I agree to your offer: you get 2 books and I keep the hats.", "agree"),  # no count of mine
        ("no deal", None),
        ("I do not accept", None),
        ("I can't agree to that", None),
        ("I get 8 books", None),  # more than any pool
        ("I get 3 books, 3 hats, 3 balls", None),  # 9 items
        ("I get 1 book, 2 books", None),  # one item twice
        ("I get 1 book or I get 2 books", None),  # two offers
        ("you get 2 books", None),  # only the other side: needs the pool
        ("what a nice day", None),
        ("120", "agree"),
        ("action 9", (1, 1, 0)),
        ("121", None),
    ],
)
def test_parser(text, expected):
    env = make_env()
    want = AGREE if expected == "agree" else None if expected is None else offer(*expected)
    assert env.parse_action(text) == want


def test_rules_text_mentions_turn_limit_discount_and_break_off():
    rules = make_env(VARIANT).rules_text(agent=1)
    assert "player 1" in rules and "After 6 offers" in rules
    assert "by 0.9" in rules and "probability 0.3" in rules
    assert "0.9" not in make_env().rules_text()


# -------------------------------------------------------------------------- picture


def test_render_rgb_shows_the_split_the_values_the_turn_and_the_outcome():
    env = make_env()
    (s0, _), (s1, _), (s2, _) = play([offer(1, 2, 0), AGREE])  # instance 0: pool 1 book, 2 hats, 3 balls
    blue, red = (tuple(int(v) for v in viewer.PLAYER_COLOURS[p]) for p in (0, 1))

    def px(img, y, x):
        return tuple(int(v) for v in img[y, x])

    def item(img, kind, k):  # the centre of the glyph of the k-th item of that kind
        return px(img, 24 + kind * 34 + 14, 6 + k * 34 + 14)

    def history(img, k):  # the segment of offer k (10 offers over 304 px)
        return px(img, 132, 6 + k * 30 + 10)

    img0, img1, img2 = (env.render_rgb(s) for s in (s0, s1, s2))
    assert img0.shape == (142, 316, 3) and img0.dtype == np.uint8
    assert px(img0, 10, 10) == blue  # player 0 to move
    assert item(img0, 0, 0) == item(img0, 2, 2) == viewer.UNOFFERED_COLOUR and history(img0, 0) != blue
    assert item(img0, 0, 1) == item(img0, 2, 3)  # beyond the pool: empty
    # Player 0 asks for the book and both hats: those turn blue, the balls go to player 1 (red).
    assert not np.array_equal(img0, img1)
    assert px(img1, 10, 10) == red  # player 1 to move
    assert item(img1, 0, 0) == item(img1, 1, 1) == blue and item(img1, 2, 0) == item(img1, 2, 2) == red
    assert history(img1, 0) == blue and history(img1, 1) == history(img0, 1)
    # Values: player 0 values a book 8 (blue bar of 8 x 6 px), player 1 values it 4.
    bars = 6 + 7 * 34 + 6
    assert px(img1, 24 + 1, bars + 47) == blue and px(img1, 24 + 1, bars + 48) not in (blue, red)
    assert px(img1, 24 + 15, bars + 23) == red and px(img1, 24 + 15, bars + 24) not in (blue, red)
    # The deal: green strip, the agreed split stays.
    assert px(img2, 10, 10) == viewer.DEAL_COLOUR and np.array_equal(img2[24:], img1[24:])
    no_deal, _ = play([offer(1, 0, 0)] * 10)[-1]
    assert px(env.render_rgb(no_deal), 10, 10) == viewer.NO_DEAL_COLOUR
