"""A batched text environment for training LLMs: :class:`TextEnvPool`.

``N`` copies of one text-capable env advance in lock-step through one jitted, vmapped
program (the arena's :class:`~alem.engine.lockstep.LockStep`: ``env.reset``/``env.step`` under
``jax.vmap``, compiled once per pool). The pool knows nothing about models: it hands out
chat prompts and takes reply strings back.

- :meth:`TextEnvPool.reset` starts episodes from seeds and returns the pending
  :class:`~alem.text.train.turns.TextTurn` records: one per env row and seat that must act now, each with the chat
  messages that seat sees (system: the rules and the answer format; user: its own view,
  ``env.render_text(state, seat)``, and the legal moves by name unless ``prompt_mode`` withholds
  them; optionally the last
  ``history`` accepted exchanges of the episode) and the legal move names.
- :meth:`TextEnvPool.step` takes one reply string per pending record (in order), parses each
  with :func:`~alem.text.llm.parsing.parse_reply` (a JSON ``{"action": ...}`` or free text),
  applies the ``invalid`` rule to replies that name no legal move, steps every live env once
  (simultaneous-move envs: every acting seat of a row answers in the same step) and returns a
  :class:`~alem.text.train.turns.PoolStep`: per-seat rewards of this step, done flags, finished episodes with their
  returns and per-decision trajectories, invalid flags, and the next pending records.
  :meth:`TextEnvPool.step_actions` does the same from action indices (``-1``: forfeit).

Prompts and invalid replies are :class:`~alem.text.llm.player.LLMPlayer`'s, from
:mod:`alem.text.llm.seat` (the same chat for the same state and prompt mode; the same
``invalid=`` rule, seeded alike), but without re-prompts (a trainer sees every reply once):

- ``"random"``: a uniformly random legal move, seeded by ``(pool seed, episode seed, seat,
  the seat's decision in the episode)`` (independent of the batch layout; the player's move for
  the same ``seed=`` and arena episode);
- ``"first"``: the first legal move;
- ``"forfeit"``: an illegal move (-1), so the env's own illegal-action rule applies
  (``illegal_action="lose"`` in games that offer it ends the game as a loss; the default
  ``"replace"`` plays the env's documented default move).

Each such turn is flagged (:attr:`~alem.text.train.turns.Decision.invalid`, :attr:`~alem.text.train.turns.PoolStep.invalid`) and counted
per seat in :attr:`~alem.text.train.turns.EpisodeResult.invalid`. The env's rewards are passed on unchanged: a
trainer that wants a format penalty subtracts it from the flagged turns.

Seeds and finished rows: ``reset(seeds)`` takes any iterable of non-negative int seeds. The
first ``N`` start the rows (fewer: the other rows stay idle); the pool keeps pulling from the
iterable, lazily, and a row whose episode ends starts the next seed in the same
:meth:`~TextEnvPool.step` (its new records are among the returned pending ones,
``TextTurn.turn == 0``). Once the seeds run out, finished rows stay idle until the next
``reset``; :attr:`TextEnvPool.running` says which rows are live and :attr:`TextEnvPool.done`
whether all are idle. Pass ``itertools.count()`` for an endless stream, or ``[s] * G`` for a
group of ``G`` games of the same deal (GRPO).

Seed ``s`` is dealt exactly like episode ``s`` of ``python -m alem.evaluate seed=<pool seed>``
with LLM seats (the same env keys, whatever ``N`` and the row), and ``players=`` may put
device policies (``make_player("minimax", env)``, ``random``, checkpoints) in some seats:
they act inside the jitted step and only the other seats get records (``record_scripted=True``
also records their decisions in the trajectories, with their views and canonical answers).

Host work per step: one ``jax.device_get`` of the batch, views rendered from NumPy, legal
moves from the mask, prompts and parses in Python (``benchmarks/text_pool.py`` measures it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import AlemError, ConfigError
from alem.players import Player, host_view
from alem.text.llm.parsing import parse_reply
from alem.text.llm.prompts import PromptMode, system_prompt
from alem.text.llm.seat import INVALID_RULES, invalid_move, turn_messages
from alem.text.train.turns import Decision, EpisodeResult, PoolStep, TextTurn, answer, credit_rewards

__all__ = ["INVALID_RULES", "TextEnvPool"]

_INT32_MAX = 2**31 - 1


class _TextSeat(Player):
    """Placeholder of a seat answered through the pool (never asked to act)."""

    host = True
    name = "text"


class TextEnvPool:
    """``num_envs`` envs of one text-capable env in lock-step, played through chat prompts.

    See the module docstring for the protocol. Not thread-safe; one pool per trainer worker.

    Args:
        env: a registered id (``"kuhn_poker-v0"``) or an env instance with text support.
        num_envs: rows ``N`` stepped together.
        params: env params (default ``env.default_params``).
        seed: the base seed; seed ``s`` of :meth:`reset` deals like arena episode ``s`` of
            ``seed=<seed>``.
        history: earlier accepted exchanges (user view + reply) of the same episode and seat
            kept in each prompt (0: none; as ``llm.history``).
        invalid: ``"random"``, ``"first"`` or ``"forfeit"`` (see the module docstring).
        max_steps: cut episodes after this many env steps (None: the env's own horizon).
        players: device policies for some seats: a mapping ``seat -> Player`` or a sequence with
            ``None`` for text seats (e.g. ``{1: make_player("minimax", env)}``).
        record: keep each episode's decisions (:attr:`~alem.text.train.turns.EpisodeResult.trajectory`).
        record_scripted: also render and record the decisions of ``players`` seats.
        env_kwargs: keyword arguments of :func:`alem.make` when ``env`` is an id.
        openings: random legal plies played from each start before the first prompt, as the
            arena's ``openings=`` (:class:`~alem.engine.record.Match`; drawn from the seed
            alone). Default 0: every episode starts from the game's own start, whatever the
            arena's default for the env.
        prompt_mode: what the prompts tell (:class:`~alem.text.llm.prompts.PromptMode`; as
            ``llm.legal_moves`` and ``llm.rules``): the default lists the legal moves and the rules.
    """

    def __init__(
        self,
        env: MultiAgentEnv | str,
        num_envs: int,
        *,
        params: Any = None,
        seed: int = 0,
        history: int = 0,
        invalid: str = "random",
        max_steps: int | None = None,
        players: Mapping[int, Player] | Sequence[Player | None] | None = None,
        record: bool = True,
        record_scripted: bool = False,
        env_kwargs: Mapping[str, Any] | None = None,
        openings: int = 0,
        prompt_mode: PromptMode = PromptMode(),
    ):
        from alem.engine.lockstep import LockStep  # lazy: the arena pulls in Hydra
        from alem.engine.record import Match

        if isinstance(env, str):
            import alem

            env = alem.make(env, **dict(env_kwargs or {}))
        elif env_kwargs:
            raise ConfigError("env_kwargs is for an env given by id; got an env instance")
        if not getattr(env, "supports_text", False):
            raise AlemError(f"TextEnvPool needs an env with text support; {env.id} has none")
        if not isinstance(prompt_mode, PromptMode):
            raise ConfigError(f"prompt_mode must be a PromptMode, got {prompt_mode!r}")
        if invalid not in INVALID_RULES:
            raise ConfigError(f"invalid must be one of {INVALID_RULES}, got {invalid!r}")
        if isinstance(history, bool) or not isinstance(history, int) or history < 0:
            raise ConfigError(f"history must be an integer >= 0, got {history!r}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ConfigError(f"seed must be an integer, got {seed!r}")
        n = env.num_agents
        seats: list[Player | None] = [None] * n
        if isinstance(players, Mapping):
            for i, p in players.items():
                if not (isinstance(i, int | np.integer) and 0 <= i < n):
                    raise ConfigError(f"players: seat {i!r} is not a seat of {env.id} (0..{n - 1})")
                seats[int(i)] = p
        elif players is not None:
            if len(players) != n:
                raise ConfigError(f"players: {env.id} has {n} seats, got {len(players)} entries")
            seats = list(players)
        for i, p in enumerate(seats):
            if p is not None and (not isinstance(p, Player) or p.host):
                raise ConfigError(
                    f"players[{i}] must be a device policy (make_player(...), not a host/LLM player); "
                    f"got {p!r}"
                )
        self.env = env
        self.num_envs = int(num_envs)
        self.seed = int(seed)
        self.history, self.invalid_rule = history, invalid
        self.record, self.record_scripted = bool(record), bool(record_scripted)
        self.text_seats = [i for i in range(n) if seats[i] is None]
        self.scripted_seats = [i for i in range(n) if seats[i] is not None]
        match = Match(
            env,
            tuple(p if p is not None else _TextSeat() for p in seats),
            1,
            num_envs=self.num_envs,
            seed=self.seed,
            max_steps=max_steps,
            params=params,
            openings=openings,
        )
        self.params = match.params
        #: Keys split from each step's episode key (env key first, then one per scripted seat);
        #: a replay of this pool's episodes needs it for envs whose steps draw from the key.
        self.key_splits = 1 + len(self.scripted_seats)
        self._prog = LockStep(match)
        self._k_env = jax.random.key(self.seed)
        self.prompt_mode = prompt_mode
        self._params_host = host_view(self.params)
        self._names = [list(env.action_names(i)) for i in range(n)]
        self._system = [system_prompt(env, self._params_host, i, prompt_mode) for i in range(n)]
        self._roles = np.asarray(env.agent_roles).astype(int).tolist()
        self._role_names = [str(env.role_names[r]) for r in self._roles]
        self._text_mask = np.zeros(n, bool)
        self._text_mask[self.text_seats] = True
        b = self.num_envs
        self._row_seed = np.full(b, -1, np.int64)
        self._row_next = np.full(b, -1, np.int64)
        self._seeds: Iterator[int] = iter(())
        self._pending: list[TextTurn] = []
        self._state = self._ts = None
        self._h_state = self._h_ts = None

    # ------------------------------------------------------------------ properties
    @property
    def num_agents(self) -> int:
        return self.env.num_agents

    @property
    def running(self) -> np.ndarray:
        """bool ``[N]``: rows playing an episode."""
        return self._row_seed >= 0

    @property
    def done(self) -> bool:
        """Every row is idle (the seeds ran out and every episode ended)."""
        return not self.running.any()

    @property
    def pending(self) -> list[TextTurn]:
        """The records waiting for replies (what the last reset/step returned)."""
        return list(self._pending)

    # ------------------------------------------------------------------ protocol
    def reset(self, seeds: Iterable[int]) -> list[TextTurn]:
        """Start episodes from ``seeds`` (see the module docstring); returns the pending records.

        Anything in flight is dropped. ``seeds`` is consumed lazily: at most ``N`` seeds ahead
        of the episodes started.
        """
        self._seeds = iter(seeds)
        b = self.num_envs
        self._row_seed = np.array([self._next_seed() for _ in range(b)], np.int64)
        self._row_next = np.array([self._next_seed() if s >= 0 else -1 for s in self._row_seed], np.int64)
        n = self.num_agents
        self._t = np.zeros(b, np.int64)
        self._returns = np.zeros((b, n), np.float64)
        self._n_decisions = np.zeros((b, n), np.int64)
        self._n_invalid = np.zeros((b, n), np.int64)
        self._rewards: list[list[np.ndarray]] = [[] for _ in range(b)]
        self._trajectory: list[list[Decision]] = [[] for _ in range(b)]
        self._history: list[list[list[dict[str, str]]]] = [[[] for _ in range(n)] for _ in range(b)]
        self._state, self._ts, _ = self._prog.reset(
            self._k_env, np.maximum(self._row_seed, 0).astype(np.int32)
        )
        self._h_state, self._h_ts = host_view((self._state, self._ts))
        self._pending = self._make_pending()
        return list(self._pending)

    def step(self, replies: Sequence[str | None]) -> PoolStep:
        """Answer every pending record (``replies[k]`` answers ``pending[k]``; None: no reply,
        invalid) and advance every live env one step."""
        if self._state is None:
            raise AlemError("TextEnvPool.step before reset(seeds)")
        replies = list(replies)
        if len(replies) != len(self._pending):
            raise AlemError(
                f"TextEnvPool.step: {len(self._pending)} records are pending, got {len(replies)} replies"
            )
        decisions = [self._read(t, r) for t, r in zip(self._pending, replies, strict=True)]
        return self._advance(decisions)

    def step_actions(self, actions: Sequence[int]) -> PoolStep:
        """As :meth:`step`, with action indices instead of replies (``-1``: forfeit); an index that
        is not legal is played as given (the env's illegal-action rule applies) and not flagged
        invalid. The decisions' ``reply`` is the canonical answer of the move."""
        if self._state is None:
            raise AlemError("TextEnvPool.step_actions before reset(seeds)")
        actions = [int(a) for a in actions]
        if len(actions) != len(self._pending):
            raise AlemError(
                f"TextEnvPool.step_actions: {len(self._pending)} records are pending, got {len(actions)} actions"
            )
        decisions = []
        for turn, a in zip(self._pending, actions, strict=True):
            names = self._names[turn.seat]
            name = names[a] if 0 <= a < len(names) else None
            decisions.append(Decision(turn, answer(name) if name else "", "ok", False, a, name))
        return self._advance(decisions)

    # ------------------------------------------------------------------ internals
    def _next_seed(self) -> int:
        s = next(self._seeds, None)
        if s is None:
            return -1
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= int(s) <= _INT32_MAX:
            raise ConfigError(f"TextEnvPool seeds must be integers in [0, 2**31 - 1], got {s!r}")
        return int(s)

    def _read(self, turn: TextTurn, reply: str | None) -> Decision:
        """Parse one reply; an invalid one plays the ``invalid`` rule's move."""
        text = "" if reply is None else str(reply)
        parsed = parse_reply(
            text, self.env, turn.seat, turn.legal_actions, json_only=self.prompt_mode.format == "json"
        )
        names = self._names[turn.seat]
        if parsed.status == "ok":
            return Decision(turn, text, "ok", False, int(parsed.action), names[parsed.action])
        action = invalid_move(
            self.invalid_rule, turn.legal_actions, self.seed, turn.seed, turn.seat, turn.decision
        )
        return Decision(turn, text, parsed.status, True, action, names[action] if action >= 0 else None)

    def _render_row(self, leaves: list[np.ndarray], treedef: Any, b: int) -> Any:
        return jax.tree_util.tree_unflatten(treedef, [x[b] for x in leaves])

    def _make_pending(self) -> list[TextTurn]:
        """Records of every live row's acting text seats (and, recorded, scripted ones)."""
        acting = np.asarray(self._h_ts.acting, bool) & self.running[:, None]
        seat_mask = (
            self._text_mask if not (self.record and self.record_scripted) else np.ones_like(self._text_mask)
        )
        want = acting & seat_mask[None, :]
        rows = np.flatnonzero(want.any(axis=1))
        self._scripted_turns: dict[tuple[int, int], TextTurn] = {}
        if rows.size == 0:
            return []
        leaves, treedef = jax.tree_util.tree_flatten(self._h_state)
        mask = np.asarray(self._h_ts.action_mask, bool)
        out: list[TextTurn] = []
        for b in rows.tolist():
            state_row = self._render_row(leaves, treedef, b)
            for i in np.flatnonzero(want[b]).tolist():
                legal_actions = np.flatnonzero(mask[b, i]).tolist()
                names = self._names[i]
                legal = [names[j] for j in legal_actions]
                turn = TextTurn(
                    env=b,
                    seat=i,
                    agent=self.env.agents[i],
                    role=self._roles[i],
                    role_name=self._role_names[i],
                    seed=int(self._row_seed[b]),
                    turn=int(self._t[b]),
                    decision=int(self._n_decisions[b, i]),
                    messages=turn_messages(
                        self.env,
                        self._params_host,
                        state_row,
                        i,
                        legal,
                        self.prompt_mode,
                        system=self._system[i],
                        past=self._history[b][i],
                        history=self.history,
                    ),  # fmt: skip
                    legal=legal,
                    legal_actions=legal_actions,
                )
                if self._text_mask[i]:
                    out.append(turn)
                else:
                    self._scripted_turns[(b, i)] = turn
        return out

    def _advance(self, decisions: list[Decision]) -> PoolStep:
        b, n = self.num_envs, self.num_agents
        running = self.running.copy()
        acting = np.asarray(self._h_ts.acting, bool) & running[:, None]
        host_actions = np.zeros((b, n), np.int32)
        for d in decisions:
            host_actions[d.turn.env, d.turn.seat] = d.action
        self._state, self._ts, out = self._prog.advance(
            self._k_env,
            self._state,
            self._ts,
            jnp.asarray(host_actions),
            jnp.asarray(np.maximum(self._row_seed, 0).astype(np.int32)),
            jnp.asarray(self._t.astype(np.int32)),
            jnp.asarray(self._row_next.astype(np.int32)),
            jnp.asarray(running),
            jnp.zeros((b,), bool),
        )
        # The one device-to-host transfer of this step.
        self._h_state, self._h_ts, h_out = host_view((self._state, self._ts, out))
        rewards = np.where(running[:, None], np.asarray(h_out["reward"], np.float32), 0.0).astype(np.float32)
        env_illegal = np.asarray(h_out["illegal"], bool) & acting
        done = np.asarray(h_out["done"], bool) & running
        self._returns[running] += rewards[running]
        self._n_decisions += acting
        for d in decisions:
            r, i = d.turn.env, d.turn.seat
            d.env_illegal = bool(env_illegal[r, i])
            d.step_reward = float(rewards[r, i])
            if d.invalid:
                self._n_invalid[r, i] += 1
            elif d.status == "ok" and self.history:
                self._history[r][i] += [d.turn.messages[-1], {"role": "assistant", "content": d.reply}]
        if self.record:
            actions = np.asarray(h_out["actions"])
            by_row: dict[int, list[Decision]] = {}
            for d in decisions:
                by_row.setdefault(d.turn.env, []).append(d)
            for (r, i), turn in self._scripted_turns.items():
                a = int(actions[r, i])
                name = self._names[i][a] if 0 <= a < len(self._names[i]) else None
                by_row.setdefault(r, []).append(
                    Decision(
                        turn,
                        answer(name) if name else "",
                        "ok",
                        False,
                        a,
                        name,
                        env_illegal=bool(env_illegal[r, i]),
                        step_reward=float(rewards[r, i]),
                        scripted=True,
                    )
                )
            for r, ds in by_row.items():
                self._trajectory[r] += sorted(ds, key=lambda d: d.turn.seat)
            for r in np.flatnonzero(running).tolist():
                self._rewards[r].append(rewards[r])
        self._t[running] += 1
        returns = np.full((b, n), np.nan)
        finished: list[EpisodeResult] = []
        for r in np.flatnonzero(done).tolist():
            returns[r] = self._returns[r]
            finished.append(self._finish(r, h_out))
        self._pending = self._make_pending()
        return PoolStep(
            decisions=decisions,
            invalid=np.array([d.invalid for d in decisions], bool),
            rewards=rewards,
            done=done,
            returns=returns,
            finished=finished,
            pending=list(self._pending),
        )

    def _finish(self, r: int, h_out: Mapping[str, Any]) -> EpisodeResult:
        """Close row ``r``'s episode and move it to its next seed (already reset on device)."""
        terminated, truncated = bool(h_out["terminated"][r]), bool(h_out["truncated"][r])
        trajectory = self._trajectory[r]
        if self.record and trajectory:
            per_step = np.stack(self._rewards[r])  # [T, n]
            for i in range(self.num_agents):
                mine = [d for d in trajectory if d.turn.seat == i]
                credit = credit_rewards(per_step[:, i], [d.turn.turn for d in mine])
                for d, c in zip(mine, credit, strict=True):
                    d.reward = float(c)
        result = EpisodeResult(
            env=r,
            seed=int(self._row_seed[r]),
            returns=tuple(self._returns[r].tolist()),
            length=int(self._t[r]),
            terminated=terminated,
            truncated=truncated,
            cut=not terminated and not truncated,
            decisions=tuple(self._n_decisions[r].tolist()),
            invalid=tuple(self._n_invalid[r].tolist()),
            trajectory=trajectory,
        )
        self._row_seed[r] = self._row_next[r]
        self._row_next[r] = self._next_seed() if self._row_seed[r] >= 0 else -1
        self._t[r] = 0
        self._returns[r] = 0.0
        self._n_decisions[r] = 0
        self._n_invalid[r] = 0
        self._rewards[r] = []
        self._trajectory[r] = []
        self._history[r] = [[] for _ in range(self.num_agents)]
        return result

    def play(self, reply_fn: Any, seeds: Iterable[int]) -> Iterator[EpisodeResult]:
        """Play ``seeds`` to the end with ``reply_fn(pending) -> replies`` (a list per step);
        yields each :class:`~alem.text.train.turns.EpisodeResult` as it finishes (a convenience for tests and exports)."""
        pending = self.reset(seeds)
        while not self.done:
            res = self.step(reply_fn(pending) if pending else [])
            yield from res.finished
            pending = res.pending
