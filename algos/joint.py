"""Joint actions of ``N`` agents with ``A`` actions each as one index in ``[0, A**N)``.

Used by centralised PPO's joint-action variant: one categorical over every
combination, the only policy class here that can represent correlated play.
Agent 0 is the most significant digit.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int

__all__ = ["encode", "decode", "joint_mask", "MAX_JOINT_ACTIONS"]

#: Refuse joint action spaces larger than this (the policy head would be enormous).
MAX_JOINT_ACTIONS = 4096


def _radix(num_agents: int, num_actions: int) -> np.ndarray:
    return num_actions ** np.arange(num_agents - 1, -1, -1)


def encode(actions: Int[Array, "*batch N"], num_actions: int) -> Int[Array, "*batch"]:
    """Per-agent actions ``[..., N]`` -> joint index ``[...]``."""
    radix = jnp.asarray(_radix(actions.shape[-1], num_actions), jnp.int32)
    return jnp.sum(actions.astype(jnp.int32) * radix, axis=-1)


def decode(joint: Int[Array, "*batch"], num_agents: int, num_actions: int) -> Int[Array, "*batch N"]:
    """Joint index ``[...]`` -> per-agent actions ``[..., N]``."""
    radix = jnp.asarray(_radix(num_agents, num_actions), jnp.int32)
    return (joint[..., None] // radix) % num_actions


def joint_mask(mask: Bool[Array, "... N A"]) -> Bool[Array, "... J"]:
    """Legal joint actions: every agent's component is legal for that agent.

    An agent with no legal action (a waiting player in a turn-based game, whose action the env
    ignores) has its component pinned to 0, so the legal joint actions are exactly the acting
    agents' legal combinations, each once.
    """
    n, a = mask.shape[-2:]
    waiting = ~mask.any(axis=-1, keepdims=True)
    mask = mask | (waiting & (jnp.arange(a) == 0))
    table = decode(jnp.arange(a**n), n, a)  # [J, N]
    legal = mask[..., jnp.arange(n)[None, :], table]  # [..., J, N]
    return legal.all(axis=-1)
