"""Parameter sharing: which parameter set (role) each unit of a learner uses."""

from __future__ import annotations

import jax
import numpy as np

from alem.algos.config import LearnerConfig
from alem.core import MultiAgentEnv

__all__ = ["resolve_param_sets"]


def resolve_param_sets(env: MultiAgentEnv, cfg: LearnerConfig, key: jax.Array | None = None) -> np.ndarray:
    """Parameter set per unit for ``cfg.sharing``: shared, one per agent, env roles or discovered (SePS)."""
    n = env.num_agents
    if cfg.actor != "local" or cfg.sharing == "shared":
        return np.zeros((1 if cfg.actor != "local" else n,), np.int32)
    if cfg.sharing == "none":
        return np.arange(n, dtype=np.int32)
    if cfg.sharing == "roles":
        roles = np.asarray(env.agent_roles, np.int32)
        _, roles = np.unique(roles, return_inverse=True)
        return roles.astype(np.int32)
    from alem.algos.seps import discover_roles

    return discover_roles(env, cfg, jax.random.key(0) if key is None else key)
