"""The LLM player end to end through the evaluator, against a real local HTTP server with faults."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import FunctionPlayer, make_player
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.testing import FakeChatServer

FAST = dict(backend="openai", model="fake-model", backoff_s=0.001, backoff_cap_s=0.01, timeout_s=5.0)


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


def first_legal(env):
    return FunctionPlayer(lambda key, turn: jnp.argmax(turn.action_mask, axis=-1).astype(jnp.int32), "first")


def run(env, players, tmp_path, episodes=2, **kw):
    kw.setdefault("openings", 0)  # the player's own first moves, from the game's start
    res = evaluate(
        env, players, episodes=episodes, num_envs=kw.pop("num_envs", 1), seed=0, run_dir=tmp_path, **kw
    )
    records = list(read_jsonl(tmp_path / "transcripts.jsonl"))
    eps = list(read_jsonl(tmp_path / "episodes.jsonl"))
    return res, records, eps


def test_fault_injection_counts_fallbacks_and_complete_transcripts(ttt, tmp_path):
    a1 = json.dumps({"action": "a1"})
    faults = [
        "429", "ok",                  # d0: retried once, then a1
        f"say:{a1}", "ok",            # d1: a1 is taken -> illegal, re-prompt, ok
        "garbage", "long",            # d2: unparseable twice -> fallback
        "500", "500",                 # d3: retries exhausted -> API error -> fallback
        "timeout", "ok",              # d4: timed out once, then ok
        "malformed", "empty",         # d5: garbage bodies twice -> API error -> fallback
    ]  # fmt: skip
    # timeout_s is short only here, where one injected timeout must fire (a loaded CI box
    # answers a normal local request well within it)
    with FakeChatServer(script="first", faults=faults, timeout_sleep_s=3.0) as srv:
        llm = LLMPlayer(ttt, base_url=srv.base_url, reprompts=1, max_retries=1, **{**FAST, "timeout_s": 1.5})
        res, records, eps = run(ttt, [llm, first_legal(ttt)], tmp_path, episodes=2)
        assert srv.served[: len(faults)] == faults
        assert len(srv.requests) == sum(len(r["attempts"]) for r in records) + 4  # + the 4 retried tries
    seat = res["seats"][0]
    assert seat["llm_retried_errors"] == 4
    assert seat["llm_illegal"] == 1 and seat["llm_unparseable"] == 2
    assert seat["llm_api_errors"] == 2 and seat["llm_fallbacks"] == 3
    assert seat["llm_reprompts"] == 2
    assert seat["llm_decisions"] == len(records) == sum(e["decisions"][0] for e in eps) >= 6
    assert seat["invalid_rate"] == pytest.approx(3 / seat["llm_replies"])
    assert seat["env_illegal"] == 0  # fallbacks play legal moves
    # The transcript holds every prompt and reply, in order, one record per decision.
    by_ep = Counter(r["episode"] for r in records)
    for ep, n in by_ep.items():
        assert sorted(r["decision"] for r in records if r["episode"] == ep) == list(range(n))
    d1 = records[1]
    assert [a["status"] for a in d1["attempts"]] == ["illegal", "ok"]
    assert d1["attempts"][0]["parsed"] == "a1"
    assert "not a legal action" in d1["attempts"][1]["messages"][-1]["content"]
    assert d1["attempts"][1]["messages"][-2] == {"role": "assistant", "content": a1}
    assert [a["status"] for a in records[2]["attempts"]] == ["unparseable", "unparseable"]
    assert records[2]["fallback"] == "random" and records[2]["action_name"] in records[2]["legal"]
    assert records[3]["attempts"][0]["error_kind"] == "http_500"
    assert records[5]["attempts"][0]["retry_errors"] == ["malformed"]
    sys_prompt = records[0]["attempts"][0]["messages"][0]
    assert sys_prompt["role"] == "system" and "tic-tac-toe" in sys_prompt["content"]
    assert (
        "Legal actions: a1, b1, c1, a2, b2, c2, a3, b3, c3"
        in records[0]["attempts"][0]["messages"][1]["content"]
    )


@pytest.mark.parametrize("rule", ["first", "forfeit"])
def test_invalid_rules_first_and_forfeit(rule, tmp_path):
    env = alem.make("tic_tac_toe-v0", illegal_action="lose")
    with FakeChatServer(script=lambda body: "no idea") as srv:
        llm = LLMPlayer(env, base_url=srv.base_url, reprompts=0, invalid=rule, **FAST)
        res, records, eps = run(env, [llm, make_player("random", env)], tmp_path, episodes=3, num_envs=3)
    assert all(r["fallback"] == rule for r in records)  # the transcript names the rule that played
    seat = res["seats"][0]
    if rule == "first":
        assert all(r["action_name"] == r["legal"][0] for r in records)
        assert seat["env_illegal"] == 0
    else:  # an illegal move: with illegal_action="lose" X loses at once
        assert all(r["action"] == -1 for r in records)
        assert [e["returns"] for e in eps] == [[-1.0, 1.0]] * 3 and {e["length"] for e in eps} == {1}
        assert seat["env_illegal"] == 3 and seat["loss"] == 1.0


def test_history_keeps_earlier_exchanges(ttt, tmp_path):
    with FakeChatServer(script="first") as srv:
        llm = LLMPlayer(ttt, base_url=srv.base_url, history=1, **FAST)
        _, records, _ = run(ttt, [llm, first_legal(ttt)], tmp_path, episodes=1)
    msgs = [r["attempts"][0]["messages"] for r in records]
    assert len(msgs[0]) == 2 and all(len(m) == 4 for m in msgs[1:])  # system, last exchange, now
    assert msgs[1][1] == msgs[0][1] and msgs[1][2]["role"] == "assistant"


def test_llm_player_refuses_envs_without_text():
    env = alem.MultiAgentEnv()  # supports_text is False by default
    env.id = "no_text-v0"
    with pytest.raises(alem.AlemError, match="text support"):
        make_player("llm", env, backend="scripted")


def test_bad_settings_are_named(ttt):
    with pytest.raises(alem.AlemError, match="llm.invalid"):
        LLMPlayer(ttt, invalid="pass")
    with pytest.raises(alem.AlemError, match="reprompts"):
        LLMPlayer(ttt, reprompts=-1)
    with pytest.raises(alem.AlemError, match="base_url"):
        LLMPlayer(ttt, backend="openai").begin(ttt, ttt.default_params, 0)


def test_an_api_key_with_credentials_in_the_url_is_refused_up_front(ttt, monkeypatch):
    """Both are an Authorization header and one silently won: refused before any request."""
    monkeypatch.setenv("ALEM_TEST_KEY", "sk-test")
    with pytest.raises(alem.AlemError, match=r"llm.api_key_env=ALEM_TEST_KEY .* llm.base_url") as e:
        LLMPlayer(ttt, **{**FAST, "base_url": "http://u:pw-1@127.0.0.1:9/v1", "api_key_env": "ALEM_TEST_KEY"})
    assert "pw-1" not in str(e.value) and "sk-test" not in str(e.value)


def test_concurrent_rows_fan_out(tmp_path):
    env = alem.make("prisoners_dilemma-v0")
    inflight, peak, lock = [0], [0], threading.Lock()

    def slow(body):
        with lock:
            inflight[0] += 1
            peak[0] = max(peak[0], inflight[0])
        time.sleep(0.5)
        with lock:
            inflight[0] -= 1
        return '{"action": "defect"}'

    with FakeChatServer(script=slow) as srv:
        llm = LLMPlayer(env, base_url=srv.base_url, max_concurrency=3, **FAST)
        res, _, eps = run(env, [llm, first_legal(env)], tmp_path, episodes=8, num_envs=8)
    assert peak[0] == 3  # bounded, and really concurrent
    assert np.allclose([e["returns"] for e in eps], [[5.0, 0.0]] * 8)


def test_recorded_run_replays_offline_with_identical_results(tmp_path):
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    cache = tmp_path / "cache.jsonl"
    with FakeChatServer(script="random") as srv:
        llm = LLMPlayer(env, base_url=srv.base_url, cache=str(cache), **FAST)
        _, rec1, eps1 = run(env, [llm, make_player("random", env)], tmp_path / "a", episodes=3, num_envs=3)
        served = len(srv.requests)
    # the server is gone: every request must come from the cache
    llm = LLMPlayer(env, base_url="http://127.0.0.1:9/v1", cache=str(cache), cache_mode="replay", **FAST)
    _, rec2, eps2 = run(env, [llm, make_player("random", env)], tmp_path / "b", episodes=3, num_envs=3)
    assert served == len(rec1) == 9 and eps1 == eps2
    # Rows answer concurrently, so transcript lines may come in any order: compare by decision.
    by_decision = lambda rec: sorted((r["episode"], r["seat"], r["decision"], r["action"]) for r in rec)
    assert by_decision(rec1) == by_decision(rec2)
    assert all(a["cached"] for r in rec2 for a in r["attempts"])


@pytest.mark.parametrize(
    ("backend", "option", "value", "reader"),
    [
        ("local", "base_url", "http://127.0.0.1:9/v1", "openai"),
        ("local", "api_key_env", "KEY", "openai"),
        ("openai", "model_path", "m.gguf", "local"),
        ("openai", "threads", 4, "local"),
        ("scripted", "base_url", "http://127.0.0.1:9/v1", "openai"),
        ("local", "script", "first", "scripted"),
    ],
)
def test_an_option_only_another_backend_reads_is_refused(ttt, backend, option, value, reader):
    """``llm.base_url=...`` without ``llm=openai`` used to be ignored (the embedded model ran)."""
    with pytest.raises(
        alem.AlemError,
        match=rf"llm.{option}=.* is read by llm={reader} only .* this run's llm.backend is {backend}",
    ):
        LLMPlayer(ttt, backend=backend, **{option: value})
    assert (
        LLMPlayer(ttt, backend="scripted", spec="first").settings.script == "first"
    )  # the spec is the scripted one's
