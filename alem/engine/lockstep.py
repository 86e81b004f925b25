"""The play loop: a :class:`~alem.engine.record.Match` in, one :class:`~alem.engine.record.EpisodeRecord`
per finished episode out (:func:`play`).

The loop is lock-step over ``num_envs`` envs: a jitted, vmapped step (:class:`LockStep`) that
also runs the device policies and resets finished envs. Per step the batch comes to the host
once; host policies (LLMs) answer for their active rows (async fan-out across rows and seats);
envs whose episodes are over are not queried. Episode ``e`` always gets the same env and policy
keys (:func:`episode_key`, from ``seed`` and ``e``, not from the batch layout).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.core import TimeStep
from alem.engine.record import EpisodeRecord, Match
from alem.engine.sync import gather_or_cancel, run_sync
from alem.players import Turn, host_view
from alem.rollout import random_legal_actions
from alem.struct import zeros_like

__all__ = ["episode_key", "LockStep", "play"]


def _select(mask: jax.Array, a: Any, b: Any) -> Any:
    """Per-row ``where(mask, a, b)`` over two batched pytrees."""
    return jax.tree.map(lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y), a, b)


def _expand(tree: Any) -> Any:
    return jax.tree.map(lambda x: x[None], tree)


def episode_key(k_env: jax.Array, episode: jax.Array, t: jax.Array) -> jax.Array:
    """Key of step ``t`` of ``episode`` (``t = 0``: the reset); one place, so resets and steps agree."""
    return jax.random.fold_in(jax.random.fold_in(k_env, episode), t)


def _params_key(params: Any) -> Hashable:
    """Env params by value (their tree and every leaf's bytes): two matches with equal params
    share a compiled step even when each built its own params object."""
    leaves, treedef = jax.tree.flatten(params)
    arrays = [np.asarray(x) for x in leaves]
    return treedef, tuple((a.dtype.str, a.shape, a.tobytes()) for a in arrays)


class _Program:
    """The jitted step of every match with one env, env params, ``max_steps``, openings and
    device players of equal :meth:`~alem.players.Player.program_key`: the players' arrays
    (:meth:`~alem.players.Player.device_params`) are arguments, so a cross-play pool of trained
    partners compiles once, not once per seating."""

    def __init__(self, match: Match):
        env, params, players, limit = match.env, match.params, match.players, match.max_steps
        openings = match.openings
        self.num_agents = env.num_agents
        device_seats = match.device_seats
        n_keys = 1 + len(device_seats)

        def open_rows(k_env, episodes):
            """Reset rows, then play the match's random opening plies; also the moves ``[B, k]``
            (-1: a ply skipped because it would have ended the game)."""
            keys = jax.vmap(episode_key, in_axes=(None, 0, None))(k_env, episodes, 0)
            state, ts = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
            if not openings:
                return state, ts, jnp.zeros((episodes.shape[0], 0), jnp.int32)

            def ply(carry, j):
                state, ts = carry
                # The opening's own stream, from the reset key: (seed, episode) alone.
                k = jax.vmap(lambda kk: jax.random.split(jax.random.fold_in(kk, j + 1)))(keys)
                acts = jax.vmap(random_legal_actions)(k[:, 0], ts.action_mask)
                nxt = jax.vmap(env.step, in_axes=(0, 0, 0, None))(k[:, 1], state, acts, params)
                keep = ~nxt[1].done  # a ply that would end the game is skipped
                mover = jnp.argmax(ts.acting, axis=-1)
                move = jnp.where(keep, jnp.take_along_axis(acts, mover[:, None], axis=1)[:, 0], -1)
                return _select(keep, nxt, (state, ts)), move

            (state, ts), moves = jax.lax.scan(ply, (state, ts), jnp.arange(openings))
            return state, ts, moves.T

        def reset_rows(k_env, episodes):
            state, ts, _ = open_rows(k_env, episodes)
            return state, ts

        def device_act(key, i, player, seat_params, state, ts, active, episodes):
            def one(k, e, st, tstep, act):
                turn = Turn(env, params, i, _expand(st), _expand(tstep), act[None], e[None])
                return jnp.asarray(player.act_with(seat_params, k, turn)).reshape(-1)[0].astype(jnp.int32)

            return jax.vmap(one)(key, episodes, state, ts, active)

        def advance(
            seat_params, k_env, state, ts, host_actions, episodes, t, next_episodes, running, force_reset
        ):
            keys = jax.vmap(lambda e, tt: jax.random.split(episode_key(k_env, e, tt + 1), n_keys))(
                episodes, t
            )
            actions = host_actions
            active = ts.acting & running[:, None]
            for j, i in enumerate(device_seats):  # static: one traced call per device seat
                a = device_act(
                    keys[:, 1 + j], i, players[i], seat_params[j], state, ts, active[:, i], episodes
                )
                actions = actions.at[:, i].set(a)
            state, step_ts = jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys[:, 0], state, actions, params)
            done = step_ts.done
            if limit is not None:
                done = done | (t + 1 >= limit)
            fresh_state, fresh_ts, fresh_opening = open_rows(k_env, jnp.maximum(next_episodes, 0))
            renew = (done | force_reset) & (next_episodes >= 0)
            out = {
                "reward": step_ts.reward,
                "terminated": step_ts.terminated,
                "truncated": step_ts.truncated,
                "done": done,
                "illegal": step_ts.info["illegal_action"],
                "actions": actions,
                "opening": fresh_opening,  # [B, openings]: the plies of the episodes started here
                "metrics": {k: step_ts.info[k] for k in env.episode_metrics},  # read where done
            }
            return _select(renew, fresh_state, state), _select(renew, fresh_ts, step_ts), out

        self.advance = jax.jit(advance)
        self.reset_shapes = jax.eval_shape(reset_rows, jax.random.key(0), jnp.zeros((1,), jnp.int32))


#: Compiled steps kept for reuse, newest last (a small LRU: each holds its env and executables).
_PROGRAMS: OrderedDict[Hashable, _Program] = OrderedDict()
_MAX_PROGRAMS = 16


def _program(match: Match) -> _Program:
    """The shared :class:`_Program` of ``match`` (built on first use)."""
    try:
        key = (
            id(match.env),  # the program holds the env, so the id is not reused while it is cached
            _params_key(match.params),
            match.max_steps,
            match.openings,
            tuple((i, match.players[i].program_key()) for i in match.device_seats),
        )
        hash(key)
    except TypeError:  # a player whose key does not hash: its own program
        return _Program(match)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS[key] = _Program(match)
        while len(_PROGRAMS) > _MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    _PROGRAMS.move_to_end(key)
    return prog


class LockStep:
    """The jitted pieces of the loop for one match: reset rows and one lock-step advance.

    Keys: step ``t`` of episode ``e`` uses ``fold_in(fold_in(key(seed), e), t + 1)``, split
    into the env's key and one key per device seat. The key is an argument, not a
    constant, so runs with different seeds share one compiled program, and so do matches whose
    device players differ only in their arrays (trained partners of one configuration).
    """

    def __init__(self, match: Match):
        self._program = _program(match)
        self.num_agents = match.env.num_agents
        self._seat_params = tuple(match.players[i].device_params() for i in match.device_seats)

    def advance(self, *args: Any) -> tuple[Any, TimeStep, dict[str, jax.Array]]:
        """One lock-step advance of every row: ``(k_env, state, ts, host_actions, episodes, t,
        next_episodes, running, force_reset)`` in, ``(state, ts, out)`` out (see :func:`play`)."""
        return self._program.advance(self._seat_params, *args)

    def blank(self, b: int) -> tuple[Any, TimeStep]:
        """Zero state and timestep for ``b`` rows (shapes only; replaced by the first advance)."""
        return zeros_like(
            jax.tree.map(
                lambda x: jax.ShapeDtypeStruct((b, *x.shape[1:]), x.dtype), self._program.reset_shapes
            )
        )

    def reset(self, k_env: jax.Array, episodes: np.ndarray) -> tuple[Any, TimeStep, jax.Array]:
        """Reset every row to the start of ``episodes[row]`` through :meth:`advance` (one compiled
        program); also each row's opening plies ``[B, openings]`` (-1: a skipped ply)."""
        b = len(episodes)
        state, ts = self.blank(b)
        zeros = jnp.zeros((b,), jnp.int32)
        eps = jnp.asarray(episodes, jnp.int32)
        no_actions = jnp.zeros((b, self.num_agents), jnp.int32)
        ones = jnp.ones((b,), bool)
        state, ts, out = self.advance(k_env, state, ts, no_actions, eps, zeros, eps, ~ones, ones)
        return state, ts, out["opening"]


async def _host_moves(players, turns: dict[int, Turn], keys: dict[int, jax.Array]) -> dict[int, np.ndarray]:
    """All host seats at once: LLM seats fan out over rows and seats concurrently."""

    async def one(i: int) -> np.ndarray:
        p = players[i]
        if hasattr(p, "act_async"):
            return np.asarray(await p.act_async(keys[i], turns[i]))
        return np.asarray(p.act(keys[i], turns[i]))

    seats = list(turns)
    moves = await gather_or_cancel(*(one(i) for i in seats))
    return dict(zip(seats, moves, strict=True))


def play(match: Match, episodes: Iterable[int], *, progress: bool = False) -> Iterator[EpisodeRecord]:
    """Play ``episodes`` (indices into the match) and yield each one's record as it finishes.

    Records come in order of finishing, not of index. After a record is taken, every player's
    ``end_episode`` is called for it. Players must have been started (``begin``) by the caller.
    ``progress`` prints ``episodes <done>/<total>`` every 5 s and at the end.
    """
    todo = deque(episodes)
    if not todo:
        return
    env, params, players = match.env, match.params, match.players
    n = env.num_agents
    b = min(match.num_envs, len(todo))
    prog = LockStep(match)
    k_env = jax.random.key(match.seed)
    host_seats = match.host_seats
    row_ep = np.array([todo.popleft() if todo else -1 for _ in range(b)], np.int32)
    row_next = np.array([todo.popleft() if todo else -1 for _ in range(b)], np.int32)
    t = np.zeros(b, np.int32)
    returns = np.zeros((b, n), np.float64)
    decisions = np.zeros((b, n), np.int64)
    illegal = np.zeros((b, n), np.int64)
    state, ts, first_opening = prog.reset(k_env, np.maximum(row_ep, 0))
    # Each row's opening plies (skipped ones left out), from the reset that started its episode.
    opening = [[int(x) for x in m if x >= 0] for m in np.asarray(first_opening)]
    h_state, h_ts = host_view((state, ts)) if host_seats else (None, host_view(ts))
    total = len(todo) + int((row_ep >= 0).sum() + (row_next >= 0).sum())
    finished, step_index, last_print = 0, 0, time.perf_counter()
    host_base = jax.random.fold_in(jax.random.key(match.seed), 2**31)  # host seats' keys (LLMs ignore them)

    def start(r: int) -> Any:
        """The digest of row r's game: its opening, what every seat observes at the start (the
        deal, in games of chance), then every move. Called while ``h_ts`` holds the row's start."""
        h = hashlib.blake2b(digest_size=8)
        h.update(np.asarray(opening[r], np.int32).tobytes() + b"|")
        for leaf in jax.tree.leaves(h_ts.obs):
            h.update(np.ascontiguousarray(np.asarray(leaf)[r]).tobytes())
        return h

    games = [start(r) for r in range(b)]
    while (row_ep >= 0).any():
        running = row_ep >= 0
        acting = np.asarray(h_ts.acting, bool) & running[:, None]
        host_actions = np.zeros((b, n), np.int32)
        turns = {
            i: Turn(env, params, i, h_state, h_ts, acting[:, i], row_ep.copy())
            for i in host_seats
            if acting[:, i].any()
        }
        if turns:
            keys = {i: jax.random.fold_in(jax.random.fold_in(host_base, i), step_index) for i in turns}
            for i, moves in run_sync(_host_moves(players, turns, keys)).items():
                host_actions[:, i] = np.where(acting[:, i], moves, 0)
        decisions += acting
        state, ts, out = prog.advance(
            k_env,
            state,
            ts,
            jnp.asarray(host_actions),
            jnp.asarray(np.maximum(row_ep, 0)),
            jnp.asarray(t),
            jnp.asarray(row_next),
            jnp.asarray(running),
            jnp.zeros((b,), bool),
        )
        # The one device-to-host transfer of this step.
        if host_seats:
            h_state, h_ts, h_out = host_view((state, ts, out))
        else:
            h_ts, h_out = host_view((ts, out))
        step_index += 1
        returns[running] += h_out["reward"][running]
        illegal += np.asarray(h_out["illegal"], bool) & acting
        # Each moving row's step into its digest: every seat's move, -1 for the seats that wait
        # (one array for the batch, then a byte slice per row: no per-row NumPy calls).
        rows = np.flatnonzero(acting.any(1))
        step_bytes = np.where(acting, np.asarray(h_out["actions"]), -1).astype(np.int32)[rows].tobytes()
        width = 4 * n
        for k, r in enumerate(rows):
            games[r].update(step_bytes[k * width : (k + 1) * width])
        t[running] += 1
        for r in np.flatnonzero(np.asarray(h_out["done"]) & running):
            ep = int(row_ep[r])
            yield EpisodeRecord(
                episode=ep,
                returns=tuple(returns[r].tolist()),
                length=int(t[r]),
                terminated=bool(h_out["terminated"][r]),
                truncated=bool(h_out["truncated"][r]),
                decisions=tuple(decisions[r].tolist()),
                env_illegal=tuple(illegal[r].tolist()),
                opening=tuple(opening[r]),
                game=games[r].hexdigest(),
                metrics={k: float(v[r]) for k, v in h_out["metrics"].items()},
            )
            for p in players:
                p.end_episode(ep)
            finished += 1
            row_ep[r], row_next[r] = row_next[r], (todo.popleft() if todo else -1)
            t[r], returns[r], decisions[r], illegal[r] = 0, 0.0, 0, 0
            opening[r] = [int(x) for x in h_out["opening"][r] if x >= 0]
            games[r] = start(r)
        if progress and (time.perf_counter() - last_print > 5.0 or not (row_ep >= 0).any()):
            last_print = time.perf_counter()
            print(f"  episodes {finished}/{total}", flush=True)
