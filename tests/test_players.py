"""alem.players: one word for a thing that acts, and the deprecated alem.policies names."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import alem
from alem.players import FunctionPlayer, Player, RandomPlayer, make_player, player_names, register_player

ROOT = Path(__file__).resolve().parents[1]


def test_alem_policies_warns_and_names_the_same_objects():
    sys.modules.pop("alem.policies", None)
    with pytest.warns(DeprecationWarning, match="alem.policies is deprecated: import from alem.players"):
        old = importlib.import_module("alem.policies")
    assert old.Policy is Player and old.RandomPolicy is RandomPlayer and old.FunctionPolicy is FunctionPlayer
    assert (old.make_policy, old.register_policy, old.policy_names) == (
        make_player,
        register_player,
        player_names,
    )


def test_no_module_of_the_package_uses_the_old_name():
    """Every class that acts in a seat is a *Player*; nothing imports the deprecated module."""
    offenders = []
    for folder in ("alem", "envs", "algos"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "alem" / "policies.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "alem.policies":
                    offenders.append(f"{path.relative_to(ROOT)} imports alem.policies")
                if isinstance(node, ast.ClassDef) and node.name.endswith("Policy"):
                    bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                    if bases & {"Player", "RandomPlayer", "FunctionPlayer"}:
                        offenders.append(f"{path.relative_to(ROOT)}: class {node.name}")
    assert not offenders, offenders


def test_make_player_names_an_unknown_player_and_what_exists():
    env = alem.make("tic_tac_toe-v0")
    assert {"random", "minimax"} <= set(player_names(env))
    assert isinstance(make_player("random", env), RandomPlayer)
    with pytest.raises(alem.AlemError, match=r"no player 'minimx' for env 'tic_tac_toe-v0'.*'minimax'"):
        make_player("minimx", env)
