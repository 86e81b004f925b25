"""alem.arena.players: specs to a seating, and the seating check."""

from __future__ import annotations

import pytest

import alem
from alem.arena import build_players, label_of, parse_spec, seating
from alem.errors import ConfigError
from alem.players import RandomPlayer


@pytest.fixture(scope="module")
def env():
    return alem.make("prisoners_dilemma-v0")


def test_parse_spec():
    assert parse_spec("random") == ("random", None)
    assert parse_spec(" llm:gpt-4o:mini ") == ("llm", "gpt-4o:mini")
    with pytest.raises(ConfigError, match="non-empty string"):
        parse_spec("  ")


def test_one_spec_fills_every_seat_and_labels_them(env):
    players = build_players(env, ["random"])
    assert len(players) == 2 and players[0] is not players[1]
    assert [label_of(p) for p in players] == ["random", "random"]
    with pytest.raises(ConfigError, match="one player spec per seat"):
        build_players(env, ["random"] * 3)


def test_seating_refuses_a_wrong_count(env):
    two = [RandomPlayer(), RandomPlayer()]
    assert seating(env, two) == tuple(two)
    for n in (1, 3):
        with pytest.raises(ConfigError, match=f"needs 2 players, got {n}"):
            seating(env, [RandomPlayer()] * n)


def test_label_falls_back_to_the_policy_name():
    p = RandomPlayer()
    assert label_of(p) == "random"
    p.label = "random:x"
    assert label_of(p) == "random:x"
