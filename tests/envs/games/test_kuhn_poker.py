"""Kuhn poker: exact against OpenSpiel (2 and 3 players), bad input, text, the CFR player."""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem import game_tree as ex
from alem.envs.games.poker import load_table
from alem.players import Turn, make_player

pyspiel = pytest.importorskip("pyspiel")


@pytest.fixture(scope="module")
def env2():
    return alem.make("kuhn_poker-v0")


@pytest.fixture(scope="module")
def env3():
    return alem.make("kuhn_poker-v0", num_players=3)


# ---------------------------------------------------------------------------- OpenSpiel
def test_two_players_match_openspiel_and_cover_every_game(env2, poker_lockstep):
    state0, acts, states, tss = poker_lockstep(env2, pyspiel.load_game("kuhn_poker"), 300, 0, 3)
    assert tss.info["illegal_action"].any()  # out-of-range moves were replaced, as OpenSpiel saw
    # Every (deal, betting sequence) ending of 2-player Kuhn occurs: 6 deals x 5 sequences.
    hist = np.asarray(states.history[:, -1])
    seen = {(tuple(c), tuple(h[h >= 0])) for c, h in zip(np.asarray(state0.cards), hist, strict=True)}
    deals = set(itertools.permutations(range(3), 2))
    seqs = {(0, 0), (0, 1, 0), (0, 1, 1), (1, 0), (1, 1)}
    assert seen == {(d, s) for d in deals for s in seqs}


def test_three_players_match_openspiel(env3, poker_lockstep):
    state0, acts, states, tss = poker_lockstep(env3, pyspiel.load_game("kuhn_poker(players=3)"), 300, 1, 5)
    assert tss.info["illegal_action"].any()
    first = np.asarray(states.first_bettor[:, -1])
    assert set(first.tolist()) == {-1, 0, 1, 2}  # no bet, and a first bet from every seat


@pytest.mark.exhaustive
@pytest.mark.parametrize("players", [2, 3])
def test_many_games_match_openspiel(players, poker_lockstep):
    env = alem.make("kuhn_poker-v0", num_players=players)
    game = pyspiel.load_game(f"kuhn_poker(players={players})")
    poker_lockstep(env, game, 5000, 10 + players, 2 * players - 1)


def test_bad_player_count():
    with pytest.raises(alem.EnvArgumentError, match="num_players"):
        alem.make("kuhn_poker-v0", num_players=1)


# ---------------------------------------------------------------------------- bad input
@functools.cache
def _step(env):
    return jax.jit(env.step)


def _state(env, cards, moves=()):
    """The state after dealing ``cards`` and playing ``moves`` (through the jitted step)."""
    state = env.initial_state(jnp.asarray(cards, jnp.int32))
    for a in moves:
        state, _ = _step(env)(jax.random.key(0), state, jnp.full((env.num_agents,), a, jnp.int32))
    return state


def test_actions_of_the_player_not_to_move_are_ignored(env2):
    state = _state(env2, [0, 2])
    step = jax.jit(env2.step)
    _, ref = step(jax.random.key(0), state, jnp.array([1, 0]))
    for junk in (1, -7, 99):
        s, ts = step(jax.random.key(0), state, jnp.array([1, junk]))
        assert not bool(ts.info["illegal_action"].any())
        np.testing.assert_array_equal(ts.obs, ref.obs)
        assert int(s.contrib[1]) == 1 and int(s.player) == 1


def test_illegal_action_replace_plays_pass(env2):
    state = _state(env2, [2, 0], [1])  # player 0 (K) bet; player 1 (J) to move
    s, ts = _step(env2)(jax.random.key(0), state, jnp.array([0, 5]))
    assert ts.info["illegal_action"].tolist() == [False, True]
    assert ts.reward.tolist() == [1.0, -1.0]  # replaced by pass = fold


def test_illegal_action_lose_forfeits_the_chips_in_the_pot():
    env = alem.make("kuhn_poker-v0", illegal_action="lose")
    # No bet yet: player 1 holds the K but plays out of range -> loses its ante.
    s, ts = _step(env)(jax.random.key(0), _state(env, [0, 2], [0]), jnp.array([0, -1]))
    assert bool(ts.terminated) and ts.reward.tolist() == [1.0, -1.0]
    assert int(s.forfeit) == 1 and "You forfeited" in env.render_text(s, 1)
    # After its own bet, player 0 forfeits 2 chips (3 players: the other two share them).
    env3 = alem.make("kuhn_poker-v0", num_players=3, illegal_action="lose")
    state = _state(env3, [3, 0, 1], [0, 1])  # player 1 bet, player 2 to move
    s, ts = _step(env3)(jax.random.key(0), state, jnp.array([0, 0, 9]))
    assert ts.reward.tolist() == [0.5, 0.5, -1.0]
    # A finished game stays finished.
    s2, ts2 = _step(env3)(jax.random.key(1), s, jnp.array([1, 1, 1]))
    assert bool(ts2.terminated) and ts2.reward.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(s2.returns, s.returns)


# ---------------------------------------------------------------------------- text and rendering
@pytest.mark.parametrize("players", [2, 3])
def test_render_text_never_shows_other_cards(players):
    """Within one information state every node renders the same for its player."""
    env = alem.make("kuhn_poker-v0", num_players=players)
    tree = ex.game_tree(env)
    for p in range(players):
        seen: dict[tuple, str] = {}
        for m in range(tree.num_nodes):
            info = (tree.obs[m, p].tobytes(), float(tree.utility[m, p]), tree.player[m] < 0)
            text = env.render_text(tree.node_state(m), p)
            assert seen.setdefault(info, text) == text
        assert len(seen) > 10


def test_text_hooks(env2):
    state = _state(env2, [1, 2], [0, 1])
    text = env2.render_text(state, 0)
    assert "Your card: Queen" in text and "King" not in text
    assert "you checked, player 1 bet" in text and "pass (fold) or bet (call" in text
    assert "King" in env2.render_text(state)  # the omniscient view shows every card
    for said, a in {"check": 0, "Fold.": 0, "I pass": 0, "call": 1, "raise!": 1, "I bet 1 chip": 1}.items():
        assert env2.parse_action(said) == a, said
    assert "Jack < Queen < King" in env2.rules_text()
    assert "Jack < Queen < King < Ace" in alem.make("kuhn_poker-v0", num_players=3).rules_text()
    img = env2.render_rgb(state)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3


# ---------------------------------------------------------------------------- the CFR player
def test_cfr_player_follows_its_table(env2):
    policy = make_player("cfr", env2)
    tree = ex.game_tree(env2)
    table = ex.policy_table(tree, load_table("kuhn_poker_cfr.json"))
    got = np.asarray(policy.probs(jnp.asarray(tree.infoset_obs), jnp.asarray(tree.infoset_mask)))
    np.testing.assert_allclose(got, table, atol=1e-6)
    # Sampling: frequencies of 20k draws at the first information state of player 0 holding a J.
    i = tree.infoset_keys.index(
        next(k for k in tree.infoset_keys if env2.infoset_label(_bits(k)) == "p0 J -")
    )
    obs = jnp.tile(jnp.asarray(tree.infoset_obs[i]), (20000, 1))
    ts = alem.TimeStep(
        obs=jnp.stack([obs, obs], 1),
        action_mask=jnp.ones((20000, 2, 2), bool),
        reward=jnp.zeros((20000, 2)),
        terminated=jnp.zeros(20000, bool),
        truncated=jnp.zeros(20000, bool),
        acting=jnp.ones((20000, 2), bool),
    )
    act = jax.jit(lambda k, ts: policy.act(k, Turn(env2, env2.default_params, 0, None, ts, None, None)))
    acts = np.asarray(act(jax.random.key(0), ts))
    p_bet = table[i, 1]
    assert abs(acts.mean() - p_bet) < 4 * np.sqrt(p_bet * (1 - p_bet) / 20000) + 1e-3


def test_no_table_for_three_players(env3):
    with pytest.raises(alem.AlemError, match="does not fit"):
        make_player("nash", env3)


def _bits(key: str) -> np.ndarray:
    return np.array([c == "1" for c in key], np.float32)
