"""How a learner's agents map onto decision units: the part of the PPO core that CPPO changes.

A *unit* is what has one advantage, one value and one policy-loss term. Decentralised actors
(``algo.actor=local``: IPPO, MAPPO, HAPPO, DPO, role sharing) have one unit per agent, each
acting from its own observation. Centralised ones (CPPO) have one unit for the team: ``joint``
reads every observation and outputs one categorical head per agent (the team's log-probability
is their sum over the agents that act); ``joint_action`` outputs one categorical over the
``A**N`` joint actions. :class:`UnitLayout` holds the inputs, network application, policy
distribution and per-unit terms for the three layouts, so the learner's rollout and loss never
branch on them.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alem.algos import joint as joint_actions
from alem.algos.distributions import CategoricalHead, GaussianHead
from alem.algos.losses import masked_log_softmax
from alem.algos.networks import Network, apply_per_param_set
from alem.core import MultiAgentEnv

__all__ = ["UnitLayout", "per_agent_obs", "with_agent_id"]


def per_agent_obs(env: MultiAgentEnv, obs: jax.Array) -> jax.Array:
    """Each agent's observation as a float vector: ``[..., N, ...] -> [..., N, D]``."""
    lead = obs.shape[: obs.ndim - len(env.observation_space().shape)]
    return obs.reshape(*lead, env.num_agents, -1).astype(jnp.float32)


def with_agent_id(x: jax.Array) -> jax.Array:
    """``x [..., N, D]`` with each agent's one-hot id appended: ``[..., N, D + N]``."""
    n = x.shape[-2]
    return jnp.concatenate([x, jnp.broadcast_to(jnp.eye(n, dtype=jnp.float32), (*x.shape[:-1], n))], -1)


class UnitLayout:
    """Mixin of the PPO :class:`~alem.algos.ppo.Learner`: needs ``env`` (one env), ``cfg``,
    ``param_sets`` (parameter set per unit) and ``num_param_sets``."""

    @property
    def raw_env(self) -> MultiAgentEnv:
        return self.env.unwrapped

    @property
    def n(self) -> int:
        return self.env.num_agents

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    @functools.cached_property
    def head(self) -> CategoricalHead | GaussianHead:
        """The policy head: categorical over (joint) actions, or a Gaussian for continuous actions."""
        if self.env.continuous_actions:
            space = self.env.action_space(0)
            return GaussianHead(space.low.reshape(-1), space.high.reshape(-1), self.cfg.log_std_init)
        per_unit = {"local": self.num_actions, "joint": self.num_actions}.get(
            self.cfg.actor, self.num_actions**self.n
        )
        return CategoricalHead(per_unit)

    @property
    def centralised(self) -> bool:
        return self.cfg.actor != "local"

    @property
    def num_units(self) -> int:
        """Advantage/value units: one per agent (decentralised) or one for the team."""
        return 1 if self.centralised else self.n

    @property
    def uses_global_state(self) -> bool:
        return self.cfg.critic == "global" or self.centralised

    def _obs_dim(self) -> int:
        return int(np.prod(self.env.observation_space().shape[1:]))

    @property
    def actor_net(self) -> Network:
        c = self.cfg
        out = self.n * self.head.out_dim if c.actor == "joint" else self.head.out_dim
        log_std = (self.head.dims, self.head.log_std_init) if self.head.continuous else None
        return Network(out, c.hidden, c.activation, c.recurrent, head_scale=0.01, log_std=log_std)

    @property
    def critic_net(self) -> Network:
        c = self.cfg
        return Network(1, c.hidden, c.activation, c.recurrent, head_scale=1.0)

    @property
    def critic_sees_turn(self) -> bool:
        """Decentralised critics of turn-based envs also get whether their agent is to move: with
        ego-centric observations both players see the same start position, and a shared critic
        would otherwise have to give both the same value (erasing the first mover's advantage)."""
        return self.env.turn_based and not self.centralised

    def inputs(
        self, obs: jax.Array, gstate: jax.Array, acting: jax.Array | None = None
    ) -> tuple[jax.Array, jax.Array]:
        """Actor and critic inputs ``[..., Ma, Da]``, ``[..., M, Dc]`` from obs ``[..., N, ...]``
        (``acting [..., N]`` is needed for the critic when :attr:`critic_sees_turn`)."""
        n = self.n
        flat = per_agent_obs(self.env, obs)
        lead = flat.shape[:-2]
        if self.centralised:
            actor_in = flat.reshape(*lead, 1, -1)
            critic_in = gstate.reshape(*lead, 1, -1).astype(jnp.float32)
            return actor_in, critic_in
        actor_in = with_agent_id(flat) if self.cfg.agent_id else flat
        if self.cfg.critic == "global":
            g = jnp.broadcast_to(gstate[..., None, :], (*lead, n, gstate.shape[-1])).astype(jnp.float32)
        else:
            g = flat
        critic_in = with_agent_id(g) if self.cfg.agent_id else g
        if self.critic_sees_turn and acting is not None:
            critic_in = jnp.concatenate([critic_in, acting[..., None].astype(jnp.float32)], -1)
        return actor_in, critic_in

    def _apply(self, net: Network, params, h, x, resets):
        """Apply ``net`` per unit with that unit's role parameters (:func:`apply_per_param_set`)."""
        return apply_per_param_set(net, params, h, x, resets, self.param_sets, self.num_param_sets)

    def distribution(self, out: jax.Array, mask: jax.Array) -> jax.Array:
        """The head's distribution parameters ``[..., Md, P]`` from actor output and the env mask
        ``[..., N, A]`` (for categorical heads: the log-probability table)."""
        if self.cfg.actor == "local":
            return self.head.params(out, mask)
        if self.cfg.actor == "joint":
            return masked_log_softmax(out.reshape(*out.shape[:-2], self.n, self.num_actions), mask)
        return masked_log_softmax(out, joint_actions.joint_mask(mask)[..., None, :])

    def env_actions(self, dist_actions: jax.Array) -> jax.Array:
        if self.cfg.actor == "joint_action":
            return joint_actions.decode(dist_actions[..., 0], self.n, self.num_actions)
        return self.head.to_env(dist_actions)

    @property
    def _exact_kl(self) -> bool:
        """DPO's penalty needs the exact KL(old||new), hence the old log-prob of every action."""
        return self.cfg.objective == "dpo"

    def unit_terms(self, logp_table, old_logp, old_table, actions, acting):
        """Per-unit log-prob of the taken action, old log-prob, KL(old||new) and entropy ``[..., M]``.

        The KL is exact for DPO (its loss uses it); otherwise it is only reported, and the
        unbiased estimator ``(r - 1) - log r`` of the taken action (Schulman's k3) spares
        storing every action's old log-probability per step.
        """
        logp = self.head.log_prob(logp_table, actions)
        if self._exact_kl:
            kl = self.head.kl(old_table, logp_table)
        else:
            log_r = logp - old_logp
            kl = jnp.expm1(log_r) - log_r
        ent = self.head.entropy(logp_table)
        if self.cfg.actor == "joint":  # one team decision: sum over the agents that act
            w = acting.astype(jnp.float32)
            logp, old_logp, kl, ent = ((x * w).sum(-1, keepdims=True) for x in (logp, old_logp, kl, ent))
        return logp, old_logp, kl, ent

    def unit_acting(self, acting: jax.Array) -> jax.Array:
        return acting.any(-1, keepdims=True) if self.centralised else acting

    def unit_reward(self, reward: jax.Array) -> jax.Array:
        return reward.mean(-1, keepdims=True) if self.centralised else reward

    def _global_state(self, env_state, params):
        if not self.uses_global_state:
            return jnp.zeros((self.cfg.num_envs, 0), jnp.float32)
        return jax.vmap(self.env.global_state, in_axes=(0, None))(env_state, params)
