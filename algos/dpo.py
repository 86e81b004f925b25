"""DPO (Su & Lu, "Decentralized Policy Optimization"): what ``algo.objective=dpo`` changes in
the PPO core.

The policy loss is :func:`~alem.algos.losses.dpo_surrogate` (no ratio clipping; penalties on
``sqrt(KL)`` and ``KL`` of the old to the new policy, with the exact KL per step, which is why
the rollout keeps the old distribution's table). After each update the two penalty weights of
every unit adapt to the KL the update actually made (:func:`adapt_penalties`).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from alem.algos.losses import update_dpo_betas
from alem.algos.state import Batch, LearnerState

__all__ = ["adapt_penalties"]


def adapt_penalties(
    learner: Any, state: LearnerState, batch: Batch, hidden0: Any
) -> tuple[LearnerState, dict]:
    """The state with each unit's ``(beta1, beta2)`` adapted to the mean ``KL`` and ``sqrt(KL)``
    between the rollout's policy and the updated one (over the steps its units act, and only the
    learner's seat in self-play); returns the state and the KL/penalty metrics."""
    _, kl = learner.unit_ratio_and_kl(state.params, batch, hidden0)
    w = learner.unit_acting(batch.acting).astype(jnp.float32)
    if learner.matched:
        w = w * batch.seat_w
    per_unit = lambda x: (x * w).sum((0, 1)) / jnp.maximum(w.sum((0, 1)), 1.0)
    kl_unit, sqrt_kl_unit = per_unit(kl), per_unit(jnp.sqrt(kl))
    b1, b2 = update_dpo_betas(
        state.betas[0], state.betas[1], kl_unit, sqrt_kl_unit, learner.cfg.dpo_target_kl
    )
    metrics = {"kl_after_update": kl_unit.mean(), "beta1": b1.mean(), "beta2": b2.mean()}
    return state.replace(betas=jnp.stack([b1, b2])), metrics
