"""The episode metrics contract: what a batch of finished episodes reports, as sums and means.

Every learner's rollout, the random baseline (:mod:`alem.rollout`) and the training loop's
rows and final evaluation (:mod:`alem.training`) count episodes with :func:`episode_totals`
(from :class:`~alem.wrappers.EpisodeStats` info) and turn the sums into means with
:func:`summarize` / :func:`outcome_rates`.

The arrays (sums are there so chunks can be aggregated exactly):

- ``episodes``: int32 ``[]``, episodes that finished in this call.
- ``return_sum``: float32 ``[N]``, summed episode returns of those episodes.
- ``length_sum``: float32 ``[]``, summed episode lengths (env steps).
- ``episode_return``: float32 ``[N]``, mean episode return per agent (NaN if none finished).
- ``episode_length``: float32 ``[]``, mean episode length (NaN if none finished).
- ``illegal_actions``: int32 ``[]``, agent-steps flagged in ``info["illegal_action"]``.
- ``outcome_<name>``: int32 ``[]`` for each of the env's ``outcomes`` (SMAX: ``outcome_won``),
  finished episodes that ended so; ``<name>_rate``: their share of the finished episodes (NaN if
  none finished).
- ``env_steps``: int32 ``[]``, ``num_envs * num_steps``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "episode_totals",
    "summarize",
    "outcome_rates",
    "OUTCOME_PREFIX",
    "METRIC_PREFIX",
    "EPISODE_PREFIXES",
]


def episode_totals(info: dict[str, jax.Array]) -> dict[str, jax.Array]:
    """Sums over a batch of envs of the episodes that ended at this step (:class:`EpisodeStats` info).

    ``episodes`` (int32), ``return_sum`` (float32 ``[N]``), ``length_sum`` (float32),
    ``illegal_actions`` (int32, agent-steps), an ``outcome_<name>`` count (int32) per outcome
    the env declares and a ``metric_<name>`` sum (float32) per episode metric it declares
    (``episode_metrics``: pathfinding's CSR, ISR, SoC, ...); sums, so steps and chunks add up.
    """
    w = info["episode_done"].astype(jnp.float32)  # [E]
    return {
        "episodes": info["episode_done"].sum(dtype=jnp.int32),
        "return_sum": (info["episode_return"] * w[:, None]).sum(axis=0),
        "length_sum": (info["episode_length"].astype(jnp.float32) * w).sum(),
        "illegal_actions": info["illegal_action"].sum(dtype=jnp.int32),
        **{OUTCOME_PREFIX + k: v.sum(dtype=jnp.int32) for k, v in info.get("episode_outcomes", {}).items()},
        **{METRIC_PREFIX + k: v.sum(dtype=jnp.float32) for k, v in info.get("episode_metrics", {}).items()},
    }


#: Prefix of the outcome counts in :func:`episode_totals` (``outcome_won``).
OUTCOME_PREFIX = "outcome_"
#: Prefix of the sums of the env's episode metrics in :func:`episode_totals` (``metric_ISR``).
METRIC_PREFIX = "metric_"
#: The per-episode sums beyond :data:`EPISODE_SUMS`-like totals: outcome counts and metric sums.
EPISODE_PREFIXES = (OUTCOME_PREFIX, METRIC_PREFIX)


def outcome_rates(totals: dict[str, Any], episodes: Any) -> dict[str, Any]:
    """Per finished episode: ``{"<name>_rate": count / episodes}`` for each ``outcome_<name>``
    count of ``totals``, and ``{"<name>": sum / episodes}`` (the mean) for each ``metric_<name>``
    sum (NumPy or JAX arrays, any leading axes); NaN where no episode finished."""
    xp = jnp if any(isinstance(v, jax.Array) for v in totals.values()) else np
    some = episodes > 0
    denom = xp.maximum(episodes, 1)
    out = {}
    for k, v in totals.items():
        if k.startswith(OUTCOME_PREFIX):
            out[k[len(OUTCOME_PREFIX) :] + "_rate"] = xp.where(some, v / denom, xp.nan)
        elif k.startswith(METRIC_PREFIX):
            out[k[len(METRIC_PREFIX) :]] = xp.where(some, v / denom, xp.nan)
    return out


def summarize(totals: dict[str, jax.Array], env_steps: int | jax.Array) -> dict[str, jax.Array]:
    """Add means (NaN where no episode finished) and ``env_steps`` to summed metrics."""
    episodes = totals["episodes"]
    denom = jnp.maximum(episodes, 1).astype(jnp.float32)
    some = episodes > 0
    return {
        **totals,
        "episode_return": jnp.where(some, totals["return_sum"] / denom, jnp.nan),
        "episode_length": jnp.where(some, totals["length_sum"] / denom, jnp.nan),
        **outcome_rates(totals, episodes),
        "env_steps": jnp.asarray(env_steps, jnp.int32),
    }
