import numpy as np
import pytest

import alem
from alem.core import MultiAgentEnv


def test_builtin_ids_are_versioned_and_listed():
    reg = alem.registry()
    assert "prisoners_dilemma-v0" in reg and "iterated_public_goods-v0" in reg
    assert all("-v" in k for k in reg)
    games = alem.registry("games")
    assert set(games) <= set(reg) and "stag_hunt-v0" in games
    with pytest.raises(TypeError):
        reg["x-v0"] = None  # read-only view


def test_unknown_id_names_closest_ids():
    with pytest.raises(alem.UnknownEnvError, match="prisoners_dilemma-v0"):
        alem.make("prisoner_dilemma-v0")
    with pytest.raises(alem.UnknownEnvError, match=r"versions of 'stag_hunt': \['stag_hunt-v0'\]"):
        alem.make("stag_hunt-v7")
    with pytest.raises(alem.UnknownEnvError, match="stag_hunt-v0"):
        alem.make("stag_hunt")


@pytest.mark.parametrize("bad", [None, 123, b"tic_tac_toe-v0", ["tic_tac_toe-v0"]])
def test_an_id_that_is_not_a_string_is_refused_by_name(bad):
    """make(None) raised AttributeError from inside the lookup; a list raised TypeError (unhashable)."""
    with pytest.raises(alem.UnknownEnvError, match=r"env id must be a string like 'tic_tac_toe-v0', got "):
        alem.make(bad)


def test_wrong_kwargs_are_named():
    with pytest.raises(alem.EnvArgumentError, match=r"'num_round'.*did you mean 'num_rounds'"):
        alem.make("iterated_prisoners_dilemma-v0", num_round=5)
    with pytest.raises(alem.EnvArgumentError, match="num_rounds must be >= 1"):
        alem.make("iterated_prisoners_dilemma-v0", num_rounds=0)
    with pytest.raises(alem.EnvArgumentError, match="history_len"):
        alem.make("prisoners_dilemma-v0", history_len=0)


def test_make_applies_kwargs_and_sets_id():
    env = alem.make("iterated_stag_hunt-v0", num_rounds=7)
    assert env.id == "iterated_stag_hunt-v0"
    assert int(env.default_params.num_rounds) == 7
    assert env.spec.family == "games"


def test_register_validates_and_refuses_duplicates():
    with pytest.raises(ValueError, match="name-vN"):
        alem.register("NoVersion", "alem.envs.games.matrix:MatrixGame")
    with pytest.raises(ValueError, match="already registered"):
        alem.register("stag_hunt-v0", "alem.envs.games.matrix:MatrixGame")
    with pytest.raises(TypeError, match="unknown fields"):
        alem.register("tmp_env-v0", "alem.envs.games.matrix:MatrixGame", colour="red")


def test_register_custom_env_and_make_it():
    from alem.envs.games.matrix import MatrixGame

    spec = alem.register(
        "test_custom_game-v3",
        MatrixGame,
        kwargs={"game": "custom", "payoffs": [[[1, 0], [0, 1]], [[1, 0], [0, 1]]]},
        family="games",
        num_agents=2,
        overwrite=True,
    )
    assert spec.version == 3 and spec.name == "test_custom_game"
    env = alem.make("test_custom_game-v3")
    assert isinstance(env, MultiAgentEnv) and env.num_agents == 2


def test_optional_dependency_fails_with_install_hint():
    alem.register(
        "needs_missing_dep-v0",
        "alem_missing_module_xyz:Env",
        requires={"alem_missing_module_xyz": "alem-missing-module-xyz>=1"},
        overwrite=True,
    )
    with pytest.raises(alem.DependencyNotInstalled, match='pip install "alem-missing-module-xyz>=1"'):
        alem.make("needs_missing_dep-v0")


def test_every_registered_id_is_in_the_guide():
    """The guide (docs/guide/, the manual that left the README: the family sections, and the
    gymnax adapters beside the interop views) names every registered id (matrix games'
    ``iterated_`` twins by rule)."""
    from pathlib import Path

    guide = Path(__file__).resolve().parents[1] / "docs" / "guide"
    readme = "\n".join(p.read_text() for p in sorted(guide.glob("*.md")))
    assert "Each has an `iterated_` twin" in readme
    missing = [
        env_id
        for env_id, spec in alem.registry().items()
        if isinstance(spec.entry_point, str)
        and spec.entry_point.startswith("alem.")  # not the ids other tests register
        and f"`{env_id}`" not in readme
        and f"`{env_id.removeprefix('iterated_')}`" not in readme
    ]
    assert not missing, f"registered ids missing from docs/guide/environments.md: {missing}"


def test_keywords_the_constructor_would_coerce_or_cannot_build_are_refused(fault_report):
    """num_agents=2.5 used to build 2 agents; 10**30 raised OverflowError from deep inside."""
    with pytest.raises(alem.EnvArgumentError, match=r"num_agents must be an integer, got 2\.5"):
        alem.make("mpe/simple_spread-v0", num_agents=2.5)
    with pytest.raises(alem.EnvArgumentError, match=r"continuous_actions must be true or false, got 'yes'"):
        alem.make("mpe/simple_spread-v0", continuous_actions="yes")
    with pytest.raises(alem.EnvArgumentError, match="too large to build"):
        alem.make("mpe/simple_spread-v0", num_agents=10**30)
    assert alem.make("mpe/simple_spread-v0", num_agents=np.int64(2)).num_agents == 2
    fault_report(faults=1)
