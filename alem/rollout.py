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

The metric arrays are :mod:`alem.metrics`'s (episode counts, return and length sums and
means, outcome rates, ``env_steps``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int, PRNGKeyArray

from alem import metrics, struct
from alem.core import MultiAgentEnv, TimeStep
from alem.errors import require_positive_int
from alem.wrappers import BatchedAutoReset, EpisodeStats

__all__ = [
    "RolloutState",
    "Rollout",
    "random_rollout",
    "random_legal_actions",
    "random_actions",
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
    Gumbel-max; it works under ``jit`` and ``vmap``. Long rows (chess: 4,674) are searched
    in blocks of :data:`_BLOCK`: a running count over the blocks, then one block's own, as
    a prefix sum over the whole row costs a pass over it per doubling step (about 10x slower).
    """
    mask = jnp.asarray(action_mask, dtype=bool)
    size = mask.shape[-1]
    blocks = -(-size // _BLOCK)
    if blocks <= 2:
        upto = jnp.cumsum(mask, axis=-1, dtype=jnp.int32)
        return jnp.argmax(upto > _draw_rank(key, upto[..., -1])[..., None], axis=-1).astype(jnp.int32)
    pad = [(0, 0)] * (mask.ndim - 1) + [(0, blocks * _BLOCK - size)]
    rows = jnp.pad(mask, pad).reshape(*mask.shape[:-1], blocks, _BLOCK)
    per_block = rows.sum(-1, dtype=jnp.int32)
    upto = jnp.cumsum(per_block, axis=-1)
    k = _draw_rank(key, upto[..., -1])
    block = jnp.argmax(upto > k[..., None], axis=-1)
    before = jnp.take_along_axis(upto - per_block, block[..., None], -1)[..., 0]
    row = jnp.take_along_axis(rows, block[..., None, None], -2)[..., 0, :]
    inside = jnp.argmax(jnp.cumsum(row, axis=-1, dtype=jnp.int32) > (k - before)[..., None], axis=-1)
    return (block * _BLOCK + inside).astype(jnp.int32)


#: Actions per block of :func:`random_legal_actions`'s two-level search.
_BLOCK = 32


def _draw_rank(key: PRNGKeyArray, count: jax.Array) -> jax.Array:
    """int32: a uniform rank below ``count`` (0 where ``count`` is 0)."""
    k = jnp.floor(jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    return jnp.minimum(k, jnp.maximum(count - 1, 0))


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
            return RolloutState(env_state=env_state, timestep=ts), metrics.episode_totals(ts.info)

        state, per_step = jax.lax.scan(one_step, state, jax.random.split(key, self.num_steps))
        totals = jax.tree.map(lambda x: x.sum(axis=0), per_step)
        return state, metrics.summarize(totals, env_steps=self.num_envs * self.num_steps)


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


#: Names that moved to :mod:`alem.metrics`; the old spelling warns for one release (docs/changelog.md).
_MOVED = {"episode_totals", "summarize", "outcome_rates", "OUTCOME_PREFIX", "METRIC_PREFIX", "EPISODE_PREFIXES"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(f"alem.rollout.{name} moved to alem.metrics", DeprecationWarning, stacklevel=2)
        return getattr(metrics, name)
    raise AttributeError(f"module 'alem.rollout' has no attribute {name!r}")
