"""SePS role discovery (Christianos et al. 2021): which agents should share parameters.

Before training, a random policy collects transitions. A small VAE maps each
agent's id to an embedding ``z_i`` and decodes ``(o_t, a_t, z_i)`` into the
agent's next observation and reward; agents that behave alike (same dynamics
and rewards for the same observation and action) get nearby embeddings.
k-means over the mean embeddings gives ``seps_roles`` clusters, one parameter
set each. Deterministic for a given key.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from alem.core import MultiAgentEnv

__all__ = ["discover_roles", "kmeans"]

LATENT = 4


class _VAE(nn.Module):
    num_agents: int
    out_dim: int

    @nn.compact
    def __call__(self, agent, obs, action_1h, key):
        stats = nn.Embed(self.num_agents, 2 * LATENT)(agent)
        mu, log_var = stats[..., :LATENT], stats[..., LATENT:]
        z = mu + jnp.exp(0.5 * log_var) * jax.random.normal(key, mu.shape)
        h = jnp.concatenate([obs, action_1h, z], -1)
        h = nn.relu(nn.Dense(64)(h))
        h = nn.relu(nn.Dense(64)(h))
        return nn.Dense(self.out_dim)(h), mu, log_var


def kmeans(points: np.ndarray, k: int, iters: int = 50) -> np.ndarray:
    """Cluster labels, farthest-point initialisation (deterministic), relabelled by first appearance."""
    points = np.asarray(points, np.float64)
    centres = [points[0]]
    for _ in range(1, k):
        d = np.min([((points - c) ** 2).sum(-1) for c in centres], axis=0)
        centres.append(points[int(np.argmax(d))])
    centres = np.stack(centres)
    for _ in range(iters):
        labels = np.argmin(((points[:, None] - centres[None]) ** 2).sum(-1), axis=1)
        centres = np.stack(
            [points[labels == j].mean(0) if (labels == j).any() else centres[j] for j in range(k)]
        )
    _, first = np.unique(labels, return_index=True)
    order = {old: new for new, old in enumerate(labels[np.sort(first)])}
    return np.array([order[x] for x in labels], np.int32)


def _collect(env: MultiAgentEnv, key: jax.Array, num_envs: int, num_steps: int):
    from alem.rollout import random_actions
    from alem.wrappers import BatchedAutoReset

    batch = BatchedAutoReset(env, num_envs)
    params = env.default_params
    k0, k1 = jax.random.split(key)
    state, ts = batch.reset(k0, params)

    def step(carry, k):
        state, ts = carry
        ka, ks = jax.random.split(k)
        act = random_actions(env, ka, ts)
        state, ts2 = batch.step(ks, state, act, params)
        return (state, ts2), (ts.obs, act, ts2.info["final_obs"], ts2.reward)

    _, data = jax.lax.scan(step, (state, ts), jax.random.split(k1, num_steps))
    return data  # obs [T, E, N, ...], act [T, E, N], next [T, E, N, ...], reward [T, E, N]


def discover_roles(env: MultiAgentEnv, cfg, key: jax.Array) -> np.ndarray:
    """Role index per agent from a SePS embedding of each agent's transitions (see module docstring)."""
    n = env.num_agents
    k = min(cfg.seps_roles, n)
    num_envs = 16
    obs, act, nxt, rew = _collect(env, key, num_envs, max(cfg.seps_steps // num_envs, 1))
    flat = lambda x: x.reshape(-1, n, int(np.prod(x.shape[3:])) if x.ndim > 3 else 1).astype(jnp.float32)
    obs, nxt, rew = flat(obs), flat(nxt), rew.reshape(-1, n, 1)
    # The action as the decoder sees it: one-hot when discrete, the vector itself when continuous.
    if env.continuous_actions:
        act1h = act.reshape(-1, n, int(np.prod(act.shape[3:]))).astype(jnp.float32)
    else:
        act1h = jax.nn.one_hot(act.reshape(-1, n), env.num_actions)
    target = jnp.concatenate([nxt, rew], -1)
    agents = jnp.broadcast_to(jnp.arange(n), obs.shape[:2])
    model = _VAE(n, target.shape[-1])
    k_init, k_train = jax.random.split(jax.random.fold_in(key, 1))
    params = model.init(k_init, agents[:1], obs[:1], act1h[:1], k_init)
    tx = optax.adam(3e-3)

    def loss(p, k):
        pred, mu, log_var = model.apply(p, agents, obs, act1h, k)
        recon = jnp.mean(jnp.square(pred - target))
        kl = -0.5 * jnp.mean(1 + log_var - mu**2 - jnp.exp(log_var))
        return recon + 1e-3 * kl

    def step(carry, k):
        p, o = carry
        g = jax.grad(loss)(p, k)
        u, o = tx.update(g, o, p)
        return (optax.apply_updates(p, u), o), None

    (params, _), _ = jax.jit(lambda c, ks: jax.lax.scan(step, c, ks))(
        (params, tx.init(params)), jax.random.split(k_train, cfg.seps_epochs)
    )
    emb = np.asarray(params["params"]["Embed_0"]["embedding"])[:, :LATENT]
    return kmeans(emb, k)
