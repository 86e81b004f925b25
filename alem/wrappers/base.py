"""The wrapper base class: forwards everything to the wrapped env."""

from __future__ import annotations

from typing import Any

import numpy as np

from alem.core import MultiAgentEnv


class Wrapper(MultiAgentEnv):
    """Wraps an env; unknown attributes are looked up on the wrapped env.

    A wrapper that keeps its own state around the inner one overrides
    :meth:`inner_state` and :meth:`with_inner_state`, so state-reading methods (``global_state``, masks,
    text, rendering) keep working at any depth of wrapping.
    """

    def __init__(self, env: MultiAgentEnv):
        # MultiAgentEnv.__init__ is not called: static attributes come from ``env``.
        self._env = env

    def __getattr__(self, name: str) -> Any:
        if name == "_env":  # not yet set (e.g. during unpickling)
            raise AttributeError(name)
        return getattr(self._env, name)

    @property
    def unwrapped(self) -> MultiAgentEnv:
        env = self._env
        while isinstance(env, Wrapper):
            env = env._env
        return env

    # Static description: forwarded explicitly (class attributes would shadow __getattr__).
    id = property(lambda self: self._env.id)  # type: ignore[assignment]
    agents = property(lambda self: self._env.agents)  # type: ignore[assignment]
    agent_roles = property(lambda self: self._env.agent_roles)  # type: ignore[assignment]
    role_names = property(lambda self: self._env.role_names)  # type: ignore[assignment]
    supports_text = property(lambda self: self._env.supports_text)  # type: ignore[assignment]
    stochastic = property(lambda self: self._env.stochastic)  # type: ignore[assignment]
    turn_based = property(lambda self: self._env.turn_based)  # type: ignore[assignment]
    fixed_start = property(lambda self: self._env.fixed_start)  # type: ignore[assignment]
    zero_sum = property(lambda self: self._env.zero_sum)  # type: ignore[assignment]
    continuous_actions = property(lambda self: self._env.continuous_actions)  # type: ignore[assignment]
    illegal_action = property(lambda self: self._env.illegal_action)
    version = property(lambda self: self._env.version)  # type: ignore[assignment]

    @property
    def default_params(self) -> Any:
        return self._env.default_params

    @property
    def episode_steps_hint(self) -> float:
        return self._env.episode_steps_hint

    def observation_space(self, agent: int | None = None):
        return self._env.observation_space(agent)

    def action_space(self, agent: int | None = None):
        return self._env.action_space(agent)

    def global_state_space(self):
        return self._env.global_state_space()

    def inner_state(self, state: Any) -> Any:
        """The directly wrapped env's state inside this wrapper's ``state`` (one level down)."""
        return state

    def with_inner_state(self, state: Any, inner: Any) -> Any:
        """``state`` with the directly wrapped env's state replaced by ``inner`` (inverse of
        :meth:`inner_state`; :class:`~alem.wrappers.BatchedAutoReset` swaps fresh episodes in with it)."""
        return inner

    def check_params(self, params: Any) -> None:
        # The inner env knows its params' ranges (the base class would check only the type).
        self._env.check_params(params)

    def reset(self, key, params=None):
        return self._env.reset(key, params)

    def step(self, key, state, actions, params=None):
        return self._env.step(key, state, actions, params)

    def action_mask(self, state, params):
        return self._env.action_mask(self.inner_state(state), params)

    def acting(self, state, params):
        return self._env.acting(self.inner_state(state), params)

    def observe(self, state, params):
        return self._env.observe(self.inner_state(state), params)

    def global_state(self, state, params=None):
        return self._env.global_state(self.inner_state(state), params)

    def rules_text(self, params=None, agent: int = 0) -> str:
        return self._env.rules_text(params, agent)

    def render_text(self, state, agent: int | None = None, params=None) -> str:
        return self._env.render_text(self.inner_state(state), agent, params)

    def action_names(self, agent: int = 0) -> list[str]:
        return self._env.action_names(agent)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return self._env.action_aliases(agent)

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        return self._env.parse_action(text, agent)

    def legal_action_names(self, state, agent: int, params=None) -> list[str]:
        return self._env.legal_action_names(self.inner_state(state), agent, params)

    def render_rgb(self, state, params=None) -> np.ndarray:
        return self._env.render_rgb(self.inner_state(state), params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._env!r})"
