"""Game sessions of one text-capable env, for a server: bounded in number and idle time.

A :class:`SessionStore` holds independent episodes (sessions) of one env. Each session is
one unbatched state stepped by the env's jitted ``reset``/``step`` (compiled once per store,
shared by all sessions); a lock per session serialises its own moves, so sessions never
wait on each other. Every answer is plain JSON: the seats' text views (each seat sees only
its own information), who acts, the legal moves by name, rewards and returns.

Moves are given by name (read with the env's parser, as the LLM player reads replies) or by
index. A move that is not legal for its seat now is refused with the legal ones named, and the
session is left as it was. Sessions beyond ``max_sessions`` are refused; a session idle for
more than ``idle_timeout_s`` is dropped (and its id answered as unknown from then on).
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import AlemError, SessionError

__all__ = ["SessionError", "SessionStore"]


@dataclass
class _Session:
    id: str
    seed: int
    key: jax.Array
    state: Any
    mask: np.ndarray  # bool [N, A]
    acting: np.ndarray  # bool [N]
    done: bool = False
    steps: int = 0
    pending: dict[int, int] = field(default_factory=dict)  # this turn's moves so far
    returns: np.ndarray = field(default_factory=lambda: np.zeros(0))
    last_rewards: np.ndarray = field(default_factory=lambda: np.zeros(0))
    touched: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


def brief(value: Any) -> str:
    """``repr(value)`` cut to a readable length: a client's value is echoed in one short line."""
    try:
        text = repr(value)
    except ValueError:  # an int over Python's 4300-digit conversion limit
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    if len(text) <= 60:
        return text
    return f"{text[:40]}... ({len(value) if isinstance(value, str) else len(text)} characters)"


class SessionStore:
    """Sessions of ``env``; thread-safe.

    Args:
        env: a text-capable env.
        max_sessions: the most sessions alive at once (a new one beyond it is refused).
        idle_timeout_s: a session untouched this long is dropped.
        max_steps: a session ends (truncated) after this many steps (None: the env's own end).
    """

    def __init__(
        self,
        env: MultiAgentEnv,
        *,
        max_sessions: int = 64,
        idle_timeout_s: float = 600.0,
        max_steps: int | None = 1000,
    ):
        if not getattr(env, "supports_text", False):
            raise AlemError(f"serving needs an env with text support; {env.id} has none")
        for name, value in (("max_sessions", max_sessions), ("max_steps", max_steps)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise AlemError(f"{name} must be an integer >= 1, got {value!r}")
        if (
            isinstance(idle_timeout_s, bool)
            or not isinstance(idle_timeout_s, int | float)
            or idle_timeout_s <= 0
        ):
            raise AlemError(f"idle_timeout_s must be a number > 0, got {idle_timeout_s!r}")
        self.env = env
        self.params = env.default_params
        self.max_sessions, self.idle_timeout_s, self.max_steps = (
            max_sessions,
            float(idle_timeout_s),
            max_steps,
        )
        self._reset = jax.jit(env.reset)
        self._step = jax.jit(env.step)
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._names = [list(env.action_names(i)) for i in range(env.num_agents)]

    # ------------------------------------------------------------------ the env
    def describe(self) -> dict[str, Any]:
        """The env: id, seats, and each seat's rules and action names."""
        env = self.env
        return {
            "env": env.id,
            "num_agents": env.num_agents,
            "agents": list(env.agents),
            "turn_based": bool(getattr(env, "turn_based", False)),
            "rules": [env.rules_text(self.params, i) for i in range(env.num_agents)],
            "action_names": self._names,
            "max_sessions": self.max_sessions,
            "idle_timeout_s": self.idle_timeout_s,
        }

    # ------------------------------------------------------------------ sessions
    def _expire(self, now: float) -> None:
        stale = [
            k for k, s in self._sessions.items() if s is not None and now - s.touched > self.idle_timeout_s
        ]
        for sid in stale:
            del self._sessions[sid]

    def open(self, seed: int | None = None, *, closing: str = "DELETE /v1/sessions/<id>") -> dict[str, Any]:
        """A new session (episode) from ``seed`` (random when None); its first state. ``closing``
        names, in the refusal of a full store, how the server's clients close a session."""
        if seed is None:
            seed = secrets.randbelow(2**31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
            raise SessionError(f"seed must be an integer in [0, 2**31), got {brief(seed)}")
        with self._lock:
            self._expire(time.monotonic())
            if len(self._sessions) >= self.max_sessions:
                raise SessionError(
                    f"the server holds its maximum of {self.max_sessions} sessions; close one "
                    f"({closing}) or wait for an idle one to expire ({self.idle_timeout_s:g} s)",
                    status=429,
                )
            sid = secrets.token_hex(8)
            self._sessions[sid] = None  # type: ignore[assignment]  # the slot is taken now
        try:
            key, k0 = jax.random.split(jax.random.key(seed))
            state, ts = self._reset(k0)
        except BaseException:
            with self._lock:
                self._sessions.pop(sid, None)
            raise
        s = _Session(sid, seed, key, state, *self._flags(ts))
        s.returns = np.zeros(self.env.num_agents)
        s.last_rewards = np.zeros(self.env.num_agents)
        with self._lock:
            self._sessions[sid] = s
        return self._view(s)

    def _flags(self, ts: Any) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(ts.action_mask, bool), np.asarray(ts.acting, bool)

    def _get(self, sid: Any) -> _Session:
        with self._lock:
            self._expire(time.monotonic())
            s = self._sessions.get(sid) if isinstance(sid, str) else None
        if s is None:
            raise SessionError(
                f"session {sid!r} does not exist (never opened, closed, or idle for over {self.idle_timeout_s:g} s)",
                status=404,
            )
        s.touched = time.monotonic()
        return s

    def state(self, sid: str) -> dict[str, Any]:
        """The session's current state (every seat's view, who acts, the legal moves)."""
        s = self._get(sid)
        with s.lock:
            return self._view(s)

    def close(self, sid: str) -> dict[str, Any]:
        s = self._get(sid)
        with self._lock:
            self._sessions.pop(s.id, None)
        return {"session": s.id, "closed": True}

    def count(self) -> int:
        with self._lock:
            self._expire(time.monotonic())
            return sum(s is not None for s in self._sessions.values())

    # ------------------------------------------------------------------ moves
    def _read_move(self, s: _Session, seat: int, move: Any) -> int:
        names, legal = self._names[seat], np.flatnonzero(s.mask[seat])
        if isinstance(move, bool) or not isinstance(move, int | str):
            raise SessionError(f"seat {seat}: a move is an action name or index, got {brief(move)}")
        j = move if isinstance(move, int) else self.env.parse_action(move, seat)
        if j is None or not 0 <= j < len(names) or j not in legal:
            known = j is not None and 0 <= j < len(names) and move != names[j]
            said = f"{move!r} ({names[j]})" if known else brief(move)
            raise SessionError(
                f"seat {seat}: {said} is not a legal move now; legal: {', '.join(names[k] for k in legal)}"
            )
        return int(j)

    def _read_seat(self, k: Any) -> int:
        """A seat from an int or a decimal string (JSON object keys are strings)."""
        seat = k if isinstance(k, int) and not isinstance(k, bool) else None
        # at most 9 digits: int() of a string over 4300 digits raises, and no env has 10**9 seats
        if isinstance(k, str) and re.fullmatch(r"\s*\d{1,9}\s*", k):
            seat = int(k)
        if seat is None or not 0 <= seat < self.env.num_agents:
            raise SessionError(f"a seat is an integer 0..{self.env.num_agents - 1}, got {brief(k)}")
        return seat

    def step(self, sid: str, actions: Mapping[Any, Any]) -> dict[str, Any]:
        """Moves for acting seats (``{seat: name or index}``); the new state once every acting
        seat has moved.

        Seats may move together or one call each (two clients playing a simultaneous-move
        game): moves wait in ``pending`` until every acting seat has one, then the env steps.
        A seat that does not act now, moves twice, or names an illegal move is refused, and
        nothing of that call is kept.
        """
        s = self._get(sid)
        if not isinstance(actions, Mapping) or not actions:
            raise SessionError(f"actions must be an object {{seat: move}}, got {actions!r}")
        with s.lock:
            if s.done:
                raise SessionError(f"session {s.id} has ended; open a new one", status=409)
            acting = [int(i) for i in np.flatnonzero(s.acting)]
            moves: dict[int, int] = {}
            given: dict[int, Any] = {}
            for k, move in actions.items():
                seat = self._read_seat(k)
                if seat in given:
                    raise SessionError(f"seat {seat} is given twice ({brief(given[seat])} and {brief(k)})")
                given[seat] = k
                if seat not in acting:
                    raise SessionError(f"seat {seat} does not act now; seats {acting} do")
                if seat in s.pending:
                    raise SessionError(f"seat {seat} has already moved this turn")
                moves[seat] = self._read_move(s, seat, move)
            s.pending.update(moves)
            if set(s.pending) != set(acting):
                out = self._view(s)
                out["played"] = {}
                return out
            joint = np.array([int(np.argmax(s.mask[i])) for i in range(self.env.num_agents)], np.int32)
            for seat, j in s.pending.items():
                joint[seat] = j
            played = {str(i): self._names[i][joint[i]] for i in sorted(s.pending)}
            s.pending = {}
            s.key, k = jax.random.split(s.key)
            s.state, ts = self._step(k, s.state, jnp.asarray(joint))
            s.mask, s.acting = self._flags(ts)
            s.steps += 1
            s.last_rewards = np.asarray(ts.reward, np.float64)
            s.returns = s.returns + s.last_rewards
            s.done = (
                bool(ts.terminated)
                or bool(ts.truncated)
                or (self.max_steps is not None and s.steps >= self.max_steps)
            )
            out = self._view(s)
            out["played"] = played
            return out

    def play(self, sid: str, move: Any, seat: int | None = None) -> dict[str, Any]:
        """:meth:`step` with one move: for ``seat``, or for the one seat still to move."""
        if seat is None:
            s = self._get(sid)
            with s.lock:
                if s.done:
                    raise SessionError(f"session {s.id} has ended; open a new one", status=409)
                waiting = [int(i) for i in np.flatnonzero(s.acting) if int(i) not in s.pending and not s.done]
            if len(waiting) != 1:
                raise SessionError(f"seats {waiting} are to move: name the seat of the move")
            seat = waiting[0]
        return self.step(sid, {seat: move})

    # ------------------------------------------------------------------ views
    def _view(self, s: _Session) -> dict[str, Any]:
        env = self.env
        seats = []
        for i in range(env.num_agents):
            acts = bool(s.acting[i]) and not s.done and i not in s.pending
            seats.append(
                {
                    "seat": i,
                    "agent": env.agents[i],
                    "view": env.render_text(s.state, i, self.params),
                    "acting": acts,
                    "legal": [self._names[i][j] for j in np.flatnonzero(s.mask[i])] if acts else [],
                }
            )
        return {
            "session": s.id,
            "env": env.id,
            "seed": s.seed,
            "steps": s.steps,
            "done": s.done,
            "rewards": s.last_rewards.tolist(),
            "returns": s.returns.tolist(),
            "seats": seats,
        }
