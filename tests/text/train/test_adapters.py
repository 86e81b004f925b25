"""Trainer adapters: a pool driven by a real local OpenAI-compatible server, and the one-move reward."""

from __future__ import annotations

import json

import pytest

import alem
from alem.engine.sync import run_sync
from alem.errors import AlemError
from alem.text.llm.openai import OpenAIChatBackend
from alem.text.llm.testing import FakeChatServer
from alem.text.train.adapters import DecisionReward, decision_dataset, rollout
from alem.text.train.export import export_experts, read_decisions
from alem.text.train.pool import TextEnvPool


def test_rollout_through_an_openai_compatible_endpoint_with_faults():
    env = alem.make("kuhn_poker-v0")
    pool = TextEnvPool(env, 3, seed=5, invalid="first")
    # first request: a reply naming no move; second: HTTP 500 with no retries (a failed request)
    with FakeChatServer(script="random", faults=["garbage", "500"]) as srv:
        backend = OpenAIChatBackend(srv.base_url, "fake-model", max_retries=0, backoff_s=0.001, timeout_s=5.0)
        try:
            results = rollout(pool, backend, range(4), max_concurrency=1)
        finally:
            run_sync(backend.aclose())
        decisions = [d for r in results for d in r.trajectory]
        assert len(srv.requests) == len(decisions)  # one request per decision, nothing retried
        # every request carried one decision's chat, exactly as the pool built it
        assert all(any(b["messages"] == d.turn.messages for d in decisions) for b in srv.requests)
    assert sorted(r.seed for r in results) == [0, 1, 2, 3]
    invalid = [d for d in decisions if d.invalid]
    assert len(invalid) == 2 and {d.status for d in invalid} == {"unparseable"}
    assert all(d.action == d.turn.legal_actions[0] for d in invalid)  # invalid="first"
    assert sum(sum(r.invalid) for r in results) == 2


@pytest.fixture(scope="module")
def ttt_reward():
    return DecisionReward("tic_tac_toe-v0", "minimax", invalid_reward=-2.0)


def test_one_move_reward_known_position(ttt_reward):
    env = ttt_reward.env
    idx = {n: env.parse_action(n, 0) for n in ("a1", "a2", "a3", "b1", "b2", "b3", "c1")}
    # X holds a1, a2; O holds b1, b2; X to move. a3 completes X's line (+1); c1 leaves b3 to O,
    # which minimax takes (-1); a reply that names no move scores invalid_reward.
    prefix = [[idx["a1"], 0], [0, idx["b1"]], [idx["a2"], 0], [0, idx["b2"]], [0, 0]]
    completions = [
        [{"role": "assistant", "content": json.dumps({"action": "a3"})}],  # TRL conversational
        "I play c1.",  # standard format, free text
        "pass",
        json.dumps({"action": "b1"}),  # taken: illegal
    ]
    scores = ttt_reward(
        None,
        completions,
        seat=[0] * 4,
        seed=[0] * 4,
        base_seed=[0] * 4,
        actions=[prefix] * 4,
        legal=[["unused"]] * 4,  # extra dataset columns are ignored
    )
    assert scores == [1.0, -1.0, -2.0, -2.0]


def test_one_move_reward_on_exported_rows_prefers_the_experts_move(ttt_reward, tmp_path):
    out = tmp_path / "ttt.jsonl"
    export_experts("tic_tac_toe-v0", "minimax", out, episodes=2, num_envs=2)
    rows = decision_dataset(read_decisions(out), seats=[0])
    assert rows and all(r["seat"] == 0 for r in rows)
    cols = {k: [r[k] for r in rows] for k in ("seat", "seed", "base_seed", "actions", "key_splits")}
    prompts = [r["prompt"] for r in rows]
    expert = ttt_reward(prompts, [json.dumps({"action": r["expert"]}) for r in rows], **cols)
    assert expert == [0.0] * len(rows)  # perfect play on both sides: a draw from every position
    for k, r in enumerate(rows[:2]):  # no legal move does better than the expert's
        alts = ttt_reward(
            [r["prompt"]] * len(r["legal"]),
            [json.dumps({"action": m}) for m in r["legal"]],
            **{c: [v[k]] * len(r["legal"]) for c, v in cols.items()},
        )
        assert max(alts) == expert[k]
    # A row replayed against a different deal/move list than its prompt is refused.
    bad = dict(cols, actions=[cols["actions"][1], cols["actions"][0]] + cols["actions"][2:])
    with pytest.raises(AlemError, match="does not match the prompt"):
        ttt_reward(prompts[:2], ["a1", "a1"], **{c: v[:2] for c, v in bad.items()})
