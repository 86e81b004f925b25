"""The LLM player: a host :class:`~alem.players.Player` that asks a chat model for each move.

Registered as ``"llm"`` for every env (``make_player("llm", env, ...)``); it
refuses envs without text support. Per decision and active env row it builds
the prompt from the env's text hooks (rules once per episode, the seat's own
view, the legal actions by name; the prompt mode, ``legal_moves`` and ``rules``,
can withhold the legal moves and the rules), asks the backend (all active rows at once,
at most ``max_concurrency`` requests in flight), parses the reply, re-prompts
up to ``reprompts`` times with feedback when the reply is unparseable or
illegal, and otherwise plays the ``fallback``:

- ``"random"``: a uniformly random legal action (seeded by ``seed``, episode and decision),
- ``"first"``: the first legal action,
- ``"forfeit"``: an illegal action (-1), so the env's illegal-action rule applies: with
  ``illegal_action="lose"`` (games that offer it) the game ends as a loss, with the default
  ``"replace"`` the env plays its documented default move and flags it.

Every decision is one transcript record (every prompt, reply, parse, retry,
fallback, token count and latency), written and flushed as it completes; the
counters of :func:`~alem.engine.counters.decision_counts` are computed from those records, so a
resumed evaluation counts exactly what its transcripts hold.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

from alem.core import MultiAgentEnv
from alem.engine.counters import COUNTERS, decision_counts
from alem.engine.sync import gather_or_cancel, run_sync
from alem.errors import AlemError, BackendConfigError, EndpointFailing, RequestFailed, require_positive_int
from alem.players import Player, Turn, host_view
from alem.rundir import JsonlWriter
from alem.text.llm import local_server
from alem.text.llm.cache import RequestCache
from alem.text.llm.chat import ChatBackend
from alem.text.llm.openai import CHECKED_SETTINGS, OpenAIChatBackend, check_auth, check_settings
from alem.text.llm.parsing import parse_reply
from alem.text.llm.prompts import PromptMode, feedback_prompt, harness_hash, system_prompt, turn_prompt
from alem.text.llm.scripted import ScriptedBackend

__all__ = ["LLMPlayer", "EndpointFailing", "decision_counts", "COUNTERS", "FALLBACKS", "BACKENDS"]

FALLBACKS = ("random", "first", "forfeit")
BACKENDS = ("local", "openai", "scripted")

#: Characters of an unusable reply repeated back to the model in a re-prompt.
MAX_ECHO_CHARS = 2000


def _echo(reply: str) -> str:
    """A reply as repeated in a re-prompt: at most :data:`MAX_ECHO_CHARS` characters of it."""
    if len(reply) <= MAX_ECHO_CHARS:
        return reply
    return reply[:MAX_ECHO_CHARS] + f" [... {len(reply) - MAX_ECHO_CHARS} more characters not repeated]"


def _request_seed(*parts: Any) -> int:
    """A 31-bit seed from the parts (stable across runs, batch sizes and resumes)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


#: Options one backend reads: ``option -> (backend, its value when not given)``.
BACKEND_ONLY = {
    "base_url": ("openai", None),
    "api_key_env": ("openai", None),
    "model_path": ("local", None),
    "threads": ("local", 1),
    "context": ("local", 2048),
    "parallel": ("local", 1),
    "script": ("scripted", "random"),
}
BACKEND_WHAT = {
    "local": "the embedded llama.cpp model",
    "openai": "an OpenAI-compatible endpoint",
    "scripted": "a scripted stand-in",
}


class LLMPlayer(Player):
    """A chat model playing one seat; see the module docstring.

    Args:
        env: the env (must have text support).
        spec: the ``ARG`` of a ``llm:ARG`` player spec: the model name (``local``/``openai``)
            or the script (``scripted``).
        backend: ``"local"`` (embedded llama.cpp server with SmolLM2-135M-Instruct),
            ``"openai"`` (any OpenAI-compatible endpoint at ``base_url``) or ``"scripted"``.
        base_url, model, api_key_env, temperature, top_p, max_tokens, structured, timeout_s,
            max_retries, backoff_s, backoff_cap_s, extra_body: see
            :class:`~alem.text.llm.openai.OpenAIChatBackend`.
        max_reply_bytes: the most of a reply body that is read (longer ones count as errors).
        max_consecutive_failures: the circuit breaker: after this many requests in a row that
            failed for good (after their retries), the run stops with :class:`EndpointFailing`
            instead of scoring the fallback policy as the model.
        max_failure_rate: the breaker also trips when more than this fraction of the seat's
            decisions (once there are ``min_decisions``) fell back because requests failed.
        seed: base of the per-request seeds and of the random fallback.
        reprompts: re-prompts with feedback after an unparseable or illegal reply (the retry
            budget; a re-prompt names the illegal move).
        legal_moves, rules: the prompt mode (:class:`~alem.text.llm.prompts.PromptMode`):
            ``"list"`` names the legal actions each turn, ``"none"`` only the action vocabulary;
            ``"full"`` tells the rules, ``"short"`` only the game and the seat.
        format: ``"text"`` shows each turn as the env's text view, ``"json"`` as its JSON view
            (:meth:`~alem.text_hooks.TextHooks.to_json`), and then reads only JSON replies.
        obfuscate: play a relabeled copy of the env's text (:meth:`~alem.text_hooks.TextHooks.relabeled`,
            drawn from ``seed``): the game, seats, pieces and moves get made-up names, so memorised
            names and openings do not help; replies are parsed in the new names.
        fallback: ``"random"``, ``"first"`` or ``"forfeit"`` (see the module docstring).
        history: how many earlier exchanges of the episode stay in the conversation.
        max_concurrency: requests in flight at once for this seat.
        cache, cache_mode: a request cache file and its mode (see :class:`RequestCache`).
        model_path, threads, context, parallel: the embedded server (``backend="local"``).
        script: the scripted backend's script (``"random"`` or ``"first"``).
        price_in_per_mtok, price_out_per_mtok: prices per million tokens (for a cost column).
        transcript: a :class:`JsonlWriter` or path for decision records (the evaluator sets it).
    """

    host = True
    name = "llm"

    def __init__(
        self,
        env: MultiAgentEnv,
        spec: str | None = None,
        *,
        backend: str = "local",
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 32,
        seed: int = 0,
        structured: str = "auto",
        reprompts: int = 2,
        legal_moves: str = "list",
        rules: str = "full",
        format: str = "text",
        obfuscate: bool = False,
        fallback: str = "random",
        history: int = 0,
        max_concurrency: int = 4,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 20.0,
        max_reply_bytes: int = OpenAIChatBackend.MAX_REPLY_BYTES,
        max_consecutive_failures: int = 5,
        max_failure_rate: float = 0.5,
        min_decisions: int = 20,
        extra_body: dict[str, Any] | None = None,
        cache: str | None = None,
        cache_mode: str = "readwrite",
        model_path: str | None = None,
        threads: int = 1,
        context: int = 2048,
        parallel: int = 1,
        script: str = "random",
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
        transcript: JsonlWriter | str | Path | None = None,
    ):
        if not getattr(env, "supports_text", False):
            raise AlemError(f"the llm player needs an env with text support; {env.id} has none")
        if backend not in BACKENDS:
            raise AlemError(f"llm.backend must be one of {BACKENDS}, got {backend!r}")
        # An option that only another backend reads would be ignored silently: refused instead.
        given = dict(base_url=base_url, api_key_env=api_key_env, model_path=model_path, threads=threads)
        given.update(context=context, parallel=parallel, script=script)
        for key, (reader, unset) in BACKEND_ONLY.items():
            if reader != backend and given[key] != unset and not (key == "script" and spec):
                raise AlemError(
                    f"llm.{key}={given[key]!r} is read by llm={reader} only ({BACKEND_WHAT[reader]}); this "
                    f"run's llm.backend is {backend} ({BACKEND_WHAT[backend]}): add llm={reader} or drop llm.{key}"
                )
        self.mode = PromptMode(legal_moves=legal_moves, rules=rules, format=format)
        if not isinstance(obfuscate, bool):
            raise AlemError(f"llm.obfuscate must be true or false, got {obfuscate!r}")
        # drawn now, so an env that cannot be relabeled is refused before anything runs
        self.text_env = env.relabeled(int(seed)) if obfuscate else env
        if fallback not in FALLBACKS:
            raise AlemError(f"llm.fallback must be one of {FALLBACKS}, got {fallback!r}")
        for key, value, low in (
            ("reprompts", reprompts, 0),
            ("history", history, 0),
            ("max_concurrency", max_concurrency, 1),
            ("max_consecutive_failures", max_consecutive_failures, 1),
            ("min_decisions", min_decisions, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise AlemError(f"llm.{key} must be an integer >= {low}, got {value!r}")
        if isinstance(max_failure_rate, bool) or not (
            isinstance(max_failure_rate, int | float) and 0 < max_failure_rate <= 1
        ):
            raise AlemError(f"llm.max_failure_rate must be a number in (0, 1], got {max_failure_rate!r}")
        if cache_mode not in RequestCache.MODES:
            raise BackendConfigError(
                f"llm.cache_mode must be one of {list(RequestCache.MODES)}, got {cache_mode!r}"
            )
        if cache is not None and not isinstance(cache, str | Path):
            raise BackendConfigError(f"llm.cache must be null or a file path, got {cache!r}")
        if cache is not None:
            RequestCache.check_path(cache, cache_mode)
        if structured not in OpenAIChatBackend.STRUCTURED:  # before the embedded model is looked for
            raise BackendConfigError(
                f"llm.structured must be one of {list(OpenAIChatBackend.STRUCTURED)}, got {structured!r}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise AlemError(f"llm.seed must be an integer, got {seed!r}")
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise AlemError(f"llm.extra_body must be a mapping of request fields, got {extra_body!r}")
        for key, value in (
            ("price_in_per_mtok", price_in_per_mtok),
            ("price_out_per_mtok", price_out_per_mtok),
        ):
            if value is not None and not (
                isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < math.inf
            ):
                raise AlemError(
                    f"llm.{key} must be null or a number >= 0 (a price per million tokens), got {value!r}"
                )
        if backend == "local":
            for key, value in (("threads", threads), ("context", context), ("parallel", parallel)):
                require_positive_int(value, f"llm.{key}", error=AlemError)
            if model_path is not None and not Path(str(model_path)).is_file():
                raise AlemError(
                    f"llm.model_path={model_path!r}: no such file (give a chat GGUF file, or null for SmolLM2)"
                )
        for key, value in (("model", model), ("api_key_env", api_key_env), ("base_url", base_url)):
            if value is not None and not isinstance(value, str):
                raise AlemError(f"llm.{key} must be null or a string, got {value!r}")
        if backend == "openai":
            check_auth(base_url, api_key_env)  # before any server starts
        if spec:
            if backend == "scripted":
                script = spec
            else:
                model = spec
        if backend == "scripted" and not callable(script) and script not in ("random", "first"):
            where = f"players=[llm:{spec}]" if spec else f"llm.script={script!r}"
            raise AlemError(f"{where}: the scripted backend plays 'random' or 'first'")
        self.env = env
        self.backend_name = backend
        self.settings = dict(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            structured=structured,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            backoff_cap_s=backoff_cap_s,
            max_reply_bytes=max_reply_bytes,
            extra_body=dict(extra_body or {}),
        )
        check_settings(**{k: self.settings[k] for k in CHECKED_SETTINGS})  # before any server starts
        self.breaker = (max_consecutive_failures, float(max_failure_rate), min_decisions)
        self._failed_in_row = 0
        self._breaker_counts = [0, 0]  # decisions, decisions whose requests failed for good
        self.local = dict(model_path=model_path, threads=threads, context=context, parallel=parallel)
        self.cache_path, self.cache_mode = cache, cache_mode
        self.script = script
        self.seed, self.reprompts, self.fallback, self.history = int(seed), reprompts, fallback, history
        self.max_concurrency = max_concurrency
        self.prices = (price_in_per_mtok, price_out_per_mtok)
        self.transcript = JsonlWriter(transcript) if isinstance(transcript, str | Path) else transcript
        self.label = f"llm:{spec}" if spec else "llm"
        self.backend: ChatBackend | None = None
        self._server = None
        self._agent: int | None = None
        self._system: dict[int, str] = {}
        self._params_host = None
        self._decisions: dict[int, int] = defaultdict(int)
        self._history: dict[int, list[dict[str, str]]] = defaultdict(list)
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop = None
        self._totals = dict.fromkeys(COUNTERS, 0.0)

    # ------------------------------------------------------------------ lifecycle
    def _make_backend(self) -> ChatBackend:
        if self.backend_name == "scripted":
            return ScriptedBackend(self.script, structured=self.settings["structured"] != "off")
        s = dict(self.settings)
        cache = RequestCache(self.cache_path, self.cache_mode) if self.cache_path else None
        if self.backend_name == "local":
            alias = s["model"] or local_server.DEFAULT_MODEL_ALIAS
            if cache is None or cache.mode != "replay":
                self._server = local_server.acquire(alias=alias, **self.local)
                s["base_url"] = self._server.base_url
            else:
                s["base_url"] = s["base_url"] or "http://127.0.0.1:0/v1"  # never contacted
            s["model"], s["api_key_env"] = alias, None
        elif not s["base_url"] or not s["model"]:
            raise AlemError(
                "llm.backend=openai needs llm.base_url (e.g. http://127.0.0.1:8000/v1) and llm.model "
                "(or a player spec llm:<model>)"
            )
        return OpenAIChatBackend(**s, cache=cache)

    def begin(self, env: MultiAgentEnv, params: Any, agent: int) -> None:
        """Start the backend (and the embedded server) and check it can serve, before any episode."""
        self._agent = agent
        self._params_host = host_view(params)
        self._system[agent] = system_prompt(self._text(env), self._params_host, agent, self.mode)
        if self.backend is None:
            self.backend = self._make_backend()
            try:
                run_sync(self.backend.health_check())
            except BaseException:
                self.close()
                raise

    def _text(self, env: MultiAgentEnv) -> MultiAgentEnv:
        """The env whose text this player shows and parses: its relabeled copy when obfuscating."""
        return self.text_env if self.text_env is not self.env else env

    def end_episode(self, episode: int) -> None:
        self._decisions.pop(int(episode), None)
        self._history.pop(int(episode), None)

    def close(self) -> None:
        if self.backend is not None:
            try:
                run_sync(self.backend.aclose())
            finally:
                self.backend = None
        if self._server is not None:
            local_server.release(self._server)
            self._server = None

    def stats(self) -> dict[str, float]:
        return dict(self._totals)

    def describe(self) -> dict[str, Any]:
        out = {
            "player": self.label,
            "fallback": self.fallback,
            "reprompts": self.reprompts,
            "history": self.history,
            "legal_moves": self.mode.legal_moves,
            "rules": self.mode.rules,
            "format": self.mode.format,
            "harness": harness_hash(self.mode),
            "obfuscate": self.text_env is not self.env,
        }
        if out["obfuscate"]:  # the drawn names, so a reader can map the transcripts back
            out["labels"] = {g: list(self.text_env.labels(g)) for g in self.text_env.text_vocabulary()}
        if self.backend is not None:
            out.update(self.backend.describe())
        return out

    # ------------------------------------------------------------------ acting
    def act(self, key: jax.Array, turn: Turn) -> np.ndarray:
        return run_sync(self.act_async(key, turn))

    async def act_async(self, key: jax.Array, turn: Turn) -> np.ndarray:
        """int32 ``[B]``: a move for each active row (0 elsewhere); ``key`` is unused (see ``seed``)."""
        del key
        if self.backend is None or self._agent != turn.agent:
            self.begin(turn.env, turn.params, turn.agent)
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.max_concurrency), loop
        state = host_view(turn.state)
        mask = np.asarray(turn.action_mask, dtype=bool)
        active = np.asarray(turn.active, dtype=bool)
        episode = np.asarray(turn.episode)
        actions = np.zeros(active.shape[0], np.int32)
        rows = np.flatnonzero(active)
        moves = await gather_or_cancel(
            *(self._decide(turn.env, turn.agent, state, int(b), mask[b], int(episode[b])) for b in rows)
        )
        actions[rows] = moves
        return actions

    async def _decide(
        self, env: MultiAgentEnv, agent: int, state: Any, b: int, mask: np.ndarray, ep: int
    ) -> int:
        env = self._text(env)
        names = env.action_names(agent)
        legal = [int(j) for j in np.flatnonzero(mask)]
        legal_names = [names[j] for j in legal]
        d = self._decisions[ep]
        self._decisions[ep] = d + 1
        view = self.mode.view(env, jax.tree.map(lambda x: x[b], state), agent, self._params_host)
        user = {"role": "user", "content": turn_prompt(view, legal_names, self.mode)}
        # what structured output may name: the legal moves, or (not listing them) any action
        choices = legal_names if self.mode.lists_legal_moves else names
        past = self._history[ep][-2 * self.history :] if self.history else []
        messages = [{"role": "system", "content": self._system[agent]}, *past, user]
        attempts: list[dict[str, Any]] = []
        action: int | None = None
        for k in range(self.reprompts + 1):
            seed = _request_seed(self.seed, ep, agent, d, k)
            attempt: dict[str, Any] = {"messages": messages, "seed": seed}
            attempts.append(attempt)
            async with self._sem:
                try:
                    reply = await self.backend.chat(messages, legal_names=choices, seed=seed)
                except RequestFailed as e:
                    attempt.update(
                        status="api_error",
                        error=str(e),
                        error_kind=e.kind,
                        retry_errors=e.errors[:-1],
                        **e.detail,
                    )
                    break
            parsed = parse_reply(reply.content, env, agent, legal, json_only=self.mode.format == "json")
            attempt.update(
                reply=reply.content,
                status=parsed.status,
                parsed=None if parsed.named is None else names[parsed.named],
                tokens_in=reply.tokens_in,
                tokens_out=reply.tokens_out,
                latency_s=round(reply.latency_s, 6),
                retry_errors=reply.errors,
                cached=reply.cached,
                structured=reply.structured,
                finish_reason=reply.finish_reason,
            )
            if parsed.status == "ok":
                action = parsed.action
                if self.history:
                    self._history[ep] += [user, {"role": "assistant", "content": reply.content}]
                break
            named = None if parsed.named is None else names[parsed.named]
            feedback = {
                "role": "user",
                "content": feedback_prompt(parsed.status, legal_names, named, self.mode),
            }
            messages = [*messages, {"role": "assistant", "content": _echo(reply.content)}, feedback]
        fallback = None
        if action is None:
            fallback = self.fallback
            action = self._fallback_action(legal, ep, agent, d)
        failed = attempts[-1].get("status") == "api_error"
        self._check_breaker(failed)
        record = {
            "type": "decision",
            "episode": ep,
            "seat": agent,
            "agent": env.agents[agent],
            "player": self.label,
            "decision": d,
            "legal": legal_names,
            "attempts": attempts,
            "action": action,
            "action_name": names[action] if 0 <= action < len(names) else None,
            "fallback": fallback,
        }
        if self.transcript is not None:
            self.transcript.write(record)
        for name, v in decision_counts(record).items():
            self._totals[name] += v
        return action

    def failure_counts(self) -> tuple[int, int]:
        """(decisions made, decisions whose requests failed for good) since the player was built;
        the evaluator stops a run in which every decision of this seat failed."""
        done, bad = self._breaker_counts
        return done, bad

    def _check_breaker(self, failed: bool) -> None:
        """Count a decision; stop the run when requests keep failing (never score a dead endpoint)."""
        in_row, max_rate, min_decisions = self.breaker
        self._failed_in_row = self._failed_in_row + 1 if failed else 0
        self._breaker_counts[0] += 1
        self._breaker_counts[1] += int(failed)
        done, bad = self._breaker_counts
        why = None
        if self._failed_in_row >= in_row:
            why = f"{self._failed_in_row} decisions in a row got no reply (max_consecutive_failures={in_row})"
        elif done >= min_decisions and bad / done > max_rate:
            why = f"{bad} of {done} decisions got no reply (max_failure_rate={max_rate})"
        if why:
            where = getattr(self.backend, "public_url", self.backend_name)
            raise EndpointFailing(
                f"llm seat {self._agent} ({self.label}) at {where}: {why}; the run stops rather than score "
                "the fallback policy as the model. Finished episodes are kept; fix the endpoint and resume"
            )

    def _fallback_action(self, legal: list[int], ep: int, agent: int, d: int) -> int:
        if self.fallback == "forfeit" or not legal:
            return -1
        if self.fallback == "first":
            return legal[0]
        rng = np.random.default_rng(_request_seed(self.seed, "fallback", ep, agent, d))
        return int(rng.choice(legal))
