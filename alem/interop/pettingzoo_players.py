"""alem's players in PettingZoo envs: :func:`play`.

:func:`play` seats players in a PettingZoo env (parallel or AEC) and returns each
seat's mean return. It builds a batch-of-one :class:`alem.players.Turn` per
decision from the PettingZoo observation and mask; ``Turn.state`` is ``None``, so
only players that read ``turn.obs``/``turn.action_mask`` fit (``random``, trained
``checkpoint:`` policies given the matching alem env as ``like``), not the
scripted game players or LLM seats that read the alem state.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.interop._common import from_gymnasium_space, require
from alem.players import Player, Turn, make_player

require("pettingzoo", "pettingzoo>=1.24")

from pettingzoo import AECEnv  # noqa: E402

__all__ = ["PettingZooSeats", "play"]


@functools.cache
def _empty_params() -> EnvParams:
    return EnvParams()


class PettingZooSeats(MultiAgentEnv):
    """A description (agents and spaces, no dynamics) of a PettingZoo env, for players' ``Turn.env``.

    Observations of different 1-D lengths are zero-padded to the longest; discrete
    actions to the largest ``n`` (padded actions are never legal); ``Box`` actions to
    the longest dimension (padding bounds ``[0, 0]``).
    """

    stochastic = True

    def __init__(self, pz_env: Any):
        super().__init__()
        self.agents = tuple(pz_env.possible_agents)
        self.id = f"pettingzoo:{pz_env.metadata.get('name', type(pz_env).__name__)}-v0"
        self.turn_based = isinstance(pz_env, AECEnv) and not pz_env.metadata.get("is_parallelizable", False)
        self._obs = [from_gymnasium_space(pz_env.observation_space(a)) for a in self.agents]
        self._act = [from_gymnasium_space(pz_env.action_space(a)) for a in self.agents]
        kinds = {type(s) for s in self._act}
        if kinds == {spaces.Box}:
            self.continuous_actions = True
        elif kinds != {spaces.Discrete}:
            raise TypeError(f"{self.id}: players need all-Discrete or all-Box actions, got {self._act}")
        self.agent_roles = np.zeros(len(self.agents), np.int32)
        self.role_names = ("agent",)

    @property
    def default_params(self) -> EnvParams:
        return _empty_params()

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        if agent is not None:
            return self._obs[agent]
        return spaces.stack([_padded_box(s, _obs_width(self._obs)) for s in self._obs])

    def action_space(self, agent: int | None = None) -> spaces.Space:
        if agent is not None:
            return self._act[agent]
        if self.continuous_actions:
            width = max(s.shape[0] for s in self._act)
            return spaces.stack([_padded_box(s, (width,)) for s in self._act])
        return spaces.stack(self._act)


def _obs_width(obs_spaces: Sequence[spaces.Space]) -> tuple[int, ...]:
    shapes = {tuple(s.shape) for s in obs_spaces}
    if len(shapes) == 1:
        return shapes.pop()
    if all(len(s) == 1 for s in shapes):
        return (max(s[0] for s in shapes),)
    raise TypeError(f"players need observations of one shape or 1-D ones, got shapes {sorted(shapes)}")


def _padded_box(space: spaces.Space, shape: tuple[int, ...]) -> spaces.Box:
    if isinstance(space, spaces.Box) and tuple(space.shape) == shape:
        return space
    low = np.zeros(shape, np.float64)
    high = np.zeros(shape, np.float64)
    if isinstance(space, spaces.Box):
        n = space.shape[0] if space.shape else 1
        low[:n] = np.broadcast_to(space.low, space.shape).reshape(-1)[:n]
        high[:n] = np.broadcast_to(space.high, space.shape).reshape(-1)[:n]
        dtype = space.dtype
    else:  # a Discrete observation: its index
        low[...], high[...], dtype = 0, space.n - 1, np.float32
    return spaces.Box(low, high, shape, dtype=dtype)


def _pad(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    if x.shape == shape:
        return x
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(0, s) for s in x.shape)] = x
    return out


class _Seating:
    """The players of :func:`play`: per-seat observation and mask, and their decisions.

    Device policies run jitted, one compiled function per seat, with the key derived
    inside; host policies get NumPy arrays.
    """

    def __init__(self, seats: PettingZooSeats, view: MultiAgentEnv, policies: list[Player], seed: int):
        self.seats, self.view, self.policies = seats, view, policies
        self.base = jax.random.key(seed)
        self.obs_shape = tuple(view.observation_space().shape[1:])
        self.obs_dtype = view.observation_space().dtype
        n = seats.num_agents
        width = view.action_space().shape[1] if seats.continuous_actions else seats.num_actions
        self.obs = np.zeros((n, *self.obs_shape), self.obs_dtype)
        self.mask = np.zeros((n, width), bool)
        self._fns: dict[int, Any] = {}

    def see(self, i: int, obs: Any, info: dict | None) -> None:
        mask = None
        if isinstance(obs, dict) and "observation" in obs:
            mask = obs.get("action_mask")
            obs = obs["observation"]
        if mask is None and info:
            mask = info.get("action_mask")
        self.obs[i] = _pad(np.asarray(obs, self.obs_dtype), self.obs_shape)
        self.mask[i] = False
        if self.seats.continuous_actions:
            self.mask[i, : self.seats.action_space(i).shape[0]] = True
        else:
            n = self.seats.action_space(i).n
            self.mask[i, :n] = True if mask is None else np.asarray(mask, bool)[:n]

    def _turn(self, xp: Any, i: int, obs: Any, mask: Any, acting: Any, episode: Any) -> Turn:
        n = self.seats.num_agents
        ts = TimeStep(
            obs=obs[None],
            action_mask=mask[None],
            reward=xp.zeros((1, n), xp.float32),
            terminated=xp.zeros((1,), bool),
            truncated=xp.zeros((1,), bool),
            acting=acting[None],
        )
        active = xp.ones((1,), bool)
        return Turn(self.view, self.view.default_params, i, None, ts, active, xp.reshape(episode, (1,)))

    def _compiled(self, i: int) -> Any:
        if i not in self._fns:
            policy = self.policies[i]

            def decide(base, episode, k, obs, mask, acting):
                key = jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(base, episode), i), k)
                return policy.act(key, self._turn(jnp, i, obs, mask, acting, episode))

            self._fns[i] = jax.jit(decide)
        return self._fns[i]

    def decide(self, i: int, acting: np.ndarray, episode: int, k: int, space: Any) -> Any:
        """Seat ``i``'s ``k``-th action of ``episode`` (key ``fold_in(fold_in(fold_in(base, e), i), k)``)."""
        policy = self.policies[i]
        if policy.host:
            key = jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(self.base, episode), i), k)
            out = policy.act(key, self._turn(np, i, self.obs, self.mask, acting, np.int32(episode)))
        else:
            out = self._compiled(i)(self.base, episode, k, self.obs, self.mask, acting)
        out = np.asarray(out)
        from gymnasium import spaces as gs

        if isinstance(space, gs.Box):
            a = out.reshape(-1)[: int(np.prod(space.shape))].reshape(space.shape)
            return np.clip(a, space.low, space.high).astype(space.dtype)
        return int(out.reshape(-1)[0])


def play(
    pz_env: Any,
    players: Sequence[Player | str],
    episodes: int,
    seed: int = 0,
    *,
    like: MultiAgentEnv | None = None,
    max_steps: int | None = None,
) -> dict[str, float]:
    """Seat ``players`` in a PettingZoo env and return each seat's mean episode return.

    Args:
        pz_env: a ``pettingzoo.ParallelEnv`` or ``AECEnv`` (e.g. ``mpe2.simple_spread_v3.parallel_env()``).
        players: one :class:`~alem.players.Player` or registered player name per
            ``possible_agents`` entry, in that order.
        episodes: episodes to play; episode ``e`` is reset with ``seed + e``.
        seed: base seed of the env resets and of the players' keys.
        like: an alem env with the same agents, observations and actions (e.g.
            ``alem.make("mpe/simple_spread-v0")`` for mpe2's ``simple_spread_v3``); players then see
            it as ``turn.env`` and observations padded as it pads them (trained policies need this).
        max_steps: stop an episode after this many joint steps (parallel) or decisions (AEC).

    Returns:
        ``{agent: mean return}``: the sum of the agent's rewards over each episode, averaged.

    Players get a batch of one: ``turn.obs`` ``[1, ...]``, ``turn.action_mask`` ``[1, A]``
    (from ``infos[agent]["action_mask"]`` or a Dict observation's ``"action_mask"``; all
    actions legal when neither exists) and ``turn.state = None``. The key of seat ``i``'s
    ``k``-th decision in episode ``e`` is ``fold_in(fold_in(fold_in(key(seed), e), i), k)``, the same
    in the parallel and the AEC view of one env.
    """
    seats = PettingZooSeats(pz_env)
    if len(players) != seats.num_agents:
        raise ValueError(
            f"{seats.id}: {seats.num_agents} seats {list(seats.agents)}, got {len(players)} players"
        )
    view = like if like is not None else seats
    if like is not None and tuple(like.agents) != seats.agents:
        raise ValueError(f"like={like.id} has agents {like.agents}, the PettingZoo env {seats.agents}")
    policies = [make_player(p, view) if isinstance(p, str) else p for p in players]
    for i, p in enumerate(policies):
        p.begin(view, view.default_params, i)
    totals = np.zeros((episodes, seats.num_agents), np.float64)
    seating = _Seating(seats, view, policies, seed)
    run = _play_aec if isinstance(pz_env, AECEnv) else _play_parallel
    try:
        for e in range(episodes):
            run(pz_env, seating, seed + e, e, totals[e], max_steps)
            for p in policies:
                p.end_episode(e)
    finally:
        for p in policies:
            p.close()
    means = totals.mean(axis=0)
    return {a: float(means[i]) for i, a in enumerate(seats.agents)}


def _play_parallel(
    pz_env: Any, seating: _Seating, seed: int, episode: int, total: np.ndarray, max_steps
) -> None:
    index = {a: i for i, a in enumerate(seating.seats.agents)}
    obs, infos = pz_env.reset(seed=seed)
    t = 0
    while pz_env.agents and (max_steps is None or t < max_steps):
        live = list(pz_env.agents)
        for a in live:
            seating.see(index[a], obs[a], infos.get(a))
        acting = np.zeros(len(index), bool)
        acting[[index[a] for a in live]] = True
        actions = {a: seating.decide(index[a], acting, episode, t, pz_env.action_space(a)) for a in live}
        obs, rewards, _, _, infos = pz_env.step(actions)
        for a, r in rewards.items():
            total[index[a]] += float(r)
        t += 1


def _play_aec(pz_env: Any, seating: _Seating, seed: int, episode: int, total: np.ndarray, max_steps) -> None:
    index = {a: i for i, a in enumerate(seating.seats.agents)}
    pz_env.reset(seed=seed)
    t = 0
    decisions = np.zeros(len(index), np.int64)
    for agent in pz_env.agent_iter():
        obs, reward, terminated, truncated, info = pz_env.last()
        i = index[agent]
        total[i] += float(reward)
        if terminated or truncated:
            pz_env.step(None)
            continue
        if max_steps is not None and t >= max_steps:
            break
        seating.see(i, obs, info)
        acting = np.zeros(len(index), bool)
        acting[i] = True
        pz_env.step(seating.decide(i, acting, episode, int(decisions[i]), pz_env.action_space(agent)))
        decisions[i] += 1
        t += 1
