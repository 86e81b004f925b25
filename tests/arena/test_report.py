"""alem.arena.report: the self-contained results page, from a run directory's files alone."""

from __future__ import annotations

import json
import re

import pytest

from alem.arena.report import REPORT_FILE, main, render_report, write_report
from alem.errors import AlemError
from alem.rundir import JsonlWriter

HOSTILE = '<script>alert("x")</script><img src=http://example.com/a.png>'


def seat(player, seat, **kw):
    base = {"seat": seat, "agent": f"player_{seat}", "player": player, "episodes": 2, "return_mean": 0.5,
            "return_ci95": 0.25, "decisions": 4, "env_illegal": 0}  # fmt: skip
    return {**base, **kw}


@pytest.fixture
def tournament(tmp_path):
    """A two-player tournament's files, written by hand: one pairing, an LLM with a hostile reply."""
    players = ["llm:x", "cfr"]
    res = {
        "env_id": "kuhn_poker-v0", "mode": "round_robin", "players": players, "seatings": [players, players[::-1]],
        "episodes_per_seating": 2, "games": 4, "distinct_games": 4, "complete": True, "ranked_by": "nash_payoff",
        "win_lose": False, "exploitability": {"llm:x": 1.0, "cfr": 0.0},
        "ratings": [
            {"label": "cfr", "payoff": 0.75, "payoff_ci95": 0.5, "nash_weight": 1.0, "nash_payoff": 0.0, "games": 4},
            {"label": "llm:x", "payoff": -0.75, "payoff_ci95": 0.5, "nash_weight": 0.0, "nash_payoff": -0.75,
             "games": 4},
        ],
        "payoff_matrix": [[None, -0.75], [0.75, None]], "payoff_ci95": [[None, 0.5], [0.5, None]],
    }  # fmt: skip
    (tmp_path / "results.json").write_text(json.dumps(res))
    m = tmp_path / "matches" / "000_llm-x__cfr"
    m.mkdir(parents=True)
    llm = seat("llm:x", 0, llm_replies=4, llm_unparseable=1, llm_illegal=1, llm_decisions=4, llm_fallbacks=2)
    (m / "results.json").write_text(json.dumps({"seats": [llm, seat("cfr", 1, env_illegal=1)]}))
    with JsonlWriter(m / "transcripts.jsonl") as f:
        msgs = [{"role": "system", "content": "rules"}, {"role": "user", "content": "Your card: <King>."}]
        attempt = {"messages": msgs, "reply": HOSTILE, "status": "unparseable"}
        f.write({"type": "decision", "episode": 0, "seat": 0, "player": "llm:x", "decision": 0,
                 "attempts": [attempt], "action": 0, "action_name": "pass", "fallback": "random"})  # fmt: skip
    return tmp_path


def test_the_page_is_self_contained_escaped_and_carries_the_tables(tournament):
    page = render_report(tournament)
    # No network at view time: nothing fetched, one inline script (the sorter), the reply as text.
    assert not re.search(r"<[a-z]+[^>]*\s(src|href)\s*=", page)  # no tag loads anything
    assert page.count("<script>") == 1 and "&lt;script&gt;alert(&quot;x&quot;)" in page
    assert "Your card: &lt;King&gt;." in page and "fallback" in page
    # The ranking in the results' order, the heatmap with both cells and their CIs.
    assert page.index(">cfr<") < page.index(">llm:x<")
    assert "+0.750" in page and "-0.750" in page and page.count("± 0.500") == 2
    # Per player over its seats: (1 unparseable + 1 illegal) / 4 replies; cfr's env-illegal 1 / 4.
    assert page.count("50.0%") == 2 and "25.0%" in page
    assert "4 games (4 distinct)" in page


def test_write_report_and_its_command_refuse_what_is_not_a_run(tournament, tmp_path_factory, capsys):
    path = write_report(tournament)
    assert path == tournament / REPORT_FILE and path.read_text().startswith("<!DOCTYPE html>")
    # The command does not replace a page that is there unless told to.
    path.write_text("kept")
    with pytest.raises(SystemExit) as refused:  # a refusal: one line, exit status 2
        main([str(tournament)])
    assert refused.value.code == 2 and path.read_text() == "kept"
    assert capsys.readouterr().err.strip().endswith("exists; pass --overwrite to replace it")
    assert main([str(tournament), "--overwrite"]) == 0 and path.read_text().startswith("<!DOCTYPE html>")
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(AlemError, match="results.json is missing"):
        render_report(empty)
    (empty / "results.json").write_text("{not json")
    with pytest.raises(SystemExit, match="2"):
        main([str(empty)])
    assert "not readable JSON" in capsys.readouterr().err and not (empty / REPORT_FILE).exists()
    (empty / "results.json").write_text("{}")
    with pytest.raises(AlemError, match="neither a tournament, a cross-play run nor a match"):
        render_report(empty)
