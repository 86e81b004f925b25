"""SessionStore: sessions of one env, isolated, bounded in number and idle time."""

from __future__ import annotations

import time

import pytest

import alem
from alem.text.serve.sessions import SessionError, SessionStore


@pytest.fixture(scope="module")
def ttt_store():
    return SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=8)


def _acting(state):
    return [s["seat"] for s in state["seats"] if s["acting"]]


def test_a_game_is_played_to_its_end_by_move_names(ttt_store):
    s = ttt_store.open(seed=1)
    sid = s["session"]
    assert _acting(s) == [0] and len(s["seats"][0]["legal"]) == 9 and s["seats"][1]["legal"] == []
    # X: a1, b1, c1 (a row); O: a2, b2
    for seat, move in [(0, "a1"), (1, "a2"), (0, "b1"), (1, "b2")]:
        s = ttt_store.step(sid, {seat: move})
        assert s["played"] == {str(seat): move} and not s["done"]
    assert "X | X" in s["seats"][0]["view"] and "c1" in s["seats"][0]["legal"]
    s = ttt_store.step(sid, {"0": "top right"})  # the env's parser reads the move
    assert s["done"] and s["returns"] == [1.0, -1.0] and s["played"] == {"0": "c1"}
    with pytest.raises(SessionError, match="has ended") as e:
        ttt_store.step(sid, {1: "c3"})
    assert e.value.status == 409


def test_refused_moves_name_the_problem_and_change_nothing(ttt_store):
    sid = ttt_store.open(seed=2)["session"]
    ttt_store.step(sid, {0: "b2"})
    before = ttt_store.state(sid)
    for actions, match in [
        ({1: "b2"}, r"seat 1: 'b2' is not a legal move now; legal: a1, b1, c1, a2, c2, a3, b3, c3"),
        ({1: 4}, r"seat 1: 4 \(b2\) is not a legal move now"),
        ({1: "nowhere"}, r"seat 1: 'nowhere' is not a legal move now"),
        ({0: "a1"}, r"seat 0 does not act now; seats \[1\] do"),
        ({"x": "a1"}, r"a seat is an integer 0..1, got 'x'"),
        ({True: "a1"}, r"a seat is an integer 0..1, got True"),
        ({1: 1.5}, r"a move is an action name or index, got 1.5"),
        ({}, r"actions must be an object"),
    ]:
        with pytest.raises(SessionError, match=match):
            ttt_store.step(sid, actions)
    assert ttt_store.state(sid) == before


def test_sessions_are_isolated_and_seeded():
    store = SessionStore(alem.make("kuhn_poker-v0"))
    a, b, c = store.open(seed=5), store.open(seed=5), store.open(seed=6)
    views = lambda s: [seat["view"] for seat in s["seats"]]
    assert views(a) == views(b)  # the same deal
    assert any(views(a)[i] != views(c)[i] for i in range(2)) or store.open(seed=7) != a
    store.step(a["session"], {0: "bet"})
    assert store.state(b["session"])["steps"] == 0 and store.state(a["session"])["steps"] == 1
    assert "Your card" in views(a)[0] and views(a)[0] != views(a)[1]  # each seat sees its own card only


def test_simultaneous_moves_wait_for_every_acting_seat():
    store = SessionStore(alem.make("prisoners_dilemma-v0"))
    sid = store.open(seed=0)["session"]
    half = store.step(sid, {0: "cooperate"})
    assert half["steps"] == 0 and half["played"] == {} and _acting(half) == [1]
    with pytest.raises(SessionError, match="seat 0 has already moved this turn"):
        store.step(sid, {0: "defect"})
    done = store.step(sid, {1: "defect"})
    assert done["played"] == {"0": "cooperate", "1": "defect"} and done["done"]
    assert done["rewards"][1] > done["rewards"][0]  # the defector gains on the cooperator


def test_the_store_is_bounded_in_count_and_idle_time():
    store = SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=2, idle_timeout_s=0.2)
    a = store.open(seed=0)["session"]
    store.open(seed=1)
    with pytest.raises(SessionError, match="maximum of 2 sessions") as e:
        store.open(seed=2)
    assert e.value.status == 429
    store.close(a)
    with pytest.raises(SessionError, match=f"session '{a}' does not exist") as e:
        store.state(a)
    assert e.value.status == 404
    b = store.open(seed=2)["session"]
    time.sleep(0.3)
    with pytest.raises(SessionError, match="does not exist .*idle for over 0.2 s"):
        store.state(b)
    assert store.count() == 0
    for bad in (-1, 2**31, "3", 1.0):
        with pytest.raises(SessionError, match="seed must be an integer"):
            store.open(seed=bad)


def test_bad_settings_are_refused():
    with pytest.raises(alem.AlemError, match="needs an env with text support"):
        SessionStore(alem.make("mpe/simple_spread-v0"))
    with pytest.raises(alem.AlemError, match="max_sessions must be an integer >= 1, got 0"):
        SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=0)
    with pytest.raises(alem.AlemError, match="idle_timeout_s must be a number > 0"):
        SessionStore(alem.make("tic_tac_toe-v0"), idle_timeout_s=0)


def test_a_move_after_the_end_is_409_session_has_ended(ttt_store):
    sid = ttt_store.open(seed=3)["session"]
    for move in ["a1", "a2", "b1", "b2", "c1"]:
        s = ttt_store.play(sid, move)
    assert s["done"]
    with pytest.raises(SessionError, match=f"session {sid} has ended") as e:
        ttt_store.play(sid, "c3")  # no seat named: none is to move
    assert e.value.status == 409


def test_seats_are_read_strictly_and_once(ttt_store):
    sid = ttt_store.open(seed=4)["session"]
    with pytest.raises(SessionError, match=r"seat 0 is given twice \('0' and ' 0'\)"):
        ttt_store.step(sid, {"0": "b1", " 0": "c1"})
    huge = "1" * 5000
    with pytest.raises(SessionError, match=r"a seat is an integer 0..1, got '1111.*\(5000 characters\)") as e:
        ttt_store.step(sid, {huge: "a1"})
    assert e.value.status == 400 and len(str(e.value)) < 200
    assert ttt_store.state(sid)["steps"] == 0


def test_the_close_hint_of_a_full_store_is_the_servers():
    store = SessionStore(alem.make("tic_tac_toe-v0"), max_sessions=1)
    store.open(seed=0)
    with pytest.raises(SessionError, match=r"close one \(with the end_game tool\)"):
        store.open(seed=1, closing="with the end_game tool")
    with pytest.raises(SessionError, match=r"close one \(DELETE /v1/sessions/<id>\)"):
        store.open(seed=1)
