"""Fast checks of the games benchmark references (benchmarks/references/pgx.py and openspiel.py, and
the Hanabi runner of benchmarks/references/jaxmarl.py)."""

from __future__ import annotations

import math

import jax
import pytest

import alem
from benchmarks import harness
from benchmarks import throughput as tp
from benchmarks.references import jaxmarl as jm_ref
from benchmarks.references import openspiel as os_ref
from benchmarks.references import pgx as pgx_ref

GAMES = ["tic_tac_toe-v0", "connect_four-v0", "kuhn_poker-v0", "leduc_holdem-v0", "liars_dice-v0", "chess-v0"]
HANABI = ["hanabi-v0", "hanabi_small-v0", "hanabi_very_small-v0"]


def test_plugins_are_registered_by_the_harness():
    assert {"pgx", "openspiel"} <= set(harness.references())
    assert set(pgx_ref.GAMES) < set(os_ref.GAMES) == set(GAMES) | set(HANABI)
    assert "liars_dice-v0" not in pgx_ref.GAMES  # Pgx has no liar's dice


@pytest.mark.parametrize("name", ["pgx", "openspiel"])
def test_unsupported_envs_are_refused_with_a_reason(name):
    ref = harness.references()[name]
    reason = ref.supports("prisoners_dilemma-v0", alem.make("prisoners_dilemma-v0"))
    assert isinstance(reason, str) and "prisoners_dilemma-v0" in reason
    with pytest.raises(ValueError, match="does not support"):
        tp.resolve_reference(name, "prisoners_dilemma-v0", alem.make("prisoners_dilemma-v0"))


def test_registered_games_are_supported_where_the_package_is_installed():
    registered = [g for g in GAMES + HANABI if g in alem.registry()]
    if not registered:
        pytest.skip("no games registered yet")
    for env_id in registered:
        env = alem.make(env_id)
        if os_ref.openspiel_available():
            assert harness.references()["openspiel"].supports(env_id, env) is None
        if pgx_ref.pgx_available() and env_id in pgx_ref.GAMES:
            assert harness.references()["pgx"].supports(env_id, env) is None
    if "liars_dice-v0" in registered:
        reason = harness.references()["pgx"].supports("liars_dice-v0", alem.make("liars_dice-v0"))
        assert "liars_dice-v0" in reason


def test_missing_packages_are_reported_with_an_install_hint(monkeypatch):
    monkeypatch.setattr(pgx_ref, "pgx_available", lambda: False)
    monkeypatch.setattr(os_ref, "openspiel_available", lambda: False)
    refs = {r.name: r for r in pgx_ref.make_references(tp)}
    refs.update({r.name: r for r in os_ref.make_references(tp)})
    env = alem.make("liars_dice-v0")
    assert "pip install" in refs["openspiel"].supports("liars_dice-v0", env)
    if "kuhn_poker-v0" in alem.registry():
        assert "pip install pgx" in refs["pgx"].supports("kuhn_poker-v0", alem.make("kuhn_poker-v0"))


def test_openspiel_loop_plays_every_step_and_ends_games():
    pyspiel = pytest.importorskip("pyspiel")
    env = alem.make("liars_dice-v0", dice_per_player=2)
    params = os_ref.game_parameters("liars_dice-v0", env)
    assert params == {"numdice": 2, "dice_sides": 6}
    game = pyspiel.load_game("liars_dice", params)
    stats = os_ref.run_games(game, num_envs=5, num_steps=30, seed=0)
    assert stats["steps"] == 150
    assert stats["episodes"] >= 5  # a random 2-dice game lasts well under 30 moves
    assert stats["total_reward"] == 0.0  # zero-sum: every ended game pays +1 and -1
    # Kuhn poker: chance deals cards inside the loop; every game ends within 3 moves.
    kuhn = pyspiel.load_game("kuhn_poker", os_ref.game_parameters("kuhn_poker-v0", _Players(3)))
    assert kuhn.num_players() == 3
    stats = os_ref.run_games(kuhn, num_envs=4, num_steps=12, seed=1)
    assert stats["steps"] == 48 and stats["episodes"] >= 4 * 12 // 6
    assert stats["total_reward"] == 0.0
    rollout = harness.references()["openspiel"].prepare("liars_dice-v0", env, 3, 8)
    assert rollout(0) == 0.0


class _Players:
    def __init__(self, n: int):
        self.num_agents = n


def test_pgx_rollout_is_jitted_and_ends_games():
    pytest.importorskip("pgx")
    run = pgx_ref.build_pgx_rollout("tic_tac_toe", num_envs=4, num_steps=12)
    stats, state = run(jax.random.key(0))
    # Random tic-tac-toe games last 5-9 moves, so each of the 4 envs ends at least once in 12 steps.
    assert 4 <= int(stats["episodes"]) <= 8
    assert math.isfinite(float(stats["total_reward"])) and float(stats["total_reward"]) == 0.0  # zero-sum
    assert state.legal_action_mask.shape == (4, 9)
    again, _ = run(jax.random.key(0))
    assert int(again["episodes"]) == int(stats["episodes"])


# ---------------------------------------------------------------------------------------------- Hanabi


def test_openspiel_hanabi_takes_the_env_configuration_and_plays_every_step():
    pyspiel = pytest.importorskip("pyspiel")
    env = alem.make("hanabi_very_small-v0")
    params = os_ref.game_parameters("hanabi_very_small-v0", env)
    assert params == {
        "players": 2,
        "colors": 1,
        "ranks": 5,
        "hand_size": 2,
        "max_information_tokens": 3,
        "max_life_tokens": 1,
        "observation_type": "card_knowledge",
    }
    game = pyspiel.load_game("hanabi", params)
    assert game.num_distinct_actions() == env.num_actions
    assert os_ref.game_parameters("hanabi-v0", alem.make("hanabi-v0"))["hand_size"] == 5
    # Chance deals every card inside the loop; random play loses its one life within a few moves.
    stats = os_ref.run_games(game, num_envs=3, num_steps=20, seed=0)
    assert stats["steps"] == 60 and stats["episodes"] >= 3
    assert stats["total_reward"] >= 0.0  # an ended game pays its score, 0 once the lives are gone
    assert harness.references()["openspiel"].supports("hanabi-v0", alem.make("hanabi-v0")) is None
    rollout = harness.references()["openspiel"].prepare("hanabi-v0", alem.make("hanabi-v0"), 2, 8)
    assert math.isfinite(rollout(0))


def test_jaxmarl_hanabi_defaults_match_alem_and_observation_types_are_checked():
    env = alem.make("hanabi-v0")
    kwargs = jm_ref.hanabi_kwargs(env)
    assert kwargs == {
        "num_agents": 2,
        "num_colors": 5,
        "num_ranks": 5,
        "hand_size": 5,
        "max_info_tokens": 8,
        "max_life_tokens": 3,
        "num_cards_of_rank": [3, 2, 2, 2, 1],
    }
    ref = harness.references()["jaxmarl"]
    minimal = alem.make("hanabi-v0", observation_type="minimal")
    assert "card-knowledge" in ref.supports("hanabi-v0", minimal)
    jaxmarl = pytest.importorskip("jaxmarl")
    assert ref.supports("hanabi-v0", env) is None
    theirs = jaxmarl.make("hanabi")  # the defaults are alem's hanabi-v0
    got = {k: getattr(theirs, k) for k in kwargs if k != "num_cards_of_rank"}
    assert got == {k: v for k, v in kwargs.items() if k != "num_cards_of_rank"}
    assert list(theirs.num_cards_of_rank) == kwargs["num_cards_of_rank"]
    assert theirs.obs_size == env.observation_space(0).shape[0] == 658


@pytest.mark.exhaustive  # compiles JaxMARL's Hanabi twice
def test_jaxmarl_hanabi_sampler_plays_legal_moves_and_the_rollout_runs():
    jaxmarl = pytest.importorskip("jaxmarl")
    jnp = jax.numpy
    kwargs = jm_ref.hanabi_kwargs(alem.make("hanabi_very_small-v0"))
    theirs = jaxmarl.make("hanabi", **kwargs)
    draw = jm_ref.legal_move_sampler(theirs)
    legal = jax.vmap(theirs.get_legal_moves)
    n, steps = 6, 6  # across resets: the one life is lost within a few random moves

    @jax.jit
    def legal_throughout(key):
        _, state = jax.vmap(theirs.reset)(jax.random.split(key, n))

        def body(state, k):
            k_act, k_env = jax.random.split(k)
            actions, moves = draw(k_act, state), legal(state)
            ok = jnp.stack(
                [jnp.take_along_axis(moves[a], actions[a][:, None], axis=1)[:, 0] > 0 for a in theirs.agents]
            )
            _, state, _, _, _ = jax.vmap(theirs.step)(jax.random.split(k_env, n), state, actions)
            return state, ok.all()

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1]

    assert bool(legal_throughout(jax.random.key(0)).all())
    run = jm_ref.build_jaxmarl_rollout("hanabi", 3, 8, legal_moves=True, **kwargs)
    total, _, obs = run(jax.random.key(1))
    assert math.isfinite(float(total))
    assert obs[theirs.agents[0]].shape == (3, theirs.obs_size)

