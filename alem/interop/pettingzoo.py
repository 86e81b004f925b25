"""alem envs as PettingZoo envs (``ParallelEnv`` and ``AECEnv`` views).

``parallel_env(id, **kwargs)`` returns a ``pettingzoo.ParallelEnv`` and
``aec_env(id, **kwargs)`` a ``pettingzoo.AECEnv`` for any registered id (or an
alem env object); ``play(pz_env, players, episodes, seed)`` runs alem's evaluator
players (:class:`alem.players.Player`) in any PettingZoo env on the host.

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
  (default: replaced by the first legal action; see :class:`alem.MultiAgentEnv`). An action
  outside the agent's action space (an index out of range, a float index, a vector of the
  wrong shape, out of bounds or NaN) is a ``ValueError`` naming the agent; nothing is stepped.
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

:func:`play`, which seats alem's players in a PettingZoo env, lives in
:mod:`alem.interop.pettingzoo_players` and is re-exported here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import numpy as np

from alem.core import MultiAgentEnv
from alem.interop._common import (
    Session,
    checked_action,
    env_from,
    render_modes,
    require,
    to_gymnasium_space,
    true_obs_shape,
    true_obs_space,
)

require("pettingzoo", "pettingzoo>=1.24")

from pettingzoo import AECEnv, ParallelEnv  # noqa: E402
from pettingzoo.utils.conversions import parallel_to_aec  # noqa: E402

from alem.interop.pettingzoo_players import play  # noqa: E402  (re-exported: alem.interop.pettingzoo.play)

__all__ = ["AlemAECEnv", "AlemParallelEnv", "aec_env", "parallel_env", "play"]


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
        modes = render_modes(env)
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
        """The ``[N]`` (or ``[N, d]``) array for alem; agents not in ``given`` get a filler.

        An action outside its agent's space is a ``ValueError`` naming the agent (:func:`checked_action`).
        """
        given = {
            i: checked_action(
                self._action_spaces[self.possible_agents[i]], a, f"{self.env.id} {self.possible_agents[i]!r}"
            )
            for i, a in given.items()
        }
        if self._continuous:
            out = np.zeros(self._act_shape, np.float32)
            for i, a in given.items():
                out[i, : a.shape[0]] = a
            return out
        out = np.argmax(self.session.ts["action_mask"], axis=1).astype(np.int32)
        for i, a in given.items():
            out[i] = int(a)
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
        self._setup(env_from(env, kwargs), params, render_mode)
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
        env = env_from(env, kwargs)
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
    env = env_from(id, kwargs)
    if env.turn_based:
        return AlemAECEnv(env, params=params, render_mode=render_mode)
    return parallel_to_aec(AlemParallelEnv(env, params=params, render_mode=render_mode))
