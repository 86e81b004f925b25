"""Best response, NashConv and exploitability: equal to OpenSpiel's on the same policies."""

from __future__ import annotations

import numpy as np
import pytest

import alem
from alem import game_tree as ex
from alem.envs.games.poker import load_table
from alem.players import make_player
from tests.spiel_policies import to_openspiel

try:  # OpenSpiel is the reference of the tests marked `needs_spiel` (the others run without it)
    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability as os_expl
except ImportError:  # pragma: no cover
    pyspiel = None
needs_spiel = pytest.mark.skipif(pyspiel is None, reason="open_spiel is not installed")

GAMES = {"kuhn": ("kuhn_poker-v0", {}, "kuhn_poker"), "leduc": ("leduc_holdem-v0", {}, "leduc_poker")}
TABLES = {"kuhn": "kuhn_poker_cfr.json", "leduc": "leduc_holdem_cfr.json"}
#: Stated bounds on the shipped tables' exploitability (chips per game, NashConv / 2).
BOUNDS = {"kuhn": 1e-5, "leduc": 1e-3}


def _setup(name):
    env_id, kwargs, spiel_name = GAMES[name]
    env = alem.make(env_id, **kwargs)
    return env, ex.game_tree(env), pyspiel.load_game(spiel_name)


@needs_spiel
@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_uniform_policy_matches_openspiel(name):
    env, tree, game = _setup(name)
    uniform = os_policy.UniformRandomPolicy(game)
    assert ex.exploitability(tree, "uniform") == pytest.approx(
        pyspiel.exploitability(game, pyspiel.UniformRandomPolicy(game)), abs=1e-9
    )
    assert ex.nash_conv(tree, "uniform") == pytest.approx(
        pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game)), abs=1e-9
    )
    if name == "kuhn":  # the Python implementation too (and per-player best responses)
        assert ex.exploitability(tree, "uniform") == pytest.approx(
            os_expl.exploitability(game, uniform), abs=1e-12
        )
        for p in range(2):
            expected = os_expl.best_response(game, uniform, p)["best_response_value"]
            assert ex.best_response_value(tree, "uniform", p) == pytest.approx(expected, abs=1e-12)
    # Known values (OpenSpiel's tests): Kuhn 0.458333, Leduc 4.747222 NashConv.
    assert ex.nash_conv(tree, "uniform") == pytest.approx({"kuhn": 11 / 12, "leduc": 4.747222222222222}[name])


@needs_spiel
def test_three_player_kuhn_nash_conv_matches_openspiel():
    env = alem.make("kuhn_poker-v0", num_players=3)
    game = pyspiel.load_game("kuhn_poker(players=3)")
    assert ex.nash_conv(env, "uniform") == pytest.approx(
        os_expl.nash_conv(game, os_policy.UniformRandomPolicy(game)), abs=1e-12
    )
    tree = ex.game_tree(env)
    # A deterministic policy given as a function of the observation: always bet.
    always_bet = lambda obs, mask: np.tile([0.0, 1.0], (len(obs), 1))
    pol = to_openspiel(game, ex.policy_table(tree, always_bet), tree)
    assert ex.nash_conv(tree, always_bet) == pytest.approx(os_expl.nash_conv(game, pol), abs=1e-12)


@needs_spiel
@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_shipped_tables_match_openspiel_and_meet_the_bounds(name):
    env, tree, game = _setup(name)
    data = load_table(TABLES[name])
    table = ex.policy_table(tree, data)
    ours = ex.exploitability(tree, table)
    theirs = pyspiel.exploitability(
        game, os_policy.python_policy_to_pyspiel_policy(to_openspiel(game, table, tree))
    )
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours < BOUNDS[name]
    assert data["exploitability"] == pytest.approx(ours, abs=1e-9)
    assert data["exploitability_open_spiel"] == pytest.approx(ours, abs=1e-6)
    # The device player scores the same as its table.
    assert ex.exploitability(tree, make_player("cfr", env)) == pytest.approx(ours, abs=1e-6)


@needs_spiel
def test_kuhn_nash_player_gets_at_least_the_game_value():
    """Kuhn's value is -1/18 for player 0: the CFR player earns at least that (up to its
    exploitability) against any opponent, and strictly more against exploitable ones."""
    env, tree, game = _setup("kuhn")
    nash = ex.policy_table(tree, load_table(TABLES["kuhn"]))
    eps = 2 * ex.nash_conv(tree, nash) + 1e-9
    value = -1.0 / 18.0
    np.testing.assert_allclose(ex.expected_returns(tree, nash), [value, -value], atol=eps)
    always_bet = np.tile([0.0, 1.0], (tree.num_infosets, 1))
    always_pass = np.tile([1.0, 0.0], (tree.num_infosets, 1))
    for opponent in ("uniform", always_bet, always_pass):
        as_first = ex.expected_returns(tree, [nash, opponent])[0]
        as_second = ex.expected_returns(tree, [opponent, nash])[1]
        assert as_first >= value - eps and as_second >= -value - eps
    vs_random = (
        ex.expected_returns(tree, [nash, "uniform"])[0] + ex.expected_returns(tree, ["uniform", nash])[1]
    )
    assert 0.1 < vs_random / 2 < 0.5  # a clear, bounded edge over uniform random play


@needs_spiel
def test_bad_policies_raise_clear_errors():
    env, tree, _ = _setup("kuhn")
    with pytest.raises(ValueError, match="shape"):
        ex.exploitability(tree, np.ones((3, 2)) / 2)
    with pytest.raises(ValueError, match="sums to"):
        ex.exploitability(tree, np.ones((tree.num_infosets, 2)))
    with pytest.raises(ValueError, match="misses"):
        ex.exploitability(tree, {tree.infoset_keys[0]: [0.5, 0.5]})
    leduc = ex.game_tree(alem.make("leduc_holdem-v0"))
    with pytest.raises(ValueError, match="illegal"):
        ex.exploitability(leduc, np.full((leduc.num_infosets, 3), 1 / 3))
    with pytest.raises(alem.AlemError, match="poker"):
        ex.game_tree(alem.make("prisoners_dilemma-v0"))


@needs_spiel
def test_tree_infosets_render_one_text_each():
    """``infoset_state`` gives a state to prompt an LLM with, one per information state."""
    env, tree, _ = _setup("kuhn")
    assert tree.num_infosets == 12 and tree.num_nodes == 54
    texts = {env.render_text(tree.infoset_state(i), int(tree.infoset_player[i])) for i in range(12)}
    assert len(texts) == 12 and all("It is your turn" in t for t in texts)
