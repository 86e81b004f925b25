"""Trainer adapters: driving :class:`~alem.text.train.pool.TextEnvPool` with a chat endpoint, and a
reward function in TRL's shape. No trainer is imported (nor torch); the signatures follow
TRL's documented interfaces.

- :func:`rollout` / :func:`arollout`: play seeds in a pool with any
  :class:`~alem.text.llm.chat.ChatBackend` (an OpenAI-compatible endpoint through
  :class:`~alem.text.llm.openai.OpenAIChatBackend`, e.g. a vLLM server with the policy being
  trained, or :class:`~alem.text.llm.scripted.ScriptedBackend`): every pending record of a step
  is requested concurrently, a request that fails for good counts as an invalid reply.
- :func:`decision_dataset`: rows for single-decision training (GRPO on one move) from the
  lines of :mod:`alem.text.train.export`: ``prompt`` (the chat) plus the columns the reward needs.
- :class:`DecisionReward`: ``reward_fn(prompts, completions, **columns) -> list[float]``, TRL's
  ``GRPOTrainer`` reward-function signature. Each completion is parsed as the seat's move in
  the row's position (replayed from the row's seed and earlier moves, checked against the
  prompt), then the game is finished by ``continuation`` players; the score is the seat's
  reward from that move to the end (mean over ``rollouts`` continuations), or
  ``invalid_reward`` for a reply that names no legal move. With ``minimax`` as the
  continuation in tic-tac-toe this is the game value of the move.
"""

from __future__ import annotations

import asyncio
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv
from alem.engine.sync import gather_or_cancel, run_sync
from alem.errors import AlemError, ConfigError, RequestFailed
from alem.players import Player, Turn, host_view
from alem.text.llm.chat import ChatBackend
from alem.text.llm.parsing import parse_reply
from alem.text.llm.prompts import turn_prompt
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import EpisodeResult, TextTurn

__all__ = ["rollout", "arollout", "decision_dataset", "DecisionReward", "completion_text"]


async def arollout(
    pool: TextEnvPool,
    backend: ChatBackend,
    seeds: Iterable[int],
    *,
    max_concurrency: int = 32,
    request_seed: int = 0,
) -> list[EpisodeResult]:
    """Play ``seeds`` to the end in ``pool`` with ``backend`` answering every pending record.

    Requests of one step go out together (at most ``max_concurrency`` in flight); the request
    seed is ``hash((request_seed, episode seed, seat, turn))`` so replies are reproducible for
    a seeded server. A :class:`~alem.errors.RequestFailed` (after the backend's own retries)
    becomes a missing reply, which the pool's ``invalid`` rule handles and flags.
    """
    sem = asyncio.Semaphore(max_concurrency)

    async def ask(t: TextTurn) -> str | None:
        seed = (
            (hash((request_seed, t.seed, t.seat, t.turn)) & 0x7FFFFFFF) if request_seed is not None else None
        )
        async with sem:
            try:
                reply = await backend.chat(t.messages, legal_names=t.legal, seed=seed)
            except RequestFailed:
                return None
        return reply.content

    finished: list[EpisodeResult] = []
    pending = pool.reset(seeds)
    while not pool.done:
        replies = await gather_or_cancel(*(ask(t) for t in pending)) if pending else []
        res = pool.step(replies)
        finished += res.finished
        pending = res.pending
    return finished


def rollout(
    pool: TextEnvPool,
    backend: ChatBackend,
    seeds: Iterable[int],
    *,
    max_concurrency: int = 32,
    request_seed: int = 0,
) -> list[EpisodeResult]:
    """:func:`arollout` from synchronous code."""
    return run_sync(
        arollout(pool, backend, seeds, max_concurrency=max_concurrency, request_seed=request_seed)
    )


def decision_dataset(
    lines: Sequence[dict[str, Any]], *, seats: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """Single-decision rows from export lines (:mod:`alem.text.train.export`; every seat's decisions
    of an episode must be in the file, as exports write them).

    Each row: ``prompt`` (the messages), ``seat``, ``legal``, ``env_id``, ``base_seed``,
    ``seed``, ``key_splits``, ``actions`` (the joint moves of every env step up to and including
    this decision's, ``[turn + 1][num_agents]``; this seat's own entry in the last step is
    what the completion replaces; seats that did not act hold 0) and ``expert`` (the move the
    exported player made, by name). ``seats``: keep only these seats' decisions.
    """
    by_episode: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        by_episode[int(line["episode"])].append(line)
    rows = []
    for _, eps in sorted(by_episode.items()):
        n = 1 + max(int(x["seat"]) for x in eps)
        steps = 1 + max(int(x["turn"]) for x in eps)
        joint = np.zeros((steps, n), np.int64)
        for x in eps:
            joint[int(x["turn"]), int(x["seat"])] = int(x["action"])
        for x in eps:
            if seats is not None and int(x["seat"]) not in seats:
                continue
            t = int(x["turn"])
            rows.append(
                {
                    "prompt": x["messages"],
                    "seat": int(x["seat"]),
                    "legal": list(x["legal"]),
                    "env_id": x["env_id"],
                    "base_seed": int(x["base_seed"]),
                    "seed": int(x["seed"]),
                    "key_splits": int(x.get("key_splits", 1)),
                    "actions": joint[: t + 1].tolist(),
                    "expert": x["action_name"],
                }
            )
    return rows


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string (standard format) or a list of messages
    (conversational format; the assistant messages' contents, joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, Sequence):
        return "\n".join(
            str(m.get("content", "")) for m in completion if m.get("role", "assistant") == "assistant"
        )
    return str(completion)


#: Batches are padded to a power of two, at least this many rows (fewer programs to compile).
MIN_BUCKET = 16


def _bucket(b: int) -> int:
    return max(MIN_BUCKET, 1 << max(0, math.ceil(math.log2(max(b, 1)))))


class DecisionReward:
    """TRL-style reward function scoring one-move completions against the env (module docstring).

    Args:
        env: the env (or id) the dataset rows come from.
        continuation: player spec(s) that finish the game after the move (one per seat or one
            for all; device players such as ``"minimax"``, ``"cfr"``, ``"random"``).
        invalid_reward: the score of a reply that names no legal move.
        rollouts: continuations averaged per completion (for stochastic continuations).
        max_steps: a bound on the env steps of a replay (safety; default 1000).
        check_prompt: raise when the replayed position does not render as the prompt's last
            user message (the row does not belong to this env, seed or move list).
        seed: base of the continuation players' keys.

    Call: ``reward(prompts, completions, *, seat, seed, base_seed, actions, key_splits=None,
    **ignored) -> list[float]``; the keyword columns are lists aligned with ``completions``
    (TRL passes the dataset's columns so).
    """

    __name__ = "alem_decision_reward"  # TRL logs reward functions by __name__

    def __init__(
        self,
        env: MultiAgentEnv | str,
        continuation: str | Sequence[str] = "random",
        *,
        invalid_reward: float = -1.0,
        rollouts: int = 1,
        max_steps: int = 1000,
        check_prompt: bool = True,
        seed: int = 0,
        player_kwargs: dict[str, dict] | None = None,
    ):
        from alem.arena.players import build_players

        if isinstance(env, str):
            import alem

            env = alem.make(env)
        if not getattr(env, "supports_text", False):
            raise AlemError(f"DecisionReward needs an env with text support; {env.id} has none")
        specs = [continuation] if isinstance(continuation, str) else list(continuation)
        self.players: list[Player] = build_players(env, specs, player_kwargs)
        if any(p.host for p in self.players):
            raise ConfigError("DecisionReward continues games with device players only (not llm)")
        if not (isinstance(rollouts, int) and rollouts >= 1):
            raise ConfigError(f"rollouts must be an integer >= 1, got {rollouts!r}")
        self.env, self.params = env, env.default_params
        self.invalid_reward, self.rollouts, self.max_steps = float(invalid_reward), rollouts, max_steps
        self.check_prompt, self.seed = check_prompt, int(seed)
        self._params_host = host_view(self.params)
        self._names = [list(env.action_names(i)) for i in range(env.num_agents)]
        self._build()

    def _build(self) -> None:
        from alem.engine.lockstep import episode_key

        env, params, players = self.env, self.params, self.players
        n = env.num_agents

        def reset(base, seeds):
            k = jax.random.key(base)
            keys = jax.vmap(lambda s: episode_key(k, s, 0))(seeds)
            return jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def step(base, seeds, t, splits, roll, state, ts, forced, use_forced):
            k = jax.random.key(base)
            k_env = jax.vmap(lambda s, tt, sp: _env_key(k, s, tt, sp, n))(seeds, t, splits)
            k_cont = jax.random.key(self.seed)
            k_play = jax.vmap(lambda s, tt: jax.random.fold_in(episode_key(k_cont, s, tt + 1), roll))(
                seeds, t
            )
            acts = jnp.zeros(forced.shape, jnp.int32)
            for i, p in enumerate(players):

                def one(kk, st, tstep, i=i, p=p):  # one row at a time, as the arena does: keys per row
                    turn = Turn(
                        env,
                        params,
                        i,
                        _expand(st),
                        _expand(tstep),
                        tstep.acting[i][None],
                        jnp.zeros((1,), jnp.int32),
                    )
                    return (
                        jnp.asarray(p.act(jax.random.fold_in(kk, i), turn)).reshape(-1)[0].astype(jnp.int32)
                    )

                acts = acts.at[:, i].set(jax.vmap(one)(k_play, state, ts))
            acts = jnp.where(use_forced[:, None], forced, acts)
            return jax.vmap(env.step, in_axes=(0, 0, 0, None))(k_env, state, acts, params)

        self._reset = jax.jit(reset)
        self._step = jax.jit(step)

    def __call__(
        self,
        prompts: Sequence[Any] | None,
        completions: Sequence[Any],
        *,
        seat: Sequence[int],
        seed: Sequence[int],
        base_seed: Sequence[int],
        actions: Sequence[Sequence[Sequence[int]]],
        key_splits: Sequence[int] | None = None,
        **ignored: Any,
    ) -> list[float]:
        b = len(completions)
        if not (len(seat) == len(seed) == len(base_seed) == len(actions) == b):
            raise AlemError(
                "DecisionReward: completions and the seat/seed/base_seed/actions columns differ in length"
            )
        out = np.zeros(b, np.float64)
        groups: dict[int, list[int]] = defaultdict(list)  # one batch per base seed (the key is a scalar)
        for k in range(b):
            groups[int(base_seed[k])].append(k)
        for base, rows in groups.items():
            out[rows] = self._score(
                base,
                [None if prompts is None else prompts[k] for k in rows],
                [completion_text(completions[k]) for k in rows],
                [int(seat[k]) for k in rows],
                [int(seed[k]) for k in rows],
                [np.asarray(actions[k], np.int64).reshape(len(actions[k]), -1) for k in rows],
                [1 if key_splits is None else int(key_splits[k]) for k in rows],
            )
        return out.tolist()

    def _score(self, base, prompts, texts, seats, seeds, prefixes, splits) -> np.ndarray:
        n = self.env.num_agents
        b = len(texts)
        size = _bucket(b)
        pad = size - b
        seeds_a = jnp.asarray(seeds + [0] * pad, jnp.int32)
        splits_a = jnp.asarray(splits + [1] * pad, jnp.int32)
        lengths = np.array([len(p) for p in prefixes] + [1] * pad)
        total = np.zeros(b)
        invalid = np.zeros(b, bool)
        for roll in range(self.rollouts):
            state, ts = self._reset(base, seeds_a)
            done = np.zeros(size, bool)
            done[b:] = True
            got = np.zeros(size)
            moves = np.zeros(size, np.int64)
            for t in range(self.max_steps):
                h_state, h_ts = host_view((state, ts)) if t < lengths.max() else (None, host_view(ts))
                forced = np.zeros((size, n), np.int32)
                use = np.zeros(size, bool)
                for r in range(b):
                    if done[r] or t >= lengths[r]:
                        continue
                    forced[r] = prefixes[r][t]
                    use[r] = True
                    if t == lengths[r] - 1:
                        if roll == 0:
                            moves[r] = self._read(r, h_state, h_ts, prompts[r], texts[r], seats[r], seeds[r])
                            invalid[r] = moves[r] < 0
                        if invalid[r]:
                            done[r] = True
                            continue
                        forced[r, seats[r]] = moves[r]
                state, ts = self._step(
                    base,
                    seeds_a,
                    jnp.full((size,), t, jnp.int32),
                    splits_a,
                    roll,
                    state,
                    ts,
                    jnp.asarray(forced),
                    jnp.asarray(use),
                )
                h = host_view((ts.reward, ts.done))
                live = ~done & (t >= lengths - 1)
                idx = np.flatnonzero(live[:b])
                got[idx] += np.asarray(h[0])[idx, np.asarray(seats)[idx]]
                done |= np.asarray(h[1], bool) & (t >= lengths - 1)
                if done.all():
                    break
            total += got[:b]
        scores = total / self.rollouts
        scores[invalid] = self.invalid_reward
        return scores

    def _read(self, r, h_state, h_ts, prompt, text, seat, seed) -> int:
        """The move of ``text`` in row ``r``'s position (-1: invalid); checks the prompt."""
        legal = np.flatnonzero(np.asarray(h_ts.action_mask)[r, seat]).tolist()
        if self.check_prompt and prompt is not None and not isinstance(prompt, str):
            state_row = jax.tree.map(lambda x: x[r], h_state)
            view = self.env.render_text(state_row, seat, self._params_host)
            want = turn_prompt(view, [self._names[seat][j] for j in legal])
            users = [m for m in prompt if m.get("role") == "user"]
            if not users or users[-1].get("content") != want:
                raise AlemError(
                    f"DecisionReward: the replayed position of seat {seat} (seed {seed}) does not match "
                    "the prompt; the row's env, seeds or moves are not this env's"
                )
        parsed = parse_reply(text, self.env, seat, legal)
        return int(parsed.action) if parsed.status == "ok" else -1


def _expand(tree: Any) -> Any:
    return jax.tree.map(lambda x: x[None], tree)


def _env_key(k: jax.Array, s: jax.Array, t: jax.Array, splits: jax.Array, n: int) -> jax.Array:
    """``split(episode_key(k, s, t + 1), splits)[0]`` for a traced ``splits`` in ``1..n+1``."""
    from alem.engine.lockstep import episode_key

    ek = episode_key(k, s, t + 1)
    branches = [lambda ek=ek, m=m: jax.random.split(ek, m)[0] for m in range(1, n + 2)]
    return jax.lax.switch(splits - 1, branches)
