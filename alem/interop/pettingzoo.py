"""alem envs as PettingZoo envs, and alem's players in PettingZoo envs.

``parallel_env(id, **kwargs)`` returns a ``pettingzoo.ParallelEnv`` and
``aec_env(id, **kwargs)`` a ``pettingzoo.AECEnv`` for any registered id (or an
alem env object); ``play(pz_env, players, episodes, seed)`` runs alem's evaluator
players (:class:`alem.policies.Policy`) in any PettingZoo env on the host.

Conventions
-----------
- **Agents** are the alem env's ``agents`` names; ``possible_agents`` never changes.
- **Spaces** are the alem per-agent spaces as ``gymnasium.spaces`` objects (one cached
  object per agent): ``Discrete``/``Box`` actions, ``Box`` observations.
  Heterogeneous agents get their true spaces: observations padded by alem (envs
  with ``obs_dims``, e.g. MPE) are cut to the agent's own length, as in mpe2, and a
  continuous action of agent ``i`` has its own ``Box`` dimension.
- **Action masks** go in ``infos[agent]["action_mask"]`` (``int8 [n_i]``, 1 = legal),
  for parallel and AEC envs alike, so observations stay plain arrays. Discrete envs
  only; continuous envs give empty infos. In a turn-based game a waiting agent's
  mask is all zeros.
- **Turn-based games** (``env.turn_based``): the parallel view keeps both players in
  ``agents`` for the whole game; each step every live agent may send an action and
  only the one to move (non-zero mask) counts; the others may be omitted or ``None``.
  The AEC view (:class:`AlemAECEnv`) selects the player to move
  (``agent_selection``), so it is the natural view of these games.
- **Simultaneous-move envs**: ``aec_env`` is PettingZoo's own ``parallel_to_aec``
  conversion of :func:`parallel_env` (agents act in ``agents`` order; the joint
  step runs when the last live agent has acted), which is exactly the AEC
  semantics of simultaneous moves and passes ``api_test`` unchanged.
- **Done agents** are removed from ``agents`` after the step that ended them. An
  agent of a simultaneous-move env that stops acting before the episode ends (it
  left the map in ``pathfinding_disappear-v0``) is ``terminated`` at that step. At
  the episode's end every remaining agent gets the env's ``terminated``/``truncated``.
- **Seeding**: ``reset(seed=s)`` uses ``jax.random.key(s)`` (see
  :mod:`alem.interop._common`; :func:`alem.interop._common.episode_keys` gives the keys
  of reset and of every step). ``reset`` ignores ``options``.
- **Speed**: reset and step are jitted once per alem env object (shared by every
  adapter of that object); each step is one dispatch and one device-to-host transfer.
- Acting agents' illegal actions follow the alem env's ``illegal_action`` mode
  (default: replaced by the first legal action; see :class:`alem.MultiAgentEnv`).
- ``state()`` is ``env.global_state`` (``state_space``); ``render()`` gives
  ``render_rgb`` (``render_mode="rgb_array"``) or ``render_text`` (``"ansi"``).

Registered ids and the PettingZoo tests
---------------------------------------
Every registered id fits and passes ``parallel_api_test``, ``api_test`` (of
``aec_env``) and ``seed_test``/``parallel_seed_test`` (``tests/interop/``), including
the continuous-action ones (``gymnax/pendulum-v1``; MPE with
``continuous_actions=True``): PettingZoo's tests sample ``Box`` actions as well.
None is skipped. Limits: an alem env whose agents' observations have different
shapes but no ``obs_dims`` keeps alem's padded shape; ``reset`` ignores
``options``; and a PettingZoo test run may print PettingZoo's advisory warnings
that its own envs avoid by name (e.g. infinite observation bounds of MPE, a
"single number" observation), which the tests list per env.

Reverse direction
-----------------
:func:`play` seats players in a PettingZoo env (parallel or AEC) and returns each
seat's mean return. It builds a batch-of-one :class:`alem.policies.Turn` per
decision from the PettingZoo observation and mask; ``Turn.state`` is ``None``, so
only players that read ``turn.obs``/``turn.action_mask`` fit (``random``, trained
``checkpoint:`` policies given the matching alem env as ``like``), not the
scripted game players or LLM seats that read the alem state.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.interop._common import (
    Session,
    from_gymnasium_space,
    require,
    to_gymnasium_space,
    true_obs_shape,
    true_obs_space,
)
from alem.policies import Policy, Turn, make_policy

require("pettingzoo", "pettingzoo>=1.24")

from pettingzoo import AECEnv, ParallelEnv  # noqa: E402
from pettingzoo.utils.conversions import parallel_to_aec  # noqa: E402

__all__ = ["AlemAECEnv", "AlemParallelEnv", "aec_env", "parallel_env", "play"]


def _make(env: str | MultiAgentEnv, kwargs: dict[str, Any]) -> MultiAgentEnv:
    if isinstance(env, MultiAgentEnv):
        if kwargs:
            raise TypeError(f"keyword arguments {sorted(kwargs)} need an env id, not an env object")
        return env
    import alem

    return alem.make(env, **kwargs)


def _render_modes(env: MultiAgentEnv) -> list[str]:
    modes = []
    if type(env).render_rgb is not MultiAgentEnv.render_rgb:
        modes.append("rgb_array")
    if env.supports_text:
        modes.append("ansi")
    return modes


class _AlemPettingZooBase:
    """What the parallel and AEC views share: the env, its spaces, the device session."""

    def _setup(self, env: MultiAgentEnv, params: Any, render_mode: str | None) -> None:
        self.env = env
        self.session = Session(env, params)
        self.possible_agents = list(env.agents)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_shapes = [true_obs_shape(env, i) for i in range(env.num_agents)]
        self._observation_spaces = {
            a: to_gymnasium_space(true_obs_space(env, i)) for i, a in enumerate(self.possible_agents)
        }
        self._action_spaces = {
            a: to_gymnasium_space(env.action_space(i)) for i, a in enumerate(self.possible_agents)
        }
        self._continuous = bool(env.continuous_actions)
        if self._continuous:
            self._act_shape = tuple(env.action_space().shape)
        else:
            self._act_n = [int(env.action_space(i).n) for i in range(env.num_agents)]
        modes = _render_modes(env)
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"{env.id}: render_mode={render_mode!r} is not one of {modes}")
        self.render_mode = render_mode
        self.metadata = {"name": env.id, "render_modes": modes, "render_fps": 10, "is_parallelizable": True}
        with contextlib.suppress(NotImplementedError, TypeError, AttributeError):
            self.state_space = to_gymnasium_space(env.global_state_space())
        self._global_state = jax.jit(env.global_state)

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> Any:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self._action_spaces[agent]

    # ------------------------------------------------------------------ host views
    def _obs(self, i: int) -> np.ndarray:
        obs = self.session.ts["obs"][i]
        shape = self._obs_shapes[i]
        if obs.shape != shape:
            obs = obs[tuple(slice(0, s) for s in shape)]
        return np.array(obs, dtype=self._observation_spaces[self.possible_agents[i]].dtype)

    def _info(self, i: int) -> dict[str, Any]:
        if self._continuous:
            return {}
        return {"action_mask": self.session.ts["action_mask"][i, : self._act_n[i]].astype(np.int8)}

    def _joint_actions(self, given: dict[int, Any]) -> np.ndarray:
        """The ``[N]`` (or ``[N, d]``) array for alem; agents not in ``given`` get a filler."""
        if self._continuous:
            out = np.zeros(self._act_shape, np.float32)
            for i, a in given.items():
                a = np.asarray(a, np.float32).reshape(-1)
                out[i, : a.shape[0]] = a
            return out
        out = np.argmax(self.session.ts["action_mask"], axis=1).astype(np.int32)
        for i, a in given.items():
            out[i] = int(np.asarray(a).reshape(()))
        return out

    # ------------------------------------------------------------------ extras
    def state(self) -> np.ndarray:
        """The env's global state (``env.global_state``), e.g. for centralised critics."""
        return np.asarray(self._global_state(self.session.state, self.session.params))

    def render(self) -> Any:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(f"{self.env.id}: render() called without a render_mode")
            return None
        if self.render_mode == "rgb_array":
            return self.env.render_rgb(self.session.state, self.session.params)
        return self.env.render_text(self.session.state, None, self.session.params)

    def close(self) -> None:
        """Nothing to release (the compiled functions are shared per alem env)."""

    def __str__(self) -> str:
        return self.env.id


class AlemParallelEnv(_AlemPettingZooBase, ParallelEnv):
    """An alem env as a ``pettingzoo.ParallelEnv``; see the module docstring for the conventions.

    Args:
        env: a registered id or an alem env object (reuse one object to share its compiled step).
        params: the env params (default ``env.default_params``).
        render_mode: ``None``, ``"rgb_array"`` or ``"ansi"`` where the env supports it.
        **kwargs: passed to ``alem.make`` with an id.
    """

    def __init__(
        self,
        env: str | MultiAgentEnv,
        params: Any = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        self._setup(_make(env, kwargs), params, render_mode)
        self.agents: list[str] = []

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        self.session.reset(seed)
        acting = self.session.ts["acting"]
        # Turn-based: both players stay for the whole game. Simultaneous: the agents that act.
        self.agents = [a for i, a in enumerate(self.possible_agents) if self.env.turn_based or acting[i]]
        obs = {a: self._obs(self._index[a]) for a in self.agents}
        infos = {a: self._info(self._index[a]) for a in self.agents}
        return obs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError(f"{self.env.id}: the episode is over; call reset()")
        acting = self.session.ts["acting"]
        given: dict[int, Any] = {}
        for a in self.agents:
            i = self._index[a]
            act = actions.get(a)
            if act is None:
                if acting[i]:
                    raise ValueError(f"{self.env.id}: no action for acting agent {a!r}")
                continue
            given[i] = act
        ts = self.session.step(self._joint_actions(given))
        term, trunc = bool(ts["terminated"]), bool(ts["truncated"])
        live = self.agents
        obs, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for a in live:
            i = self._index[a]
            left = not self.env.turn_based and not ts["acting"][i]
            obs[a] = self._obs(i)
            rewards[a] = float(ts["reward"][i])
            terminations[a] = term or left
            truncations[a] = trunc
            infos[a] = self._info(i)
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        return obs, rewards, terminations, truncations, infos


class AlemAECEnv(_AlemPettingZooBase, AECEnv):
    """A turn-based alem game as a ``pettingzoo.AECEnv``: ``agent_selection`` is the player to move.

    Rewards reach each player through ``last()`` (accumulated since its last turn), as
    in PettingZoo's classic games; see the module docstring for the other conventions.
    Use :func:`aec_env`, which picks this class for turn-based envs and
    ``parallel_to_aec`` otherwise.
    """

    def __init__(
        self,
        env: str | MultiAgentEnv,
        params: Any = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        env = _make(env, kwargs)
        if not env.turn_based:
            raise ValueError(
                f"{env.id} is a simultaneous-move env; use aec_env() (parallel_to_aec of parallel_env)"
            )
        super().__init__()
        self._setup(env, params, render_mode)
        self.agents = []

    def _to_move(self) -> str:
        acting = np.flatnonzero(self.session.ts["acting"])
        if len(acting) != 1:
            raise RuntimeError(f"{self.env.id}: expected one player to move, got {acting.tolist()}")
        return self.possible_agents[int(acting[0])]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.session.reset(seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: self._info(self._index[a]) for a in self.agents}
        self.agent_selection = self._to_move()

    def observe(self, agent: str) -> np.ndarray:
        return self._obs(self._index[agent])

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{self.env.id}: {agent!r} is to move; None is only for done agents")
        self._cumulative_rewards[agent] = 0.0
        ts = self.session.step(self._joint_actions({self._index[agent]: action}))
        done = bool(ts["terminated"]) or bool(ts["truncated"])
        for a in self.agents:
            i = self._index[a]
            self.rewards[a] = float(ts["reward"][i])
            self.terminations[a] = bool(ts["terminated"])
            self.truncations[a] = bool(ts["truncated"])
            self.infos[a] = self._info(i)
        self._accumulate_rewards()
        if not done:
            self.agent_selection = self._to_move()
        self._deads_step_first()


def parallel_env(
    id: str | MultiAgentEnv, params: Any = None, render_mode: str | None = None, **kwargs: Any
) -> AlemParallelEnv:
    """An alem env (id plus ``alem.make`` keywords, or an env object) as a ``pettingzoo.ParallelEnv``."""
    return AlemParallelEnv(id, params=params, render_mode=render_mode, **kwargs)


def aec_env(
    id: str | MultiAgentEnv, params: Any = None, render_mode: str | None = None, **kwargs: Any
) -> AECEnv:
    """An alem env as a ``pettingzoo.AECEnv``.

    Turn-based games give :class:`AlemAECEnv` (the player to move is selected);
    simultaneous-move envs give PettingZoo's ``parallel_to_aec(parallel_env(...))``.
    """
    env = _make(id, kwargs)
    if env.turn_based:
        return AlemAECEnv(env, params=params, render_mode=render_mode)
    return parallel_to_aec(AlemParallelEnv(env, params=params, render_mode=render_mode))


# ---------------------------------------------------------------------------- reverse direction
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

    def __init__(self, seats: PettingZooSeats, view: MultiAgentEnv, policies: list[Policy], seed: int):
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
    players: Sequence[Policy | str],
    episodes: int,
    seed: int = 0,
    *,
    like: MultiAgentEnv | None = None,
    max_steps: int | None = None,
) -> dict[str, float]:
    """Seat ``players`` in a PettingZoo env and return each seat's mean episode return.

    Args:
        pz_env: a ``pettingzoo.ParallelEnv`` or ``AECEnv`` (e.g. ``mpe2.simple_spread_v3.parallel_env()``).
        players: one :class:`~alem.policies.Policy` or registered player name per
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
    policies = [make_policy(p, view) if isinstance(p, str) else p for p in players]
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
