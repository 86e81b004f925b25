"""The PPO core every alem learner is a configuration of.

PureJaxRL style: a :class:`Learner` is built once from an env and a
:class:`~alem.algos.config.LearnerConfig`; ``init(key)`` and ``update(state)``
are pure functions, so a whole run is ``lax.scan`` over updates and many seeds
are one ``vmap``. One update:

1. **rollout** — ``num_steps`` steps of ``num_envs`` envs (``BatchedAutoReset(EpisodeStats(env))``:
   vmapped steps, fresh episodes computed only for the envs that ended) by ``lax.scan``;
2. **advantages** — GAE by a reverse scan, per *unit* (an agent for decentralised
   actors; the whole team for centralised ones). A truncation ends the return like a
   termination unless ``bootstrap_truncation=True``, which bootstraps from the critic's
   value of the cut-off state (its observations, or its global state);
3. **optimisation** — epochs x minibatches by scan; a minibatch is a set of whole
   env trajectories (so recurrent policies replay their sequences with resets at
   episode starts). Parameters are stacked per role (``[K, ...]``) and each role
   has its own Adam state; agent ``i`` uses role ``roles[i]``'s parameters.

Actions: a policy head (:mod:`alem.algos.distributions`) turns the actor's output into
a distribution: a masked categorical for discrete actions, a clipped diagonal Gaussian
for continuous ones (decentralised actors), so every learner runs on both.

Turn-based envs: the policy loss of an agent only counts steps where it acts
(``TimeStep.acting``); its critic learns from every step, so terminal payoffs
reach the player who did not make the last move.

Self-play with an opponent pool (``cfg.selfplay != "off"``, two-player zero-sum envs;
:mod:`alem.algos.selfplay`): the state also holds a pool of ``K`` actor snapshots and, per
env, the learner's seat and the opponent's slot, drawn at each episode start. The opponent
seat's actions come from its snapshot (a per-env gather of the pool, vmapped over envs), and
every loss term, the advantage normalisation and the value statistics weight only the
learner seat's units (``Batch.seat_w``). ``cfg.selfplay_random`` seats the uniform-random
player (slot -2) in that share of episodes, with or without a pool.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from alem.algos import joint as joint_actions
from alem.algos import selfplay as sp
from alem.algos.config import LearnerConfig, LearnerConfigError
from alem.algos.distributions import CategoricalHead, GaussianHead
from alem.algos.gae import gae
from alem.algos.losses import (
    clipped_surrogate,
    clipped_value_loss,
    dpo_surrogate,
    happo_factor,
    linear_coef,
    masked_log_softmax,
    update_dpo_betas,
)
from alem.algos.networks import Network
from alem.algos.state import Batch, LearnerState, ValueNorm
from alem.core import MultiAgentEnv
from alem.errors import did_you_mean
from alem.rollout import episode_totals
from alem.wrappers import BatchedAutoReset, EpisodeStats

__all__ = ["Learner", "make_learner"]


def _weighted_mean(x: jax.Array, w: jax.Array) -> jax.Array:
    w = jnp.broadcast_to(w, x.shape).astype(jnp.float32)
    return (x * w).sum() / jnp.maximum(w.sum(), 1.0)


def _normalized(adv: jax.Array, w: jax.Array) -> jax.Array:
    """Advantages standardised by their ``w``-weighted mean and standard deviation."""
    mu = _weighted_mean(adv, w)
    return (adv - mu) / jnp.sqrt(_weighted_mean((adv - mu) ** 2, w) + 1e-8)


@dataclasses.dataclass(frozen=True, eq=False)
class Learner(sp.SelfPlayMatches):
    """A compiled-once PPO learner for one env and one config (see the module docstring)."""

    env: MultiAgentEnv  # EpisodeStats(raw env), one env
    cfg: LearnerConfig
    roles: np.ndarray  # role (parameter set) per unit, [M]
    num_roles: int
    batch: BatchedAutoReset  # the num_envs copies of ``env``, auto-reset

    # ------------------------------------------------------------------ static description
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
    def matched(self) -> bool:
        """Each episode has a learner seat and an opponent (a pool snapshot, the current self or
        the random player): ``selfplay != "off"`` or ``selfplay_random > 0``."""
        return self.cfg.selfplay != "off" or self.cfg.selfplay_random > 0

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

    # ------------------------------------------------------------------ inputs
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
        lead = obs.shape[: obs.ndim - len(self.env.observation_space().shape)]
        flat = obs.reshape(*lead, n, -1).astype(jnp.float32)
        eye = jnp.broadcast_to(jnp.eye(n, dtype=jnp.float32), (*lead, n, n))
        if self.centralised:
            actor_in = flat.reshape(*lead, 1, -1)
            critic_in = gstate.reshape(*lead, 1, -1).astype(jnp.float32)
            return actor_in, critic_in
        actor_in = jnp.concatenate([flat, eye], -1) if self.cfg.agent_id else flat
        if self.cfg.critic == "global":
            g = jnp.broadcast_to(gstate[..., None, :], (*lead, n, gstate.shape[-1])).astype(jnp.float32)
        else:
            g = flat
        critic_in = jnp.concatenate([g, eye], -1) if self.cfg.agent_id else g
        if self.critic_sees_turn and acting is not None:
            critic_in = jnp.concatenate([critic_in, acting[..., None].astype(jnp.float32)], -1)
        return actor_in, critic_in

    def _apply(self, net: Network, params, h, x, resets):
        """Apply ``net`` per unit with that unit's role parameters.

        ``h [B, U, H]``, ``x [T, B, U, D]``, ``resets [T, B]`` -> ``h [B, U, H]``, ``out [T, B, U, O]``.
        """
        f = lambda p, h_u, x_u: net.apply(p, h_u, x_u, resets)
        if self.num_roles == 1 and not self.cfg.recurrent:
            # One feed-forward network for every unit: fold the units into the batch (one
            # matmul per layer, no transposes in and out of a vmap over units).
            p = jax.tree.map(lambda a: a[0], params)
            t, b, u = x.shape[:3]
            _, out = net.apply(
                p, h.reshape(b * u, -1), x.reshape(t, b * u, -1), jnp.repeat(resets, u, axis=1)
            )
            return h, out.reshape(t, b, u, -1)
        if self.num_roles == 1:
            p = jax.tree.map(lambda a: a[0], params)
            return jax.vmap(f, in_axes=(None, 1, 2), out_axes=(1, 2))(p, h, x)
        p = jax.tree.map(lambda a: a[self.roles], params)
        return jax.vmap(f, in_axes=(0, 1, 2), out_axes=(1, 2))(p, h, x)

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

    # ------------------------------------------------------------------ init
    def init(self, key: jax.Array, env_params: Any = None) -> LearnerState:
        c = self.cfg
        env_params = self.env.default_params if env_params is None else env_params
        k_env, k_actor, k_critic, key = jax.random.split(key, 4)
        env_state, ts = self.batch.reset(k_env, env_params)
        gstate = self._global_state(env_state, env_params)
        a_in, c_in = self.inputs(ts.obs[0], gstate[0], ts.acting[0])
        resets = jnp.ones((1, 1), bool)

        def init_stack(net, k, x):
            h = net.initial_hidden((1,))
            return jax.vmap(lambda kk: net.init(kk, h, x[None, None, 0], resets))(
                jax.random.split(k, self.num_roles)
            )

        params = {
            "actor": init_stack(self.actor_net, k_actor, a_in),
            "critic": init_stack(self.critic_net, k_critic, c_in),
        }
        opt_state = jax.vmap(self.tx.init)(params)
        m, ma = self.num_units, 1 if self.centralised else self.n
        hidden = {
            "actor": self.actor_net.initial_hidden((c.num_envs, ma)),
            "critic": self.critic_net.initial_hidden((c.num_envs, m)),
        }
        betas = jnp.stack([jnp.full((m,), c.dpo_beta1), jnp.full((m,), c.dpo_beta2)]).astype(jnp.float32)
        pool = match = None
        if self.matched:
            key, k_match = jax.random.split(key)
            pool = sp.init_pool(params["actor"], c.pool_size) if c.selfplay != "off" else None
            match = self._draw_matches(pool, k_match, c.num_envs)
        return LearnerState(
            params,
            opt_state,
            env_state,
            ts,
            hidden,
            jnp.ones((c.num_envs,), bool),
            ValueNorm.create(),
            betas,
            key,
            jnp.int32(0),
            pool,
            match,
        )

    @property
    def schedule_steps(self) -> int:
        """Optimiser steps of the most used role over the whole run (the LR decays to 0 over them).

        In a sequential (HAPPO) update a role shared by ``k`` agents steps once per agent turn,
        ``k`` times per minibatch, so its schedule is ``k`` times longer.
        """
        c = self.cfg
        per_minibatch = int(np.bincount(self.roles).max()) if c.update_order == "sequential" else 1
        return c.num_updates * c.update_epochs * c.num_minibatches * per_minibatch

    @property
    def tx(self) -> optax.GradientTransformation:
        c = self.cfg
        lr = optax.linear_schedule(c.lr, 0.0, self.schedule_steps) if c.anneal_lr else c.lr
        return optax.chain(optax.clip_by_global_norm(c.max_grad_norm), optax.adam(lr, eps=1e-5))

    # ------------------------------------------------------------------ acting
    def act(self, params, hidden, obs, gstate, mask, resets, key, greedy: bool = False):
        """Actions for a batch ``[B]`` of envs: ``(hidden, env_actions [B, N], dist_actions, logp_table)``."""
        a_in, _ = self.inputs(obs, gstate)
        h, out = self._apply(self.actor_net, params["actor"], hidden, a_in[None], resets[None])
        logp_table = self.distribution(out[0], mask)
        dist_actions = self.head.mode(logp_table) if greedy else self.head.sample(key, logp_table)
        return h, self.env_actions(dist_actions), dist_actions, logp_table

    def values(self, params, hidden, critic_in, resets, value_norm: ValueNorm):
        h, out = self._apply(self.critic_net, params["critic"], hidden, critic_in[None], resets[None])
        raw = out[0, ..., 0]
        if self.cfg.value_norm:
            mean, std = value_norm.stats()
            return h, raw, raw * std + mean
        return h, raw, raw

    # ------------------------------------------------------------------ one update
    def rollout(self, state: LearnerState, env_params: Any) -> tuple[LearnerState, Batch, dict]:
        c = self.cfg

        def step(carry: LearnerState, key):
            k_act, k_env = jax.random.split(key)
            ts = carry.timestep
            gstate = self._global_state(carry.env_state, env_params)
            h_a, env_act, dist_act, logp_table = self.act(
                carry.params, carry.hidden["actor"], ts.obs, gstate, ts.action_mask, carry.resets, k_act
            )
            if self.matched:
                k_opp, k_draw = jax.random.split(jax.random.fold_in(key, 1))
                pool_actor = None if carry.pool is None else carry.pool.actor
                env_act = self.match_actions(
                    env_act, pool_actor, carry.match, ts.obs, gstate, ts.action_mask, k_opp
                )
            _, c_in = self.inputs(ts.obs, gstate, ts.acting)
            h_c, v_raw, v = self.values(
                carry.params, carry.hidden["critic"], c_in, carry.resets, carry.value_norm
            )
            env_state, ts2, final_state = self.batch.step_with_final_state(
                k_env, carry.env_state, env_act, env_params
            )
            done = ts2.done
            if c.bootstrap_truncation:
                # The critic's input in the cut-off state (before the reset): its observations,
                # and for global-state critics its global state.
                final_obs = ts2.info["final_obs"]
                final_g = self._global_state(final_state, env_params) if self.uses_global_state else gstate
                final_acting = jax.vmap(self.env.acting, in_axes=(0, None))(final_state, env_params)
                _, c_fin = self.inputs(final_obs, final_g, final_acting)
                _, _, final_v = self.values(
                    carry.params, h_c, c_fin, jnp.zeros_like(carry.resets), carry.value_norm
                )
                truncated = ts2.truncated & ~ts2.terminated
            else:  # the default: a truncation ends the return like a termination
                final_v, truncated = jnp.zeros_like(v), jnp.zeros_like(done)
            stats = episode_totals(ts2.info)
            batch = Batch(
                obs=ts.obs,
                gstate=gstate,
                mask=ts.action_mask,
                acting=ts.acting,
                action=dist_act,
                old_logp=self.head.log_prob(logp_table, dist_act),
                old_table=logp_table if self._exact_kl else logp_table[..., :0],
                value=v,
                value_raw=v_raw,
                reward=self.unit_reward(ts2.reward),
                done=done,
                truncated=truncated,
                final_value=final_v,
                resets=carry.resets,
            )
            carry = carry.replace(
                env_state=env_state, timestep=ts2, hidden={"actor": h_a, "critic": h_c}, resets=done
            )
            if self.matched:
                seat, slot = carry.match["seat"], carry.match["slot"]
                batch = batch.replace(seat_w=self.seat_weights(carry.match))
                # the learner's result in the episodes that ended, per opponent slot
                ended = ts2.info["episode_done"]
                ret = jnp.take_along_axis(ts2.info["episode_return"], seat[:, None], 1)[:, 0]
                score = (jnp.sign(ret) + 1) / 2
                if c.selfplay != "off":
                    w = jax.nn.one_hot(slot, c.pool_size, dtype=jnp.float32) * ended[:, None]
                    stats = {**stats, "sp_games": w.sum(0), "sp_score": score @ w, "sp_return": ret @ w}
                if c.selfplay_random > 0:
                    vs_random = ((slot == -2) & ended).astype(jnp.float32)
                    stats = {**stats, "random_games": vs_random.sum(), "random_score": score @ vs_random}
                fresh = self._draw_matches(carry.pool, k_draw, c.num_envs)
                match = jax.tree.map(lambda new, old: jnp.where(done, new, old), fresh, carry.match)
                carry = carry.replace(match=match)
            return carry, (batch, stats)

        key, k_roll = jax.random.split(state.key)
        hidden0 = state.hidden
        state, (batch, stats) = jax.lax.scan(step, state, jax.random.split(k_roll, c.num_steps))
        stats = jax.tree.map(lambda x: x.sum(0), stats)
        return state.replace(key=key), batch, {"hidden0": hidden0, **stats}

    def loss(
        self,
        params,
        mb: Batch,
        h0,
        adv,
        targets,
        agent_w,
        betas,
        value_norm: ValueNorm,
        clip_eps,
        normalize=True,
        ent_coef=None,
    ):
        """The minibatch loss and its metrics; ``ent_coef`` (default ``cfg.ent_coef``) is the
        entropy bonus's coefficient at this update (see :meth:`entropy_coef`)."""
        c = self.cfg
        ent_coef = c.ent_coef if ent_coef is None else ent_coef
        a_in, c_in = self.inputs(mb.obs, mb.gstate, mb.acting)
        _, out = self._apply(self.actor_net, params["actor"], h0["actor"], a_in, mb.resets)
        logp_table = self.distribution(out, mb.mask)
        logp, old, kl, ent = self.unit_terms(logp_table, mb.old_logp, mb.old_table, mb.action, mb.acting)
        ratio = jnp.exp(logp - old)
        w_pg = self.unit_acting(mb.acting).astype(jnp.float32) * agent_w
        if self.matched:  # only the learner seat's units learn
            w_pg = w_pg * mb.seat_w
        if c.normalize_advantages and normalize:
            adv = _normalized(adv, w_pg)
        if c.objective == "dpo":
            pg = dpo_surrogate(ratio, adv, kl, betas[0], betas[1])
        else:
            pg = clipped_surrogate(ratio, adv, clip_eps)
        _, v_out = self._apply(self.critic_net, params["critic"], h0["critic"], c_in, mb.resets)
        v = v_out[..., 0]
        if c.value_norm:
            mean, std = value_norm.stats()
            targets = (targets - mean) / std
        if c.clip_value:
            vl = clipped_value_loss(v, mb.value_raw, targets, clip_eps)
        else:
            vl = 0.5 * jnp.square(v - targets)
        w_v = jnp.broadcast_to(agent_w, vl.shape)
        if self.matched:
            w_v = w_v * mb.seat_w
        pg_loss, v_loss, entropy = (
            _weighted_mean(pg, w_pg),
            _weighted_mean(vl, w_v),
            _weighted_mean(ent, w_pg),
        )
        total = pg_loss + c.vf_coef * v_loss - ent_coef * entropy
        metrics = {
            "policy_loss": pg_loss,
            "value_loss": v_loss,
            "entropy": entropy,
            "approx_kl": _weighted_mean(kl, w_pg),
            "clip_frac": _weighted_mean((jnp.abs(ratio - 1) > clip_eps).astype(jnp.float32), w_pg),
        }
        return total, metrics

    def annealed_params(self, update: jax.Array, env_params: Any) -> Any:
        """``env_params`` with ``algo.anneal_param`` at its value for update ``update`` (0-based).

        The field moves linearly from its value in ``env_params`` to ``anneal_param_end`` over
        ``anneal_param_steps`` env steps (the whole run when 0), counted at the start of each
        update's rollout, and stays there; e.g. Overcooked's ``shaping_factor`` annealed to 0 as
        JaxMARL's baselines do (``REW_SHAPING_HORIZON``)."""
        c = self.cfg
        if not c.anneal_param:
            return env_params
        per_update = c.num_envs * c.num_steps
        horizon = c.anneal_param_steps or c.num_updates * per_update
        old = jnp.asarray(getattr(env_params, c.anneal_param))
        frac = jnp.clip(jnp.asarray(update, jnp.float32) * per_update / horizon, 0.0, 1.0)
        value = old.astype(jnp.float32) + (c.anneal_param_end - old.astype(jnp.float32)) * frac
        return env_params.replace(**{c.anneal_param: value.astype(old.dtype)})

    def entropy_coef(self, update: jax.Array) -> jax.Array:
        """The entropy bonus's coefficient at update ``update`` (0-based): ``ent_coef``, or
        linearly from ``ent_coef`` to ``ent_coef_end`` over the run when that is >= 0."""
        c = self.cfg
        return linear_coef(update, c.ent_coef, c.ent_coef_end, c.num_updates)

    def _optimise(
        self, state: LearnerState, batch, hidden0, adv, targets, agent_w, role_mask, key, normalize=True
    ):
        """Epochs x minibatches of gradient steps on the roles in ``role_mask``; ``agent_w`` weights units."""
        c = self.cfg
        clip_eps = c.clip_eps / self.n if c.clip_scale_by_agents else c.clip_eps
        mb_size = c.num_envs // c.num_minibatches
        grad_fn = jax.value_and_grad(
            functools.partial(self.loss, normalize=normalize, ent_coef=self.entropy_coef(state.update)),
            has_aux=True,
        )

        def minibatch(carry, idx):
            params, opt_state = carry
            take_t = lambda x: x[:, idx]  # time-major: envs on axis 1
            mb = jax.tree.map(take_t, batch)
            h0 = jax.tree.map(lambda x: x[idx], hidden0)
            (_, metrics), grads = grad_fn(
                params, mb, h0, take_t(adv), take_t(targets), agent_w, state.betas, state.value_norm, clip_eps
            )
            updates, new_opt = jax.vmap(self.tx.update)(grads, opt_state, params)
            new_params = optax.apply_updates(params, updates)
            if role_mask is None:  # every role updates
                params, opt_state = new_params, new_opt
            else:
                keep = lambda new, old: jnp.where(role_mask.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)
                params = jax.tree.map(keep, new_params, params)
                opt_state = jax.tree.map(keep, new_opt, opt_state)
            return (params, opt_state), metrics

        def epoch(carry, k):
            perm = jax.random.permutation(k, c.num_envs).reshape(c.num_minibatches, mb_size)
            return jax.lax.scan(minibatch, carry, perm)

        (params, opt_state), metrics = jax.lax.scan(
            epoch, (state.params, state.opt_state), jax.random.split(key, c.update_epochs)
        )
        return state.replace(params=params, opt_state=opt_state), jax.tree.map(jnp.mean, metrics)

    def _unit_ratio_and_kl(self, params, batch: Batch, hidden0):
        a_in, _ = self.inputs(batch.obs, batch.gstate)
        _, out = self._apply(self.actor_net, params["actor"], hidden0["actor"], a_in, batch.resets)
        logp, old, kl, _ = self.unit_terms(
            self.distribution(out, batch.mask), batch.old_logp, batch.old_table, batch.action, batch.acting
        )
        return jnp.exp(logp - old), kl

    def update(self, state: LearnerState, env_params: Any = None) -> tuple[LearnerState, dict]:
        """One PPO iteration (rollout, GAE, optimisation); pure and jittable."""
        c = self.cfg
        env_params = self.env.default_params if env_params is None else env_params
        env_params = self.annealed_params(state.update, env_params)
        state, batch, roll = self.rollout(state, env_params)
        hidden0 = roll.pop("hidden0")
        anneal = {}
        if c.anneal_param:
            anneal["anneal_value"] = jnp.asarray(getattr(env_params, c.anneal_param), jnp.float32)
        sp_metrics = {}
        if c.selfplay != "off":
            games, score, ret = roll.pop("sp_games"), roll.pop("sp_score"), roll.pop("sp_return")
            state = state.replace(pool=sp.record_games(state.pool, games, score, ret, c.win_rate_ema))
            n_games = jnp.maximum(games.sum(), 1.0)
            sp_metrics = {
                "selfplay_score": score.sum() / n_games,  # learner's score in this rollout's episodes
                "selfplay_return": ret.sum() / n_games,
                "pool_filled": jnp.minimum(state.pool.count, c.pool_size).astype(jnp.float32),
            }
        if c.selfplay_random > 0:
            games, score = roll.pop("random_games"), roll.pop("random_score")
            # NaN in an update without a finished game against the random player
            sp_metrics["score_vs_random"] = jnp.where(games > 0, score / jnp.maximum(games, 1.0), jnp.nan)
        # value of the observation after the last step
        gstate = self._global_state(state.env_state, env_params)
        _, c_in = self.inputs(state.timestep.obs, gstate, state.timestep.acting)
        _, _, last_v = self.values(state.params, state.hidden["critic"], c_in, state.resets, state.value_norm)
        adv, targets = gae(
            batch.reward,
            batch.value,
            batch.done,
            last_v,
            c.gamma,
            c.gae_lambda,
            batch.truncated,
            batch.final_value,
        )
        if c.value_norm:
            vn_w = batch.seat_w if self.matched else jnp.ones_like(targets)
            state = state.replace(value_norm=state.value_norm.update(targets, vn_w, c.value_norm_beta))
        key, k_opt, k_order = jax.random.split(state.key, 3)
        state = state.replace(key=key)
        m = self.num_units
        if c.update_order == "sequential":
            # HAPPO: agents in a random order; each one's advantage is weighted by the
            # product of the new/old ratios of the agents updated before it. As in HARL the
            # advantage is normalised once, then weighted (normalising the weighted M*A per
            # minibatch would cancel a factor that is constant over the minibatch).
            order = jax.random.permutation(k_order, m)
            if c.normalize_advantages:
                adv = _normalized(adv, self.unit_acting(batch.acting).astype(jnp.float32))

            def one_agent(carry, xs):
                st, factor = carry
                unit, k = xs
                agent_w = jax.nn.one_hot(unit, m)
                role_mask = jax.nn.one_hot(jnp.asarray(self.roles)[unit], self.num_roles) > 0
                st, metrics = self._optimise(
                    st, batch, hidden0, adv * factor, targets, agent_w, role_mask, k, normalize=False
                )
                ratio, _ = self._unit_ratio_and_kl(st.params, batch, hidden0)
                acted = self.unit_acting(batch.acting)[..., unit]
                factor = happo_factor(factor, ratio[..., unit][..., None], acted[..., None])
                return (st, factor), metrics

            (state, _), metrics = jax.lax.scan(
                one_agent, (state, jnp.ones(adv.shape[:-1] + (1,))), (order, jax.random.split(k_opt, m))
            )
            metrics = jax.tree.map(jnp.mean, metrics)
        else:
            state, metrics = self._optimise(state, batch, hidden0, adv, targets, jnp.ones((m,)), None, k_opt)
        if c.objective == "dpo":
            _, kl = self._unit_ratio_and_kl(state.params, batch, hidden0)
            w = self.unit_acting(batch.acting).astype(jnp.float32)
            if self.matched:
                w = w * batch.seat_w
            per_unit = lambda x: (x * w).sum((0, 1)) / jnp.maximum(w.sum((0, 1)), 1.0)
            kl_unit, sqrt_kl_unit = per_unit(kl), per_unit(jnp.sqrt(kl))
            b1, b2 = update_dpo_betas(state.betas[0], state.betas[1], kl_unit, sqrt_kl_unit, c.dpo_target_kl)
            state = state.replace(betas=jnp.stack([b1, b2]))
            metrics = {**metrics, "kl_after_update": kl_unit.mean(), "beta1": b1.mean(), "beta2": b2.mean()}
        state = state.replace(update=state.update + 1)
        if c.selfplay != "off":
            state = self._after_update(state, env_params)
        return state, {**roll, **metrics, **sp_metrics, **anneal}

    def run(self, state: LearnerState, num_updates: int, env_params: Any = None) -> tuple[LearnerState, dict]:
        """``num_updates`` updates by ``lax.scan``; metrics stacked ``[num_updates, ...]``."""
        return jax.lax.scan(lambda s, _: self.update(s, env_params), state, None, length=num_updates)


def _check_anneal_param(env: MultiAgentEnv, name: str) -> None:
    """Refuse an ``algo.anneal_param`` that is not a float scalar field of the env's params."""
    params = env.default_params
    fields = [f.name for f in dataclasses.fields(params)] if dataclasses.is_dataclass(params) else []
    is_float_scalar = lambda v: np.ndim(v) == 0 and np.issubdtype(np.asarray(v).dtype, np.floating)
    floats = [f for f in fields if is_float_scalar(getattr(params, f))]
    if name not in floats:
        what = "is not a field of" if name not in fields else "is not a float scalar field of"
        raise LearnerConfigError(
            f"algo.anneal_param={name!r} {what} {env.id}'s params; float scalar fields: {floats or 'none'}"
            f"{did_you_mean(name, floats)}"
        )


def resolve_roles(env: MultiAgentEnv, cfg: LearnerConfig, key: jax.Array | None = None) -> np.ndarray:
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


def make_learner(env: MultiAgentEnv, cfg: LearnerConfig, roles: np.ndarray | None = None) -> Learner:
    """Check that ``cfg`` fits ``env`` and build the :class:`Learner` (before anything compiles)."""
    n = env.num_agents
    if env.continuous_actions:
        if cfg.actor != "local":
            raise LearnerConfigError(
                f"{env.id} has continuous actions; centralised actors (algo.actor={cfg.actor}, CPPO) "
                "need discrete ones: use a decentralised learner (ippo, mappo, happo, dpo) or the "
                "env's discrete variant"
            )
        space = env.action_space(0)
        if not (np.isfinite(space.low).all() and np.isfinite(space.high).all()):
            raise LearnerConfigError(f"{env.id}: the Gaussian policy head needs a bounded action box")
    elif cfg.actor == "joint_action" and env.num_actions**n > joint_actions.MAX_JOINT_ACTIONS:
        a = env.num_actions
        raise LearnerConfigError(
            f"actor=joint_action needs A**N = {a}**{n} = {a**n} outputs for {env.id} "
            f"(limit {joint_actions.MAX_JOINT_ACTIONS}); use actor=joint"
        )
    if cfg.actor != "local" and env.zero_sum:
        raise LearnerConfigError(
            f"algo.actor={cfg.actor} (CPPO) maximises the team's mean reward, which is always 0 in the "
            f"zero-sum {env.id}: nothing to learn; use a decentralised learner (ippo, mappo, ...)"
        )
    if (cfg.selfplay != "off" or cfg.selfplay_random > 0) and (
        n != 2 or not env.zero_sum or env.continuous_actions
    ):
        why = [
            f"it has {n} players" if n != 2 else "",
            "it is not zero-sum" if not env.zero_sum else "",
            "its actions are continuous" if env.continuous_actions else "",
        ]
        what = f"algo.selfplay={cfg.selfplay}" if cfg.selfplay != "off" else "algo.selfplay_random"
        raise LearnerConfigError(
            f"{what} seats an opponent (past snapshots, the random player) in two-player zero-sum "
            f"games with discrete actions; {env.id} does not fit: {' and '.join(w for w in why if w)}"
        )
    if cfg.selfplay_random_seat >= n:
        raise LearnerConfigError(
            f"algo.selfplay_random_seat={cfg.selfplay_random_seat} is not a seat of {env.id} (seats 0..{n - 1})"
        )
    if cfg.anneal_param:
        _check_anneal_param(env, cfg.anneal_param)
    if cfg.update_order == "sequential" and n < 2:
        raise LearnerConfigError("update_order=sequential (HAPPO) needs at least 2 agents")
    roles = resolve_roles(env, cfg) if roles is None else np.asarray(roles, np.int32)
    if cfg.update_order == "sequential" and int(roles.max()) == 0:
        raise LearnerConfigError(
            f"algo.update_order=sequential (HAPPO) with sharing={cfg.sharing} gives {env.id} a single "
            "parameter set: that is fully shared HAPPO, refused like sharing=shared; use sharing=none"
        )
    wrapped = EpisodeStats(env)
    batch = BatchedAutoReset(wrapped, cfg.num_envs, cfg.resets_per_step or None)
    return Learner(env=wrapped, cfg=cfg, roles=roles, num_roles=int(roles.max()) + 1, batch=batch)
