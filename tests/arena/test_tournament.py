"""alem.arena.tournament: pairings from every seat on the same deals, resume, ratings, CLI."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_module

import alem
from alem.arena import tournament as tour
from alem.arena.command import run
from alem.arena.players import build_player
from alem.arena.results import format_tournament
from alem.engine.record import EPISODES_FILE, read_episodes
from alem.errors import ConfigError


def cfg(*overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="evaluate", overrides=list(overrides))


def test_pairings_cover_every_seat_once():
    rr = tour.pairings("round_robin", 3)
    assert len(rr) == 6 and len(set(rr)) == 6 and all(a != b for a, b in rr)
    g = tour.pairings("gauntlet", 2, panel=2)  # challengers 0, 1; panel 2, 3
    assert sorted(g) == sorted([(0, 2), (2, 0), (0, 3), (3, 0), (1, 2), (2, 1), (1, 3), (3, 1)])
    with pytest.raises(ConfigError, match="mode must be one of"):
        tour.pairings("swiss", 3)


@pytest.fixture(scope="module")
def ttt():
    env = alem.make("tic_tac_toe-v0")
    return env, [build_player(env, s) for s in ("minimax", "random")]


def test_tournament_refuses_what_it_cannot_pair(ttt):
    env, pool = ttt
    with pytest.raises(ConfigError, match="two-seat games; public_goods-v0 has 4 seats"):
        pe = alem.make("public_goods-v0")
        tour.Tournament(pe, tuple(build_player(pe, s) for s in ("random", "random")), ((0, 1),), 2)
    with pytest.raises(ConfigError, match="repeated"):
        tour.Tournament(env, (pool[1], build_player(env, "random")), ((0, 1),), 2)
    with pytest.raises(ConfigError, match="at least two players"):
        tour.Tournament(env, (pool[0],), (), 2)


def test_round_robin_plays_the_same_deals_from_both_seats_and_resumes(ttt, tmp_path):
    env, pool = ttt
    t = tour.Tournament(env, tuple(pool), tuple(tour.pairings("round_robin", 2)), 6, num_envs=3, seed=4)
    # A tournament killed after its first pairing: only the second is played on resume.
    tour.play_tournament(tour.Tournament(env, tuple(pool), t.seatings[:1], 6, num_envs=3, seed=4), tmp_path)
    first = (t.match_dir(tmp_path, 0) / EPISODES_FILE).read_text()
    tour.play_tournament(t, tmp_path, progress=False)
    assert (t.match_dir(tmp_path, 0) / EPISODES_FILE).read_text() == first  # kept, not replayed
    assert sorted(read_episodes(t.match_dir(tmp_path, 1) / EPISODES_FILE)) == list(range(6))

    games = tour.games_of(t, tmp_path)
    assert len(games) == 12
    # Perfect play never loses, from either seat.
    assert all((s >= 0.5) if a == 0 else (s <= 0.5) for a, b, s in games)
    res = tour.tournament_results(t, tmp_path, bootstrap=50)
    assert res["complete"] and res["games"] == 12
    top = res["ratings"][0]
    assert top["label"] == "minimax" and top["elo"] > res["ratings"][1]["elo"]
    assert top["losses"] == 0 and top["wins"] + top["draws"] == 12
    assert res["vs_perfect"]["player"] == "minimax"
    assert res["vs_perfect"]["win_draw_loss"]["random"][0] == 0  # random never beats minimax
    assert res["pairwise_score"][0][1] >= 0.5 and res["pairwise_score"][0][0] is None
    text = format_tournament(res)
    assert "vs minimax W/D/L" in text and text.index("minimax  ") < text.index("random  ")
    # One random opening ply by default (a board game), the same for both seatings of an episode.
    ops = [
        {e: r.opening for e, r in read_episodes(t.match_dir(tmp_path, k) / EPISODES_FILE).items()}
        for k in (0, 1)
    ]
    assert ops[0] == ops[1] and all(len(o) == 1 for o in ops[0].values()) and len(set(ops[0].values())) > 1
    assert 2 <= res["distinct_games"] <= 12 and f"({res['distinct_games']} distinct)" in text


def test_cli_round_robin_writes_ratings_and_refuses_bad_input_before_writing(tmp_path):
    out = run(
        cfg("env.id=tic_tac_toe-v0", "mode=round_robin", "players=[minimax,random]", "episodes=3"),
        tmp_path / "t",
    )
    assert [r["label"] for r in out["ratings"]] == ["minimax", "random"]
    saved = json.loads((tmp_path / "t" / "results.json").read_text())
    assert saved["ratings"] == out["ratings"] and saved["config"]["mode"] == "round_robin"
    head = (tmp_path / "t" / "ratings.csv").read_text().splitlines()[0]
    assert head.startswith("env_id,label,payoff,payoff_ci95,nash_weight,nash_payoff,elo,")
    assert head.endswith(",vs minimax,vs random")

    with pytest.raises(ConfigError, match="panel="):
        run(cfg("env.id=tic_tac_toe-v0", "mode=gauntlet", "players=[random]"), tmp_path / "g")
    with pytest.raises(alem.AlemError, match="no player 'minimx'"):
        run(cfg("env.id=tic_tac_toe-v0", "mode=round_robin", "players=[minimx,random]"), tmp_path / "u")
    with pytest.raises(ConfigError, match="mode must be one of"):
        run(cfg("env.id=tic_tac_toe-v0", "mode=league"), tmp_path / "m")
    assert not any((tmp_path / d).exists() for d in ("g", "u", "m"))


@pytest.mark.exhaustive  # the default run's budget (tests/arena/test_payoffs.py holds the arithmetic)
def test_poker_tournament_ranks_by_chips_with_the_payoff_matrix_and_exploitability(tmp_path):
    # random first in the pool: the ranking, not the order given, puts CFR on top.
    out = run(
        cfg(
            "env.id=kuhn_poker-v0", "mode=round_robin", "players=[random,cfr]", "episodes=400", "num_envs=200"
        ),
        tmp_path / "k",
    )
    expl = out["exploitability"]
    assert expl["cfr"] < 1e-3 and expl["random"] == pytest.approx(11 / 24, abs=1e-9)
    assert out["ranked_by"] == "nash_payoff" and not out["win_lose"]
    top, bottom = out["ratings"]
    assert top["label"] == "cfr" and top["nash_weight"] == pytest.approx(1.0, abs=1e-6)
    assert top["payoff"] - top["payoff_ci95"] > 0  # CFR takes chips from random: the CI is above 0
    # The payoff matrix against the episodes files: CFR's mean chips over both seatings.
    chips = []
    for k, (first, _) in enumerate(out["seatings"]):
        seat = 0 if first == "cfr" else 1
        eps = read_episodes(
            tmp_path
            / "k"
            / "matches"
            / f"{k:03d}_{out['seatings'][k][0]}__{out['seatings'][k][1]}"
            / EPISODES_FILE
        )
        chips += [e.returns[seat] for e in eps.values()]
    cfr, rnd = out["players"].index("cfr"), out["players"].index("random")
    m = out["payoff_matrix"]
    assert len(chips) == 800 and m[cfr][rnd] == pytest.approx(sum(chips) / 800)
    assert m[rnd][cfr] == pytest.approx(-m[cfr][rnd]) and m[cfr][cfr] is None
    nra = out["relative_advantage"][cfr][rnd]
    assert nra == pytest.approx(sum(chips) / sum(abs(c) for c in chips))  # zero-sum: gain over stakes
    assert [p["players"] for p in out["pairings"]] == out["seatings"]
    assert all(p["games"] == 400 and p["return_ci95"][0] > 0 for p in out["pairings"])
    text = format_tournament(out)
    assert "mean payoff of row against column" in text and "exploitability" in text
    assert "Elo" not in text  # hands won are not what poker pays
    assert text.index("cfr  ") < text.index("random  ")


def test_cli_resume_finishes_a_killed_tournament_without_replaying_a_game(tmp_path):
    args = ("env.id=tic_tac_toe-v0", "mode=round_robin", "players=[minimax,random]", "episodes=5")
    first = run(cfg(*args), tmp_path / "t")
    matches = sorted((tmp_path / "t" / "matches").iterdir())
    kept = (matches[0] / EPISODES_FILE).read_text()
    # A kill in the middle of the second pairing: two finished episodes and a torn line remain.
    lines = (matches[1] / EPISODES_FILE).read_text().splitlines(keepends=True)
    (matches[1] / EPISODES_FILE).write_text("".join(lines[:2]) + lines[2][:17])
    (tmp_path / "t" / "results.json").unlink()
    again = run(cfg(f"resume={tmp_path / 't'}"), None)
    assert (matches[0] / EPISODES_FILE).read_text() == kept
    assert sorted(read_episodes(matches[1] / EPISODES_FILE)) == list(range(5))
    assert again["games"] == first["games"] == 10 and again["ratings"] == first["ratings"]
    with pytest.raises(ConfigError, match="players"):
        over = [f"resume={tmp_path / 't'}", "players=[minimax,random,random]"]
        run(cfg(*over), None, over)


def test_llm_players_are_checked_before_writing_and_scored_after_playing(tmp_path):
    dead = ("llm=openai", "llm.base_url=http://127.0.0.1:9/v1", "llm.model=m", "llm.max_retries=0")
    with pytest.raises(alem.AlemError, match="cannot reach"):
        run(cfg("env.id=kuhn_poker-v0", "mode=round_robin", "players=[llm,nash]", *dead), tmp_path / "dead")
    assert not (tmp_path / "dead").exists()
    # The LLM answers the exploitability queries after its games (its run transcripts are closed by then).
    out = run(
        cfg(
            "env.id=kuhn_poker-v0",
            "mode=round_robin",
            "players=[llm:first,nash]",
            "llm=scripted",
            "episodes=2",
        ),
        tmp_path / "k",
    )
    assert out["exploitability"]["llm:first"] == pytest.approx(1.0)  # always the first move: pass


def test_match_settings_are_checked_before_the_tournament_writes(tmp_path):
    with pytest.raises(ConfigError, match="num_envs must be an integer >= 1"):
        run(
            cfg("env.id=tic_tac_toe-v0", "mode=round_robin", "players=[minimax,random]", "num_envs=0"),
            tmp_path / "t",
        )
    assert not (tmp_path / "t").exists()
