"""The chess move generator: perft counts from the standard positions (through ``from_fen``, the
action mask and vmapped steps) and lock-step random games against OpenSpiel 2.0.2's ``chess``
(every ply: the legal action ids, the FEN, terminal, returns).

Perft counts are the chess programming wiki's published ones (python-chess agrees).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem.envs.games.chess import movegen
from tests.envs.games.chess.conftest import perft, spiel_returns

pyspiel = pytest.importorskip("pyspiel")
GAME = pyspiel.load_game("chess")

PERFT = {
    "start": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", [20, 400, 8_902, 197_281]),
    "kiwipete": (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        [48, 2_039, 97_862, 4_085_603],
    ),
    "position 3": ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2_812, 43_238, 674_624]),
    "position 4": (
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        [6, 264, 9_467, 422_333],
    ),
    "position 4 mirrored": (
        "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
        [6, 264, 9_467, 422_333],
    ),
    "position 5": (
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        [44, 1_486, 62_379, 2_103_487],
    ),
    "position 6": (
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        [46, 2_079, 89_890, 3_894_594],
    ),
}


@pytest.mark.parametrize("name", list(PERFT))
def test_perft_to_depth_3(chess_kit, name):
    fen, counts = PERFT[name]
    assert [perft(chess_kit, fen, d) for d in (1, 2, 3)] == counts[:3]


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", list(PERFT))
def test_perft_to_depth_4_and_5(chess_kit, name):
    fen, counts = PERFT[name]
    for depth in range(4, len(counts) + 1):
        assert perft(chess_kit, fen, depth) == counts[depth - 1], (name, depth)


def _lockstep(kit, seed: int, num_games: int, num_plies: int = 700) -> int:
    """Play random games in alem, replay each in OpenSpiel, compare every ply; returns the plies."""
    start, (moves, states, terminated, rewards) = jax.device_get(
        kit.play(jax.random.key(seed), num_games, num_plies)
    )
    plies = 0
    for g in range(num_games):
        spiel = GAME.new_initial_state()
        at = lambda tree, t, g=g: jax.tree.map(lambda x: x[t, g], tree)
        state = jax.tree.map(lambda x, g=g: x[g], start)
        for t in range(num_plies):
            where = f"game {g} ply {t}: {spiel}"
            assert kit.env.to_fen(state) == str(spiel), where
            assert bool(state.terminated) == spiel.is_terminal(), where
            if spiel.is_terminal():
                assert rewards[t - 1, g].tolist() == spiel_returns(spiel), where
                break
            assert np.flatnonzero(state.legal).tolist() == spiel.legal_actions(), where
            spiel.apply_action(int(moves[t, g]))
            plies += 1
            state = at(states, t)
            if not spiel.is_terminal():
                assert rewards[t, g].tolist() == [0.0, 0.0], where
    return plies


def test_random_games_match_openspiel_ply_by_ply(chess_kit):
    assert _lockstep(chess_kit, seed=0, num_games=2) > 300


@pytest.mark.exhaustive
def test_many_random_games_match_openspiel(chess_kit):
    plies = sum(_lockstep(chess_kit, seed=s, num_games=10) for s in range(1, 7))
    assert plies > 60 * 250


def _spiel_line(fen: str, sans: list[str]) -> tuple[list[int], list[bool]]:
    """OpenSpiel's action ids of a line given in SAN, and whether the game is over after each."""
    spiel = GAME.new_initial_state(fen)
    ids, over = [], []
    for san in sans:
        (a,) = [a for a in spiel.legal_actions() if spiel.action_to_string(a) == san]
        spiel.apply_action(a)
        ids.append(a)
        over.append(spiel.is_terminal())
        if spiel.is_terminal():
            break
    return ids, over


CYCLE = ["Kd8", "Kd1", "Ke8", "Ke1"]
LINES = {
    # An en-passant square (a black pawn beside the pushed pawn) makes the position differ.
    "en passant square counts": ("4k3/8/8/8/5p2/8/4P3/4K3 w - - 0 1", ["e4", *CYCLE * 3]),
    "no capturing pawn, no square": ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", ["e4", *CYCLE * 3]),
    "castling rights count": (
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
        ["Rh2", "Kd8", "Rh1", "Ke8", *["Kd1", "Kd8", "Ke1", "Ke8"] * 3],
    ),
    "the side to move counts": (
        "4k3/p7/8/8/8/8/P7/4K3 w - - 0 1",
        ["Kd1", "Kd8", "Kd2", "Ke8", "Ke1", *["Kd8", "Kd1", "Ke8", "Ke1"] * 3],
    ),
    "the start position repeats": (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ["Nf3", "Nf6", "Ng1", "Ng8"] * 3,
    ),
    "fifty moves": ("4k3/p7/8/8/8/8/P7/4K3 w - - 98 60", ["Kd1", "Kd8"]),
    "mate on the hundredth ply wins": ("7k/8/6K1/8/8/8/8/R7 w - - 99 60", ["Ra8#"]),
}


@pytest.mark.parametrize("name", list(LINES))
def test_repetition_and_fifty_move_draws_end_on_openspiels_ply(chess_kit, name):
    fen, sans = LINES[name]
    ids, over = _spiel_line(fen, sans)
    state = chess_kit.env.from_fen(fen)
    ended = []
    for a in ids:
        state, ts = chess_kit.step(jax.random.key(0), state, jnp.array([a, a]))
        assert not bool(ts.info["illegal_action"].any())
        ended.append(bool(ts.terminated))
    assert ended == over and over[-1]


# (FEN, dead draw in OpenSpiel) found by experiment with pyspiel; python-chess agrees.
MATERIAL = [
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", True),
    ("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", True),
    ("4k3/8/8/8/8/8/8/4KN2 w - - 0 1", True),
    ("4k1b1/8/8/8/8/8/8/4KB2 w - - 0 1", True),  # bishops on one colour, both sides
    ("4k3/8/8/8/8/8/8/3BKB2 w - - 0 1", True),
    ("B3k3/8/8/8/8/8/8/4K2B w - - 0 1", True),
    ("3nkn2/8/8/8/8/8/8/4K3 w - - 0 1", False),  # two knights
    ("4kn2/8/8/8/8/8/8/4KN2 w - - 0 1", False),
    ("4kb2/8/8/8/8/8/8/4KB2 w - - 0 1", False),  # bishops on both colours
    ("4kb2/8/8/8/8/8/8/4KN2 w - - 0 1", False),
    ("4k3/8/8/8/8/8/8/2BNK3 w - - 0 1", False),
    ("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", False),
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", False),
]


@pytest.mark.parametrize("fen,dead", MATERIAL)
def test_insufficient_material_is_openspiels(chess_kit, fen, dead):
    assert GAME.new_initial_state(fen).is_terminal() == dead
    assert bool(chess_kit.env.from_fen(fen).terminated) == dead
    board = chess_kit.env.from_fen(fen).board
    assert bool(movegen.insufficient_material(board)) == dead


@pytest.mark.parametrize(
    "fen,long,short",
    [
        ("1r2k3/8/8/8/8/8/6b1/R3K2R w KQ - 0 1", True, False),  # f1 covered; b1 covered does not matter
        ("r3k3/8/8/8/8/2b5/8/R3K2R w KQ - 0 1", False, False),  # in check
        ("r3k2r/8/8/8/8/8/8/R3K1NR b kq - 0 1", True, True),  # black, from its side of the board
    ],
)
def test_castling_rights_and_attacked_squares(chess_kit, fen, long, short):
    state = chess_kit.env.from_fen(fen)
    legal = np.flatnonzero(state.legal).tolist()
    assert legal == GAME.new_initial_state(fen).legal_actions()
    assert (4672 in legal, 4673 in legal) == (long, short)
