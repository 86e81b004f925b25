"""The OpenAI-compatible backend against a real local HTTP server with injected faults."""

from __future__ import annotations

import json

import pytest

from alem.engine.sync import run_sync
from alem.errors import BackendConfigError, BackendUnavailable, CacheMiss, RequestFailed
from alem.text.llm.cache import RequestCache
from alem.text.llm.openai import OpenAIChatBackend
from alem.text.llm.scripted import ScriptedBackend
from alem.text.llm.testing import FakeChatServer

MSG = [{"role": "user", "content": "Legal actions: stag, hare\nYour move."}]
LEGAL = ["stag", "hare"]


@pytest.fixture
def server():
    with FakeChatServer(script="first") as srv:
        yield srv


def backend(srv, **kw):
    kw = {"max_retries": 3, "backoff_s": 0.001, "backoff_cap_s": 0.01, "timeout_s": 10.0, **kw}
    return OpenAIChatBackend(srv.base_url, "fake-model", **kw)


def chat(b, **kw):
    async def go():
        try:
            return await b.chat(MSG, legal_names=LEGAL, seed=kw.get("seed", 7))
        finally:
            await b.aclose()

    return run_sync(go())


def test_request_sends_sampling_settings_seed_and_schema_enum(server):
    reply = chat(
        backend(server, temperature=0.3, top_p=0.9, max_tokens=11, extra_body={"cache_prompt": False})
    )
    assert json.loads(reply.content) == {"action": "stag"}
    body = server.requests[-1]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.3, 0.9, 11, 7)
    assert body["cache_prompt"] is False
    enum = body["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
    assert enum == LEGAL and reply.structured
    assert reply.tokens_in == 6 and reply.tokens_out == 2  # the server's word counts
    assert reply.retries == 0 and reply.errors == []


@pytest.mark.parametrize("fault", ["429", "500", "503", "timeout", "malformed", "empty"])
def test_transient_faults_are_retried(server, fault):
    server.timeout_sleep_s = 3.0
    server.add_faults([fault, fault])
    reply = chat(backend(server, timeout_s=1.5 if fault == "timeout" else 10.0))
    assert json.loads(reply.content)["action"] == "stag"
    assert reply.retries == 2 and len(reply.errors) == 2
    assert server.served == [fault, fault, "ok"]


def test_gives_up_after_max_retries(server):
    server.add_faults(["500"] * 10)
    with pytest.raises(RequestFailed) as e:
        chat(backend(server, max_retries=2))
    assert e.value.kind == "http_500" and len(server.served) == 3


@pytest.mark.parametrize("fault", ["400", "401"])
def test_client_errors_are_not_retried(server, fault):
    server.add_faults([fault])
    with pytest.raises(RequestFailed) as e:
        chat(backend(server, structured="off"))
    assert e.value.kind == f"http_{fault}" and server.served == [fault]


def test_backoff_grows_exponentially_with_jitter_and_respects_retry_after():
    b = OpenAIChatBackend("http://127.0.0.1:9/v1", "m", backoff_s=1.0, backoff_cap_s=5.0)
    for k, d in enumerate([1, 2, 4, 5, 5]):
        delays = [b._delay(k, None) for _ in range(50)]
        assert d / 2 <= min(delays) and max(delays) <= d and max(delays) > min(delays)
    assert b._delay(0, "3") == 3.0 and b._delay(0, "100") == 5.0


def test_structured_auto_falls_back_to_text_when_the_server_rejects_it(server):
    server.reject_schema = True
    b = backend(server)
    reply = chat(b)
    assert json.loads(reply.content)["action"] == "stag"  # answered from the 'Legal actions' line
    assert b.structured_rejected and not reply.structured and reply.errors == ["http_400"]
    assert "response_format" not in server.requests[-1]


def test_structured_json_schema_mode_does_not_silently_drop_the_schema(server):
    server.reject_schema = True
    with pytest.raises(RequestFailed, match="400"):
        chat(backend(server, structured="json_schema"))


def test_health_check_passes_and_names_each_problem(server, monkeypatch):
    run_sync(backend(server).health_check())
    with pytest.raises(BackendUnavailable, match="'nope' is not served.*fake-model"):
        run_sync(OpenAIChatBackend(server.base_url, "nope").health_check())
    with pytest.raises(BackendUnavailable, match="cannot reach"):
        run_sync(OpenAIChatBackend("http://127.0.0.1:9/v1", "fake-model", timeout_s=2).health_check())
    monkeypatch.delenv("ALEM_TEST_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="ALEM_TEST_KEY is not set"):
        run_sync(OpenAIChatBackend(server.base_url, "fake-model", api_key_env="ALEM_TEST_KEY").health_check())


def test_api_key_is_sent_from_the_environment(monkeypatch):
    with FakeChatServer(api_key="sekrit") as srv:
        monkeypatch.setenv("ALEM_TEST_KEY", "wrong")
        with pytest.raises(BackendUnavailable, match="rejected the API key"):
            run_sync(
                OpenAIChatBackend(srv.base_url, "fake-model", api_key_env="ALEM_TEST_KEY").health_check()
            )
        monkeypatch.setenv("ALEM_TEST_KEY", "sekrit")
        b = OpenAIChatBackend(srv.base_url, "fake-model", api_key_env="ALEM_TEST_KEY")
        run_sync(b.health_check())
        assert chat(b).content


@pytest.mark.parametrize("text", [b"notes\nno newline at the end", b'{"a": 1}\n{"b": 2}\n'])
def test_a_file_that_is_not_a_cache_is_refused_and_left_as_it_is(tmp_path, text, fault_report):
    path = tmp_path / "f.jsonl"
    path.write_bytes(text)
    for mode in RequestCache.MODES:
        with pytest.raises(BackendConfigError, match="is not a request cache"):
            RequestCache(path, mode=mode)
    assert path.read_bytes() == text
    fault_report(faults=1)


def test_cache_records_then_replays_offline(server, tmp_path):
    path = tmp_path / "cache.jsonl"
    first = chat(backend(server, cache=RequestCache(path)))
    again = chat(backend(server, cache=RequestCache(path)))
    assert len(server.requests) == 1 and again.cached and again.content == first.content
    server.close()  # replay needs no server; a different request is a clear miss
    replay = RequestCache(path, mode="replay")
    b = OpenAIChatBackend("http://127.0.0.1:9/v1", "fake-model", cache=replay, max_retries=0)
    run_sync(b.health_check())
    assert chat(b).content == first.content
    with pytest.raises(CacheMiss) as e:  # not a failed request that a fallback could hide: the run stops
        chat(b, seed=8)  # the seed is part of the key
    assert e.value.kind == "cache_miss" and not isinstance(e.value, RequestFailed)


def test_scripted_backend_answers_legal_moves_reproducibly():
    b = ScriptedBackend("random")
    picks = {json.loads(chat(b, seed=s).content)["action"] for s in range(20)}
    assert picks == set(LEGAL)
    assert chat(b, seed=3).content == chat(b, seed=3).content
    assert json.loads(chat(ScriptedBackend("first")).content) == {"action": "stag"}


def test_redact_url_hides_passwords_and_key_like_query_values():
    from alem.sanitize import redact_url

    assert redact_url("http://alice:pw@host:8000/v1") == "http://alice:***@host:8000/v1"
    assert redact_url("https://tok@host/v1") == "https://***@host/v1"
    assert (
        redact_url("https://h/v1?api_key=k1&api-version=2024") == "https://h/v1?api_key=***&api-version=2024"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_secrets_are_redacted_in_every_form_a_server_may_repeat():
    import base64

    from alem.sanitize import Secrets

    s = Secrets("http://alice:p%40ss-w0rd@h/v1?api_key=KEY456&v=1", "sk-A/b+c", {"api-key": "hdr-tok"})
    basic = base64.b64encode(b"alice:p@ss-w0rd").decode()
    for text in ("p%40ss-w0rd", "p@ss-w0rd", basic, basic.rstrip("="), "sk-A\\/b+c", "KEY456", "hdr-tok"):
        assert s.redact(f"<{text}>") == "<***>", text
    assert s.redact("alice and v=1 and sk-") == "alice and v=1 and sk-"  # not secrets, nor whole ones
    assert s.redact("cut at sk-A/b", cut=True) == "cut at ***"  # a reply cut inside a secret
    assert Secrets("http://tok3n@h/v1").redact(base64.b64encode(b"tok3n:").decode()) == "***"
    assert Secrets("http://h/v1", "x").redact("x marks") == "x marks"  # too short to protect anything
    deep: list = ["sk-A/b+c"]
    for _ in range(5000):  # deeper than recursion could go
        deep = [deep, {"sk-A/b+c": 1}]
    out = s.redact_tree(deep)
    while isinstance(out, list) and len(out) == 2:
        assert out[1] == {"***": 1}
        out = out[0]
    assert out == ["***"]


def test_run_sync_works_inside_a_running_event_loop(server):
    """A notebook runs an event loop on its main thread: run_sync then uses a worker thread's loop,
    the same one every time, so one backend's HTTP client serves every call."""
    import asyncio

    b = backend(server)

    async def main():
        first = run_sync(b.chat(MSG, legal_names=LEGAL, seed=1))
        second = run_sync(b.chat(MSG, legal_names=LEGAL, seed=1))
        return first, second

    first, second = asyncio.run(main())
    assert first.content == second.content and json.loads(first.content)["action"] in LEGAL


# A key and a URL password as a leaky server sees them: "Bearer <key>" and the Basic header value,
# base64("alice:s3cr3t-pwd") ends in "==" (a 16-byte pair), so padded and unpadded forms differ.
KEY, USER, PASSWORD = "sk-test-Zq9x/7+Lm0pQ", "alice", "s3cr3t-pwd"


def secret_forms() -> list[str]:
    import base64

    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert basic.endswith("==")
    return [KEY, PASSWORD, f"{USER}:{PASSWORD}", basic, basic.rstrip("="), "KEY456"]


def leaked(text: str) -> list[str]:
    return [s for s in secret_forms() if s in text]


@pytest.mark.parametrize("auth", ["bearer", "basic"])
def test_a_server_echoing_the_credentials_leaks_them_nowhere(tmp_path, monkeypatch, auth):
    """Whatever a server repeats of the Authorization header (reply, error body, malformed or cut
    reply, the cache file) reaches alem without the key, the password or their base64 forms."""
    monkeypatch.setenv("ALEM_TEST_KEY", KEY)
    with FakeChatServer(script="first", api_key=KEY if auth == "bearer" else None) as srv:
        url = srv.base_url if auth == "bearer" else srv.base_url.replace("//", f"//{USER}:{PASSWORD}@")
        key_env = "ALEM_TEST_KEY" if auth == "bearer" else None
        cache = RequestCache(tmp_path / "cache.jsonl")
        b = OpenAIChatBackend(
            url, "fake-model", api_key_env=key_env, max_retries=0, max_reply_bytes=1024, cache=cache
        )
        srv.add_faults(["echo_auth"])
        reply = chat(b)
        seen = [reply.content]
        assert "Authorization: " in reply.content and "***" in reply.content
        for fault in ("echo_auth:403", "echo_auth:malformed", "echo_auth:big"):
            srv.add_faults([fault])
            with pytest.raises(RequestFailed) as e:
                chat(b, seed=len(seen))
            seen += [str(e.value), json.dumps(e.value.detail)]
        assert "Authorization: " in seen[1] and "usage" in seen[4] and "Authorization" in seen[6]
        assert srv.served == ["echo_auth", "echo_auth:403", "echo_auth:malformed", "echo_auth:big"]
    seen.append((tmp_path / "cache.jsonl").read_text())
    assert [leaked(text) for text in seen] == [[]] * len(seen)


def test_an_api_key_with_credentials_in_the_url_is_refused_in_one_line(monkeypatch):
    """Both are an Authorization header: the URL's Basic one silently replaced the Bearer key."""
    monkeypatch.setenv("ALEM_TEST_KEY", KEY)
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1"
    for with_url in (url, url.replace(f":{PASSWORD}", "")):  # user:password@ and token@
        with pytest.raises(BackendConfigError, match=r"llm.api_key_env=ALEM_TEST_KEY .* llm.base_url") as e:
            OpenAIChatBackend(with_url, "fake-model", api_key_env="ALEM_TEST_KEY")
        assert "\n" not in str(e.value) and not leaked(str(e.value))
    OpenAIChatBackend(url, "fake-model")  # either one alone is fine
    OpenAIChatBackend("http://127.0.0.1:9/v1", "fake-model", api_key_env="ALEM_TEST_KEY")


def test_a_query_in_the_base_url_stays_a_query(server):
    """``http://host/v1?api_key=K`` posted to ``/v1?api_key=K/chat/completions`` (a 404)."""
    b = OpenAIChatBackend(f"{server.base_url}?api-version=2024", "fake-model")
    run_sync(b.health_check())
    assert json.loads(chat(b).content) == {"action": "stag"}
    assert server.paths[-2:] == ["/v1/models?api-version=2024", "/v1/chat/completions?api-version=2024"]
