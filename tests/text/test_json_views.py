"""JSON views (``TextHooks.to_json``) and JSON replies (``action_from_json``), and the JSON prompt
mode (``llm.format=json``) of the LLM player and the training pool."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import make_player
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.prompts import PromptMode
from alem.text.train.pool import TextEnvPool

TEXT_IDS = sorted(k for k, spec in alem.registry().items() if spec.text)


@pytest.mark.parametrize("env_id", TEXT_IDS)
def test_every_text_env_has_a_json_view_of_each_seat(env_id, harness):
    """The view is a JSON object (it survives a round trip) and says whose it is."""
    h = harness(env_id)
    env = h.env
    # the smoke program's states (after reset and after one step; test_smoke compiles it)
    states, _, states2, _ = jax.device_get(h.smoke(jax.random.key(0), h.params))
    for batch in (states, states2):
        for b in range(2):
            state = jax.tree.map(lambda x, b=b: x[b], batch)
            for agent in range(env.num_agents):
                view = env.to_json(state, agent)
                assert json.loads(json.dumps(view)) == view, env_id
                assert view["env"] == env_id and view["seat"] == agent and len(view) > 2


def test_board_and_poker_views_hold_what_the_seat_knows():
    ttt = alem.make("tic_tac_toe-v0")
    state, _ = ttt.reset(jax.random.key(0))
    state, _ = ttt.step(jax.random.key(1), state, np.array([4, 0], np.int32))
    view = ttt.to_json(state, 1)
    assert view["board"] == ["...", ".X.", "..."] and view["your_piece"] == "O" and view["to_move"] == "you"
    kuhn = alem.make("kuhn_poker-v0")
    state, _ = kuhn.reset(jax.random.key(3))
    cards = np.asarray(state.cards)
    views = [kuhn.to_json(state, i) for i in range(2)]
    assert [v["your_card"] for v in views] == [kuhn.card_name(c) for c in cards]
    assert kuhn.card_name(cards[1]) not in json.dumps(views[0]).replace(views[0]["your_card"], "")


def test_json_replies_name_an_action_or_nothing():
    ttt = alem.make("tic_tac_toe-v0")
    read = ttt.action_from_json
    assert read({"action": "b2"}) == 4 and read({"action": 8}) == 8 and read({"action": "centre"}) == 4
    for bad in ["b2", ["b2"], {"move": "b2"}, {"action": 9}, {"action": True}, {"action": "nowhere"}, None]:
        assert read(bad) is None, bad


def test_the_json_prompt_mode_shows_the_json_view_and_reads_only_json(tmp_path):
    ttt = alem.make("tic_tac_toe-v0")
    replies = iter(
        ['{"action": "a1"}', "b1", '```json\n{"action": "c1"}\n```', '["a2"]', '{"action": 7}'] * 4
    )
    llm = LLMPlayer(
        ttt,
        backend="scripted",
        script=lambda body: next(replies),
        format="json",
        reprompts=0,
        invalid="first",
    )
    res = evaluate(
        ttt, [llm, make_player("random", ttt)], episodes=1, num_envs=1, seed=0, run_dir=tmp_path, openings=0
    )
    records = list(read_jsonl(tmp_path / "transcripts.jsonl"))
    statuses = [r["attempts"][0]["status"] for r in records]
    assert statuses[:2] == ["ok", "unparseable"] and statuses[2] in ("ok", "illegal")
    turn = records[0]["attempts"][0]["messages"][-1]["content"]
    shown = json.loads(turn.split("\n\n")[0])
    assert shown["board"] == ["...", "...", "..."] and shown["your_piece"] == "X"
    assert "one JSON object" in records[0]["attempts"][0]["messages"][0]["content"]
    assert res["players_info"][0]["format"] == "json"
    if len(statuses) > 3:
        assert statuses[3] == "unparseable"  # a JSON list is not an object


def test_the_training_pool_prompts_and_reads_json():
    pool = TextEnvPool("tic_tac_toe-v0", 1, prompt_mode=PromptMode(format="json"))
    turn = pool.reset([0])[0]
    assert json.loads(turn.messages[-1]["content"].split("\n\n")[0])["to_move"] == "you"
    step = pool.step(["b2"])
    assert step.decisions[0].status == "unparseable" and step.decisions[0].invalid
    step = pool.step(['{"action": "a1"}'])
    assert step.decisions[0].status == "ok"
