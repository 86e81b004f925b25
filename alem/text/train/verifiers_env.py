"""alem's text games as a ``verifiers`` environment (the ``verifiers`` extra; verifiers 0.4, ``verifiers.v1``).

Any text-capable alem env id (``kuhn_poker-v0``, ``tic_tac_toe-v0``, ``bargaining-v0``, ...)
becomes a multi-turn environment that verifiers' own tooling (``vf-eval``) and trainers built on
it (prime-rl) can load. Each episode is played by a :class:`~alem.text.train.pool.TextEnvPool`:
the prompts are the pool's chats (system: the rules and the answer format; user: the seat's view
and its legal moves), every reply is parsed and applied by the pool, and the other seats are alem
device players (``opponent="cfr"``, ``"minimax"``, ``"random"``, ``"always:<move>"``). With
``self_play=True`` every seat asks the model instead, each seat in its own trace.

verifiers 0.4 resolves a taskset id to a top-level module: the id of this one is
``alem_verifiers`` (a module of the alem distribution that re-exports this one). It exports
the three plugin classes verifiers looks for:

- :class:`AlemTaskset`: one task per (seed, trained seat), ``num_seeds`` of them from
  ``first_seed`` on (endless when ``num_seeds`` is None); the task's seed deals like episode
  ``seed`` of ``python -m alem.evaluate seed=<seed>`` and like ``TextEnvPool(...).reset([seed])``.
- :class:`AlemEnv`: plays one task as one episode; each decision of a trained seat is one
  model call whose messages are exactly the pool's ``TextTurn.messages``. The trace gets the
  rewards ``game_return`` (the seat's return) and, with ``invalid_penalty``, ``invalid_replies``
  (its count, weighted ``-invalid_penalty``), metrics, and ``info["alem"]`` (the episode's
  returns and every decision: legal moves, the move played, the parse status, invalid flags).
- :class:`AlemChatHarness`: the in-process harness that sends those messages through verifiers'
  interception (which records tokens and calls for training), one request per decision. The
  built-in harnesses run a program prepared with ``uv`` (downloaded at run time) and grow one
  conversation, which neither works offline nor gives the pool's prompts.

Usage, in Python (any OpenAI-compatible server; ``sampling`` is verifiers' sampling config)::

    from alem.text.train.verifiers_env import load_environment, play

    env = load_environment("tic_tac_toe-v0", seats=[0, 1], opponent="minimax", num_seeds=8)
    episodes = play(env, base_url="http://127.0.0.1:8000/v1", model="my-model",
                    sampling={"temperature": 0.7, "max_tokens": 64})
    print([trace.reward for ep in episodes for trace in ep.traces])

or with verifiers' CLI (flags are the fields of :class:`AlemTasksetConfig`)::

    vf-eval alem_verifiers --env.taskset.env-id kuhn_poker-v0 --env.taskset.opponent cfr \\
        --env.taskset.num-seeds 16 -m my-model --client.base-url http://127.0.0.1:8000/v1 --no-push

What matches :class:`~alem.text.train.pool.TextEnvPool` (and :func:`~alem.text.train.adapters.rollout`
with ``request_seed=k`` when ``request_seed=k`` is set here): for the same seeds, base ``seed``,
``history``, ``invalid``, ``max_steps`` and ``openings``, the messages of every request, the
parses, invalid flags and moves, and the returns. ``answer="json"`` passes only replies carrying a
JSON ``{"action": ...}`` (:func:`~alem.text.train.grpo.pool_reply`), as the TRL rollout's default.

Each episode steps its own one-row copy of a pool; the copies share one compiled program per set
of trained seats (compiled in a worker thread at the first episode: a few seconds). Sampling
settings (temperature, max tokens) are the run's (``--sampling.*``), not alem's ``llm.*``. A seat
whose rollout stops early (a verifiers turn or token limit, a failed model call) plays the
``invalid`` rule for its remaining decisions and its trace carries the error. Each decision is
its own branch of the trace (with ``history=0`` the prompts share only the system message), so a
trainer sees one sample per decision, all with the episode's reward.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import itertools
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from alem.errors import AlemError, ConfigError, DependencyNotInstalled
from alem.extras import require

try:
    import verifiers.v1 as vf
except ImportError:  # name the install rather than fail deep inside an import
    require("verifiers", "alem.text.train.verifiers_env")
    raise

import httpx
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.errors import MODEL_TRANSPORT_ERROR_EXIT_CODE
from verifiers.v1.types import AssistantMessage, content_text

from alem.text.train.grpo import opponent_player, pool_reply
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import EpisodeResult, TextTurn

__all__ = [
    "PLUGIN_ID",
    "AlemTasksetConfig",
    "AlemTaskData",
    "AlemTask",
    "AlemTaskset",
    "AlemEnvConfig",
    "AlemEnv",
    "AlemChatHarnessConfig",
    "AlemChatHarness",
    "load_environment",
    "aplay",
    "play",
]

#: The taskset (and harness) id verifiers resolves to this module: the top-level ``alem_verifiers``.
PLUGIN_ID = "alem_verifiers"

# The request seed of each trace's decision in flight, set by AlemEnv and read by the harness
# (both run in this process; the seed is not part of the prompt).
_REQUEST_SEEDS: dict[str, int] = {}


def _request_seed(base: int, turn: TextTurn) -> int:
    """The per-request seed :func:`~alem.text.train.adapters.arollout` sends for ``turn``."""
    return hash((base, turn.seed, turn.seat, turn.turn)) & 0x7FFFFFFF


# ---------------------------------------------------------------------------- tasks
class AlemTasksetConfig(vf.TasksetConfig):
    """The game and how it is played (``--env.taskset.<field>`` on verifiers' CLI)."""

    env_id: str = ""
    """A registered alem env id with text support, e.g. ``kuhn_poker-v0`` (required; a default
    because verifiers' CLI builds the config from the taskset id alone before parsing flags)."""
    env_kwargs: dict[str, Any] = {}  # pydantic copies mutable defaults
    """Keyword arguments of ``alem.make``."""
    seats: list[int] = [0]
    """The seats the model plays, one task per seed and seat (ignored with ``self_play``)."""
    self_play: bool = False
    """The model plays every seat of each episode (one trace per seat)."""
    opponent: str = "random"
    """The other seats' player: a device player spec of the env (``random``, ``cfr``,
    ``minimax``, ``always:<move>``, ...)."""
    seed: int = 0
    """The pool's base seed: task seed ``s`` deals like episode ``s`` of ``alem.evaluate seed=<seed>``."""
    first_seed: int = 0
    num_seeds: int | None = None
    """Tasks for seeds ``first_seed .. first_seed + num_seeds - 1`` (None: endless)."""
    invalid: Literal["random", "first", "forfeit"] = "random"
    """What a reply naming no legal move plays (TextEnvPool's ``invalid``)."""
    invalid_penalty: float = 0.0
    """Weight of the ``invalid_replies`` reward: subtracted per invalid reply."""
    answer: Literal["tolerant", "json"] = "tolerant"
    """``tolerant``: the pool parses the reply as it is; ``json``: only replies with a JSON
    ``{"action": ...}`` count (:func:`~alem.text.train.grpo.pool_reply`)."""
    history: int = 0
    """Earlier accepted exchanges of the seat kept in each prompt (TextEnvPool's ``history``)."""
    max_steps: int | None = None
    """Cut episodes after this many env steps (None: the env's horizon)."""
    openings: int = 0
    """Random legal plies from the start before the first prompt (TextEnvPool's ``openings``)."""
    request_seed: int | None = None
    """Send arollout's per-request seed ``hash((request_seed, seed, seat, turn))`` (reproducible
    replies from a seeded server; the same for every rollout of a task, so leave it None for
    GRPO groups)."""


class AlemTaskData(vf.TaskData):
    """One game: the env id, the deal (``seed``) and the seat the model plays (None: every seat)."""

    env_id: str
    seed: int
    seat: int | None = None


class AlemTask(vf.Task[AlemTaskData, vf.State, vf.TaskConfig]):
    """A task of :class:`AlemTaskset` (scored by :class:`AlemEnv`, not by reward hooks)."""

    @property
    def key(self) -> str:
        return f"{self.data.env_id}/seed={self.data.seed}/seat={self.data.seat}"


class _Game:
    """The alem side of a taskset: the env, the opponent and the compiled pools (shared by views)."""

    def __init__(self, config: AlemTasksetConfig):
        import alem

        if not config.env_id:
            raise ConfigError(
                "AlemTaskset needs env_id, a text-capable alem env id "
                "(--env.taskset.env-id kuhn_poker-v0 on verifiers' CLI)"
            )
        env = alem.make(config.env_id, **config.env_kwargs)  # UnknownEnvError names close ids
        if not getattr(env, "supports_text", False):
            raise AlemError(
                f"{config.env_id} has no text support (no render_text prompts or action names); "
                "AlemTaskset plays text-capable ids such as kuhn_poker-v0 or tic_tac_toe-v0"
            )
        for name, low in (
            ("first_seed", 0),
            ("num_seeds", 1),
            ("history", 0),
            ("max_steps", 1),
            ("openings", 0),
        ):
            value = getattr(config, name)
            if value is not None and value < low:
                raise ConfigError(f"{name} must be >= {low}, got {value}")
        n = env.num_agents
        if config.self_play:
            self.seats: list[int | None] = [None]
        else:
            bad = [s for s in config.seats if not 0 <= s < n]
            if not config.seats or bad or len(set(config.seats)) != len(config.seats):
                raise ConfigError(
                    f"seats must be distinct seats of {config.env_id} (0..{n - 1}), got {config.seats}"
                )
            self.seats = list(config.seats)
        self.env, self.config = env, config
        # Every seat but the task's is the opponent's (a bad spec fails here, not mid-run).
        self.opponent = None if config.self_play or n == 1 else opponent_player(env, config.opponent)
        self._templates: dict[tuple[int, ...], TextEnvPool] = {}
        self._lock = threading.Lock()

    def text_seats(self, seat: int | None) -> tuple[int, ...]:
        return tuple(range(self.env.num_agents)) if seat is None else (seat,)

    def pool(self, text_seats: tuple[int, ...]) -> TextEnvPool:
        """A pool of one row for these text seats, sharing the compiled program of the first."""
        with self._lock:
            template = self._templates.get(text_seats)
            if template is None:
                cfg = self.config
                others = {i: self.opponent for i in range(self.env.num_agents) if i not in text_seats}
                template = TextEnvPool(
                    self.env,
                    1,
                    seed=cfg.seed,
                    history=cfg.history,
                    invalid=cfg.invalid,
                    max_steps=cfg.max_steps,
                    players=others or None,
                    openings=cfg.openings,
                )
                # Compile reset and step now (jit compiles at first call), off the event loop.
                pending = template.reset([0])
                template.step_actions([t.legal_actions[0] if t.legal_actions else -1 for t in pending])
                self._templates[text_seats] = template
        # reset() gives a copy its own episode state; the jitted program stays shared.
        return copy.copy(template)

    def reply(self, text: str) -> str:
        return pool_reply(text, self.config.answer)


class AlemTaskset(vf.Taskset[AlemTask, AlemTasksetConfig]):
    """Tasks of one alem game: one per seed and trained seat (see :class:`AlemTasksetConfig`).

    Raises at construction for an unknown id, an id without text support, bad seats or an
    unknown opponent spec.
    """

    def __init__(self, config: AlemTasksetConfig) -> None:
        super().__init__(config)
        self.game = _Game(config)
        self.INFINITE = config.num_seeds is None

    def load(self) -> Iterator[AlemTask]:
        cfg = self.config
        start = cfg.first_seed
        seeds = itertools.count(start) if cfg.num_seeds is None else range(start, start + cfg.num_seeds)
        for seed in seeds:
            for seat in self.game.seats:
                who = "self-play" if seat is None else f"seat {seat}"
                data = AlemTaskData(
                    name=f"{cfg.env_id} seed {seed} {who}", env_id=cfg.env_id, seed=seed, seat=seat
                )
                yield AlemTask(data, cfg.task)


# ---------------------------------------------------------------------------- harness
class AlemChatHarnessConfig(vf.HarnessConfig):
    """No settings of its own: sampling is the run's (``--sampling.*``)."""


class AlemChatHarness(vf.Harness[AlemChatHarnessConfig]):
    """One chat request per segment, in this process, with exactly the messages of the turn.

    :class:`AlemEnv` hands each decision's full chat (the pool's ``TextTurn.messages``) to the
    turn; this harness sends it as it is (it does not prepend the earlier exchange, as the
    built-in chat harnesses do), so each decision is one branch of the trace.
    """

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        system, prompt = self.resolve_prompt(data)
        messages = [] if system is None else [{"role": "system", "content": system}]
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or []]
        return await self._chat(ctx, trace, endpoint, secret, messages)

    async def resume(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        messages: vf.Messages,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        return await self._chat(ctx, trace, endpoint, secret, [message_to_wire(m) for m in messages])

    async def _chat(
        self, ctx: vf.ModelContext, trace: vf.Trace, endpoint: str, secret: str, messages: list[dict]
    ) -> vf.ProgramResult:
        body: dict[str, Any] = {"model": ctx.model, "messages": messages}
        seed = _REQUEST_SEEDS.get(trace.id)
        if seed is not None:
            body["seed"] = seed
        # No read timeout: the agent's rollout timeout bounds a segment (as for any harness).
        timeout = httpx.Timeout(None, connect=30.0)
        try:
            async with httpx.AsyncClient(timeout=timeout) as client:
                r = await client.post(
                    f"{endpoint.rstrip('/')}/chat/completions",
                    json=body,
                    headers={"Authorization": f"Bearer {secret}"},
                )
        except httpx.TransportError as e:
            return vf.ProgramResult(MODEL_TRANSPORT_ERROR_EXIT_CODE, "", f"{type(e).__name__}: {e}")
        if r.status_code >= 400:
            # The rollout records the interception's own error when it has one; this is the fallback.
            return vf.ProgramResult(1, "", f"chat request answered {r.status_code}: {r.text[:500]}")
        return vf.ProgramResult(0, "", "")


# ---------------------------------------------------------------------------- env
class AlemEnvConfig(vf.EnvConfig):
    """One role, ``player``: the model. Its runtime is a local subprocess box (the harness
    runs in this process and needs none of a sandbox)."""

    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class _Seat:
    """A trained seat's open interaction in one episode."""

    def __init__(self, seat: int, chat: vf.Interaction):
        self.seat, self.chat, self.over = seat, chat, False


class AlemEnv(vf.Env[AlemEnvConfig]):
    """Plays each :class:`AlemTask` as one episode of a :class:`~alem.text.train.pool.TextEnvPool`
    (see the module docstring); the taskset must be an :class:`AlemTaskset`."""

    def __init__(self, config: AlemEnvConfig) -> None:
        super().__init__(config)
        if not isinstance(self.taskset, AlemTaskset):
            raise ConfigError(
                f"AlemEnv plays AlemTaskset tasks (taskset id {PLUGIN_ID!r}), got {type(self.taskset).__name__}"
            )

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        game: _Game = self.taskset.game
        data = task.data
        if not isinstance(data, AlemTaskData) or data.env_id != game.config.env_id:
            raise ConfigError(f"AlemEnv for {game.config.env_id} was given the task {data.name!r}")
        if data.seat not in game.seats:
            raise ConfigError(
                f"the task {data.name!r} plays seat {data.seat}; this taskset plays {game.seats}"
            )
        text_seats = game.text_seats(data.seat)
        pool = await asyncio.to_thread(game.pool, text_seats)  # compiles once per seat set
        async with contextlib.AsyncExitStack() as stack:
            seats: dict[int, _Seat] = {}
            for s in text_seats:
                seat_task = task if data.seat is not None else task.with_data(seat=s)
                seats[s] = _Seat(s, await stack.enter_async_context(agents.player.interaction(seat_task)))
            finished: list[EpisodeResult] = []
            pending = pool.reset([data.seed])
            while not pool.done:
                replies = await asyncio.gather(*(self._reply(game, seats[t.seat], t) for t in pending))
                res = pool.step(replies)
                finished += res.finished
                pending = res.pending
            (episode,) = finished
            for seat in seats.values():
                _record(seat.chat.trace, episode, seat.seat, game)

    async def _reply(self, game: _Game, seat: _Seat, turn: TextTurn) -> str | None:
        """The model's reply to one pending record (None once the seat's rollout has stopped)."""
        if seat.over:
            return None
        trace = seat.chat.trace
        base = game.config.request_seed
        if base is not None:
            _REQUEST_SEEDS[trace.id] = _request_seed(base, turn)
        try:
            segment = await seat.chat.turn(turn.messages)
        finally:
            _REQUEST_SEEDS.pop(trace.id, None)
        if segment.terminated:
            seat.over = True
            return None
        said = [m for m in segment.messages if isinstance(m, AssistantMessage)]
        # The raw content, as a chat backend hands it to the pool (Segment.last_reply strips it).
        text = content_text(said[-1].content) if said else ""
        return game.reply(text)


def _record(trace: vf.Trace, ep: EpisodeResult, seat: int, game: _Game) -> None:
    """The episode's outcome on ``seat``'s trace: rewards, metrics and ``info["alem"]``."""
    cfg = game.config
    trace.record_reward("game_return", float(ep.returns[seat]))
    if cfg.invalid_penalty:
        trace.record_reward("invalid_replies", float(ep.invalid[seat]), -float(cfg.invalid_penalty))
    metrics = {
        "invalid_replies": float(ep.invalid[seat]),
        "decisions": float(ep.decisions[seat]),
        "episode_length": float(ep.length),
        "cut": float(ep.cut),
    }
    others = [r for i, r in enumerate(ep.returns) if i != seat]
    if others:  # +1 / 0 / -1 against the best other seat
        best = max(others)
        metrics["outcome"] = float((ep.returns[seat] > best) - (ep.returns[seat] < best))
    trace.record_metrics(metrics)
    trace.info["alem"] = {
        "env_id": cfg.env_id,
        "seed": ep.seed,
        "base_seed": cfg.seed,
        "seat": seat,
        "returns": [float(r) for r in ep.returns],
        "decisions": [
            {
                "turn": d.turn.turn,
                "legal": list(d.turn.legal),
                "action": d.action_name,
                "status": d.status,
                "invalid": bool(d.invalid),
                "env_illegal": bool(d.env_illegal),
            }
            for d in ep.trajectory
            if d.turn.seat == seat and not d.scripted
        ],
    }


# ---------------------------------------------------------------------------- entry points
def load_environment(
    env_id: str,
    *,
    seats: Sequence[int] = (0,),
    self_play: bool = False,
    opponent: str = "random",
    seed: int = 0,
    first_seed: int = 0,
    num_seeds: int | None = None,
    invalid: str = "random",
    invalid_penalty: float = 0.0,
    answer: str = "tolerant",
    history: int = 0,
    max_steps: int | None = None,
    openings: int = 0,
    request_seed: int | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    player: Mapping[str, Any] | None = None,
) -> AlemEnv:
    """An :class:`AlemEnv` for ``env_id``, built through verifiers' own loader (as ``vf-eval`` does).

    The keywords are :class:`AlemTasksetConfig`'s fields; ``player`` overrides the ``player``
    role's :class:`verifiers.v1.AgentConfig` (e.g. ``{"max_turns": 40}``).
    """
    taskset = {
        "id": PLUGIN_ID,
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs or {}),
        "seats": list(seats),
        "self_play": self_play,
        "opponent": opponent,
        "seed": seed,
        "first_seed": first_seed,
        "num_seeds": num_seeds,
        "invalid": invalid,
        "invalid_penalty": invalid_penalty,
        "answer": answer,
        "history": history,
        "max_steps": max_steps,
        "openings": openings,
        "request_seed": request_seed,
    }
    if importlib.util.find_spec(PLUGIN_ID) is None:  # verifiers imports the taskset by this name
        raise DependencyNotInstalled(
            f"the top-level module {PLUGIN_ID} of the alem distribution is not importable; "
            'reinstall alem: pip install -e ".[verifiers]" (or "alem[verifiers]")'
        )
    raw: dict[str, Any] = {"taskset": taskset}
    if player:
        raw["player"] = dict(player)
    env = vf.load_environment(vf.resolve_env_config(raw))
    assert isinstance(env, AlemEnv)
    return env


async def aplay(
    env: vf.Env,
    *,
    base_url: str,
    model: str,
    limit: int | None = None,
    num_rollouts: int = 1,
    sampling: Mapping[str, Any] | None = None,
    max_concurrent: int | None = 32,
    api_key_var: str = "OPENAI_API_KEY",
) -> list[vf.Episode]:
    """Play ``env``'s tasks (the first ``limit``; all of a finite taskset) ``num_rollouts`` times
    each against an OpenAI-compatible server, in this process, as ``vf-eval`` does; returns the
    episodes in task order."""
    taskset = env.taskset if limit is None else env.taskset.take(limit)
    if not taskset.bounded:
        raise ConfigError("the taskset is endless (num_seeds=None): pass limit=")
    ctx = vf.ModelContext(
        model=model,
        client=vf.EvalClientConfig(base_url=base_url, api_key_var=api_key_var),
        sampling=vf.SamplingConfig.model_validate(dict(sampling or {})),
    )
    sem = asyncio.Semaphore(max_concurrent) if max_concurrent else None
    async with env.serving():
        slots = [slot for task in taskset for slot in env.slots(task, num_rollouts)]
        return list(await asyncio.gather(*(env.run_slot(slot, ctx, sem) for slot in slots)))


def play(env: vf.Env, **kwargs: Any) -> list[vf.Episode]:
    """:func:`aplay` from synchronous code (a notebook's running loop included)."""
    from alem.engine.sync import run_sync

    return run_sync(aplay(env, **kwargs))
