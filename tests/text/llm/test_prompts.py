"""Prompt modes (``llm.legal_moves``, ``llm.rules``) and the harness hash, through a real local
HTTP server and the evaluator."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import FunctionPlayer
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.prompts import PromptMode, harness_hash, system_prompt, turn_prompt
from alem.text.llm.testing import FakeChatServer
from alem.text.train.pool import TextEnvPool

FAST = dict(backend="openai", model="fake-model", backoff_s=0.001, backoff_cap_s=0.01, timeout_s=5.0)
CELLS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


def _last_legal(env):
    """O takes the last empty cell, so X's first-legal habit keeps its own cells free."""
    return FunctionPlayer(
        lambda key, turn: (
            turn.action_mask.shape[-1] - 1 - jnp.argmax(turn.action_mask[..., ::-1], axis=-1)
        ).astype(jnp.int32),
        "last",
    )


def _play(env, llm, run_dir, episodes=1):
    res = evaluate(
        env, [llm, _last_legal(env)], episodes=episodes, num_envs=1, seed=0, run_dir=run_dir, openings=0
    )
    return res, list(read_jsonl(run_dir / "transcripts.jsonl"))


def test_without_the_legal_list_an_illegal_reply_is_invalid_and_the_reprompt_names_it(ttt, tmp_path):
    """The server answers the first action its request allows; without the legal list that is
    the vocabulary's first, a1, which is taken after X's first move: every later decision is
    illegal, re-prompted (naming a1, listing nothing), then played by the fallback."""
    with FakeChatServer(script="first") as srv:
        llm = LLMPlayer(ttt, base_url=srv.base_url, legal_moves="none", reprompts=1, fallback="first", **FAST)
        res, records = _play(ttt, llm, tmp_path)
        bodies = list(srv.requests)
    system = records[0]["attempts"][0]["messages"][0]["content"]
    assert "Actions are named: " + ", ".join(CELLS) in system and "three marks in a row" in system
    for r in records:
        turn = r["attempts"][0]["messages"][-1]["content"]
        assert "Legal actions" not in turn and "Your move." in turn
    # structured output may name any action (an enum of the legal ones would give them away)
    enums = {
        tuple(b["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]) for b in bodies
    }
    assert enums == {tuple(CELLS)}
    assert [a["status"] for a in records[0]["attempts"]] == ["ok"] and records[0]["action_name"] == "a1"
    for r in records[1:]:
        assert [a["status"] for a in r["attempts"]] == ["illegal", "illegal"]
        feedback = r["attempts"][1]["messages"][-1]["content"]
        assert feedback.startswith('"a1" is not a legal action now.') and "Legal actions" not in feedback
        assert r["fallback"] == "first" and r["action_name"] == r["legal"][0]
    seat = res["seats"][0]
    assert seat["llm_illegal"] == 2 * (len(records) - 1) and seat["llm_fallbacks"] == len(records) - 1
    info = res["players_info"][0]
    assert (info["legal_moves"], info["rules"]) == ("none", "full")
    assert info["harness"] == harness_hash(PromptMode(legal_moves="none"))


def test_the_same_player_with_and_without_the_legal_list(ttt, tmp_path):
    """A random-move player that is never wrong with the list makes illegal moves without it."""
    rates = {}
    for mode in ("list", "none"):
        llm = LLMPlayer(ttt, backend="scripted", script="random", legal_moves=mode, reprompts=0)
        res, _ = _play(ttt, llm, tmp_path / mode, episodes=4)
        rates[mode] = res["seats"][0]["invalid_rate"]
    assert rates["list"] == 0.0 and rates["none"] > 0.2


def test_short_rules_name_the_game_and_seat_only(ttt):
    full = system_prompt(ttt, ttt.default_params, 1)
    short = system_prompt(ttt, ttt.default_params, 1, PromptMode(rules="short"))
    assert short.startswith("You are player 1 in tic-tac-toe and play O; your opponent plays X.\n\n")
    assert "three marks in a row" in full and "three marks in a row" not in short
    assert "Legal actions" in turn_prompt("board", ["a1"]) and "a1" not in turn_prompt(
        "board", ["a1"], PromptMode(legal_moves="none")
    )


def test_every_text_env_summarises_its_rules_in_one_sentence():
    for env_id, spec in alem.registry().items():
        if not spec.text or not str(spec.entry_point).startswith("alem."):
            continue  # not a text env, or one another test registered
        env = alem.make(env_id)
        for agent in range(env.num_agents):
            summary = env.rules_summary(env.default_params, agent)
            assert summary and "\n" not in summary and summary[-1] in ".!?", (env_id, summary)
            assert len(summary) < len(env.rules_text(env.default_params, agent)), env_id


def test_the_harness_hash_names_templates_parser_and_mode():
    modes = [PromptMode(lm, r) for lm in ("list", "none") for r in ("full", "short")]
    hashes = [harness_hash(m) for m in modes]
    assert len(set(hashes)) == 4 and hashes[0] == harness_hash()
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in hashes)


def test_unknown_modes_are_refused_by_name(ttt):
    with pytest.raises(
        alem.AlemError, match=r"llm.legal_moves must be one of \['list', 'none'\], got 'hidden'"
    ):
        LLMPlayer(ttt, backend="scripted", legal_moves="hidden")
    with pytest.raises(alem.AlemError, match=r"llm.rules must be one of \['full', 'short'\], got 'none'"):
        LLMPlayer(ttt, backend="scripted", rules="none")
    with pytest.raises(alem.AlemError, match="prompt_mode must be a PromptMode"):
        TextEnvPool(ttt, 2, prompt_mode="none")


def test_the_training_pool_prompts_in_the_same_modes(ttt):
    pool = TextEnvPool(ttt, 2, prompt_mode=PromptMode(legal_moves="none", rules="short"))
    turns = pool.reset(list(range(2)))
    messages = turns[0].messages
    assert messages[0]["content"] == system_prompt(ttt, ttt.default_params, 0, PromptMode("none", "short"))
    assert "Legal actions" not in messages[-1]["content"]
    step = pool.step([json.dumps({"action": "a1"}), "b2"])
    assert [d.status for d in step.decisions] == ["ok", "ok"]
