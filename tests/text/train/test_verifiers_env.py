"""verifiers (v1) environment of alem's text games (alem/text/train/verifiers_env.py): episodes run
through verifiers' own machinery (interception server, traces) against a scripted
OpenAI-compatible server give TextEnvPool's prompts, parses, invalid flags and returns for the
same seeds; verifiers' loader and vf-eval resolve the plugin id (integration); the real SmolLM2
gives alem's rollout replies (exhaustive)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import alem
from alem.errors import AlemError, ConfigError, DependencyNotInstalled, UnknownEnvError
from alem.text.llm.scripted import ScriptedBackend, legal_names_in
from alem.text.llm.testing import FakeChatServer
from alem.text.train.adapters import rollout
from alem.text.train.grpo import opponent_player, pool_reply
from alem.text.train.pool import TextEnvPool

# One xdist worker for the file: verifiers' import (~10 s) and the compiled pools are paid once.
pytestmark = pytest.mark.xdist_group("verifiers_env")

ROOT = Path(__file__).resolve().parents[3]
KUHN, TTT = "kuhn_poker-v0", "tic_tac_toe-v0"
PENALTY = 0.5


@pytest.fixture(scope="module")
def ve():
    """The module under test (skips without verifiers)."""
    pytest.importorskip("verifiers.v1")
    from alem.text.train import verifiers_env

    return verifiers_env


def seeded_script(body):
    """Reply by the request seed: no move, a move in a sentence (parsed by the free-text
    fallback) or the JSON answer, each a third of the time."""
    names, seed = legal_names_in(body), int(body["seed"])
    pick = names[(seed // 3) % len(names)]
    return ["no idea", f"I think I will {pick} now.", json.dumps({"action": pick})][seed % 3]


def view_script(body):
    """Reply by the view (no seed): no move, a sentence or JSON (json mode takes only JSON)."""
    names = legal_names_in(body)
    h = zlib.crc32(body["messages"][-1]["content"].encode())
    pick = names[h % len(names)]
    return ["pass?", f"my move: {pick}", json.dumps({"action": pick})][(h >> 8) % 3]


def reference(env_id, seeds, text_seats, script, opponent="random", request_seed=None, **kw):
    """Episodes of a separately compiled TextEnvPool (all seeds in one batch) answered through
    alem's own chat-backend rollout."""
    env = alem.make(env_id)
    others = {i: opponent_player(env, opponent) for i in range(env.num_agents) if i not in text_seats}
    pool = TextEnvPool(env, len(seeds), players=others or None, **kw)
    return {ep.seed: ep for ep in rollout(pool, ScriptedBackend(script), seeds, request_seed=request_seed)}


def chats_and_replies(trace):
    """Each model call of a trace: the messages sent and the reply (one branch per decision)."""
    from verifiers.v1.dialects.chat import message_to_wire

    branches = trace.branches
    return [[message_to_wire(m) for m in b.messages[:-1]] for b in branches], [
        b.messages[-1].content for b in branches
    ]


def assert_same_seat(trace, ep, seat, *, raw_replies=True):
    """The trace of ``seat`` holds the reference episode's prompts, replies, parses and returns."""
    mine = [d for d in ep.trajectory if d.turn.seat == seat]
    sent, replies = chats_and_replies(trace)
    assert sent == [d.turn.messages for d in mine]
    if raw_replies:
        assert replies == [d.reply for d in mine]
    info = trace.info["alem"]
    assert (info["seed"], info["seat"], info["returns"]) == (ep.seed, seat, list(ep.returns))
    got = [(x["turn"], x["legal"], x["action"], x["status"], x["invalid"]) for x in info["decisions"]]
    assert got == [(d.turn.turn, d.turn.legal, d.action_name, d.status, d.invalid) for d in mine]
    assert trace.rewards["game_return"].score == ep.returns[seat]
    assert trace.metrics["invalid_replies"] == ep.invalid[seat]
    assert trace.metrics["decisions"] == ep.decisions[seat] == len(mine)
    assert trace.ok and trace.num_turns == len(mine)


# ---------------------------------------------------------------------------- opponents
@pytest.fixture(scope="module")
def kuhn_run(ve):
    """Seat 0 against a random device player, seeded requests, a penalty per invalid reply."""
    with FakeChatServer(seeded_script) as srv:
        env = ve.load_environment(
            KUHN, seats=[0], num_seeds=6, request_seed=0, invalid_penalty=PENALTY, seed=3
        )
        episodes = ve.play(env, base_url=srv.base_url, model="fake-model")
        return episodes, list(srv.requests)


@pytest.mark.exhaustive  # the default run's budget: importing verifiers alone takes ~10 s
def test_episodes_give_the_pools_prompts_parses_and_returns(kuhn_run):
    episodes, requests = kuhn_run
    ref = reference(KUHN, range(6), (0,), seeded_script, request_seed=0, seed=3)
    assert [ep.task.data.seed for ep in episodes] == list(range(6))
    for ep in episodes:
        assert ep.ok and len(ep.traces) == 1
        trace, want = ep.traces[0], ref[ep.task.data.seed]
        assert_same_seat(trace, want, 0)
        assert trace.reward == pytest.approx(want.returns[0] - PENALTY * want.invalid[0])
        assert trace.rewards["invalid_replies"].weight == -PENALTY
    # what reached the server: the pool's chats with arollout's request seeds, nothing else
    want_bodies = sorted(
        json.dumps([d.turn.messages, hash((0, d.turn.seed, 0, d.turn.turn)) & 0x7FFFFFFF])
        for ep in ref.values()
        for d in ep.trajectory
        if d.turn.seat == 0
    )
    assert sorted(json.dumps([b["messages"], b["seed"]]) for b in requests) == want_bodies
    assert {k for b in requests for k in b} == {"model", "messages", "seed"}
    # the deals cover what is compared: invalid and free-text replies, two-decision games
    decisions = [x for ep in episodes for x in ep.traces[0].info["alem"]["decisions"]]
    assert {x["status"] for x in decisions} >= {"ok", "unparseable"}
    assert any(len(ep.traces[0].info["alem"]["decisions"]) == 2 for ep in episodes)


# ---------------------------------------------------------------------------- self-play
@pytest.fixture(scope="module")
def ttt_run(ve):
    """Both seats ask the model; no request seed; only JSON answers count."""
    with FakeChatServer(view_script) as srv:
        env = ve.load_environment(TTT, self_play=True, num_seeds=2, answer="json", invalid="first")
        return ve.play(env, base_url=srv.base_url, model="fake-model"), list(srv.requests)


@pytest.mark.exhaustive  # the default run's budget
def test_self_play_asks_the_model_for_every_seat_in_its_own_trace(ttt_run):
    episodes, requests = ttt_run
    ref = reference(TTT, [0, 1], (0, 1), lambda b: pool_reply(view_script(b), "json"), invalid="first")
    for ep in episodes:
        assert ep.ok and ep.task.data.seat is None
        traces = sorted(ep.traces, key=lambda t: t.task.data.seat)  # ep.traces: in completion order
        assert [t.task.data.seat for t in traces] == [0, 1]
        assert {t.agent.name for t in traces} == {"player"}
        want = ref[ep.task.data.seed]
        for seat, trace in enumerate(traces):
            assert_same_seat(trace, want, seat, raw_replies=False)
            assert "invalid_replies" not in trace.rewards  # no penalty: the return alone
            assert trace.reward == want.returns[seat]
            assert trace.metrics["outcome"] == (want.returns[seat] > want.returns[1 - seat]) - (
                want.returns[seat] < want.returns[1 - seat]
            )
            # json mode: a move named in a sentence is an invalid reply, flagged as the pool does
            _, replies = chats_and_replies(trace)
            for reply, d in zip(replies, trace.info["alem"]["decisions"], strict=True):
                assert d["invalid"] == (not reply.startswith("{"))
    assert all("seed" not in b for b in requests)  # request_seed=None: groups may differ
    assert any(d["invalid"] for ep in episodes for t in ep.traces for d in t.info["alem"]["decisions"])


# ---------------------------------------------------------------------------- plumbing
@pytest.mark.exhaustive  # the default run's budget
def test_verifiers_loader_resolves_the_plugin_id_and_the_config_round_trips(ve):
    import verifiers.v1 as vf
    from verifiers.v1.utils import loaders

    import alem_verifiers

    assert loaders.taskset_class(ve.PLUGIN_ID) is ve.AlemTaskset is alem_verifiers.AlemTaskset
    assert loaders.environment_class(ve.PLUGIN_ID) is ve.AlemEnv
    assert loaders.default_harness_id(ve.PLUGIN_ID) == ve.PLUGIN_ID  # the in-process harness
    assert loaders.harness_class(ve.PLUGIN_ID) is ve.AlemChatHarness
    raw = {
        "taskset": {"id": ve.PLUGIN_ID, "env_id": KUHN, "seats": [1, 0], "num_seeds": 2, "opponent": "cfr"}
    }
    cfg = vf.resolve_env_config(raw)
    assert isinstance(cfg, ve.AlemEnvConfig) and isinstance(cfg.taskset, ve.AlemTasksetConfig)
    assert cfg.player.runtime.type == "subprocess"  # local: no sandbox, no tunnel
    assert vf.resolve_env_config(json.loads(cfg.model_dump_json())) == cfg  # as env servers ship it
    env = vf.load_environment(cfg)
    tasks = list(env.taskset)
    assert [(t.data.seed, t.data.seat, t.data.env_id) for t in tasks] == [
        (0, 1, KUHN),
        (0, 0, KUHN),
        (1, 1, KUHN),
        (1, 0, KUHN),
    ]
    assert (
        tasks[0].data.name == "kuhn_poker-v0 seed 0 seat 1" and tasks[0].key == "kuhn_poker-v0/seed=0/seat=1"
    )
    assert env.taskset.bounded
    endless = ve.load_environment(KUHN, first_seed=10)
    assert not endless.taskset.bounded
    assert [t.data.seed for t in endless.taskset.take(3)] == [10, 11, 12]
    with pytest.raises(ConfigError, match="endless.*limit="):
        ve.play(endless, base_url="http://127.0.0.1:9/v1", model="m")


@pytest.mark.exhaustive  # the default run's budget
def test_bad_input_is_refused_clearly(ve):
    with pytest.raises(
        UnknownEnvError, match=r"unknown env id 'kuhn_pokr-v0'; did you mean \['kuhn_poker-v0'\]"
    ):
        ve.load_environment("kuhn_pokr-v0")
    with pytest.raises(AlemError, match="mpe/simple_spread-v0 has no text support"):
        ve.load_environment("mpe/simple_spread-v0")
    with pytest.raises(ConfigError, match="needs env_id"):
        ve.load_environment("")
    for seats in ([2], [], [0, 0], [-1]):
        with pytest.raises(ConfigError, match=r"seats must be distinct seats of kuhn_poker-v0 \(0..1\)"):
            ve.load_environment(KUHN, seats=seats)
    with pytest.raises(AlemError, match="no player 'minmax' for env 'kuhn_poker-v0'"):
        ve.load_environment(KUHN, opponent="minmax")
    with pytest.raises(ConfigError, match="no move 'raise'"):
        ve.load_environment(KUHN, opponent="always:raise")
    with pytest.raises(ConfigError, match="num_seeds must be >= 1"):
        ve.load_environment(KUHN, num_seeds=0)
    with pytest.raises(ValueError, match="invalid"):  # pydantic names the field and the choices
        ve.load_environment(KUHN, invalid="skip")


def test_without_verifiers_the_import_names_the_extra(monkeypatch):
    for name in ("verifiers", "verifiers.v1"):
        monkeypatch.setitem(sys.modules, name, None)  # as if verifiers were not installed
    monkeypatch.delitem(sys.modules, "alem.text.train.verifiers_env", raising=False)
    with pytest.raises(
        DependencyNotInstalled, match=r'missing: verifiers\): pip install "alem\[verifiers\]"'
    ):
        importlib.import_module("alem.text.train.verifiers_env")


@pytest.mark.integration  # vf-eval in a subprocess (~15 s: verifiers' import and a compile)
def test_vf_eval_loads_and_runs_the_plugin(ve, tmp_path):
    with FakeChatServer(seeded_script) as srv:
        cmd = [sys.executable, "-c", "from verifiers.v1.cli.eval.main import main; main()"]
        args = ["alem_verifiers", "--env.taskset.env-id", TTT, "--env.taskset.opponent", "minimax"]
        args += [
            "--env.taskset.seats",
            "[1]",
            "--env.taskset.num-seeds",
            "2",
            "--env.taskset.request-seed",
            "0",
        ]
        args += ["-m", "fake-model", "--client.base-url", srv.base_url, "--no-push", "--no-rich"]
        args += ["-o", str(tmp_path), "--run.name", "ttt"]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu", "HOME": str(tmp_path)}
        res = subprocess.run(cmd + args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
    lines = [json.loads(x) for x in (tmp_path / "ttt" / "traces.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    ref = reference(TTT, [0, 1], (1,), seeded_script, opponent="minimax", request_seed=0)
    for line in lines:
        (trace,) = line["traces"]
        want = ref[trace["task"]["data"]["seed"]]
        assert trace["rewards"]["game_return"]["score"] == want.returns[1]
        assert [d["action"] for d in trace["info"]["alem"]["decisions"]] == [
            d.action_name for d in want.trajectory if d.turn.seat == 1
        ]


# ---------------------------------------------------------------------------- the real model
@pytest.mark.exhaustive  # SmolLM2-135M on llama.cpp, one thread: a few seconds per decision
def test_smollm2_through_verifiers_replies_as_through_alems_rollout(ve):
    pytest.importorskip("xllamacpp")
    from alem.text.llm import local_server
    from alem.text.llm.openai import OpenAIChatBackend

    try:
        server = local_server.acquire(threads=1, context=2048)
    except DependencyNotInstalled as e:
        pytest.skip(str(e))
    try:
        # The same request on both paths: greedy, 16 tokens, seeded, no prompt cache, no schema.
        sampling = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 16, "cache_prompt": False}
        env = ve.load_environment(KUHN, seats=[0], num_seeds=2, request_seed=0)
        episodes = ve.play(
            env, base_url=server.base_url, model=local_server.DEFAULT_MODEL_ALIAS, sampling=sampling
        )
        backend = OpenAIChatBackend(
            server.base_url,
            local_server.DEFAULT_MODEL_ALIAS,
            temperature=0.0,
            max_tokens=16,
            structured="off",
            extra_body={"cache_prompt": False},
        )
        kuhn = alem.make(KUHN)
        pool = TextEnvPool(kuhn, 2, players={1: opponent_player(kuhn, "random")})
        ref = {ep.seed: ep for ep in rollout(pool, backend, range(2), request_seed=0)}
    finally:
        local_server.release(server)
    for ep in episodes:
        assert ep.ok, ep.errors
        assert_same_seat(ep.traces[0], ref[ep.task.data.seed], 0)
