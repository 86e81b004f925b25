"""Reply parsing: structured answers, the tolerant text fallback, and every text env's action names."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

import alem
from alem.text.llm.parsing import MAX_PARSE_CHARS, action_schema, parse_reply
from tests.ids import contract_ids

TEXT_ENVS = [k for k in contract_ids() if alem.registry()[k].text]  # SMAX by three maps (tests/ids.py)


@pytest.fixture(scope="module")
def pd():
    return alem.make("prisoners_dilemma-v0")


@pytest.mark.parametrize(
    ("reply", "status", "action"),
    [
        ('{"action": "defect"}', "ok", 1),
        ('```json\n{"action": "cooperate"}\n```', "ok", 0),
        ("Defect.", "ok", 1),
        ("I choose cooperate", "ok", 0),
        ("Cooperate is nice but defect pays more.\nFinal answer: defect", "ok", 1),
        ("cooperate or defect, hard to say", "unparseable", None),
        ("let me think about the weather", "unparseable", None),
        ("", "unparseable", None),
        ('{"action": "banana"}', "unparseable", None),
        # a JSON answer decides alone, even if the text around it names the other action
        ('I would cooperate, but {"action": "defect"}', "ok", 1),
    ],
)
def test_parse_reply_cases(pd, reply, status, action):
    res = parse_reply(reply, pd, 0, legal=[0, 1])
    assert (res.status, res.action) == (status, action)


def test_illegal_reply_is_told_apart_from_unparseable(pd):
    res = parse_reply('{"action": "defect"}', pd, 0, legal=[0])
    assert res.status == "illegal" and res.action is None and res.named == 1


def test_very_long_reply_is_cut_before_parsing(pd):
    tail = " ".join(["blah"] * (MAX_PARSE_CHARS // 4)) + " defect"
    assert parse_reply(tail, pd, 0, legal=[0, 1]).status == "unparseable"  # the move is past the cut
    assert parse_reply("defect " + tail[:-7], pd, 0, legal=[0, 1]).action == 1


def test_action_schema_lists_exactly_the_legal_names():
    schema = action_schema(["a", "c"])
    assert schema["properties"]["action"]["enum"] == ["a", "c"]
    assert schema["required"] == ["action"] and schema["additionalProperties"] is False


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_every_legal_action_name_parses_back(env_id, harness):
    """Through the bridge's parser, as a bare name and as the structured answer, for every seat."""
    h = harness(env_id)  # the id's smoke program (tests/test_smoke.py): no compile of its own
    env = h.env
    _, ts, _, _ = h.smoke(jax.random.key(0), h.params)
    mask = np.asarray(ts.action_mask[0])
    for i in range(env.num_agents):
        names = env.action_names(i)
        legal = [int(j) for j in np.flatnonzero(mask[i])] or list(range(len(names)))
        for j in legal:
            for reply in (names[j], json.dumps({"action": names[j]})):
                res = parse_reply(reply, env, i, legal)
                assert (res.status, res.action) == ("ok", j), (env_id, i, names[j], res)
        # every action name, legal now or not, names that action
        for j, name in enumerate(names):
            assert parse_reply(json.dumps({"action": name}), env, i, range(len(names))).action == j


def test_given_the_position_free_text_is_read_by_the_envs_parse_move(pd):
    """``state=`` hands the reply to ``parse_move`` (chess reads SAN there); without it, to
    ``parse_action``; the status still follows the legal set."""
    seen = []

    class InPosition(type(pd)):
        def parse_move(self, state, text, agent=0, params=None):
            seen.append((state, text, agent))
            return 1 if text == "the other one" else None

    env = InPosition(game="prisoners_dilemma")
    res = parse_reply("the other one", env, 0, legal=[0, 1], state="here")
    assert (res.status, res.action) == ("ok", 1) and seen == [("here", "the other one", 0)]
    assert parse_reply("the other one", env, 0, legal=[0]).status == "unparseable"  # no state: names only
    assert parse_reply("the other one", env, 0, legal=[0], state="here").status == "illegal"
