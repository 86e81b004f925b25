import jax
import jax.numpy as jnp
import pytest

import alem
from alem.wrappers import DictView


def test_jaxmarl_style_reset_and_step():
    env = DictView(alem.make("iterated_stag_hunt-v0", num_rounds=2))
    obs, state = env.reset(jax.random.key(0))
    assert set(obs) == {"player_0", "player_1"}
    acts = {"player_0": jnp.int32(0), "player_1": jnp.int32(1)}
    obs, state, rew, dones, info = env.step(jax.random.key(1), state, acts)
    assert rew == {"player_0": 0.0, "player_1": 1.0}
    assert not bool(dones["__all__"])
    obs, state, rew, dones, info = env.step(jax.random.key(2), state, acts)
    assert bool(dones["__all__"]) and bool(dones["player_0"]) and bool(info["terminated"])
    # auto-reset: round counter back to 0, final obs kept
    assert int(state.round) == 0 and info["final_obs"].shape == (2, 6)
    masks = env.get_avail_actions(state)
    assert masks["player_1"].tolist() == [True, True]
    assert env.action_space("player_0").n == 2


def test_dict_view_jit_and_bad_agent_names():
    env = DictView(alem.make("prisoners_dilemma-v0"))
    _, state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    _, _, rew, _, _ = step(jax.random.key(1), state, {"player_0": 1, "player_1": 1})
    assert float(rew["player_0"]) == 1.0
    with pytest.raises(KeyError, match=r"missing \['player_1'\], unknown \['bob'\]"):
        env.step(jax.random.key(1), state, {"player_0": 1, "bob": 0})


def test_the_env_calls_of_a_jaxmarl_ippo_script_run_on_an_mpe_dict_view():
    """JaxMARL's IPPO-FF (MPE) talks to its env through: ``reset(key)`` and ``step(key, state,
    actions)`` vmapped over envs, ``env.agents`` / ``num_agents`` to batchify dicts into
    ``[N * E, ...]`` arrays, ``observation_space(agent).shape`` and ``action_space(agent).n`` to size
    the network, ``done["__all__"]`` for episode ends, and its ``LogWrapper``
    (``num_agents``, reward dicts). Those calls, written out here, run on a ``DictView``; with
    jaxmarl installed its own ``LogWrapper`` is stacked on top too."""
    import numpy as np

    env = DictView(alem.make("mpe/simple_spread-v0"))
    try:  # not a dependency of alem; CI runs the written-out calls only
        from jaxmarl.wrappers.baselines import LogWrapper

        wrapped = LogWrapper(env)
    except ImportError:
        wrapped = None
    outer = wrapped or env
    e, n = 4, env.num_agents
    obs_dim = env.observation_space(env.agents[0]).shape[0]
    n_act = env.action_space(env.agents[0]).n

    def batchify(x):
        return jnp.stack([x[a] for a in env.agents]).reshape(n * e, -1)

    def unbatchify(x):
        x = x.reshape(n, e, -1)
        return {a: x[i, :, 0] for i, a in enumerate(env.agents)}

    obs, state = jax.vmap(outer.reset)(jax.random.split(jax.random.key(0), e))
    assert batchify(obs).shape == (n * e, obs_dim)

    def step(carry, k):
        state, _ = carry
        k_act, k_env = jax.random.split(k)
        acts = jax.random.randint(k_act, (n * e, 1), 0, n_act)
        obs, state, reward, done, info = jax.vmap(outer.step)(
            jax.random.split(k_env, e), state, unbatchify(acts)
        )
        logged = info.get("returned_episode_returns", jnp.zeros((e, n)))
        return (state, obs), (batchify(reward).reshape(n, e), done["__all__"], logged)

    _, (rewards, all_done, logged) = jax.jit(
        lambda s, o: jax.lax.scan(step, (s, o), jax.random.split(jax.random.key(1), 30))
    )(state, obs)
    all_done = np.asarray(all_done)
    # simple_spread episodes are 25 steps; every env ends its first one at the 25th step
    assert all_done[24].all() and not all_done[:24].any() and not all_done[25:].any()
    returns = np.asarray(rewards[:25].sum(0)).T  # [E, N]
    assert returns.shape == (e, n) and np.all(returns < 0)
    if wrapped is not None:  # JaxMARL's own logger agrees with the summed reward dicts
        np.testing.assert_allclose(np.asarray(logged[24]), returns, rtol=1e-5)
