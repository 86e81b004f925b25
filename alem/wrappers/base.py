"""The wrapper base class: forwards everything to the wrapped env."""

from __future__ import annotations

import inspect
from typing import Any

from alem.core import MultiAgentEnv
from alem.text_hooks import TEXT_HOOKS, TextHooks

__all__ = ["Wrapper", "FORWARDED_ATTRIBUTES", "FORWARDED_METHODS", "STATE_METHODS"]

#: Static attributes read from the wrapped env: everything :class:`MultiAgentEnv` declares
#: at class level (``id``, ``agents``, ``supports_text``, ``turn_based``, ``version``, ...)
#: and its static properties. A base class would shadow ``__getattr__``, so each becomes a
#: property; a new declaration on :class:`MultiAgentEnv` is forwarded with no new line here.
FORWARDED_ATTRIBUTES: tuple[str, ...] = (
    *MultiAgentEnv.__annotations__,
    "default_params",
    "episode_steps_hint",
)

#: Methods of :class:`MultiAgentEnv` called on the wrapped env with the same arguments.
FORWARDED_METHODS: tuple[str, ...] = (
    "observation_space",
    "action_space",
    "global_state_space",
    "check_params",  # the inner env knows its params' ranges, not only their type
    "reset",
    "step",
)

#: Methods whose first argument is a state: called on the wrapped env with
#: :meth:`Wrapper.inner_state` of it. Every text hook whose first parameter is ``state``
#: is one; ``__getattr__`` forwards text hooks (so a wrapper has them exactly when the
#: wrapped env has), the others (``rules_text``, ``action_names``, ...) unchanged.
STATE_METHODS: tuple[str, ...] = (
    "action_mask",
    "acting",
    "observe",
    "global_state",
    "render_rgb",
    *(h for h in TEXT_HOOKS if list(inspect.signature(getattr(TextHooks, h)).parameters)[1] == "state"),
)


def _forward_attribute(name: str) -> property:
    return property(lambda self: getattr(self._env, name), doc=f"The wrapped env's ``{name}``.")


def _forward_method(name: str) -> Any:
    def method(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._env, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The wrapped env's ``{name}``."
    return method


def _forward_state_method(name: str) -> Any:
    def method(self, state: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._env, name)(self.inner_state(state), *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The wrapped env's ``{name}`` of :meth:`inner_state` of ``state``."
    return method


class Wrapper(MultiAgentEnv):
    """Wraps an env; unknown attributes are looked up on the wrapped env.

    Static attributes (:data:`FORWARDED_ATTRIBUTES`), methods (:data:`FORWARDED_METHODS`)
    and text hooks come from the wrapped env. A wrapper that keeps its own state around the
    inner one overrides :meth:`inner_state` and :meth:`with_inner_state`, so state-reading
    methods (:data:`STATE_METHODS`: ``global_state``, masks, text, rendering) keep working
    at any depth of wrapping.
    """

    def __init__(self, env: MultiAgentEnv):
        # MultiAgentEnv.__init__ is not called: static attributes come from ``env``.
        self._env = env

    def __getattr__(self, name: str) -> Any:
        if name == "_env":  # not yet set (e.g. during unpickling)
            raise AttributeError(name)
        attr = getattr(self._env, name)  # raises AttributeError where the wrapped env has none
        return _forward_state_method(name).__get__(self) if name in STATE_METHODS else attr

    @property
    def unwrapped(self) -> MultiAgentEnv:
        env = self._env
        while isinstance(env, Wrapper):
            env = env._env
        return env

    def inner_state(self, state: Any) -> Any:
        """The directly wrapped env's state inside this wrapper's ``state`` (one level down)."""
        return state

    def with_inner_state(self, state: Any, inner: Any) -> Any:
        """``state`` with the directly wrapped env's state replaced by ``inner`` (inverse of
        :meth:`inner_state`; :class:`~alem.wrappers.BatchedAutoReset` swaps fresh episodes in with it)."""
        return inner

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._env!r})"


for _name in FORWARDED_ATTRIBUTES:
    setattr(Wrapper, _name, _forward_attribute(_name))
for _name in FORWARDED_METHODS:
    setattr(Wrapper, _name, _forward_method(_name))
for _name in STATE_METHODS:
    if hasattr(MultiAgentEnv, _name):  # else found by __getattr__ (text hooks)
        setattr(Wrapper, _name, _forward_state_method(_name))
del _name
