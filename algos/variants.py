"""The named baselines: each is a :class:`PPOConfig` preset of the one PPO core (the table of
every learner, PPO and value-based: :mod:`alem.algos.registry`).

| name        | actor          | critic          | sharing        | objective / order       |
|-------------|----------------|-----------------|----------------|-------------------------|
| ippo        | own obs        | own obs         | shared         | clipped PPO             |
| mappo       | own obs        | global state+id | shared         | clipped PPO, value norm |
| cppo        | all obs, heads | global state    | one network    | clipped PPO (team)      |
| cppo_joint  | all obs, joint | global state    | one network    | clipped PPO (team)      |
| dpo         | own obs        | own obs         | shared         | DPO (KL penalties)      |
| happo       | own obs        | global state+id | one per agent  | clipped, sequential     |
| role        | own obs        | own obs         | per env role   | clipped PPO             |
| seps        | own obs        | own obs         | discovered     | clipped PPO             |
"""

from __future__ import annotations

import dataclasses
from typing import Any

from alem.algos.config import LearnerConfigError, PPOConfig
from alem.errors import did_you_mean

__all__ = ["VARIANTS", "make_config", "hydra_options"]

VARIANTS: dict[str, dict[str, Any]] = {
    "ippo": {},
    "mappo": {"critic": "global", "agent_id": True, "value_norm": True},
    "cppo": {"actor": "joint", "critic": "global"},
    "cppo_joint": {"actor": "joint_action", "critic": "global"},
    "dpo": {"objective": "dpo"},
    "happo": {"critic": "global", "agent_id": True, "sharing": "none", "update_order": "sequential"},
    "role": {"sharing": "roles"},
    "seps": {"sharing": "seps"},
}


def hydra_options(config: type = PPOConfig) -> dict[str, None]:
    """Every tunable field of ``config`` (``PPOConfig``, ``QConfig``) set to None ("use the
    preset"), for Hydra's algo group. With these keys present, ``algo.<field>=value`` overrides
    work without ``+``.
    """
    return {f.name: None for f in dataclasses.fields(config) if f.name != "name"}


def make_config(name: str, **overrides: Any) -> PPOConfig:
    """The PPO preset ``name`` with ``overrides`` applied (a ``PPOConfig`` field each; None is
    ignored); any learner's, PPO or value-based: :func:`alem.algos.make_config`."""
    if name not in VARIANTS:
        raise LearnerConfigError(
            f"unknown PPO learner {name!r}{did_you_mean(name, VARIANTS)}; known: {sorted(VARIANTS)}"
        )
    return PPOConfig.from_preset(name, VARIANTS[name], overrides)
