"""The fault suite: hostile LLM servers, killed runs and torn files, for both CLIs.

Every case here was once a crash, a hang or silently wrong results. A summary of what
was injected (faults served, runs killed, episodes lost, duplicates) is printed at the
end of the session (see ``tests/conftest.py``). The soak variants (more kill points)
are marked slow and run in CI.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

import alem
from alem.engine.sync import run_sync
from alem.errors import CacheMiss, RequestFailed
from alem.evaluate import EvaluationStopped, evaluate, format_table
from alem.players import make_player
from alem.rundir import JsonlWriter, read_jsonl
from alem.text.llm.cache import RequestCache
from alem.text.llm.openai import OpenAIChatBackend
from alem.text.llm.player import LLMPlayer
from alem.text.llm.testing import FakeChatServer

pytestmark = pytest.mark.integration  # fault injection: hostile servers, killed runs, torn files

FAST = dict(backend="openai", model="fake-model", backoff_s=0.001, backoff_cap_s=0.01, timeout_s=5.0)
MSG = [{"role": "user", "content": "Legal actions: stag, hare\nYour move."}]


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


def backend(srv, **kw):
    return OpenAIChatBackend(srv.base_url, "fake-model", **{"backoff_s": 0.001, "backoff_cap_s": 0.01, **kw})


def chat(b, seed=0):
    return run_sync(b.chat(MSG, legal_names=["stag", "hare"], seed=seed))


def llm_vs_random(env, srv, **kw):
    return [LLMPlayer(env, base_url=srv.base_url, **{**FAST, **kw}), make_player("random", env)]


# ---------------------------------------------------------------------------- hostile replies
@pytest.mark.parametrize("fault", ["huge_usage", "deep", "empty", "malformed"])
def test_malformed_replies_are_counted_and_retried_never_raised(fault, fault_report):
    with FakeChatServer(script="first", faults=[fault]) as srv:
        reply = chat(backend(srv, max_retries=1))
        fault_report(faults=1)
    assert reply.errors == ["malformed"] and json.loads(reply.content) == {"action": "stag"}
    with FakeChatServer(faults=[fault]) as srv, pytest.raises(RequestFailed) as e:
        chat(backend(srv, max_retries=0))
    assert e.value.kind == "malformed"


def test_a_lone_surrogate_is_replaced_and_every_file_stays_readable(ttt, tmp_path, fault_report):
    cache = tmp_path / "cache.jsonl"
    with FakeChatServer(script="first", faults=["surrogate"] * 4) as srv:
        players = llm_vs_random(ttt, srv, cache=str(cache))
        evaluate(ttt, players, episodes=2, num_envs=2, run_dir=tmp_path / "a", progress=False)
        fault_report(faults=4)
        replies = [
            a["reply"] for r in read_jsonl(tmp_path / "a" / "transcripts.jsonl") for a in r["attempts"]
        ]
        assert sum("\ufffd" in r for r in replies) == 4
        # The cached replies replay through the same cleaning (this crashed every resume before).
        evaluate(
            ttt,
            llm_vs_random(ttt, srv, cache=str(cache)),
            episodes=2,
            num_envs=2,
            run_dir=tmp_path / "b",
            progress=False,
        )
    a = sorted(
        (r["episode"], r["decision"], r["action"]) for r in read_jsonl(tmp_path / "a" / "transcripts.jsonl")
    )
    b = sorted(
        (r["episode"], r["decision"], r["action"]) for r in read_jsonl(tmp_path / "b" / "transcripts.jsonl")
    )
    assert a == b


def test_the_deadline_bounds_a_trickling_reply(fault_report):
    with FakeChatServer(faults=["trickle"], trickle_s=0.1) as srv:
        b = backend(srv, timeout_s=1.0, max_retries=0)
        t0 = time.perf_counter()
        with pytest.raises(RequestFailed) as e:
            chat(b)
        took = time.perf_counter() - t0
        fault_report(faults=1)
    assert e.value.kind == "timeout" and took < 3.0  # ~30 s of trickling before the deadline existed


def test_an_oversized_reply_is_cut_flagged_and_never_echoed(ttt, tmp_path, fault_report):
    with FakeChatServer(faults=["big:400000", "ok"]) as srv:
        reply = chat(backend(srv, max_retries=1))
        fault_report(faults=1)
    assert reply.errors == ["oversized"]
    with FakeChatServer(faults=["big:400000"]) as srv, pytest.raises(RequestFailed) as e:
        chat(backend(srv, max_retries=0, max_reply_bytes=4096))
    assert (
        e.value.kind == "oversized"
        and e.value.detail["truncated"]
        and len(e.value.detail["reply_head"]) <= 2000
    )
    # A long (under the cap) unusable reply: the re-prompt repeats at most 2,000 characters of it.
    with FakeChatServer(script="first", faults=["big:200000", "ok"]) as srv:
        evaluate(
            ttt,
            llm_vs_random(ttt, srv, reprompts=1),
            episodes=1,
            num_envs=1,
            run_dir=tmp_path,
            progress=False,
        )
        echoed = srv.requests[1]["messages"][-2]
        fault_report(faults=1)
    assert echoed["role"] == "assistant" and 2000 <= len(echoed["content"]) < 2100
    record = (tmp_path / "transcripts.jsonl").read_text().splitlines()[0]
    assert len(record) < 250_000  # the reply once, not once per attempt


# ---------------------------------------------------------------------------- circuit breaker
@pytest.mark.parametrize("faults, max_retries", [(["401"] * 50, 4), (["500"] * 200, 1)])
def test_a_dead_endpoint_stops_the_run_and_resume_finishes_it(
    ttt, tmp_path, faults, max_retries, fault_report
):
    with FakeChatServer(script="first", faults=["ok"] * 10) as srv:
        srv.add_faults(faults)
        with pytest.raises(EvaluationStopped, match="in a row.*resume=") as e:
            evaluate(
                ttt,
                llm_vs_random(ttt, srv, max_retries=max_retries),
                episodes=8,
                num_envs=2,
                run_dir=tmp_path,
                progress=False,
            )
        fault_report(faults=sum(f != "ok" for f in srv.served))
        assert "max_consecutive_failures=5" in str(e.value)
        kept = [r["episode"] for r in read_jsonl(tmp_path / "episodes.jsonl")]
        assert 0 < len(kept) < 8
        srv.faults.clear()  # the endpoint is fixed
        res = evaluate(
            ttt,
            llm_vs_random(ttt, srv, max_retries=max_retries),
            episodes=8,
            num_envs=2,
            run_dir=tmp_path,
            resume=True,
            progress=False,
        )
    eps = [r["episode"] for r in read_jsonl(tmp_path / "episodes.jsonl")]
    assert sorted(eps) == list(range(8)) and res["seats"][0]["llm_api_errors"] < 5
    fault_report(killed=1, lost=8 - len(set(eps)), duplicates=len(eps) - len(set(eps)))


def test_a_high_failure_rate_trips_the_breaker_too(ttt, tmp_path, fault_report):
    with FakeChatServer(script="first", faults=["500", "500", "ok"] * 40) as srv:
        players = llm_vs_random(ttt, srv, max_retries=0, min_decisions=12)
        with pytest.raises(EvaluationStopped, match="max_failure_rate=0.5"):
            evaluate(ttt, players, episodes=20, num_envs=2, run_dir=tmp_path, progress=False)
        fault_report(faults=sum(f != "ok" for f in srv.served))


def test_a_short_run_whose_every_request_failed_stops_below_the_breakers_thresholds(ttt, tmp_path):
    # 2 games, about 8 decisions: fewer than the breaker's thresholds (50 in a row, 20 decisions).
    with FakeChatServer(script="first", faults=["500"] * 100) as srv:
        players = llm_vs_random(ttt, srv, max_retries=0, max_consecutive_failures=50)
        with pytest.raises(
            EvaluationStopped, match="every one of its .* decisions got no reply.*resume="
        ) as e:
            evaluate(ttt, players, episodes=2, num_envs=2, run_dir=tmp_path, progress=False)
        assert "\n" not in str(e.value)
        # Those games were the fallback's: none is kept, and a resume plays them with the model.
        assert list(read_jsonl(tmp_path / "episodes.jsonl")) == []
        assert list(read_jsonl(tmp_path / "transcripts.jsonl")) == []
        srv.faults.clear()
        res = evaluate(
            ttt,
            llm_vs_random(ttt, srv),
            episodes=2,
            num_envs=2,
            run_dir=tmp_path,
            resume=True,
            progress=False,
        )
    assert sorted(r["episode"] for r in read_jsonl(tmp_path / "episodes.jsonl")) == [0, 1]
    assert res["seats"][0]["llm_api_errors"] == 0


def test_seats_that_mostly_fell_back_are_marked_in_the_table(ttt, tmp_path):
    def script(body):
        return "no idea" if body["seed"] % 3 else json.dumps({"action": "a1"})

    players = [LLMPlayer(ttt, backend="scripted", script=script, reprompts=0), make_player("random", ttt)]
    res = evaluate(ttt, players, episodes=6, num_envs=3, run_dir=tmp_path, progress=False)
    seat = res["seats"][0]
    assert seat["fallback_rate"] > 0.1 and seat["fallback_warning"] is True
    assert res["seats"][1].get("fallback_warning") is None
    table = format_table(res)
    assert " !" in table and "fallback policy" in table


def test_a_replay_cache_miss_stops_the_run(ttt, tmp_path):
    cache = tmp_path / "cache.jsonl"
    with FakeChatServer(script="first") as srv:
        evaluate(
            ttt,
            llm_vs_random(ttt, srv, cache=str(cache)),
            episodes=1,
            num_envs=1,
            run_dir=tmp_path / "rec",
            progress=False,
        )
    players = [
        LLMPlayer(ttt, base_url="http://127.0.0.1:9/v1", cache=str(cache), cache_mode="replay", **FAST),
        make_player("random", ttt),
    ]
    with pytest.raises(EvaluationStopped, match="replay cache"):
        evaluate(ttt, players, episodes=3, num_envs=1, run_dir=tmp_path / "replay", progress=False)


def test_credentials_in_base_url_reach_no_file(tmp_path):
    from hydra import compose, initialize_config_module

    from alem.evaluate import run

    with FakeChatServer(script="first") as srv:
        url = srv.base_url.replace("http://", "http://alice:s3cr3t-key@")
        with initialize_config_module(config_module="alem.configs", version_base=None):
            cfg = compose(
                config_name="evaluate",
                overrides=[
                    "env.id=tic_tac_toe-v0",
                    "llm=openai",
                    f"llm.base_url='{url}'",
                    "llm.model=fake-model",
                    "episodes=1",
                    "num_envs=1",
                ],
            )
        res = run(cfg, tmp_path / "run")
        assert len(srv.requests) > 0
    assert res["seats"][0]["llm_api_errors"] == 0
    for f in (tmp_path / "run").iterdir():
        text = f.read_text()
        assert "s3cr3t" not in text, f.name
    assert "alice:***@" in (tmp_path / "run" / "config.yaml").read_text()


@pytest.mark.parametrize("auth", ["bearer", "basic"])
def test_a_server_echoing_the_credentials_leaks_them_into_no_file_nor_output(
    tmp_path, monkeypatch, capfd, auth, fault_report
):
    """A server repeats the Authorization header in a reply, an error body, a malformed and a cut
    reply: the key, the URL password and their base64 (Basic) forms reach no run file, no cache,
    no stdout/stderr."""
    import base64

    from hydra import compose, initialize_config_module

    from alem.evaluate import run

    key, password = "sk-test-Zq9x/7+Lm0pQ", "s3cr3t-pwd"
    basic = base64.b64encode(f"alice:{password}".encode()).decode()  # ends in "=="
    monkeypatch.setenv("ALEM_TEST_KEY", key)
    faults = ["echo_auth", "echo_auth:403", "echo_auth:malformed", "echo_auth:big"]
    with FakeChatServer(script="first", faults=faults, api_key=key if auth == "bearer" else None) as srv:
        if auth == "bearer":
            creds = [f"llm.base_url={srv.base_url}", "llm.api_key_env=ALEM_TEST_KEY"]
        else:
            creds = [f"llm.base_url='{srv.base_url.replace('//', f'//alice:{password}@')}'"]
        with initialize_config_module(config_module="alem.configs", version_base=None):
            cfg = compose(
                config_name="evaluate",
                overrides=[
                    "env.id=tic_tac_toe-v0",
                    "players=[llm,random]",
                    "llm=openai",
                    *creds,
                    "llm.model=fake-model",
                    "llm.max_retries=0",
                    "llm.max_reply_bytes=1024",
                    f"llm.cache={tmp_path / 'cache.jsonl'}",
                    "episodes=1",
                    "num_envs=1",
                ],
            )
        res = run(cfg, tmp_path / "run")
        assert srv.served[:4] == faults
    fault_report(faults=len(faults))
    assert res["seats"][0]["llm_api_errors"] == 3
    out = capfd.readouterr()
    texts = {f.relative_to(tmp_path).as_posix(): f.read_text() for f in tmp_path.rglob("*") if f.is_file()}
    assert "run/transcripts.jsonl" in texts and "cache.jsonl" in texts
    assert texts["run/transcripts.jsonl"].count("Authorization: ") >= 4  # the echoes are kept, redacted
    texts.update(stdout=out.out, stderr=out.err)
    forms = [key, password, f"alice:{password}", basic, basic.rstrip("=")]
    leaks = {name: [s for s in forms if s in text] for name, text in texts.items()}
    assert leaks == dict.fromkeys(texts, [])


# ---------------------------------------------------------------------------- the request cache
def test_the_cache_survives_a_torn_tail_corrupt_entries_and_invalid_replies(tmp_path, fault_report):
    path = tmp_path / "cache.jsonl"
    with FakeChatServer(script="first") as srv:
        first = chat(backend(srv, cache=RequestCache(path)), seed=1)
        # A kill mid-append, then a corrupt line in the middle: both were fatal on every later run.
        with path.open("a") as f:
            f.write('{"key": "abc", "respo')
        cache = RequestCache(path)
        chat(backend(srv, cache=cache), seed=2)  # appends after the repaired tail
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
        cache = RequestCache(path)
        assert cache.corrupt == 1 and len(cache) == 2
        assert chat(backend(srv, cache=cache), seed=1).cached
        # A cached reply is validated like a live one: an invalid entry is fetched again.
        key = next(iter(cache._store))
        cache._store[key] = {"choices": []}
        n = len(srv.requests)
        again = chat(backend(srv, cache=cache), seed=1)
        assert not again.cached and len(srv.requests) == n + 1 and cache.invalid == 1
        assert again.content == first.content
        fault_report(faults=3)
    replay = RequestCache(path, mode="replay")
    replay._store[key] = {"choices": []}
    with pytest.raises(CacheMiss):
        chat(OpenAIChatBackend("http://127.0.0.1:9/v1", "fake-model", cache=replay), seed=1)


def test_one_line_errors_for_bad_llm_settings(ttt):
    from alem.errors import AlemError

    for kw, field in [
        ({"cache": "c.jsonl", "cache_mode": "sometimes"}, "cache_mode"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": "soon"}, "timeout_s"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 2.5}, "max_tokens"),
        ({"max_reply_bytes": 10}, "max_reply_bytes"),
        ({"max_failure_rate": 0}, "max_failure_rate"),
    ]:
        with pytest.raises(AlemError, match=f"llm.{field}"):
            LLMPlayer(ttt, base_url="http://127.0.0.1:9/v1", **{**FAST, **kw})


# ---------------------------------------------------------------------------- killed runs
def _run_cli(
    module: str,
    args: list[str],
    cwd: Path,
    kill_after: float | None = None,
    sig: int = signal.SIGKILL,
    limit_file_bytes: int | None = None,
):
    """Run ``python -m <module> args``; send ``sig`` ``kill_after`` s after its first chunk/episode
    line. ``limit_file_bytes``: the child's file size limit (``ulimit -f``). Returns ``(rc, output)``."""
    env = {
        **os.environ,
        "WANDB_MODE": "disabled",
        "HYDRA_FULL_ERROR": "0",
        "JAX_PLATFORMS": "cpu",
        # the children are killed and resumed, not timed: LLVM -O0 compiles their programs ~30% sooner
        "XLA_FLAGS": "--xla_backend_optimization_level=0",
    }
    if jax.config.jax_compilation_cache_dir:
        # the suite's persistent compilation cache (ALEM_JAX_CACHE): killed and resumed runs compile once
        env["JAX_COMPILATION_CACHE_DIR"] = str(jax.config.jax_compilation_cache_dir)
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0.2"

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))

    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=limit if limit_file_bytes else None,
    )
    if kill_after is None:
        out, _ = proc.communicate(timeout=300)
        return proc.returncode, out
    lines = []
    for line in proc.stdout:  # wait until it is really working, then kill at a random moment
        lines.append(line)
        if "chunk 1/" in line or "episodes " in line.lstrip()[:9]:
            break
    time.sleep(kill_after)
    proc.send_signal(sig)
    rest, _ = proc.communicate(timeout=120)
    return proc.returncode, "".join(lines) + rest


TRAIN = [
    "env.id=coordination-v0", "algo=ippo", "algo.num_envs=8", "algo.num_steps=4", "algo.num_minibatches=2",
    "algo.hidden=[16]", "algo.total_steps=3840", "chunk_updates=5", "num_seeds=1", "eval.num_steps=16",
]  # fmt: skip


def _metric_rows(run_dir: Path) -> list[tuple]:
    return [
        (r["chunk"], r["seed"], r["episode_return"], r["policy_loss"])
        for r in read_jsonl(run_dir / "metrics.jsonl")
    ]


def _train_kill_resume(tmp_path: Path, reference: Path, kill_after: float, tear: bool) -> bool:
    """Kill a training run, resume it, compare with the reference; True if it was killed."""
    run_dir = tmp_path / "killed"
    rc, out = _run_cli("alem.train", [*TRAIN, f"output_dir={run_dir}"], tmp_path, kill_after=kill_after)
    if rc == 0:  # finished before the kill: nothing to resume, still must equal the reference
        assert _metric_rows(run_dir) == _metric_rows(reference)
        return False
    assert rc == -signal.SIGKILL, out
    if tear and (run_dir / "metrics.jsonl").exists():
        with (run_dir / "metrics.jsonl").open("a") as f:
            f.write('{"chunk": 99, "se')
    rc, out = _run_cli("alem.train", [f"resume={run_dir}"], tmp_path)
    assert rc == 0, out
    a, b = _metric_rows(reference), _metric_rows(run_dir)
    assert [r[:2] for r in a] == [r[:2] for r in b]
    np.testing.assert_allclose(
        np.array([r[2:] for r in a], float), np.array([r[2:] for r in b], float), rtol=1e-5
    )
    return True


@pytest.fixture(scope="module")
def train_reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train_ref")
    rc, out = _run_cli("alem.train", [*TRAIN, f"output_dir={tmp / 'ref'}"], tmp)
    assert rc == 0, out
    return tmp / "ref"


def test_train_killed_at_a_random_moment_resumes_exactly(train_reference, tmp_path, fault_report):
    killed = _train_kill_resume(
        tmp_path, train_reference, kill_after=random.Random(0).uniform(0.0, 1.5), tear=True
    )
    fault_report(killed=int(killed))


def test_a_checkpoint_that_cannot_be_written_stops_at_once_and_the_run_resumes(
    train_reference, tmp_path, fault_report
):
    """A write failure inside a save (here a file size limit, ``ulimit -f``, below a checkpoint
    file's size) used to leave orbax threads waiting 300 s for signals, after a traceback."""
    run_dir = tmp_path / "run"
    t0 = time.perf_counter()
    rc, out = _run_cli("alem.train", [*TRAIN, f"output_dir={run_dir}"], tmp_path, limit_file_bytes=6000)
    assert time.perf_counter() - t0 < 90, out
    last = out.strip().splitlines()[-1]
    assert rc == 1 and "Traceback" not in out, out
    assert last.startswith("alem.train: error: checkpoint ") and "could not be written" in last, out
    assert "File too large" in last and f"resume={run_dir}" in last, out
    rc, out = _run_cli("alem.train", [f"resume={run_dir}"], tmp_path)
    assert rc == 0, out
    assert _metric_rows(run_dir) == _metric_rows(train_reference)
    fault_report(faults=1)


def test_ctrl_c_is_one_line_and_the_run_resumes_exactly(train_reference, tmp_path, fault_report):
    run_dir = tmp_path / "run"
    rc, out = _run_cli(
        "alem.train", [*TRAIN, f"output_dir={run_dir}"], tmp_path, kill_after=0.3, sig=signal.SIGINT
    )
    if rc == 0:  # finished before the signal: nothing to resume
        assert _metric_rows(run_dir) == _metric_rows(train_reference)
        return
    # 130, or the process ends by SIGINT itself (-2; seen once in CI, after the one line was
    # printed, the cause not yet found): a shell shows 130 for both.
    assert rc in (130, -signal.SIGINT) and "Traceback" not in out, out
    assert out.strip().splitlines()[-1] == (
        f"alem.train: interrupted; what is in {run_dir} is kept; continue with "
        f"`python -m alem.train resume={run_dir}`"
    ), out
    rc, out = _run_cli("alem.train", [f"resume={run_dir}"], tmp_path)
    assert rc == 0, out
    a, b = _metric_rows(train_reference), _metric_rows(run_dir)
    assert [r[:2] for r in a] == [r[:2] for r in b]
    np.testing.assert_allclose(
        np.array([r[2:] for r in a], float), np.array([r[2:] for r in b], float), rtol=1e-5
    )
    fault_report(killed=1)


def test_both_checkpoints_truncated_is_one_line(train_reference, tmp_path, fault_report):
    """It printed 108 "Event loop is closed" traces before the error."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(train_reference, run_dir)
    (run_dir / "results.json").unlink()  # an unfinished run, so the resume restores
    truncated = 0
    for f in (run_dir / "checkpoints").rglob("*"):
        if f.is_file():
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
            truncated += 1
    rc, out = _run_cli("alem.train", [f"resume={run_dir}"], tmp_path)
    assert rc == 1 and "Traceback" not in out and "Event loop" not in out, out
    assert out.strip().splitlines()[-1].startswith("alem.train: error: resume=")
    assert "no checkpoint could be restored; tried 2" in out
    assert len([line for line in out.splitlines() if line.strip()]) <= 6, (
        out
    )  # the header, 2 warnings, the error
    fault_report(faults=truncated)


def test_unwritable_output_dir_and_impossible_sizes_are_one_line_errors_before_any_write(
    tmp_path, fault_report
):
    blocker = tmp_path / "a_file"
    blocker.write_text("mine")
    rc, out = _run_cli("alem.train", [*TRAIN, f"output_dir={blocker / 'run'}"], tmp_path)
    assert rc == 2 and "Traceback" not in out, out
    assert (
        out.strip().splitlines()[-1].startswith(f"alem.train: error: output_dir={blocker / 'run'} cannot be")
    ), out
    assert blocker.read_text() == "mine"
    run_dir = tmp_path / "huge"
    rc, out = _run_cli("alem.train", [*TRAIN, "algo.num_envs=2000000000", "algo.total_steps=16000000000",
                                       f"output_dir={run_dir}"], tmp_path)  # fmt: skip
    assert rc == 2 and "Traceback" not in out and "GiB" in out.strip().splitlines()[-1], out
    assert not run_dir.exists() or not any(run_dir.iterdir())  # nothing written
    fault_report(faults=2)


def test_a_results_json_without_num_seeds_is_one_line(train_reference, tmp_path, fault_report):
    import shutil

    run_dir = tmp_path / "trained"
    shutil.copytree(train_reference, run_dir)
    res = json.loads((run_dir / "results.json").read_text())
    del res["num_seeds"]
    (run_dir / "results.json").write_text(json.dumps(res))
    rc, out = _run_cli(
        "alem.evaluate",
        ["env.id=coordination-v0", f"players=[checkpoint:{run_dir},random]", "episodes=2", "num_envs=2",
         f"output_dir={tmp_path / 'eval'}"],
        tmp_path,
    )  # fmt: skip
    assert rc == 2 and "Traceback" not in out, out
    assert "num_seeds is None, not a positive integer" in out.strip().splitlines()[-1], out
    fault_report(faults=1)


EVAL = [
    "env.id=tic_tac_toe-v0",
    "players=[llm,random]",
    "llm=scripted",
    "episodes=40",
    "num_envs=4",
    "seed=5",
]


def _eval_kill_resume(tmp_path: Path, reference: dict, kill_after: float) -> tuple[int, int, bool]:
    """Kill an evaluation, resume it; ``(episodes lost, duplicated, whether it was killed)``."""
    run_dir = tmp_path / "killed"
    rc, out = _run_cli("alem.evaluate", [*EVAL, f"output_dir={run_dir}"], tmp_path, kill_after=kill_after)
    killed = rc != 0
    if killed:
        assert rc == -signal.SIGKILL, out
        for name in ("episodes.jsonl", "transcripts.jsonl"):  # torn tails, as a kill mid-write leaves
            with (run_dir / name).open("a") as f:
                f.write('{"type": "episode", "episode": 3, "ret')
        rc, out = _run_cli("alem.evaluate", [f"resume={run_dir}"], tmp_path)
        assert rc == 0, out
    eps = [r["episode"] for r in read_jsonl(run_dir / "episodes.jsonl")]
    got = {r["episode"]: r["returns"] for r in read_jsonl(run_dir / "episodes.jsonl")}
    assert got == reference
    return 40 - len(set(eps)), len(eps) - len(set(eps)), killed


@pytest.fixture(scope="module")
def eval_reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval_ref")
    rc, out = _run_cli("alem.evaluate", [*EVAL, f"output_dir={tmp / 'ref'}"], tmp)
    assert rc == 0, out
    return {r["episode"]: r["returns"] for r in read_jsonl(tmp / "ref" / "episodes.jsonl")}


def test_evaluate_killed_at_a_random_moment_loses_and_repeats_nothing(eval_reference, tmp_path, fault_report):
    lost, dup, killed = _eval_kill_resume(
        tmp_path, eval_reference, kill_after=random.Random(1).uniform(0.0, 0.5)
    )
    assert lost == 0 and dup == 0
    fault_report(killed=int(killed), lost=lost, duplicates=dup)


@pytest.mark.exhaustive
@pytest.mark.parametrize("trial", range(2))  # one kill with a torn tail, one without
def test_soak_train_kills(train_reference, tmp_path, trial, fault_report):
    killed = _train_kill_resume(
        tmp_path,
        train_reference,
        kill_after=random.Random(100 + trial).uniform(0.0, 3.0),
        tear=trial % 2 == 0,
    )
    fault_report(killed=int(killed))


@pytest.mark.exhaustive
@pytest.mark.parametrize("trial", range(6))
def test_soak_evaluate_kills(eval_reference, tmp_path, trial, fault_report):
    lost, dup, killed = _eval_kill_resume(
        tmp_path, eval_reference, kill_after=random.Random(200 + trial).uniform(0.0, 1.5)
    )
    assert lost == 0 and dup == 0
    fault_report(killed=int(killed), lost=lost, duplicates=dup)


def test_jsonl_writer_survives_a_torn_tail(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": 2, "b')
    with JsonlWriter(path) as w:
        w.write({"a": 3, "s": "\ud800"})
    assert [r["a"] for r in read_jsonl(path)] == [1, 3]


def test_damaged_run_files_are_one_line_errors_that_name_the_file(ttt, tmp_path):
    from alem.errors import AlemError

    players = [make_player("random", ttt), make_player("random", ttt)]
    evaluate(ttt, players, episodes=4, num_envs=2, run_dir=tmp_path, progress=False)
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    (tmp_path / "episodes.jsonl").write_text("\n".join([lines[0], "{garbage", *lines[1:]]) + "\n")
    with pytest.raises(AlemError, match=r"episodes\.jsonl: line 2 is not a JSON record"):
        evaluate(ttt, players, episodes=4, num_envs=2, run_dir=tmp_path, resume=True, progress=False)
    fake_run = tmp_path / "trained"
    fake_run.mkdir()
    (fake_run / "results.json").write_text('{"env_id": "tic_tac_toe-v0", "lear')
    with pytest.raises(AlemError, match=r"results\.json is damaged"):
        make_player("checkpoint", ttt, spec=str(fake_run))
