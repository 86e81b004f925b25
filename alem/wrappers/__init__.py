"""Wrappers: auto-reset, episode statistics, observation transforms and views.

(The gymnax adapters, ``FromGymnax`` and ``ToGymnax``, are in :mod:`alem.interop.gymnax`.)

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
