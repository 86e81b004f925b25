"""Hanabi against OpenSpiel's ``hanabi`` (the Hanabi Learning Environment), move for move.

Games are played in alem (one jitted, vmapped scan per configuration): the player to move
mostly follows the rule-based player (so games reach the end of the deck and, in the small
presets, perfect scores), sometimes a random legal move (so lives are lost) and sometimes any
index, often illegal. Each game is replayed in OpenSpiel with alem's deck order fed to its
chance nodes, asserting at every step: player to move, legal moves, terminal flag, rewards,
the illegal-move flag, and every player's ``observation_tensor`` bit for bit.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.hanabi import Hanabi, RulePlayer, rule_actions

pyspiel = pytest.importorskip("pyspiel")

# (name, alem kwargs, games in the default suite); the slow set plays 20x as many.
CONFIGS = {
    "full_2p": ({}, 160),
    "small": ({"colours": 2, "hand_size": 2, "max_information_tokens": 3, "max_life_tokens": 1}, 60),
    "very_small": ({"colours": 1, "hand_size": 2, "max_information_tokens": 3, "max_life_tokens": 1}, 60),
    # MARS's mini Hanabi (hanabi_mini-v0): 8 cards, so 60 games are quick.
    "mini": (
        {"colours": 2, "ranks": 2, "hand_size": 3, "max_information_tokens": 3, "max_life_tokens": 3},
        60,
    ),
    "3p_minimal": ({"num_players": 3, "observation_type": "minimal"}, 30),
    "4p_seer_3ranks": ({"num_players": 4, "ranks": 3, "max_life_tokens": 2, "observation_type": "seer"}, 30),
}


def spiel_game(env: Hanabi):
    return pyspiel.load_game("hanabi", env.openspiel_params())


@functools.cache
def playouts(kwargs: tuple, num_games: int, seed: int, num_steps: int = 100):
    env = Hanabi(**dict(kwargs))

    def play(key):
        k_reset, k_u, k_mode, k_junk = jax.random.split(key, 4)
        u = jax.random.uniform(k_u, (num_games, num_steps))
        mode = jax.random.uniform(k_mode, (num_games, num_steps))
        junk = jax.random.randint(k_junk, (num_games, num_steps, env.num_agents), -2, env.num_actions + 2)

        def one(k, u, mode, junk):
            state, ts = env.reset(k)

            def body(carry, x):
                state, ts = carry
                u, mode, junk = x
                mask = ts.action_mask[state.player]
                count = mask.sum()
                pick = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
                legal = jnp.argmax(jnp.cumsum(mask) > pick).astype(jnp.int32)
                move = jnp.where(mode < 0.8, rule_actions(env, state), jnp.where(mode < 0.95, legal, junk[0]))
                acts = jnp.where(jnp.arange(env.num_agents) == state.player, move, junk)
                state, ts = env.step(k, state, acts)
                return (state, ts), (acts, state, ts)

            return (state, ts), jax.lax.scan(body, (state, ts), (u, mode, junk))[1]

        return jax.vmap(one)(jax.random.split(k_reset, num_games), u, mode, junk)

    return env, jax.device_get(jax.jit(play)(jax.random.key(seed)))


def _check(env, spiel, ts, ix, where):
    """``ts`` (batched) at index ``ix`` (game, or game and step) against ``spiel``."""
    assert bool(ts.terminated[ix]) == spiel.is_terminal(), where
    for p in range(env.num_players):
        np.testing.assert_array_equal(ts.obs[ix][p], spiel.observation_tensor(p), err_msg=f"{where} seat {p}")
    if spiel.is_terminal():
        assert not ts.acting[ix].any() and not ts.action_mask[ix].any(), where
        return
    player = spiel.current_player()
    assert np.flatnonzero(ts.acting[ix]).tolist() == [player], where
    assert np.flatnonzero(ts.action_mask[ix][player]).tolist() == spiel.legal_actions(), where


def lockstep(name: str, num_games: int, seed: int):
    kwargs, _ = CONFIGS[name]
    env, ((state0, ts0), (acts, states, tss)) = playouts(tuple(sorted(kwargs.items())), num_games, seed)
    game = spiel_game(env)
    assert game.observation_tensor_shape() == [env.observation_space(0).shape[0]]
    assert game.num_distinct_actions() == env.num_actions
    for g in range(num_games):
        spiel = game.new_initial_state()
        deck = iter(np.asarray(state0.deck[g]).tolist())

        def deal(spiel=spiel, deck=deck):
            while spiel.is_chance_node():
                spiel.apply_action(next(deck))

        deal()
        _check(env, spiel, ts0, (g,), f"{name} game {g} start")
        total = 0.0
        for t in range(acts.shape[1]):
            if spiel.is_terminal():
                # A finished game stays as it is.
                assert bool(tss.terminated[g, t]) and not tss.reward[g, t].any()
                continue
            player, legal = spiel.current_player(), spiel.legal_actions()
            played = int(acts[g, t, player])
            illegal = played not in legal
            assert tss.info["illegal_action"][g, t].tolist() == [
                p == player and illegal for p in range(env.num_players)
            ]
            spiel.apply_action(legal[0] if illegal else played)
            deal()
            where = f"{name} game {g} step {t}: {spiel.history_str()}"
            _check(env, spiel, tss, (g, t), where)
            np.testing.assert_array_equal(tss.reward[g, t], spiel.rewards(), err_msg=where)
            total += float(tss.reward[g, t, 0])
        assert spiel.is_terminal(), f"{name} game {g} did not end within {acts.shape[1]} steps"
        assert total == spiel.returns()[0]
    return env, states, tss


def _end_reasons(env, states, tss):
    """Per game: the final state's lives, fireworks, deck and score."""
    done_at = np.argmax(np.asarray(tss.terminated), axis=1)
    g = np.arange(done_at.size)
    life = np.asarray(states.life_tokens)[g, done_at]
    fw = np.asarray(states.fireworks)[g, done_at].sum(-1)
    drawn = np.asarray(states.drawn)[g, done_at]
    return life, fw, drawn


# one preset by default, the others in the exhaustive tier
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n == "full_2p" else pytest.mark.exhaustive) for n in CONFIGS]
)
def test_matches_openspiel_step_by_step(name):
    # the default tier's full game: 40 games hold both endings (29 lost every life, 11 ran out of
    # cards at seed 0); the exhaustive sweep below plays 3200
    num_games = 40 if name == "full_2p" else CONFIGS[name][1]  # 40: the midgame fixture's batch too
    env, states, tss = lockstep(name, num_games, seed=0)
    life, fw, drawn = _end_reasons(env, states, tss)
    # Both ways a game ends without a perfect score occur: every life lost, and the deck run
    # out (the final round played).
    if name != "mini":  # 3 lives against 8 cards: random play lost them all in none of 200 games
        assert (life == 0).any(), "no game lost its last life"
    assert ((life > 0) & (drawn == env.deck_size) & (fw < env.max_score)).any(), "no game ran out of cards"
    assert np.asarray(tss.info["illegal_action"]).any()


@pytest.mark.exhaustive  # the default run's budget; the thousands-of-games sweep replays these presets too
def test_edge_cases_occur_in_the_replayed_games():
    env, states, tss = lockstep("very_small", CONFIGS["very_small"][1], seed=0)
    life, fw, drawn = _end_reasons(env, states, tss)
    assert (fw == env.max_score).any(), "no perfect game"
    assert np.asarray(tss.reward).min() < 0, "losing the last life must cost the score so far"
    # Hands with a missing card (the deck is empty).
    assert (np.asarray(states.hands) < 0).any()
    # A firework completed below the token cap returns a token (seen in the replayed games) ...
    completed = np.asarray(states.last_scored) & (np.asarray(states.last_card) % env.ranks == env.ranks - 1)
    assert np.asarray(states.last_token)[completed].any()


def test_completing_a_firework_at_the_token_cap_returns_no_token():
    # ... and at the cap none (HLE only increments below the maximum). Built directly: player 0
    # holds the 5 of the one colour with the firework at 4.
    env = Hanabi(colours=1, hand_size=2, max_information_tokens=3, max_life_tokens=1)
    state, _ = jax.jit(env.reset)(jax.random.key(0))
    state = state.replace(hands=state.hands.at[0, 0].set(4), fireworks=jnp.array([4]))
    play_first = jnp.array([env.hand_size, 0])  # "play card 1"
    step = jax.jit(env.step)  # one compile for both token counts (eager dispatch is slower)
    for tokens, expected in ((3, 3), (2, 3)):
        s, ts = step(jax.random.key(1), state.replace(info_tokens=jnp.int32(tokens)), play_first)
        assert int(s.info_tokens) == expected and bool(s.last_token) == (tokens < 3)
        assert bool(ts.terminated) and float(ts.reward[0]) == 1.0  # the perfect score ends the game
        assert int(env.score(s)) == env.max_score


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", list(CONFIGS))
def test_matches_openspiel_thousands_of_games(name):
    lockstep(name, 20 * CONFIGS[name][1], seed=1)


def test_registered_presets_match_hle():
    full = alem.make("hanabi-v0")
    assert (full.num_players, full.colours, full.ranks, full.hand_size, full.max_info, full.max_life) == (
        2,
        5,
        5,
        5,
        8,
        3,
    )
    assert full.observation_space(0).shape == (658,)
    small = alem.make("hanabi_small-v0")
    assert (small.colours, small.ranks, small.hand_size, small.max_info, small.max_life) == (2, 5, 2, 3, 1)
    very_small = alem.make("hanabi_very_small-v0")
    assert (very_small.colours, very_small.hand_size, very_small.max_info, very_small.max_life) == (
        1,
        2,
        3,
        1,
    )
    mini = alem.make("hanabi_mini-v0")  # MARS (thu-nics/MARS, roll/agentic/env/hanabi/config.py)
    assert (mini.num_players, mini.colours, mini.ranks, mini.hand_size, mini.max_info, mini.max_life) == (
        2,
        2,
        2,
        3,
        3,
        3,
    )
    assert mini.deck_size == 8
    for env in (full, small, very_small, mini):
        assert spiel_game(env).observation_tensor_shape() == list(env.observation_space(0).shape)
        assert spiel_game(env).num_distinct_actions() == env.num_actions


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_players": 6}, "num_players"),
        ({"colours": 0}, "colours"),
        ({"observation_type": "full"}, "observation_type"),
        ({"num_players": 5, "colours": 1, "hand_size": 4}, "need 20 cards"),
        ({"hand_size": True}, "hand_size"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(alem.EnvArgumentError, match=match):
        Hanabi(**kwargs)


# ---------------------------------------------------------------------- text
@pytest.fixture(scope="module")
def midgame():
    # the default tier's lock-step batch of the full game (playouts is cached: no second compile)
    env, ((state0, _), (_, states, tss)) = playouts((), 40, 0)
    # A state some moves in with hints given: game 0 at step 12.
    state = jax.tree.map(lambda x: jnp.asarray(x[0, 12]), states)
    return env, state


def test_view_shows_other_hands_and_never_own_cards(midgame):
    env, state = midgame
    for agent in range(env.num_players):
        view = env.render_text(state, agent)
        other = 1 - agent
        for s in range(env.hand_size):
            if int(state.hands[other, s]) >= 0:
                assert env.card_name(int(state.hands[other, s])) in view
        # Swap the viewer's own cards for others with the same knowledge: nothing changes.
        own = np.asarray(state.hands[agent])
        swapped = state.replace(hands=state.hands.at[agent].set(jnp.asarray(np.roll(own, 1))))
        assert env.render_text(swapped, agent) == view
        assert env.render_text(swapped, other) != env.render_text(state, other)


def test_parser_understands_common_phrasings():
    env = Hanabi()
    names = env.action_names(0)
    idx = {n: j for j, n in enumerate(names)}
    cases = {
        "play 2": "play card 2",
        "I will play my second card": "play card 2",
        "discard the first card": "discard card 1",
        "Discard card 5.": "discard card 5",
        "hint red to player 1": "hint red to player 1",
        "tell player 1 about their 3s": "hint rank 3 to player 1",
        "Clue: blue": "hint blue to player 1",
        "give a hint: rank 5": "hint rank 5 to player 1",
        "hint threes": "hint rank 3 to player 1",
    }
    for text, name in cases.items():
        assert env.parse_action(text, 0) == idx[name], text
    for text in ("play 7", "hint purple", "hint red and blue", "play card 1 or discard card 2", "hello"):
        assert env.parse_action(text, 0) is None, text
    assert env.parse_action("hint red to player 0", 1) == env.action_names(1).index("hint red to player 0")
    three = Hanabi(num_players=3)
    assert three.parse_action("hint red", 0) is None  # whom?
    assert three.action_names(0)[three.parse_action("hint red to player 2", 0)] == "hint red to player 2"


# ---------------------------------------------------------------------- the rule-based player
def test_rule_player_uses_only_what_its_seat_may_see(midgame):
    env, state = midgame
    p = int(state.player)
    act = jax.jit(lambda s: rule_actions(env, s))
    own = np.asarray(state.hands[p])
    for shift in (1, 2, 3):
        swapped = state.replace(hands=state.hands.at[p].set(jnp.asarray(np.roll(own, shift))))
        assert int(act(swapped)) == int(act(state))


def self_play_scores(env: Hanabi, policy: str, num_games: int, seed: int = 0) -> np.ndarray:
    """Final scores of ``num_games`` games with every seat played by ``policy`` (rule or random)."""

    def one(key):
        k_reset, k_play = jax.random.split(key)
        state, ts = env.reset(k_reset)

        def body(carry, k):
            state, ts = carry
            if policy == "rule":
                move = rule_actions(env, state)
            else:
                move = jax.random.categorical(k, jnp.where(ts.action_mask[state.player], 0.0, -jnp.inf))
            acts = jnp.full((env.num_agents,), move, jnp.int32)
            return env.step(k, state, acts), ts.reward[0]

        (state, _), rewards = jax.lax.scan(body, (state, ts), jax.random.split(k_play, 100))
        return rewards.sum(), env.terminal(state)

    total, done = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(seed), num_games))
    assert np.asarray(done).all()
    return np.asarray(total)


@pytest.mark.exhaustive  # the default run's budget
def test_rule_player_scores_far_above_random_in_self_play():
    env = alem.make("hanabi-v0")
    rule, rand = self_play_scores(env, "rule", 64), self_play_scores(env, "random", 64)
    # Random play loses its 3 lives within a few moves; the rule player plays on to the deck's end.
    assert rand.mean() < 2.5 and rule.mean() > 10, (rand.mean(), rule.mean())


@pytest.mark.exhaustive  # the default run's budget
def test_rule_player_is_an_arena_player_and_scores_are_not_wins(tmp_path):
    from alem.arena.evaluation import evaluate

    env = alem.make("hanabi_very_small-v0")
    player = alem.players.make_player("rule", env)
    assert isinstance(player, RulePlayer)
    results = evaluate(
        env, [player, player], episodes=16, num_envs=8, run_dir=tmp_path / "run", progress=False
    )
    seats = results["seats"]
    # A shared score: both seats get the same return, and no win/draw/loss is made up for it.
    assert seats[0]["return_mean"] == seats[1]["return_mean"] > 1
    assert not results["zero_sum"] and "win" not in seats[0]
