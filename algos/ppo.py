"""The PPO core every alem learner is a configuration of.

PureJaxRL style: a :class:`PPOLearner` is built once from an env and a
:class:`~alem.algos.config.PPOConfig`; ``init(key)`` and ``update(state)``
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
   has its own Adam state; agent ``i`` uses parameter set ``param_sets[i]``.

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
learner seat's units (``PPOBatch.seat_w``). ``cfg.selfplay_random`` seats the uniform-random
player (slot -2) in that share of episodes, with or without a pool.
Population play (``cfg.partners``, cooperative envs): the same machinery with a fixed pool of
trained partners (a partner manifest's train split, loaded by
``alem.algos.make_learner(..., partners=...)`` into ``partner_actor``): per env, at each episode start, the learner's seat and a partner drawn
uniformly; the partner plays every other seat and nothing is added to the pool.

What the variants change lives next to this core, not inside it: the agent -> unit layout of
centralised actors (CPPO) in :mod:`~alem.algos.decision_units`, HAPPO's sequential update in
:mod:`~alem.algos.happo`, DPO's adaptive penalties in :mod:`~alem.algos.dpo`, parameter sharing
in :mod:`~alem.algos.sharing`, the self-play matches in :mod:`~alem.algos.selfplay`, and the
checks of which config fits which env in :mod:`~alem.algos.env_fit`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import optax

from alem.algos import selfplay as sp
from alem.algos.config import LearnerConfigError, PPOConfig
from alem.algos.decision_units import UnitLayout
from alem.algos.dpo import adapt_penalties
from alem.algos.env_fit import check_fits, check_param_sets
from alem.algos.gae import gae
from alem.algos.happo import sequential_update
from alem.algos.losses import (
    clipped_surrogate,
    clipped_value_loss,
    dpo_surrogate,
    linear_coef,
    normalized,
    weighted_mean,
)
from alem.algos.sharing import resolve_param_sets
from alem.algos.state import PPOBatch, PPOState, ValueNorm
from alem.core import MultiAgentEnv
from alem.metrics import episode_totals
from alem.wrappers import BatchedAutoReset, EpisodeStats

__all__ = ["PPOLearner", "make_ppo_learner", "Learner", "make_learner"]


@dataclasses.dataclass(frozen=True, eq=False)
class PPOLearner(UnitLayout, sp.SelfPlayMatches):
    """A compiled-once PPO learner for one env and one config (see the module docstring)."""

    env: MultiAgentEnv  # EpisodeStats(raw env), one env
    cfg: PPOConfig
    param_sets: np.ndarray  # role (parameter set) per unit, [M]
    num_param_sets: int
    batch: BatchedAutoReset  # the num_envs copies of ``env``, auto-reset
    #: ``cfg.partners``: the partners' actors stacked ``[K, R, ...]``, loaded by
    #: ``make_learner(..., partners=...)``; None (a template, e.g. to restore a checkpoint,
    #: which holds the pool) fills the pool with copies of the learner's own initial actor.
    partner_actor: Any = None

    # ------------------------------------------------------------------ init
    def init(self, key: jax.Array, env_params: Any = None, hyper: dict[str, Any] | None = None) -> PPOState:
        """A fresh state; ``hyper``: this row's values of the swept knobs (``cfg.sweep``; the
        config's own values where not given)."""
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
                jax.random.split(k, self.num_param_sets)
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
            if c.partners is not None and self.partner_actor is not None:
                pool = sp.fixed_pool(self.partner_actor)
            elif self.has_pool:
                pool = sp.init_pool(params["actor"], c.pool_size)
            match = self._draw_matches(pool, k_match, c.num_envs)
        return PPOState(
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
            {k: jnp.asarray((hyper or {}).get(k, getattr(c, k)), jnp.float32) for k in c.sweep} or None,
        )

    def knob(self, state: PPOState, name: str) -> Any:
        """Knob ``name`` of the row ``state`` belongs to: the swept value, else the config's."""
        return state.hyper[name] if name in self.cfg.sweep else getattr(self.cfg, name)

    @property
    def schedule_steps(self) -> int:
        """Optimiser steps of the most used role over the whole run (the LR decays to 0 over them).

        In a sequential (HAPPO) update a role shared by ``k`` agents steps once per agent turn,
        ``k`` times per minibatch, so its schedule is ``k`` times longer.
        """
        c = self.cfg
        per_minibatch = int(np.bincount(self.param_sets).max()) if c.update_order == "sequential" else 1
        return c.num_updates * c.update_epochs * c.num_minibatches * per_minibatch

    @property
    def tx(self) -> optax.GradientTransformation:
        c = self.cfg
        base = 1.0 if "lr" in c.sweep else c.lr  # swept: each row scales the steps by its own lr
        lr = optax.linear_schedule(base, 0.0, self.schedule_steps) if c.anneal_lr else base
        return optax.chain(optax.clip_by_global_norm(c.max_grad_norm), optax.adam(lr, eps=1e-5))

    # ------------------------------------------------------------------ acting
    def act(self, params, hidden, obs, gstate, mask, resets, key, greedy: bool = False):
        """Actions for a batch ``[B]`` of envs: ``(hidden, env_actions [B, N], dist_actions, logp_table)``."""
        a_in, _ = self.inputs(obs, gstate)
        h, out = self._apply(self.actor_net, params["actor"], hidden, a_in[None], resets[None])
        logp_table = self.distribution(out[0], mask)
        dist_actions = self.head.mode(logp_table) if greedy else self.head.sample(key, logp_table)
        return h, self.env_actions(dist_actions), dist_actions, logp_table

    # ------------------------------------------------------------------ playing a trained run
    #: A trained run samples its actions unless asked for the mode (the value-based core: always greedy).
    always_greedy: ClassVar[bool] = False

    def play_actions(self, params, obs, mask, key, greedy: bool = False) -> jax.Array:
        """int ``[B, N]``: a feed-forward actor's actions for a batch of envs from a zero hidden
        state (:mod:`alem.algos.checkpoint_player`); sampled, or the mode with ``greedy``."""
        b = obs.shape[0]
        hidden = self.actor_net.initial_hidden((b, 1 if self.centralised else self.n))
        none = jnp.zeros((b, 0), jnp.float32)
        _, actions, _, _ = self.act(params, hidden, obs, none, mask, jnp.ones((b,), bool), key, greedy)
        return actions

    def check_action_probabilities(self) -> None:
        """Refuse :meth:`action_probabilities` where an agent's probabilities are not a row of its own."""
        if self.centralised or self.head.continuous:
            raise LearnerConfigError(
                f"action_probs needs a decentralised categorical actor, not actor={self.cfg.actor}"
                + (" with continuous actions" if self.head.continuous else "")
            )

    def action_probabilities(self, params, obs, mask, greedy: bool = False) -> jax.Array:
        """float32 ``[B, N, A]``: each agent's probability of each action in a batch of envs, from
        a zero hidden state; all of it on the actor's mode with ``greedy``."""
        b = obs.shape[0]
        hidden = self.actor_net.initial_hidden((b, self.n))
        none, starts = jnp.zeros((b, 0), jnp.float32), jnp.ones((b,), bool)
        _, _, _, logp = self.act(params, hidden, obs, none, mask, starts, jax.random.key(0), greedy)
        if greedy:
            return jax.nn.one_hot(self.head.mode(logp), logp.shape[-1], dtype=jnp.float32)
        return jnp.exp(logp)

    def values(self, params, hidden, critic_in, resets, value_norm: ValueNorm):
        h, out = self._apply(self.critic_net, params["critic"], hidden, critic_in[None], resets[None])
        raw = out[0, ..., 0]
        if self.cfg.value_norm:
            mean, std = value_norm.stats()
            return h, raw, raw * std + mean
        return h, raw, raw

    # ------------------------------------------------------------------ one update
    def rollout(self, state: PPOState, env_params: Any) -> tuple[PPOState, PPOBatch, dict]:
        c = self.cfg

        def step(carry: PPOState, key):
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
            batch = PPOBatch(
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
                match, batch, stats = self.match_step(
                    carry.match, carry.pool, ts2, done, batch, stats, k_draw
                )
                carry = carry.replace(match=match)
            return carry, (batch, stats)

        key, k_roll = jax.random.split(state.key)
        hidden0 = state.hidden
        state, (batch, stats) = jax.lax.scan(step, state, jax.random.split(k_roll, c.num_steps))
        stats = jax.tree.map(lambda x: x.sum(0), stats)
        return state.replace(key=key), batch, {"hidden0": hidden0, **stats}

    def evaluation_rollout(self, state: PPOState, env_params: Any) -> tuple[PPOState, PPOBatch, dict]:
        """The final evaluation's rollout: PPO plays its stochastic policy, as in training."""
        return self.rollout(state, env_params)

    def loss(
        self,
        params,
        mb: PPOBatch,
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
            adv = normalized(adv, w_pg)
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
            weighted_mean(pg, w_pg),
            weighted_mean(vl, w_v),
            weighted_mean(ent, w_pg),
        )
        total = pg_loss + c.vf_coef * v_loss - ent_coef * entropy
        metrics = {
            "policy_loss": pg_loss,
            "value_loss": v_loss,
            "entropy": entropy,
            "approx_kl": weighted_mean(kl, w_pg),
            "clip_frac": weighted_mean((jnp.abs(ratio - 1) > clip_eps).astype(jnp.float32), w_pg),
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

    def entropy_coef(self, update: jax.Array, start: Any = None) -> jax.Array:
        """The entropy bonus's coefficient at update ``update`` (0-based): ``ent_coef`` (or
        ``start``, a swept row's), or linearly from it to ``ent_coef_end`` over the run when that is >= 0."""
        c = self.cfg
        return linear_coef(update, c.ent_coef if start is None else start, c.ent_coef_end, c.num_updates)

    def optimise(
        self, state: PPOState, batch, hidden0, adv, targets, agent_w, set_mask, key, normalize=True
    ):
        """Epochs x minibatches of gradient steps on the parameter sets in ``set_mask``; ``agent_w`` weights units."""
        c = self.cfg
        clip = self.knob(state, "clip_eps")
        clip_eps = clip / self.n if c.clip_scale_by_agents else clip
        mb_size = c.num_envs // c.num_minibatches
        ent_coef = self.entropy_coef(state.update, self.knob(state, "ent_coef"))
        grad_fn = jax.value_and_grad(
            functools.partial(self.loss, normalize=normalize, ent_coef=ent_coef), has_aux=True
        )
        lr = self.knob(state, "lr") if "lr" in c.sweep else None

        def minibatch(carry, idx):
            params, opt_state = carry
            take_t = lambda x: x[:, idx]  # time-major: envs on axis 1
            mb = jax.tree.map(take_t, batch)
            h0 = jax.tree.map(lambda x: x[idx], hidden0)
            (_, metrics), grads = grad_fn(
                params, mb, h0, take_t(adv), take_t(targets), agent_w, state.betas, state.value_norm, clip_eps
            )
            updates, new_opt = jax.vmap(self.tx.update)(grads, opt_state, params)
            if lr is not None:
                updates = jax.tree.map(lambda u: u * lr, updates)
            new_params = optax.apply_updates(params, updates)
            if set_mask is None:  # every role updates
                params, opt_state = new_params, new_opt
            else:
                keep = lambda new, old: jnp.where(set_mask.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)
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

    def unit_ratio_and_kl(self, params, batch: PPOBatch, hidden0):
        a_in, _ = self.inputs(batch.obs, batch.gstate)
        _, out = self._apply(self.actor_net, params["actor"], hidden0["actor"], a_in, batch.resets)
        logp, old, kl, _ = self.unit_terms(
            self.distribution(out, batch.mask), batch.old_logp, batch.old_table, batch.action, batch.acting
        )
        return jnp.exp(logp - old), kl

    def advantages(self, state: PPOState, batch: PPOBatch, env_params: Any) -> tuple[jax.Array, jax.Array]:
        """GAE advantages and value targets of a rollout ``batch``, ``state`` being the learner's
        state after it (its critic values the observation after the last step)."""
        gstate = self._global_state(state.env_state, env_params)
        _, c_in = self.inputs(state.timestep.obs, gstate, state.timestep.acting)
        _, _, last_v = self.values(state.params, state.hidden["critic"], c_in, state.resets, state.value_norm)
        return gae(
            batch.reward,
            batch.value,
            batch.done,
            last_v,
            self.knob(state, "gamma"),
            self.knob(state, "gae_lambda"),
            batch.truncated,
            batch.final_value,
        )

    def update(self, state: PPOState, env_params: Any = None) -> tuple[PPOState, dict]:
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
        if self.matched:
            state, sp_metrics = self.record_rollout(state, roll)
        adv, targets = self.advantages(state, batch, env_params)
        if c.value_norm:
            vn_w = batch.seat_w if self.matched else jnp.ones_like(targets)
            state = state.replace(value_norm=state.value_norm.update(targets, vn_w, c.value_norm_beta))
        key, k_opt, k_order = jax.random.split(state.key, 3)
        state = state.replace(key=key)
        if c.update_order == "sequential":
            state, metrics = sequential_update(self, state, batch, hidden0, adv, targets, k_opt, k_order)
        else:
            ones = jnp.ones((self.num_units,))
            state, metrics = self.optimise(state, batch, hidden0, adv, targets, ones, None, k_opt)
        if c.objective == "dpo":
            state, dpo_metrics = adapt_penalties(self, state, batch, hidden0)
            metrics = {**metrics, **dpo_metrics}
        state = state.replace(update=state.update + 1)
        if c.selfplay != "off":
            state = self._after_update(state, env_params)
        return state, {**roll, **metrics, **sp_metrics, **anneal}

    def run(self, state: PPOState, num_updates: int, env_params: Any = None) -> tuple[PPOState, dict]:
        """``num_updates`` updates by ``lax.scan``; metrics stacked ``[num_updates, ...]``."""
        return jax.lax.scan(lambda s, _: self.update(s, env_params), state, None, length=num_updates)


def make_ppo_learner(
    env: MultiAgentEnv, cfg: PPOConfig, param_sets: np.ndarray | None = None, partner_actor: Any = None
) -> PPOLearner:
    """Check that ``cfg`` fits ``env`` and build the :class:`PPOLearner` (before anything compiles);
    ``partner_actor``: population play's loaded partners (:attr:`PPOLearner.partner_actor`).
    :func:`alem.algos.make_learner` builds any registered learner by name or config."""
    check_fits(env, cfg)
    param_sets = resolve_param_sets(env, cfg) if param_sets is None else np.asarray(param_sets, np.int32)
    check_param_sets(env, cfg, param_sets)
    wrapped = EpisodeStats(env)
    batch = BatchedAutoReset(wrapped, cfg.num_envs, cfg.resets_per_step or None)
    num_param_sets = int(param_sets.max()) + 1
    return PPOLearner(wrapped, cfg, param_sets, num_param_sets, batch, partner_actor)


#: Deprecated aliases of :class:`PPOLearner` and :func:`make_ppo_learner`, kept for one release.
Learner = PPOLearner
make_learner = make_ppo_learner
