"""alem: a JAX multi-agent simulator.

>>> import alem, jax
>>> env = alem.make("prisoners_dilemma-v0")
>>> state, ts = env.reset(jax.random.key(0))
"""

from __future__ import annotations

from alem import spaces
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.errors import (
    ActionError,
    AlemError,
    DependencyNotInstalled,
    EnvArgumentError,
    UnknownEnvError,
)
from alem.registry import EnvSpec, make, register, registry
from alem.text_hooks import TextHooks

__version__ = "0.1.0"

__all__ = [
    "ActionError",
    "AlemError",
    "DependencyNotInstalled",
    "EnvArgumentError",
    "EnvParams",
    "EnvSpec",
    "MultiAgentEnv",
    "TextHooks",
    "TimeStep",
    "UnknownEnvError",
    "make",
    "register",
    "registry",
    "spaces",
]

# Built-in registry entries (strings only: no env module is imported here).
import alem.envs  # noqa: F401
