"""Leduc hold'em: exact against OpenSpiel (ties, folds, raise caps), bad input, text, the CFR player."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem import game_tree as ex
from alem.envs.games.leduc_holdem import CALL, FOLD, RAISE
from alem.envs.games.poker import load_table

pyspiel = pytest.importorskip("pyspiel")


@pytest.fixture(scope="module")
def env():
    return alem.make("leduc_holdem-v0")


@functools.cache
def _step(env):
    return jax.jit(env.step)


def _state(env, cards, moves=()):
    """The state after dealing ``cards`` (p0, p1, public) and playing ``moves``."""
    state = env.initial_state(jnp.asarray(cards, jnp.int32))
    ts = None
    for a in moves:
        state, ts = _step(env)(jax.random.key(0), state, jnp.full((2,), a, jnp.int32))
    return state, ts


# ---------------------------------------------------------------------------- OpenSpiel
def test_matches_openspiel_with_ties_folds_and_raise_caps(env, poker_lockstep):
    state0, acts, states, tss = poker_lockstep(env, pyspiel.load_game("leduc_poker"), 400, 0, 8)
    # Illegal moves (fold with nothing to call, a third raise, out of range) were replaced.
    assert tss.info["illegal_action"].sum() > 50
    last = jax.tree.map(lambda x: x[:, -1], states)
    seq = np.asarray(last.seq)
    folded = (seq == FOLD).any(axis=(1, 2))
    showdown = last.terminal & ~folded
    tie = showdown & (last.returns[:, 0] == 0)
    capped = ((seq == RAISE).sum(-1) == 2).any(-1)
    assert folded.sum() > 50 and showdown.sum() > 50 and tie.sum() > 5
    assert capped[showdown].any() and capped[folded].any()
    assert ((seq[:, 1] == RAISE).sum(-1) == 2).any()  # a capped second round
    # Ties happen exactly when the two private cards have the same rank.
    ranks = np.asarray(state0.cards)[:, :2] // 2
    np.testing.assert_array_equal(tie[showdown], (ranks[:, 0] == ranks[:, 1])[showdown])


@pytest.mark.exhaustive
def test_many_games_match_openspiel(env, poker_lockstep):
    poker_lockstep(env, pyspiel.load_game("leduc_poker"), 5000, 1, 8)


def test_showdown_tie_and_pair(env):
    # Jacks for both players, the King on the board: split pot after two raises.
    state, ts = _state(env, [0, 1, 4], [RAISE, CALL, RAISE, RAISE, CALL])
    assert bool(ts.terminated) and ts.reward.tolist() == [0.0, 0.0]
    spiel = pyspiel.load_game("leduc_poker").new_initial_state()
    for a in [0, 1, 2, 1, 4, 2, 2, 1]:
        spiel.apply_action(a)
    assert spiel.returns() == [0.0, 0.0]
    # The Jack pairs the board Jack and beats the King: pot 1 + 2 + 4 + 4 each.
    state, ts = _state(env, [0, 5, 1], [RAISE, CALL, RAISE, RAISE, CALL])
    assert ts.reward.tolist() == [11.0, -11.0]


# ---------------------------------------------------------------------------- bad input
def test_illegal_moves_replace_and_lose(env):
    state, _ = _state(env, [0, 2, 4])
    # Fold with nothing to call is illegal: replaced by the first legal action, check.
    s, ts = _step(env)(jax.random.key(0), state, jnp.array([FOLD, RAISE]))
    assert ts.info["illegal_action"].tolist() == [True, False]
    assert s.seq[0, 0] == CALL and int(s.player) == 1
    # A third raise is illegal: replaced by fold (the first legal action when facing a bet).
    state, _ = _state(env, [0, 2, 4], [RAISE, RAISE])
    s, ts = _step(env)(jax.random.key(0), state, jnp.array([RAISE, 0]))
    assert ts.info["illegal_action"].tolist() == [True, False] and ts.reward.tolist() == [-3.0, 3.0]
    # "lose": the offender loses what it has in the pot (here its 3 chips after its raise).
    lose = alem.make("leduc_holdem-v0", illegal_action="lose")
    state, _ = _state(lose, [4, 2, 0], [RAISE, RAISE])
    s, ts = _step(lose)(jax.random.key(0), state, jnp.array([7, 0]))
    assert bool(ts.terminated) and ts.reward.tolist() == [-3.0, 3.0] and int(s.forfeit) == 0
    assert not ts.acting.any() and not ts.action_mask.any()


def test_player_not_to_move_is_ignored(env):
    state, _ = _state(env, [0, 2, 4])
    _, ref = _step(env)(jax.random.key(0), state, jnp.array([RAISE, 0]))
    for junk in (-3, 2, 50):
        _, ts = _step(env)(jax.random.key(0), state, jnp.array([RAISE, junk]))
        np.testing.assert_array_equal(ts.obs, ref.obs)
        assert not bool(ts.info["illegal_action"].any())


# ---------------------------------------------------------------------------- text and rendering
@pytest.mark.parametrize(
    "sample", [pytest.param(300, id="300"), pytest.param(None, id="all", marks=pytest.mark.exhaustive)]
)
def test_render_text_never_shows_hidden_cards(env, sample):
    """Within one information state every node renders the same for its player (at the
    end: with the same payoff). 300 random information states per player by default,
    all of them in the exhaustive tier."""
    tree = ex.game_tree(env)
    rng = np.random.default_rng(0)
    for p in range(2):
        groups: dict[tuple, list[int]] = {}
        for m in range(tree.num_nodes):
            info = (tree.obs[m, p].tobytes(), float(tree.utility[m, p]), tree.player[m] < 0)
            groups.setdefault(info, []).append(m)
        shared = [g for g in groups.values() if len(g) > 1]
        assert len(shared) > 300
        if sample is not None:
            shared = [shared[i] for i in rng.choice(len(shared), sample, replace=False)]
        for g in shared:
            texts = {env.render_text(tree.node_state(m), p) for m in g}
            assert len(texts) == 1, texts
    # Before the end of round 1 the public card is never named in a player's view.
    state, _ = _state(env, [0, 2, 5], [CALL])
    for p in range(2):
        assert "King" not in env.render_text(state, p)
    state, _ = _state(env, [0, 2, 5], [CALL, CALL])
    assert "Public card: King of hearts" in env.render_text(state, 0)
    assert "Queen" not in env.render_text(state, 0) and "Jack" not in env.render_text(state, 1)


def test_text_hooks(env):
    state, _ = _state(env, [0, 2, 4], [RAISE])
    text = env.render_text(state, 1)
    assert "Your card: Queen of spades" in text and "fold, call (2 chips)" in text
    for said, a in {"fold": 0, "check": 1, "pass": 1, "I call.": 1, "bet": 2, "Raise!": 2}.items():
        assert env.parse_action(said) == a, said
    img = env.render_rgb(state)
    assert img.dtype == np.uint8 and img.shape[2] == 3


# ---------------------------------------------------------------------------- the CFR player
def test_cfr_player_follows_its_table(env):
    policy = alem.players.make_player("nash", env)
    tree = ex.game_tree(env)
    got = np.asarray(policy.probs(jnp.asarray(tree.infoset_obs), jnp.asarray(tree.infoset_mask)))
    np.testing.assert_allclose(got, ex.policy_table(tree, load_table("leduc_holdem_cfr.json")), atol=1e-6)
    assert policy.meta["exploitability"] < 1e-3
