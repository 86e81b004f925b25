"""HAPPO's sequential update (Kuba et al., 2022): the one optimisation step of the PPO core that
``algo.update_order=sequential`` replaces.

The agents update one after another in a random order, each with its own parameter set. An
agent's advantage is weighted by the product of the new/old probability ratios of the agents
updated before it (:func:`~alem.algos.losses.happo_factor`), so each one improves the joint
policy given what the earlier ones already changed. As in HARL the advantage is normalised once,
then weighted: normalising the weighted advantage per minibatch would cancel a factor that is
constant over the minibatch.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from alem.algos.losses import happo_factor, normalized
from alem.algos.state import Batch, LearnerState

__all__ = ["sequential_update"]


def sequential_update(
    learner: Any,
    state: LearnerState,
    batch: Batch,
    hidden0: Any,
    adv: jax.Array,
    targets: jax.Array,
    key: jax.Array,
    order_key: jax.Array,
) -> tuple[LearnerState, dict]:
    """Epochs x minibatches for each unit of ``learner`` (the PPO core) in turn; returns the state
    and the metrics averaged over the units."""
    m = learner.num_units
    order = jax.random.permutation(order_key, m)
    if learner.cfg.normalize_advantages:
        adv = normalized(adv, learner.unit_acting(batch.acting).astype(jnp.float32))

    def one_agent(carry, xs):
        st, factor = carry
        unit, k = xs
        agent_w = jax.nn.one_hot(unit, m)
        set_mask = jax.nn.one_hot(jnp.asarray(learner.param_sets)[unit], learner.num_param_sets) > 0
        st, metrics = learner.optimise(
            st, batch, hidden0, adv * factor, targets, agent_w, set_mask, k, normalize=False
        )
        ratio, _ = learner.unit_ratio_and_kl(st.params, batch, hidden0)
        acted = learner.unit_acting(batch.acting)[..., unit]
        factor = happo_factor(factor, ratio[..., unit][..., None], acted[..., None])
        return (st, factor), metrics

    (state, _), metrics = jax.lax.scan(
        one_agent, (state, jnp.ones(adv.shape[:-1] + (1,))), (order, jax.random.split(key, m))
    )
    return state, jax.tree.map(jnp.mean, metrics)
