"""Wrappers: auto-reset, episode statistics, observation transforms, views and adapters.

Typical stack for training: ``BatchedAutoReset(EpisodeStats(env), num_envs)``, with per-env
observation transforms (``AgentIdOneHot(FlattenObs(...))``) inside it; for a single env,
``EpisodeStats(AutoReset(env))``, with ``NormalizeObs`` around it as needed.
"""

from alem.wrappers.autoreset import AutoReset, BatchedAutoReset
from alem.wrappers.base import Wrapper
from alem.wrappers.dict_view import DictView
from alem.wrappers.episode_stats import EpisodeStats, EpisodeStatsState
from alem.wrappers.observation import (
    AgentIdOneHot,
    FlattenObs,
    NormalizeObs,
    NormalizeObsState,
    ObservationWrapper,
)

__all__ = [
    "AgentIdOneHot",
    "FromGymnax",
    "ToGymnax",
    "AutoReset",
    "BatchedAutoReset",
    "DictView",
    "EpisodeStats",
    "EpisodeStatsState",
    "FlattenObs",
    "NormalizeObs",
    "NormalizeObsState",
    "ObservationWrapper",
    "Wrapper",
]


def __getattr__(name: str):
    # The gymnax adapters import gymnax (and gymnasium); load them only when asked for.
    if name in ("FromGymnax", "ToGymnax"):
        from alem.wrappers import gymnax

        return getattr(gymnax, name)
    raise AttributeError(f"module 'alem.wrappers' has no attribute {name!r}")
