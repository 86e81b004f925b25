"""The LLM player: a host :class:`~alem.players.Player` that asks a chat model for each move.

Registered as ``"llm"`` for every env (``make_player("llm", env, ...)``); it
refuses envs without text support. Its options are an :class:`~alem.text.llm.settings.LLMSettings`
(the ``llm`` config group), built from its keywords. Per decision and active env row it builds
the prompt from the env's text hooks (rules once per episode, the seat's own
view, the legal actions by name; the prompt mode, ``legal_moves`` and ``rules``,
can withhold the legal moves and the rules), asks the backend (all active rows at once,
at most ``max_concurrency`` requests in flight), parses the reply, re-prompts
up to ``reprompts`` times with feedback when the reply is unparseable or
illegal, and otherwise plays the ``invalid`` rule (``"random"``, ``"first"`` or ``"forfeit"``;
``fallback`` is its deprecated alias). The prompt and the rule are
:class:`~alem.text.train.pool.TextEnvPool`'s, from :mod:`alem.text.llm.seat`: a model sees the
same chat, and an unusable reply plays the same move, when it is evaluated and when it trains.

Every decision is one transcript record (every prompt, reply, parse, retry,
fallback, token count and latency), written and flushed as it completes; its ``fallback``
field names the rule that played the move (null: the model's move). The
counters of :func:`~alem.engine.counters.decision_counts` are computed from those records, so a
resumed evaluation counts exactly what its transcripts hold.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import numpy as np

from alem.core import MultiAgentEnv
from alem.engine.counters import COUNTERS, decision_counts
from alem.engine.sync import gather_or_cancel, run_sync
from alem.errors import AlemError, EndpointFailing, RequestFailed
from alem.players import Player, Turn, host_view
from alem.rundir import JsonlWriter
from alem.text.llm import local_server
from alem.text.llm.cache import RequestCache
from alem.text.llm.chat import ChatBackend
from alem.text.llm.openai import OpenAIChatBackend
from alem.text.llm.parsing import parse_reply
from alem.text.llm.prompts import feedback_prompt, harness_hash, system_prompt
from alem.text.llm.scripted import ScriptedBackend
from alem.text.llm.seat import INVALID_RULES, invalid_move, stable_seed, turn_messages
from alem.text.llm.settings import BACKENDS, LLMSettings

__all__ = [
    "LLMPlayer",
    "LLMSettings",
    "EndpointFailing",
    "decision_counts",
    "COUNTERS",
    "INVALID_RULES",
    "BACKENDS",
]

#: Characters of an unusable reply repeated back to the model in a re-prompt.
MAX_ECHO_CHARS = 2000


def __getattr__(name: str) -> Any:
    if name == "FALLBACKS":  # the name before the rule was shared with the pool (one release)
        warnings.warn("FALLBACKS is deprecated: use INVALID_RULES", DeprecationWarning, stacklevel=2)
        return INVALID_RULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _echo(reply: str) -> str:
    """A reply as repeated in a re-prompt: at most :data:`MAX_ECHO_CHARS` characters of it."""
    if len(reply) <= MAX_ECHO_CHARS:
        return reply
    return reply[:MAX_ECHO_CHARS] + f" [... {len(reply) - MAX_ECHO_CHARS} more characters not repeated]"


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """The keywords with the deprecated ``fallback`` folded into ``invalid`` (None: not given,
    as the config's unset key). The config always holds ``invalid``, so ``llm.fallback=first``
    replaces its default; only an ``invalid`` other than the default can disagree."""
    fallback = options.pop("fallback", None)
    if fallback is None:
        return options
    warnings.warn(
        "llm.fallback is deprecated: use llm.invalid (same values)", DeprecationWarning, stacklevel=3
    )
    if fallback not in INVALID_RULES:
        raise AlemError(f"llm.fallback (now llm.invalid) must be one of {INVALID_RULES}, got {fallback!r}")
    if options.get("invalid", LLMSettings.invalid) not in (LLMSettings.invalid, fallback):
        raise AlemError(
            f"llm.fallback={fallback} and llm.invalid={options['invalid']} disagree: "
            "give llm.invalid only (llm.fallback is its deprecated name)"
        )
    return {**options, "invalid": fallback}


class LLMPlayer(Player):
    """A chat model playing one seat; see the module docstring.

    Args:
        env: the env (must have text support).
        spec: the ``ARG`` of a ``llm:ARG`` player spec: the model name (``local``/``openai``)
            or the script (``scripted``).
        settings: the options (:class:`~alem.text.llm.settings.LLMSettings`; default: its defaults).
        transcript: a :class:`JsonlWriter` or path for decision records (the evaluator sets it).
        **options: any field of :class:`~alem.text.llm.settings.LLMSettings`, replacing the one
            of ``settings`` (``fallback=``: the deprecated name of ``invalid=``).
    """

    host = True
    name = "llm"

    def __init__(
        self,
        env: MultiAgentEnv,
        spec: str | None = None,
        *,
        settings: LLMSettings | None = None,
        transcript: JsonlWriter | str | Path | None = None,
        **options: Any,
    ):
        if not getattr(env, "supports_text", False):
            raise AlemError(f"the llm player needs an env with text support; {env.id} has none")
        if settings is not None and not isinstance(settings, LLMSettings):
            raise AlemError(f"settings must be an LLMSettings, got {settings!r}")
        self.settings = LLMSettings.from_options(_options(options), settings).with_spec(spec)
        self.mode = self.settings.mode
        # drawn now, so an env that cannot be relabeled is refused before anything runs
        self.text_env = env.relabeled(self.settings.seed) if self.settings.obfuscate else env
        self.env = env
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
        self._failed_in_row = 0
        self._breaker_counts = [0, 0]  # decisions, decisions whose requests failed for good

    # ------------------------------------------------------------------ lifecycle
    def _make_backend(self) -> ChatBackend:
        o = self.settings
        if o.backend == "scripted":
            return ScriptedBackend(o.script, structured=o.structured != "off")
        s = o.request_settings()
        cache = RequestCache(o.cache, o.cache_mode) if o.cache else None
        if o.backend == "local":
            alias = s["model"] or local_server.DEFAULT_MODEL_ALIAS
            if cache is None or cache.mode != "replay":
                local = dict(
                    model_path=o.model_path, threads=o.threads, context=o.context, parallel=o.parallel
                )
                self._server = local_server.acquire(alias=alias, **local)
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
            "invalid": self.settings.invalid,
            "reprompts": self.settings.reprompts,
            "history": self.settings.history,
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
            self._sem, self._sem_loop = asyncio.Semaphore(self.settings.max_concurrency), loop
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
        o = self.settings
        row = jax.tree.map(lambda x: x[b], state)
        messages = turn_messages(
            env, self._params_host, row, agent, legal_names, self.mode,
            system=self._system[agent], past=self._history[ep], history=o.history,
        )  # fmt: skip
        user = messages[-1]
        # what structured output may name: the legal moves, or (not listing them) any action
        choices = legal_names if self.mode.lists_legal_moves else names
        attempts: list[dict[str, Any]] = []
        action: int | None = None
        for k in range(o.reprompts + 1):
            seed = stable_seed(o.seed, ep, agent, d, k)
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
            parsed = parse_reply(
                reply.content, env, agent, legal, json_only=self.mode.format == "json", state=row
            )
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
                if o.history:
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
            fallback = o.invalid
            action = invalid_move(o.invalid, legal, o.seed, ep, agent, d)
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
        o = self.settings
        in_row, max_rate, min_decisions = o.max_consecutive_failures, o.max_failure_rate, o.min_decisions
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
            where = getattr(self.backend, "public_url", o.backend)
            raise EndpointFailing(
                f"llm seat {self._agent} ({self.label}) at {where}: {why}; the run stops rather than score "
                "the fallback policy as the model. Finished episodes are kept; fix the endpoint and resume"
            )
