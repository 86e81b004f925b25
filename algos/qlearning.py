"""The value-based core: PQN, IQL, VDN and QMIX as configurations of one Q-learner.

Like the PPO core (:mod:`alem.algos.ppo`), a :class:`QLearner` is built once from an env and a
:class:`~alem.algos.qconfig.QConfig`; ``init(key)`` and ``update(state)`` are pure, so a run is
``lax.scan`` over updates and seeds are one ``vmap``, through the same training loop
(:func:`alem.training.train`: chunks, checkpoints, resume, metrics, the final evaluation).

One update:

1. **rollout**: ``num_steps`` steps of ``num_envs`` envs; every agent acts epsilon-greedily on
   its Q-values over its legal actions (masked), epsilon moved linearly from ``epsilon_start`` to
   ``epsilon_end`` over ``epsilon_fraction`` of the run's env steps;
2. **learning**, one of two kinds:

   - *PQN* (``replay=False``): Peng's Q(lambda) returns of the rollout under the current network
     (:func:`~alem.algos.td.q_lambda_returns`), then epochs x minibatches of whole env
     trajectories regressing Q(s, a) on them. No replay buffer, no target network; the
     network's LayerNorm keeps it stable.
   - *replay* (``replay=True``): the rollout's steps go into a flashbax trajectory buffer (one
     row per env); after ``learning_starts`` env steps per env, ``train_steps`` gradient steps on
     uniform samples of ``batch_size`` windows of ``sequence_length`` consecutive steps (2: one
     transition, the feed-forward default; a GRU replays longer windows from a zero hidden state
     after ``burn_in`` warm-up steps). Targets come from a target network (double Q: the online
     network picks the next action, the target network values it), one-step or Q(lambda) over
     the window (``q_lambda``); the target network follows the online one every
     ``target_every`` updates by ``tau`` (1: a hard copy).

Values: ``mixer=none`` learns one Q per agent on its own reward (IQL, PQN); ``vdn`` learns
``Q_tot = sum_i Q_i`` and ``qmix`` a monotonic mixture conditioned on ``env.global_state`` (see
:mod:`alem.algos.mixers`), both on the team reward (the mean of the agents' rewards), so both
need an env whose agents share their goal (``env.cooperative``).

Turn-based envs: an agent's loss only counts the steps where it acts, and its return passes
through the steps where it waits (nothing of its own to bootstrap from there) to its next turn.
A replay learner's window must therefore hold an agent's next turn (``sequence_length >=
num_agents + 1``); a step whose next turn falls outside the window does not train.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import flashbax as fbx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from alem import struct
from alem.algos.config import LearnerConfigError
from alem.algos.decision_units import per_agent_obs, with_agent_id
from alem.algos.mixers import QMixer, vdn
from alem.algos.networks import Network, apply_per_param_set
from alem.algos.qconfig import QConfig
from alem.algos.td import epsilon_greedy, linear_epsilon, masked_argmax, masked_max, polyak, q_lambda_returns
from alem.core import MultiAgentEnv
from alem.metrics import episode_totals
from alem.wrappers import BatchedAutoReset, EpisodeStats

__all__ = ["QLearner", "QState", "make_q_learner"]


@struct.dataclass
class QState:
    params: Any  # {"q": [K, ...], "mixer": ...}
    target: Any  # the target network (replay learners; PQN: the same structure, unused)
    opt_state: Any
    env_state: Any  # batched [E]
    timestep: Any  # batched [E]
    hidden: jax.Array  # [E, N, H]
    resets: jax.Array  # bool [E]
    buffer: Any  # flashbax state (replay learners), else None
    key: jax.Array
    update: jax.Array  # int32 [] updates done

    batched_fields: ClassVar[tuple[str, ...]] = ("env_state", "timestep", "hidden", "resets")


@struct.dataclass
class Steps:
    """A rollout's steps, time-major ``[T, E, ...]`` (a replay learner's buffer items: ``[E, ...]``)."""

    obs: jax.Array
    gstate: jax.Array
    mask: jax.Array
    acting: jax.Array
    action: jax.Array
    reward: jax.Array  # [.., N] after the action
    done: jax.Array  # [..] after the action
    resets: jax.Array  # [..] the obs starts an episode
    max_q: jax.Array  # [.., N] the acting network's largest legal Q of the obs (PQN's bootstrap values)


@dataclasses.dataclass(frozen=True, eq=False)
class QLearner:
    """A compiled-once value-based learner for one env and one config (see the module docstring)."""

    env: MultiAgentEnv  # EpisodeStats(raw env)
    cfg: QConfig
    param_sets: np.ndarray  # parameter set per agent [N]
    num_param_sets: int
    batch: BatchedAutoReset

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def n(self) -> int:
        return self.env.num_agents

    @functools.cached_property
    def q_net(self) -> Network:
        c = self.cfg
        return Network(self.env.num_actions, c.hidden, c.activation, c.recurrent, layer_norm=c.layer_norm)

    @functools.cached_property
    def mixer(self) -> QMixer | None:
        return (
            QMixer(self.cfg.mixer_embed, self.cfg.mixer_hyper_hidden, self.cfg.mixer_init_scale)
            if self.cfg.mixer == "qmix"
            else None
        )

    @functools.cached_property
    def buffer(self) -> Any:
        c = self.cfg
        # One row per env, time along the second axis; a sample is batch_size windows of
        # sequence_length consecutive steps of one env, uniform over every window that lies in
        # written steps (never across the write head). sequence_length=2: one-step transitions,
        # exactly flashbax's flat buffer.
        return fbx.make_trajectory_buffer(
            add_batch_size=c.num_envs,
            sample_batch_size=c.batch_size,
            sample_sequence_length=c.sequence_length,
            period=1,
            min_length_time_axis=c.sequence_length,
            max_length_time_axis=c.buffer_size,
        )

    # ------------------------------------------------------------------ inputs and values
    def inputs(self, obs: jax.Array) -> jax.Array:
        """``[..., N, D]`` network inputs from obs ``[..., N, ...]`` (plus a one-hot agent id)."""
        flat = per_agent_obs(self.env, obs)
        return with_agent_id(flat) if self.cfg.agent_id else flat

    def q_values(self, params, hidden, obs, resets):
        """``hidden [B, N, H]``, obs ``[T, B, N, ...]``, ``resets [T, B]`` -> hidden, Q ``[T, B, N, A]``."""
        return apply_per_param_set(
            self.q_net, params["q"], hidden, self.inputs(obs), resets, self.param_sets, self.num_param_sets
        )

    def _global_state(self, env_state, env_params):
        if self.cfg.mixer != "qmix":
            return jnp.zeros((self.cfg.num_envs, 0), jnp.float32)
        return jax.vmap(self.env.global_state, in_axes=(0, None))(env_state, env_params)

    def team_value(self, params, q_chosen, acting, gstate):
        """The value the loss regresses: per agent (``[..., N]``) or the team's (``[...]``)."""
        q_chosen = q_chosen * acting
        if self.cfg.mixer == "vdn":
            return vdn(q_chosen)
        if self.cfg.mixer == "qmix":
            return self.mixer.apply(params["mixer"], q_chosen, gstate)
        return q_chosen

    def team_reward(self, reward):
        if self.cfg.mixer == "none":
            return reward
        return reward.sum(-1) if self.cfg.team_reward == "sum" else reward.mean(-1)

    def epsilon(self, update: jax.Array, t: jax.Array | int = 0) -> jax.Array:
        """Epsilon at step ``t`` of update ``update``, on the schedule over env steps per seed."""
        c = self.cfg
        steps = (update * c.num_steps + t) * c.num_envs
        return linear_epsilon(steps, c.epsilon_start, c.epsilon_end, int(c.epsilon_fraction * c.total_steps))

    # ------------------------------------------------------------------ init
    @property
    def tx(self) -> optax.GradientTransformation:
        c = self.cfg
        steps = c.num_updates * (c.train_steps if c.replay else c.update_epochs * c.num_minibatches)
        lr = optax.linear_schedule(c.lr, 0.0, steps) if c.anneal_lr else c.lr
        return optax.chain(optax.clip_by_global_norm(c.max_grad_norm), optax.radam(lr))

    def init(self, key: jax.Array, env_params: Any = None) -> QState:
        c = self.cfg
        env_params = self.env.default_params if env_params is None else env_params
        k_env, k_q, k_mix, key = jax.random.split(key, 4)
        env_state, ts = self.batch.reset(k_env, env_params)
        x = self.inputs(ts.obs[0])[None, None, 0]
        h = self.q_net.initial_hidden((1,))
        one = jnp.ones((1, 1), bool)
        params = {
            "q": jax.vmap(lambda k: self.q_net.init(k, h, x, one))(jax.random.split(k_q, self.num_param_sets))
        }
        gstate = self._global_state(env_state, env_params)
        if self.mixer is not None:
            params["mixer"] = self.mixer.init(k_mix, jnp.zeros((self.n,)), gstate[0])
        buffer = None
        if c.replay:
            buffer = self.buffer.init(
                jax.tree.map(lambda a: a[0], self._step_item(ts, gstate, ts.reward, ts.done))
            )
        return QState(
            params=params,
            target=params,
            opt_state=self.tx.init(params),
            env_state=env_state,
            timestep=ts,
            hidden=self.q_net.initial_hidden((c.num_envs, self.n)),
            resets=jnp.ones((c.num_envs,), bool),
            buffer=buffer,
            key=key,
            update=jnp.int32(0),
        )

    def _step_item(self, ts, gstate, reward, done, action=None, resets=None, max_q=None):
        e = ts.obs.shape[0]
        return Steps(
            obs=ts.obs,
            gstate=gstate,
            mask=ts.action_mask,
            acting=ts.acting,
            action=jnp.zeros((e, self.n), jnp.int32) if action is None else action.astype(jnp.int32),
            reward=reward.astype(jnp.float32),
            done=done,
            resets=jnp.ones((e,), bool) if resets is None else resets,
            max_q=jnp.zeros((e, self.n), jnp.float32) if max_q is None else max_q,
        )

    # ------------------------------------------------------------------ acting
    def _rollout(self, state: QState, env_params: Any, epsilon_at) -> tuple[QState, Steps, dict]:
        c = self.cfg

        def step(carry: QState, xs):
            t, key = xs
            k_act, k_env = jax.random.split(key)
            ts = carry.timestep
            gstate = self._global_state(carry.env_state, env_params)
            h, q = self.q_values(carry.params, carry.hidden, ts.obs[None], carry.resets[None])
            action = epsilon_greedy(k_act, q[0], ts.action_mask, epsilon_at(carry.update, t))
            env_state, ts2 = self.batch.step(k_env, carry.env_state, action, env_params)
            best = masked_max(q[0], ts.action_mask)
            item = self._step_item(ts, gstate, ts2.reward, ts2.done, action, carry.resets, best)
            carry = carry.replace(env_state=env_state, timestep=ts2, hidden=h, resets=ts2.done)
            return carry, (item, episode_totals(ts2.info))

        key, k_roll = jax.random.split(state.key)
        hidden0 = state.hidden
        xs = (jnp.arange(c.num_steps), jax.random.split(k_roll, c.num_steps))
        state, (steps, stats) = jax.lax.scan(step, state, xs)
        return state.replace(key=key), steps, {"hidden0": hidden0, **jax.tree.map(lambda x: x.sum(0), stats)}

    def rollout(self, state: QState, env_params: Any) -> tuple[QState, Steps, dict]:
        """``num_steps`` epsilon-greedy steps on the training schedule."""
        return self._rollout(state, env_params, self.epsilon)

    def evaluation_rollout(self, state: QState, env_params: Any) -> tuple[QState, Steps, dict]:
        """The final evaluation's rollout: epsilon ``eval_epsilon`` (0: greedy)."""
        return self._rollout(state, env_params, lambda u, t: jnp.float32(self.cfg.eval_epsilon))

    def act(self, params, hidden, obs, mask, resets, key, epsilon: float = 0.0):
        """Actions ``[B, N]`` for a batch of envs (greedy by default): ``(hidden, actions)``."""
        h, q = self.q_values(params, hidden, obs[None], resets[None])
        return h, epsilon_greedy(key, q[0], mask, jnp.float32(epsilon))

    # ------------------------------------------------------------------ playing a trained run
    #: A trained value-based run plays its greedy legal action (``greedy`` below is ignored).
    always_greedy: ClassVar[bool] = True

    def play_actions(self, params, obs, mask, key, greedy: bool = True) -> jax.Array:
        """int ``[B, N]``: the greedy legal actions for a batch of envs from a zero hidden state."""
        b = obs.shape[0]
        hidden = self.q_net.initial_hidden((b, self.n))
        return self.act(params, hidden, obs, mask, jnp.ones((b,), bool), key)[1]

    def check_action_probabilities(self) -> None:
        """Every value-based learner has them (see :meth:`action_probabilities`)."""

    def action_probabilities(self, params, obs, mask, greedy: bool = True) -> jax.Array:
        """float32 ``[B, N, A]``: all of each agent's probability on its best legal action."""
        b = obs.shape[0]
        hidden = self.q_net.initial_hidden((b, self.n))
        _, q = self.q_values(params, hidden, obs[None], jnp.ones((1, b), bool))
        return jax.nn.one_hot(masked_argmax(q[0], mask), mask.shape[-1], dtype=jnp.float32)

    # ------------------------------------------------------------------ PQN
    def pqn_targets(self, params, steps: Steps, last_hidden, last_ts, last_resets) -> jax.Array:
        """Q(lambda) returns ``[T, E(, N)]`` of a rollout under ``params`` (the network that acted).

        The bootstrap values of steps ``1 .. T-1`` are the rollout's own (``steps.max_q``); only
        the state after the rollout needs a forward pass (from ``last_hidden``)."""
        c = self.cfg
        _, q_last = self.q_values(params, last_hidden, last_ts.obs[None], last_resets[None])
        last_max = masked_max(q_last[0], last_ts.action_mask)
        next_max = jnp.concatenate([steps.max_q[1:], last_max[None]], 0)  # [T, E, N]
        acting = jnp.concatenate([steps.acting, last_ts.acting[None]], 0)[1:]
        if c.mixer == "none":
            done = jnp.broadcast_to(steps.done[..., None], steps.reward.shape)
            return q_lambda_returns(steps.reward, done, next_max, acting, c.gamma, c.q_lambda)
        next_team = (next_max * acting).sum(-1)
        return q_lambda_returns(
            self.team_reward(steps.reward), steps.done, next_team, acting.any(-1), c.gamma, c.q_lambda
        )

    def pqn_loss(self, params, steps: Steps, hidden0, targets):
        _, q = self.q_values(params, hidden0, steps.obs, steps.resets)
        chosen = jnp.take_along_axis(q, steps.action[..., None], -1)[..., 0]
        acting = steps.acting.astype(jnp.float32)
        value = self.team_value(params, chosen, acting, steps.gstate)
        w = acting if self.cfg.mixer == "none" else acting.max(-1)
        err = 0.5 * jnp.square(value - jax.lax.stop_gradient(targets))
        loss = (err * w).sum() / jnp.maximum(w.sum(), 1.0)
        return loss, {"q_loss": loss, "q_mean": (value * w).sum() / jnp.maximum(w.sum(), 1.0)}

    def _pqn_update(self, state: QState, steps: Steps, hidden0) -> tuple[QState, dict]:
        c = self.cfg
        targets = self.pqn_targets(state.params, steps, state.hidden, state.timestep, state.resets)
        grad_fn = jax.value_and_grad(self.pqn_loss, has_aux=True)
        mb_size = c.num_envs // c.num_minibatches

        def minibatch(carry, idx):
            params, opt_state = carry
            take = lambda x: x[:, idx]
            (_, metrics), grads = grad_fn(params, jax.tree.map(take, steps), hidden0[idx], take(targets))
            updates, opt_state = self.tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), metrics

        def epoch(carry, k):
            perm = jax.random.permutation(k, c.num_envs).reshape(c.num_minibatches, mb_size)
            return jax.lax.scan(minibatch, carry, perm)

        key, k = jax.random.split(state.key)
        (params, opt_state), metrics = jax.lax.scan(
            epoch, (state.params, state.opt_state), jax.random.split(k, c.update_epochs)
        )
        return state.replace(params=params, opt_state=opt_state, key=key), jax.tree.map(jnp.mean, metrics)

    # ------------------------------------------------------------------ replay
    def td_loss(self, params, target, seq: Steps):
        """TD loss of sampled windows ``seq`` (time-major ``[L, B, ...]``).

        Both networks run over the window from a zero hidden state (GRU: the first ``burn_in``
        steps only warm it up). Targets are Q(lambda) returns over the window, bootstrapped from
        the target network (double Q: the online network picks the action); ``q_lambda=0`` gives
        one-step targets. A step trains where its unit acts, after the burn-in, and where its
        target is resolved inside the window: the episode ends or the unit acts again (in
        turn-based games, the steps where it waits pass its rewards through).
        """
        c = self.cfg
        length, b = seq.done.shape
        resets = seq.resets.at[0].set(True)
        h = self.q_net.initial_hidden((b, self.n))
        _, q = self.q_values(params, h, seq.obs, resets)
        _, q_target = self.q_values(target, h, seq.obs, resets)
        if c.double_q:
            pick = masked_argmax(jax.lax.stop_gradient(q), seq.mask)
            best = jnp.take_along_axis(q_target, pick[..., None], -1)[..., 0]
            best = jnp.where(seq.mask.any(-1), best, 0.0)
        else:
            best = masked_max(q_target, seq.mask)
        chosen = jnp.take_along_axis(q, seq.action[..., None], -1)[..., 0]
        acting = seq.acting.astype(jnp.float32)
        value = self.team_value(params, chosen, acting, seq.gstate)[:-1]
        next_value = self.team_value(target, best, acting, seq.gstate)[1:]
        done = seq.done[:-1]
        acts = seq.acting if c.mixer == "none" else seq.acting.any(-1)
        if c.mixer == "none":
            done = jnp.broadcast_to(done[..., None], acts[:-1].shape)
        y = q_lambda_returns(
            self.team_reward(seq.reward[:-1]), done, next_value, acts[1:], c.gamma, c.q_lambda
        )
        w = (
            acts[:-1]
            & resolved(done, acts[1:])
            & (jnp.arange(length - 1) >= c.burn_in).reshape((-1,) + (1,) * (done.ndim - 1))
        )
        w = w.astype(jnp.float32)
        err = 0.5 * jnp.square(value - jax.lax.stop_gradient(y))
        loss = (err * w).sum() / jnp.maximum(w.sum(), 1.0)
        return loss, {"q_loss": loss, "q_mean": (value * w).sum() / jnp.maximum(w.sum(), 1.0)}

    def _replay_update(self, state: QState, steps: Steps) -> tuple[QState, dict]:
        c = self.cfg
        # flashbax adds sequences as [E, T, ...]
        buffer = self.buffer.add(state.buffer, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), steps))
        grad_fn = jax.value_and_grad(self.td_loss, has_aux=True)

        def train_step(carry, k):
            params, opt_state = carry
            seq = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), self.buffer.sample(buffer, k).experience)
            (_, metrics), grads = grad_fn(params, state.target, seq)
            updates, opt_state = self.tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), metrics

        def learn(carry, k):
            return jax.lax.scan(train_step, carry, jax.random.split(k, c.train_steps))

        def wait(carry, k):
            zero = jnp.zeros((c.train_steps,), jnp.float32)
            return carry, {"q_loss": zero, "q_mean": zero}

        key, k = jax.random.split(state.key)
        steps_per_env = (state.update + 1) * c.num_steps
        ready = steps_per_env >= max(c.learning_starts, c.sequence_length)
        (params, opt_state), metrics = jax.lax.cond(ready, learn, wait, (state.params, state.opt_state), k)
        sync = (state.update + 1) % c.target_every == 0
        target = jax.tree.map(
            lambda t, o: jnp.where(sync, o, t), state.target, polyak(state.target, params, c.tau)
        )
        state = state.replace(params=params, opt_state=opt_state, target=target, buffer=buffer, key=key)
        return state, {**jax.tree.map(jnp.mean, metrics), "learning": ready.astype(jnp.float32)}

    # ------------------------------------------------------------------ update
    def update(self, state: QState, env_params: Any = None) -> tuple[QState, dict]:
        """One rollout and its learning; pure and jittable."""
        env_params = self.env.default_params if env_params is None else env_params
        eps = self.epsilon(state.update)
        state, steps, roll = self.rollout(state, env_params)
        hidden0 = roll.pop("hidden0")
        if self.cfg.replay:
            state, metrics = self._replay_update(state, steps)
        else:
            state, metrics = self._pqn_update(state, steps, hidden0)
        state = state.replace(update=state.update + 1)
        return state, {**roll, **metrics, "epsilon": eps}

    def run(self, state: QState, num_updates: int, env_params: Any = None) -> tuple[QState, dict]:
        """``num_updates`` updates by ``lax.scan``; metrics stacked ``[num_updates, ...]``."""
        return jax.lax.scan(lambda s, _: self.update(s, env_params), state, None, length=num_updates)


def resolved(done: jax.Array, next_acts: jax.Array) -> jax.Array:
    """``[T, ...]``: whether step ``t``'s target reaches, inside the window, the episode's end or a
    step where the unit acts again (``next_acts[t]``: it acts at ``t+1``). Else its return would
    bootstrap from a state where it has no value of its own."""

    def back(later, xs):
        d, a = xs
        here = d | a | later
        return here, here

    _, out = jax.lax.scan(back, jnp.zeros_like(done[-1]), (done, next_acts), reverse=True)
    return out


def make_q_learner(env: MultiAgentEnv, cfg: QConfig) -> QLearner:
    """Check that ``cfg`` fits ``env`` and build the :class:`QLearner` (before anything compiles)."""
    if env.continuous_actions:
        raise LearnerConfigError(
            f"{env.id} has continuous (box) actions; the value-based learners ({cfg.name}) need discrete "
            "ones: use a PPO learner (ippo, mappo, ...) or the env's discrete variant"
        )
    if cfg.mixer != "none" and not getattr(env, "cooperative", False):
        why = (
            "it is zero-sum"
            if env.zero_sum
            else "its agents do not share one goal (env.cooperative is False)"
        )
        raise LearnerConfigError(
            f"{cfg.name} learns a team value from a shared reward; {env.id} does not fit: {why}; "
            "use an independent learner (pqn, iql)"
        )
    if cfg.sequence_length == 0:  # derived: the shortest window that holds an agent's next turn
        derived = env.num_agents + 1 if cfg.replay and env.turn_based else 2
        cfg = dataclasses.replace(cfg, sequence_length=derived)
    if cfg.replay and env.turn_based and cfg.sequence_length < env.num_agents + 1:
        raise LearnerConfigError(
            f"{cfg.name} on the turn-based {env.id}: an agent's target needs its next turn inside the "
            f"sampled window, so algo.sequence_length must be at least num_agents + 1 = "
            f"{env.num_agents + 1} (got {cfg.sequence_length})"
        )
    n = env.num_agents
    param_sets = np.zeros(n, np.int32) if cfg.sharing == "shared" else np.arange(n, dtype=np.int32)
    wrapped = EpisodeStats(env)
    batch = BatchedAutoReset(wrapped, cfg.num_envs)
    return QLearner(env=wrapped, cfg=cfg, param_sets=param_sets, num_param_sets=int(param_sets.max()) + 1, batch=batch)
