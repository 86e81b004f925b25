"""alem.players: one word for a thing that acts (alem.policies, its old name, is gone)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import alem
from alem.players import RandomPlayer, make_player, player_names

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_of_the_package_uses_the_old_name():
    """Every class that acts in a seat is a *Player*, and so is every function that builds one;
    nothing imports the old module."""
    offenders = []
    for folder in ("alem", "envs", "algos"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "alem.policies":
                    offenders.append(f"{path.relative_to(ROOT)} imports alem.policies")
                returns = getattr(getattr(node, "returns", None), "id", None) or getattr(
                    getattr(node, "returns", None), "value", None
                )
                if isinstance(node, ast.FunctionDef) and "policy" in node.name and returns == "Player":
                    offenders.append(f"{path.relative_to(ROOT)}: def {node.name} returns a Player")
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
