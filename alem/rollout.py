"""Random-policy rollouts: a uniform-random legal policy run with ``lax.scan``.

:func:`random_rollout` builds a pure, jittable function that steps ``num_envs``
copies of an env (``BatchedAutoReset(EpisodeStats(env), num_envs)``: vmapped steps,
resets computed only for the envs that ended) for ``num_steps`` steps and returns the final state with episode statistics as JAX arrays. The
state can be passed back in, so training loops call one compiled function
repeatedly and carry the envs across chunks::

    rollout = random_rollout(env, num_envs=64, num_steps=128)
    step = jax.jit(rollout)
    state = jax.jit(rollout.init)(key0, params)
    for k in keys:
        state, metrics = step(k, params, state)

Metric arrays (sums are there so chunks can be aggregated exactly):

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

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, PRNGKeyArray

from alem import struct
from alem.core import MultiAgentEnv, TimeStep
from alem.errors import require_positive_int
from alem.wrappers import BatchedAutoReset, EpisodeStats

__all__ = [
    "RolloutState",
    "Rollout",
    "random_rollout",
    "random_legal_actions",
    "random_actions",
    "episode_totals",
    "summarize",
    "OUTCOME_PREFIX",
    "METRIC_PREFIX",
    "EPISODE_PREFIXES",
    "outcome_rates",
]


def random_legal_actions(key: PRNGKeyArray, action_mask: Bool[Array, "N A"]) -> Int[Array, " N"]:
    """One action per agent, uniform among that agent's legal actions.

    Args:
        key: a PRNG key.
        action_mask: bool ``[N, A]``; True where the action is legal. Leading batch
            axes are allowed (``[..., N, A]``); every row gets its own draw.

    Returns:
        int32 ``[N]`` (``[..., N]`` for a batched mask). A row with no legal action (an agent that does not act in a
        turn-based game may have one) yields action 0, which the env ignores.

    Pure JAX: one uniform draw per agent picks the k-th legal entry (k uniform below
    the number of legal actions), which needs A times fewer random numbers than
    Gumbel-max; it works under ``jit`` and ``vmap``.
    """
    mask = jnp.asarray(action_mask, dtype=bool)
    count = mask.sum(axis=-1)
    k = jnp.floor(jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    k = jnp.minimum(k, jnp.maximum(count - 1, 0))
    return jnp.argmax(jnp.cumsum(mask, axis=-1) > k[..., None], axis=-1).astype(jnp.int32)


def random_actions(env: MultiAgentEnv, key: PRNGKeyArray, ts: TimeStep) -> jax.Array:
    """Uniform-random legal actions after timestep ``ts`` (leading batch axes allowed).

    Discrete envs sample uniformly among the legal actions of ``ts.action_mask``
    in one draw for the whole batch; in ``turn_based`` envs only the acting agent's
    row can hold legal moves, so one action per env is drawn (from the union of the
    rows) and given to the acting agent (the others get 0, which the env ignores) —
    half the random numbers and mask work of a row per agent in a two-player game.
    Continuous envs (``env.continuous_actions``) sample the stacked action Box
    ``env.action_space()`` once per env.
    """
    if env.continuous_actions:
        space = env.action_space()
        batch = ts.reward.shape[:-1]
        keys = jax.random.split(key, math.prod(batch))
        return jax.vmap(space.sample)(keys).reshape(*batch, *space.shape)
    if env.turn_based:
        one = random_legal_actions(key, ts.action_mask.any(axis=-2))  # [...]: the acting row's moves
        return jnp.where(ts.acting, one[..., None], 0).astype(jnp.int32)
    return random_legal_actions(key, ts.action_mask)


@struct.dataclass
class RolloutState:
    """What a rollout carries between calls: the batched env state and last timestep."""

    env_state: Any  # EpisodeStatsState, batched over envs
    timestep: TimeStep  # batched over envs


@dataclasses.dataclass(frozen=True)
class Rollout:
    """A jittable random-policy rollout over ``num_envs`` envs for ``num_steps`` steps.

    Call it as ``rollout(key, params, state=None) -> (final_state, metrics)``;
    with ``state=None`` the envs are reset first (from a key split off ``key``).
    ``init(key, params)`` gives the reset state alone.
    """

    env: MultiAgentEnv  # the per-env stack, EpisodeStats(env)
    num_envs: int
    num_steps: int
    batch: BatchedAutoReset  # steps the num_envs copies of ``env`` and resets those that ended

    def init(self, key: PRNGKeyArray, params: Any) -> RolloutState:
        """Reset ``num_envs`` envs with keys split from ``key``."""
        env_state, ts = self.batch.reset(key, params)
        return RolloutState(env_state=env_state, timestep=ts)

    def __call__(
        self, key: PRNGKeyArray, params: Any, state: RolloutState | None = None
    ) -> tuple[RolloutState, dict[str, jax.Array]]:
        """Run ``num_steps`` vmapped steps with uniform-random legal actions."""
        env = self.env
        if state is None:
            key, key_reset = jax.random.split(key)
            state = self.init(key_reset, params)

        def one_step(carry: RolloutState, step_key):
            k_act, k_env = jax.random.split(step_key)
            actions = random_actions(env, k_act, carry.timestep)
            env_state, ts = self.batch.step(k_env, carry.env_state, actions, params)
            return RolloutState(env_state=env_state, timestep=ts), episode_totals(ts.info)

        state, per_step = jax.lax.scan(one_step, state, jax.random.split(key, self.num_steps))
        totals = jax.tree.map(lambda x: x.sum(axis=0), per_step)
        return state, summarize(totals, env_steps=self.num_envs * self.num_steps)


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


def random_rollout(
    env: MultiAgentEnv, num_envs: int, num_steps: int, resets_per_step: int | None = None
) -> Rollout:
    """Build a random-policy rollout of ``env``; see :class:`Rollout`.

    The env is wrapped as ``BatchedAutoReset(EpisodeStats(env), num_envs, resets_per_step)``
    (vmapped steps; fresh episodes computed only for the envs that ended) and scanned over
    ``num_steps``. The result is pure: ``jax.jit(rollout)`` and
    ``jax.vmap(rollout, in_axes=(0, None))`` (over seeds) work.
    """
    require_positive_int(num_envs, "num_envs")
    require_positive_int(num_steps, "num_steps")
    stats = EpisodeStats(env)
    return Rollout(
        env=stats,
        num_envs=int(num_envs),
        num_steps=int(num_steps),
        batch=BatchedAutoReset(stats, num_envs, resets_per_step),
    )
