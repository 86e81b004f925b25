"""The static tables: OpenSpiel's action numbering and the UCI name of every index."""

from __future__ import annotations

import random

import pytest

from alem.envs.games.chess import tables as T

chess = pytest.importorskip("chess")
pyspiel = pytest.importorskip("pyspiel")


def test_action_count_and_castling_ids_are_openspiels():
    assert pyspiel.load_game("chess").num_distinct_actions() == T.NUM_ACTIONS == 4674
    white, black = T.uci_names(black=False), T.uci_names(black=True)
    assert len(white) == len(black) == T.NUM_ACTIONS
    assert white[T.CASTLE_LONG :] == ["e1c1", "e1g1"] and black[T.CASTLE_LONG :] == ["e8c8", "e8g8"]
    named = [n for n in white[: T.CASTLE_LONG] if n != "-"]
    assert len(named) == len(set(named))  # every on-board move has one index...
    # ...but castling shares its name with a rook's or queen's move from e1 (never both legal).
    assert named.count("e1g1") == named.count("e1c1") == 1


def test_every_legal_openspiel_action_has_its_uci_name():
    """Random OpenSpiel games: each legal id's name (queen promotions without their "q") is the
    move python-chess reads from OpenSpiel's SAN."""
    game, rng = pyspiel.load_game("chess"), random.Random(5)
    checked = 0
    for _ in range(3):
        spiel = game.new_initial_state()
        while not spiel.is_terminal():
            board = chess.Board(str(spiel))
            names = T.uci_names(black=board.turn == chess.BLACK)
            for a in spiel.legal_actions():
                uci = board.parse_san(spiel.action_to_string(a)).uci()
                assert names[a] == uci.removesuffix("q"), (str(spiel), a)
                checked += 1
            spiel.apply_action(rng.choice(spiel.legal_actions()))
    assert checked > 10_000
