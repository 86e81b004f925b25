"""The gymnax adapters: FromGymnax (gymnax -> alem) and ToGymnax (alem -> gymnax).

Both directions are checked transition by transition against gymnax itself, with
the same keys and actions, so any drift in observations, rewards or in the
terminated/truncated split shows up as an inequality.
"""

from __future__ import annotations

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnax.environments import spaces as gx_spaces

import alem
from alem.errors import ActionError, EnvArgumentError
from alem.interop.gymnax import (
    GYMNAX_DRAWINGS,
    FromGymnax,
    FromGymnaxParams,
    FromGymnaxState,
    ToGymnax,
    from_gymnax_space,
    make_gymnax,
    to_gymnax_space,
)

NUM_STEPS = 300


@pytest.fixture(scope="module")
def cartpole():
    env, params = gymnax.make("CartPole-v1")
    return env, params, FromGymnax(env, params)


@pytest.fixture(scope="module")
def pendulum():
    env, params = gymnax.make("Pendulum-v1")
    return env, params, FromGymnax(env, params)


def _keys_and_actions(seed: int, n: int, num_actions: int = 2):
    k_steps, k_actions, k_reset = jax.random.split(jax.random.key(seed), 3)
    keys = jax.random.split(k_steps, n)
    actions = jax.random.randint(k_actions, (n,), 0, num_actions, dtype=jnp.int32)
    return k_reset, keys, actions


# ---------------------------------------------------------------------------- description
def test_from_gymnax_description(cartpole):
    gx, gx_params, env = cartpole
    assert env.agents == ("agent_0",) and env.num_agents == 1
    assert env.role_names == ("agent",)
    np.testing.assert_array_equal(env.agent_roles, np.zeros(1, np.int32))
    assert env.agent_roles.dtype == np.int32
    assert env.stochastic is True and env.supports_text is False and env.continuous_actions is False
    assert env.action_space(0) == alem.spaces.Discrete(2)
    assert env.action_space() == alem.spaces.MultiDiscrete([2])
    assert env.num_actions == 2
    obs_space = env.observation_space(0)
    gx_obs_space = gx.observation_space(gx_params)
    assert isinstance(obs_space, alem.spaces.Box) and obs_space.shape == (4,)
    np.testing.assert_array_equal(obs_space.low, np.asarray(gx_obs_space.low, np.float64))
    np.testing.assert_array_equal(obs_space.high, np.asarray(gx_obs_space.high, np.float64))
    assert env.observation_space().shape == (1, 4)
    assert isinstance(env.default_params, FromGymnaxParams)
    assert env.default_params.gymnax is gx_params

    state, ts = jax.jit(env.reset)(jax.random.key(0))
    assert ts.obs.shape == (1, 4) and ts.obs.dtype == jnp.float32
    assert ts.reward.shape == (1,) and ts.reward.dtype == jnp.float32
    assert ts.terminated.shape == () and ts.terminated.dtype == jnp.bool_
    assert ts.truncated.shape == () and ts.truncated.dtype == jnp.bool_
    np.testing.assert_array_equal(ts.action_mask, np.ones((1, 2), bool))
    np.testing.assert_array_equal(ts.acting, [True])
    assert bool(env.observation_space().contains(ts.obs))
    np.testing.assert_array_equal(env.global_state(state), ts.obs.reshape(-1))
    np.testing.assert_array_equal(env.observe(state, env.default_params), ts.obs)

    # info has one structure after reset and after step (the gymnax step_env info, plus alem's)
    _, ts2 = jax.jit(env.step)(jax.random.key(1), state, jnp.array([1]))
    assert jax.tree.structure(ts.info) == jax.tree.structure(ts2.info)
    assert set(ts2.info) == {"illegal_action", "discount"}
    for a, b in zip(jax.tree.leaves(ts.info), jax.tree.leaves(ts2.info), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype


def test_make_gymnax():
    env = make_gymnax("CartPole-v1")
    assert isinstance(env, FromGymnax) and env.id == "gymnax/CartPole-v1"
    assert env.default_params.gymnax == gymnax.make("CartPole-v1")[1]


def test_space_conversion_errors():
    with pytest.raises(EnvArgumentError, match="Dict"):
        from_gymnax_space(gx_spaces.Dict({"a": gx_spaces.Discrete(2)}))
    with pytest.raises(EnvArgumentError, match="MultiDiscrete"):
        to_gymnax_space(alem.spaces.MultiDiscrete([2, 3]))
    box = to_gymnax_space(alem.spaces.Box(-1.0, 2.0, (3,)))
    assert isinstance(box, gx_spaces.Box) and box.shape == (3,)
    assert from_gymnax_space(box) == alem.spaces.Box(-1.0, 2.0, (3,))


# ---------------------------------------------------------------------------- (a) side by side
def test_from_gymnax_matches_gymnax_step_by_step(cartpole):
    """alem's raw step + reset on done == gymnax's auto-resetting step, for the same keys/actions."""
    gx, gx_params, env = cartpole
    params = env.default_params
    k_reset, keys, actions = _keys_and_actions(0, NUM_STEPS)

    @jax.jit
    def run():
        gx_obs, gx_state = gx.reset(k_reset, gx_params)
        a_state, a_ts = env.reset(k_reset, params)

        def body(carry, xs):
            gx_state, a_state = carry
            key, action = xs
            obs, gx_state, reward, term, trunc, info = gx.step(key, gx_state, action, gx_params)
            # gymnax's step splits the key the same way; alem's step is raw (no auto-reset).
            k_step, k_re = jax.random.split(key)
            a_state, ts = env.step(k_step, a_state, action[None], params)
            r_state, r_ts = env.reset(k_re, params)
            done = ts.terminated | ts.truncated
            a_state = jax.tree.map(lambda r, s: jnp.where(done, r, s), r_state, a_state)
            a_obs = jnp.where(done, r_ts.obs, ts.obs)
            out = dict(
                gx_final=info["final_observation"],
                a_final=ts.obs[0],
                gx_obs=obs,
                a_obs=a_obs[0],
                gx_reward=reward,
                a_reward=ts.reward[0],
                gx_term=term,
                a_term=ts.terminated,
                gx_trunc=trunc,
                a_trunc=ts.truncated,
                gx_discount=info["discount"],
                a_discount=ts.info["discount"],
            )
            return (gx_state, a_state), out

        _, out = jax.lax.scan(body, (gx_state, a_state), (keys, actions))
        return gx_obs, a_ts.obs[0], out

    gx_obs0, a_obs0, out = jax.device_get(run())
    np.testing.assert_array_equal(a_obs0, gx_obs0)
    for name in ("final", "obs", "reward", "term", "trunc", "discount"):
        np.testing.assert_array_equal(out[f"a_{name}"], out[f"gx_{name}"], err_msg=name)
    assert out["a_reward"].dtype == np.float32
    assert out["gx_term"].sum() >= 5, "the run should cross several episode ends"


# ---------------------------------------------------------------------------- (b) truncation
def test_time_limit_is_truncation_not_termination(cartpole):
    gx, gx_params, _ = cartpole
    limit = 6
    env = FromGymnax(gx, gx_params.replace(max_steps_in_episode=limit))
    step = jax.jit(env.step)
    state, ts = env.reset(jax.random.key(3))
    flags = []
    for t in range(limit):
        # alternating pushes keep the pole up for a few steps
        state, ts = step(jax.random.key(10 + t), state, jnp.array([t % 2]))
        flags.append((bool(ts.terminated), bool(ts.truncated)))
    assert flags[:-1] == [(False, False)] * (limit - 1)
    assert flags[-1] == (False, True)
    assert float(ts.reward[0]) == 1.0

    # and a real failure is termination, not truncation
    env = cartpole[2]
    step = jax.jit(env.step)
    state, ts = env.reset(jax.random.key(3))
    for t in range(100):
        state, ts = step(jax.random.key(t), state, jnp.array([1]))  # always push right: the pole falls
        if ts.terminated:
            break
    assert bool(ts.terminated) and not bool(ts.truncated)
    assert t < 50


# ---------------------------------------------------------------------------- (c) round trip
def test_round_trip_reproduces_gymnax(cartpole):
    """ToGymnax(FromGymnax(env)).step (gymnax's auto-resetting step) == env.step, 6-tuple and all."""
    gx, gx_params, _ = cartpole
    # a short limit so the run has both terminations and truncations (and resets after both)
    gx_params = gx_params.replace(max_steps_in_episode=15)
    rt = ToGymnax(FromGymnax(gx, gx_params))
    assert isinstance(rt.action_space(), gx_spaces.Discrete) and rt.action_space().n == 2
    assert rt.num_actions == 2
    rt_obs_space, gx_obs_space = rt.observation_space(rt.default_params), gx.observation_space(gx_params)
    assert isinstance(rt_obs_space, gx_spaces.Box) and rt_obs_space.shape == gx_obs_space.shape
    np.testing.assert_array_equal(rt_obs_space.high, gx_obs_space.high)

    k_reset, keys, actions = _keys_and_actions(1, 120)

    @jax.jit
    def run():
        gx_obs, gx_state = gx.reset(k_reset, gx_params)
        rt_obs, rt_state = rt.reset(k_reset, rt.default_params)

        def body(carry, xs):
            gx_state, rt_state = carry
            key, action = xs
            gx_out = gx.step(key, gx_state, action, gx_params)
            rt_out = rt.step(key, rt_state, action, rt.default_params)
            return (gx_out[1], rt_out[1]), (
                (gx_out[0], gx_out[2], gx_out[3], gx_out[4], gx_out[5]),
                (rt_out[0], rt_out[2], rt_out[3], rt_out[4], rt_out[5]),
            )

        _, (gx_seq, rt_seq) = jax.lax.scan(body, (gx_state, rt_state), (keys, actions))
        return gx_obs, rt_obs, gx_seq, rt_seq

    gx_obs, rt_obs, gx_seq, rt_seq = jax.device_get(run())
    np.testing.assert_array_equal(rt_obs, gx_obs)
    names = ("obs", "reward", "terminated", "truncated")
    for name, g, r in zip(names, gx_seq[:4], rt_seq[:4], strict=True):
        assert r.shape == g.shape and r.dtype == g.dtype, name
        np.testing.assert_array_equal(r, g, err_msg=name)
    gx_info, rt_info = gx_seq[4], rt_seq[4]
    for name in ("terminated", "truncated", "final_observation", "discount"):
        np.testing.assert_array_equal(rt_info[name], gx_info[name], err_msg=name)
    assert gx_seq[2].any() and gx_seq[3].any(), "the run should end episodes both ways"


# ---------------------------------------------------------------------------- (d) agent count
def test_to_gymnax_rejects_multi_agent_envs():
    env = alem.make("prisoners_dilemma-v0")
    with pytest.raises(EnvArgumentError, match="num_agents=2"):
        ToGymnax(env)


# ---------------------------------------------------------------------------- (e) jit and vmap
def test_jit_and_vmap_over_four_envs(cartpole):
    gx, gx_params, env = cartpole
    n = 4
    keys = jax.random.split(jax.random.key(7), n)
    # vmap over params too: each env its own force magnitude
    forces = jnp.array([5.0, 10.0, 15.0, 20.0])
    batch_params = jax.vmap(lambda f: FromGymnaxParams(gymnax=gx_params.replace(force_mag=f)))(forces)
    reset = jax.jit(jax.vmap(env.reset))
    step = jax.jit(jax.vmap(env.step))
    state, ts = reset(keys, batch_params)
    assert ts.obs.shape == (n, 1, 4) and ts.reward.shape == (n, 1) and ts.terminated.shape == (n,)
    actions = jnp.ones((n, 1), jnp.int32)
    step_keys = jax.random.split(jax.random.key(8), n)
    state, ts = step(step_keys, state, actions, batch_params)
    assert ts.obs.shape == (n, 1, 4) and ts.action_mask.shape == (n, 1, 2) and ts.acting.shape == (n, 1)

    # each row equals gymnax's own transition with that env's params
    def gx_one(key, step_key, force):
        p = gx_params.replace(force_mag=force)
        _, g_state = gx.reset_env(key, p)
        return gx.step_env(step_key, g_state, jnp.int32(1), p)[0]

    g_obs = jax.jit(jax.vmap(gx_one))(keys, step_keys, forces)
    np.testing.assert_allclose(ts.obs[:, 0], g_obs, rtol=1e-6, atol=1e-7)
    x_dot = np.asarray(ts.obs[:, 0, 1] - jax.vmap(lambda s: s.obs[1])(reset(keys, batch_params)[0]))
    assert np.all(np.diff(x_dot) > 0), "a stronger push must accelerate the cart more"

    # the gymnax side of the adapter under jit + vmap as well
    rt = ToGymnax(env)
    obs, rt_state = jax.vmap(rt.reset, in_axes=(0, None))(keys, rt.default_params)
    obs, rt_state, reward, term, trunc, info = jax.jit(jax.vmap(rt.step, in_axes=(0, 0, 0, None)))(
        step_keys, rt_state, jnp.ones((n,), jnp.int32), rt.default_params
    )
    assert obs.shape == (n, 4) and reward.shape == (n,) and term.shape == (n,) and trunc.shape == (n,)


# ---------------------------------------------------------------------------- (f) continuous
def test_continuous_actions_round_trip(pendulum):
    gx, gx_params, env = pendulum
    assert env.continuous_actions is True
    assert env.action_space().shape == (1, 1) and env.action_space(0).shape == (1,)
    np.testing.assert_array_equal(env.action_space(0).high, [2.0])
    key = jax.random.key(5)
    state, ts = env.reset(key)
    assert ts.action_mask.shape == (1, 1) and ts.obs.shape == (1, 3)

    action = jnp.array([[0.75]], jnp.float32)
    k_step = jax.random.key(6)
    _, g_state = gx.reset_env(key, gx_params)
    g_obs, _, g_reward, g_term, _ = jax.jit(gx.step_env)(k_step, g_state, action[0], gx_params)
    state, ts = jax.jit(env.step)(k_step, state, action)
    np.testing.assert_array_equal(ts.obs[0], g_obs)
    np.testing.assert_array_equal(ts.reward[0], g_reward)
    assert bool(ts.terminated) == bool(g_term)
    assert float(state.env_state.last_u) == pytest.approx(0.75)

    with pytest.raises(ActionError, match=r"\(1, 1\)"):
        env.step(k_step, state, jnp.array([0.75]))

    # back through ToGymnax: a gymnax-shaped [1] action gives gymnax's own transition
    rt = ToGymnax(env)
    assert isinstance(rt.action_space(), gx_spaces.Box) and rt.action_space().shape == (1,)
    assert rt.num_actions == 1
    g_obs0, g_state = gx.reset(key, gx_params)
    r_obs0, r_state = rt.reset(key, rt.default_params)
    np.testing.assert_array_equal(r_obs0, g_obs0)
    g_out = gx.step(k_step, g_state, action[0], gx_params)
    r_out = rt.step(k_step, r_state, action[0], rt.default_params)
    for i in (0, 2, 3, 4):
        np.testing.assert_array_equal(r_out[i], g_out[i])


# ---------------------------------------------------------------------------- (g) pictures
def _pixels(img: np.ndarray, colour) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the pixels of ``colour``."""
    return np.nonzero((img == np.array(colour, np.uint8)).all(-1))


def test_cartpole_picture_follows_x_and_theta(cartpole):
    from gymnax.environments.classic_control.cartpole import EnvState

    _, _, env = cartpole
    pole = (202, 152, 101)

    def draw(x: float, theta: float) -> np.ndarray:
        gx_state = EnvState(x=np.float32(x), x_dot=0.0, theta=np.float32(theta), theta_dot=0.0, time=0)
        return env.render_rgb(FromGymnaxState(env_state=gx_state, obs=np.zeros(4, np.float32)))

    right, left, moved = draw(0.0, 0.2), draw(0.0, -0.2), draw(1.2, 0.2)
    assert right.shape == (200, 300, 3) and right.dtype == np.uint8
    (ry, rx), (_, lx) = _pixels(right, pole), _pixels(left, pole)
    assert len(rx) > 100 and len(lx) == len(rx)
    assert rx.mean() > 155 and lx.mean() < 145  # the pole leans the way theta says (+: towards +x)
    assert ry.min() < 90 and ry.max() < 140  # above the track (y 140)
    np.testing.assert_array_equal(left, right[:, ::-1])  # mirror images
    # x = 1.2 of the +-2.4 track: the cart and its pole move right by a quarter of the 300 px width.
    cart = [np.flatnonzero((img[145] == 0).all(-1)) for img in (right, moved)]  # a row below the track
    assert len(cart[0]) == len(cart[1]) == 30 and cart[1].mean() - cart[0].mean() == pytest.approx(75, abs=1)
    assert _pixels(moved, pole)[1].mean() - rx.mean() == pytest.approx(75, abs=1.5)


def test_pendulum_picture_follows_theta(pendulum):
    from gymnax.environments.classic_control.pendulum import EnvState

    _, _, env = pendulum
    rod = (204, 77, 77)

    def draw(theta: float, u: float = 0.0) -> np.ndarray:
        gx_state = EnvState(theta=np.float32(theta), theta_dot=0.0, last_u=np.float32(u), time=0)
        return env.render_rgb(FromGymnaxState(env_state=gx_state, obs=np.zeros(3, np.float32)))

    up, down, ccw = draw(0.0), draw(np.pi), draw(np.pi / 2)
    assert up.shape == (200, 200, 3) and up.dtype == np.uint8
    assert _pixels(up, rod)[0].mean() < 80 and _pixels(down, rod)[0].mean() > 120  # 0 is upright
    y, x = _pixels(ccw, rod)
    assert x.mean() < 80 and abs(y.mean() - 100) < 3  # +pi/2: counter-clockwise, to the left
    assert not np.array_equal(draw(0.0, 1.0), up)  # the torque bar


def test_render_rgb_of_an_undrawn_gymnax_env_names_it():
    env = FromGymnax(*gymnax.make("Acrobot-v1"))
    with pytest.raises(NotImplementedError, match=r"gymnax/Acrobot-v1 has no RGB rendering.*CartPole-v1"):
        env.render_rgb(None)
    assert set(GYMNAX_DRAWINGS) == {"CartPole-v1", "Pendulum-v1"}
