"""FEN in and out, and UCI names of moves: round trips on positions from random games (python-chess
and OpenSpiel as the sources), the legal moves of each against python-chess, malformed FENs."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import alem
from alem.envs.games.chess import fen as fen_io

chess = pytest.importorskip("chess")
pyspiel = pytest.importorskip("pyspiel")


def _python_chess_fens(seed: int, games: int) -> list[str]:
    rng, out = random.Random(seed), []
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over(claim_draw=False) and board.ply() < 400:
            board.push(rng.choice(list(board.legal_moves)))
            out.append(board.fen())
    return out


def _check_positions(env, fens: list[str]) -> None:
    for fen in fens:
        state = env.from_fen(fen)
        assert env.to_fen(state) == fen
        board = chess.Board(fen)
        if bool(state.terminated):  # OpenSpiel's dead draws end games python-chess plays on
            continue
        assert sorted(env.legal_uci(state)) == sorted(m.uci() for m in board.legal_moves), fen


def test_round_trip_and_legal_moves_match_python_chess(chess_kit):
    _check_positions(chess_kit.env, _python_chess_fens(seed=0, games=2)[::2])


@pytest.mark.exhaustive
def test_round_trip_and_legal_moves_match_python_chess_many(chess_kit):
    _check_positions(chess_kit.env, _python_chess_fens(seed=1, games=30))


def test_round_trip_of_openspiel_fens_keeps_its_en_passant_rule(chess_kit):
    game, rng = pyspiel.load_game("chess"), random.Random(3)
    spiel, seen = game.new_initial_state(), 0
    while not spiel.is_terminal() and seen < 120:
        spiel.apply_action(rng.choice(spiel.legal_actions()))
        assert chess_kit.env.to_fen(chess_kit.env.from_fen(str(spiel))) == str(spiel)
        seen += 1
    # OpenSpiel drops an en-passant square no pawn of the mover stands beside; so does from_fen.
    bare = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    assert chess_kit.env.to_fen(chess_kit.env.from_fen(bare)) == str(game.new_initial_state(bare))
    four = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
    assert chess_kit.env.to_fen(chess_kit.env.from_fen(four)) == fen_io.START_FEN


START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
BAD = [
    (f"{START} w KQkq - 0", "has 5 fields"),
    ("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "7 ranks"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "character '9'"),
    ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "covers 9 squares"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", "covers 7 squares"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNx w KQkq - 0 1", "character 'x'"),
    ("rnbqkbnr/pppppppp/8/8/8/4K3/PPPPPPPP/RNBQKBNR w - - 0 1", "white has 2 kings"),
    ("rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", "black has 0 kings"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "pawn stands on the first or last rank"),
    ("p3k3/8/8/8/8/8/8/4K3 w - - 0 1", "pawn stands on the first or last rank"),
    (f"{START} x KQkq - 0 1", "side to move is 'x'"),
    (f"{START} w QK - 0 1", "castling field 'QK'"),
    (f"{START} w KQkqX - 0 1", "castling field 'KQkqX'"),
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling right 'K' without the king and the rook"),
    ("r3k2r/8/8/8/8/8/8/R4K1R w Q - 0 1", "castling right 'Q' without the king and the rook"),
    (f"{START} w KQkq e4 0 1", "en-passant square 'e4'"),
    (f"{START} b KQkq e6 0 1", "en-passant square 'e6'"),
    (f"{START} w KQkq e6 0 1", "does not follow a two-square pawn move"),
    (f"{START} w KQkq - -1 1", "half-move clock '-1'"),
    (f"{START} w KQkq - 0 0", "full-move number '0'"),
    ("4k3/8/8/8/8/8/8/R3K3 b - - 0 1", None),  # fine: black to move, in check
    ("R3k3/8/8/8/8/8/8/4K3 w - - 0 1", "side not to move is in check"),
]


@pytest.mark.parametrize("fen,what", BAD)
def test_malformed_fens_name_what_is_wrong(chess_kit, fen, what):
    if what is None:
        assert chess_kit.env.to_fen(chess_kit.env.from_fen(fen)) == fen
        return
    with pytest.raises(alem.EnvArgumentError, match="chess FEN .*" + re.escape(what)):
        chess_kit.env.from_fen(fen)


def test_a_fen_must_be_a_string(chess_kit):
    with pytest.raises(alem.EnvArgumentError, match="must be a str"):
        chess_kit.env.from_fen(None)


def test_uci_names_promotions_castling_and_black_moves(chess_kit):
    env = chess_kit.env
    state = env.from_fen("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1")
    legal = env.legal_uci(state)
    assert {"b7b8q", "b7b8r", "b7b8b", "b7b8n", "b7a8q", "b7a8n", "e1g1", "e1c1"} <= set(legal)
    black = env.from_fen("r3k2r/8/8/8/8/8/6p1/R3K2R b KQkq - 0 1")
    assert {"e8g8", "e8c8", "g2g1q", "g2g1n", "g2h1q"} <= set(env.legal_uci(black))
    with pytest.raises(alem.EnvArgumentError, match="outside"):
        env.uci(state, 4674)
    with pytest.raises(alem.EnvArgumentError, match="off the board"):
        env.uci(state, 9)  # from a1, seven ranks down
    assert np.asarray(state.legal).sum() == len(legal)
