"""Each family registers its own ids; importing alem.envs imports no env module."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import alem
import alem.envs
from alem import players

registry = importlib.import_module("alem.registry")  # the module (alem.registry is the function)


def test_the_families_register_the_builtin_ids_in_order():
    ids = list(alem.registry())
    families = [f.__name__.rsplit(".", 1)[1] for f in alem.envs.FAMILIES]
    assert families == ["games", "single_agent", "coordination", "pathfinding"]
    builtin = [i for i in ids if str(alem.registry()[i].entry_point).startswith("alem.")]
    assert len(builtin) == 78
    order = [alem.registry()[i].family for i in builtin]
    # one run of ids per family, in the order of FAMILIES
    runs = [f for j, f in enumerate(order) if j == 0 or order[j - 1] != f]
    assert runs == families
    assert builtin[:2] == ["prisoners_dilemma-v0", "iterated_prisoners_dilemma-v0"]
    assert builtin[-3:] == ["pathfinding-v0", "pathfinding_lifelong-v0", "pathfinding_disappear-v0"]


@pytest.mark.parametrize("family", alem.envs.FAMILIES, ids=lambda f: f.__name__)
def test_a_family_registers_exactly_its_own_ids(family, monkeypatch):
    name = family.__name__.rsplit(".", 1)[1]
    expected = {k: v for k, v in alem.registry(name).items() if str(v.entry_point).startswith("alem.")}
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(players, "_PLAYERS", {})
    family.register()
    assert dict(registry._REGISTRY) == expected
    assert all(spec.family == name for spec in registry._REGISTRY.values())
    with pytest.raises(ValueError):
        family.register()  # twice is a duplicate


def test_scripted_players_are_registered_with_their_family():
    for env_id, player in (
        ("tic_tac_toe-v0", "minimax"),
        ("connect_four-v0", "greedy"),
        ("kuhn_poker-v0", "cfr"),
        ("leduc_holdem-v0", "nash"),
        ("pathfinding_lifelong-v0", "bfs"),
    ):
        assert (env_id.rsplit("-v", 1)[0], player) in players._PLAYERS


def test_importing_alem_imports_no_env_module():
    code = "import sys, alem; print(*sorted(m for m in sys.modules if m.startswith('alem.envs')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(out.split())
    assert loaded == {
        "alem.envs",
        "alem.envs.games",
        "alem.envs.single_agent",
        "alem.envs.coordination",
        "alem.envs.pathfinding",
    }
