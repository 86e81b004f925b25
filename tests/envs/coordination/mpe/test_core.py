"""The MPE core: reset distributions, physics known answers, action encoding, spaces, episodes, rendering."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.coordination.mpe import MPEState, SimpleSpread

ALL = [
    "mpe/simple-v0",
    "mpe/simple_spread-v0",
    "mpe/simple_reference-v0",
    "mpe/simple_speaker_listener-v0",
    "mpe/simple_crypto-v0",
    "mpe/simple_tag-v0",
    "mpe/simple_adversary-v0",
    "mpe/simple_push-v0",
    "mpe/simple_world_comm-v0",
]
# mpe2's reset: agents uniform in [-1, 1]^2, landmarks in [-L, L]^2, goals uniform over G landmarks.
LANDMARK_HALF_WIDTH = {"mpe/simple_tag-v0": 0.9, "mpe/simple_world_comm-v0": 0.9}
GOAL_CHOICES = {
    "mpe/simple_reference-v0": [3, 3],
    "mpe/simple_speaker_listener-v0": [3],
    "mpe/simple_crypto-v0": [2, 2],
    "mpe/simple_adversary-v0": [2],
    "mpe/simple_push-v0": [2],
}
NUM_RESETS = 4000


_RESETS: dict = {}


def _resets(env_id: str):
    """``NUM_RESETS`` reset states and timesteps of ``env_id`` (one compile, shared by tests)."""
    if env_id not in _RESETS:
        env = alem.make(env_id)
        keys = jax.random.split(jax.random.key(11), NUM_RESETS)
        _RESETS[env_id] = (env, *jax.jit(jax.vmap(env.reset, (0, None)))(keys, env.default_params))
    return _RESETS[env_id]


@pytest.mark.parametrize("env_id", ALL)
def test_reset_distribution_matches_mpe2(env_id):
    env, state, ts = _resets(env_id)
    pos = np.asarray(state.pos)
    a = env.num_agents
    for block, half in ((pos[:, :a], 1.0), (pos[:, a:], LANDMARK_HALF_WIDTH.get(env_id, 1.0))):
        if block.size == 0:
            continue
        assert block.min() >= -half and block.max() <= half
        assert block.min() < -0.97 * half and block.max() > 0.97 * half
        np.testing.assert_allclose(block.mean(axis=0), 0.0, atol=0.03 * half)
        np.testing.assert_allclose(block.std(axis=0), half / np.sqrt(3), rtol=0.03)
    assert not np.asarray(state.vel).any() and not np.asarray(state.comm).any()
    assert (np.asarray(state.step) == 0).all() and not np.asarray(ts.reward).any()
    goal = np.asarray(state.goal)
    choices = GOAL_CHOICES.get(env_id, [])
    assert goal.shape == (NUM_RESETS, len(choices))
    for g, n in enumerate(choices):
        freq = np.bincount(goal[:, g], minlength=n) / NUM_RESETS
        assert len(freq) == n
        np.testing.assert_allclose(freq, 1.0 / n, atol=0.03)
    if len(choices) == 2:  # independent draws (crypto's goal and key, reference's two goals)
        assert 0.2 < np.mean(goal[:, 0] == goal[:, 1]) < 0.6


def _state(env, pos, vel=None, goal=()):
    pos = jnp.asarray(pos, jnp.float32)
    return MPEState(
        pos=pos,
        vel=jnp.zeros_like(pos) if vel is None else jnp.asarray(vel, jnp.float32),
        comm=jnp.zeros((env.num_agents, env.layout.dim_c), jnp.float32),
        goal=jnp.asarray(goal, jnp.int32),
        step=jnp.int32(0),
    )


def test_contact_force_pushes_overlapping_agents_apart():
    env = SimpleSpread(num_agents=2)
    # Agents of radius 0.15 at distance 0.2: penetration ~0.1, force 100 * 0.1 = 10, dv = F * dt = 1.
    s = _state(env, [[0.0, 0.0], [0.2, 0.0], [0.9, 0.9], [-0.9, -0.9]])
    s2, ts = jax.jit(env.step)(jax.random.key(0), s, jnp.array([0, 0]))
    np.testing.assert_allclose(s2.vel[:2], [[-1.0, 0.0], [1.0, 0.0]], atol=1e-4)
    np.testing.assert_allclose(s2.pos, s.pos)  # positions move with the old velocity (0)
    np.testing.assert_allclose(s2.vel[2:], 0.0)  # landmarks never move
    # Shared term: each landmark's nearest agent; local term: one collision each.
    glob = -(np.hypot(0.7, 0.9) + np.hypot(0.9, 0.9))
    np.testing.assert_allclose(ts.reward, 0.5 * glob + 0.5 * -1.0, atol=1e-5)


def test_integration_damping_actions_and_speed_limit():
    env = alem.make("mpe/simple-v0")
    s = _state(env, [[0.0, 0.0], [0.5, 0.5]], vel=[[1.0, 0.0], [0.0, 0.0]])
    s2, _ = jax.jit(env.step)(jax.random.key(0), s, jnp.array([2]))  # right: force 5
    np.testing.assert_allclose(s2.pos[0], [0.1, 0.0], atol=1e-6)
    np.testing.assert_allclose(s2.vel[0], [0.75 + 0.5, 0.0], atol=1e-6)
    tag = alem.make("mpe/simple_tag-v0")
    pos = [[-0.5, 0.0], [0.0, -0.5], [0.5, 0.5], [0.8, -0.8], [0.0, 0.9], [-0.9, 0.0]]
    vel = [[3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [0.0, -2.0], [0, 0], [0, 0]]
    s3, ts = jax.jit(tag.step)(jax.random.key(0), _state(tag, pos, vel), jnp.array([0, 1, 4, 0]))
    np.testing.assert_allclose(s3.vel[0], [0.6, 0.8], atol=1e-5)  # |v| = 5 * 0.75 > 1.0: rescaled to 1
    np.testing.assert_allclose(s3.vel[1], [-0.3, 0.0], atol=1e-6)  # accel 3 for adversaries
    np.testing.assert_allclose(s3.vel[3], [0.0, -1.3], atol=1e-5)  # prey limit 1.3
    # Prey at |y| = 1.0 after the step: bound(1.0) = min(exp(0), 10) = 1; x = 0.8 gives 0.
    assert float(s3.pos[3, 1]) == pytest.approx(-1.0, abs=1e-6)
    np.testing.assert_allclose(ts.reward, [0, 0, 0, -1.0], atol=1e-5)


def test_movable_speakers_encode_move_plus_five_times_word():
    env = alem.make("mpe/simple_reference-v0")
    s = _state(env, [[0.0, 0.0], [0.5, 0.5], [0.1, 0.1], [0.2, 0.2], [0.3, 0.3]], goal=[0, 1])
    s2, ts = jax.jit(env.step)(jax.random.key(0), s, jnp.array([3 + 5 * 7, 0 + 5 * 2]))
    np.testing.assert_allclose(s2.vel[0], [0.0, -0.5], atol=1e-6)  # move 3 = down
    np.testing.assert_array_equal(np.argmax(s2.comm, axis=1), [7, 2])
    np.testing.assert_array_equal(ts.obs[1, 11:], np.eye(10)[7])  # agent_1 hears agent_0's word
    np.testing.assert_array_equal(ts.obs[0, 11:], np.eye(10)[2])


def test_heterogeneous_spaces_masks_and_roles():
    env = alem.make("mpe/simple_speaker_listener-v0")
    assert env.agents == ("speaker_0", "listener_0")
    assert [env.role_names[r] for r in env.agent_roles] == ["speaker", "listener"]
    assert env.action_space(0) == alem.spaces.Discrete(3) and env.action_space(1) == alem.spaces.Discrete(5)
    assert env.num_actions == 5 and env.obs_dims == (3, 11)
    state, ts = jax.jit(env.reset)(jax.random.key(0))
    np.testing.assert_array_equal(ts.action_mask, [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    space0 = env.observation_space(0)
    assert space0.shape == (11,) and (space0.low[3:] == 0).all() and (space0.high[3:] == 0).all()
    assert np.isinf(space0.low[:3]).all()
    assert env.global_state(state).shape == (14,) == env.global_state_space().shape
    _, ts2 = jax.jit(env.step)(jax.random.key(1), state, jnp.array([4, 0]))  # word 4 does not exist
    np.testing.assert_array_equal(ts2.info["illegal_action"], [True, False])
    cont = alem.make("mpe/simple_speaker_listener-v0", continuous_actions=True)
    assert cont.action_space(0).shape == (3,) and cont.action_space().shape == (2, 5)
    tsc = cont.timestep(state, cont.default_params, jnp.zeros(2))
    np.testing.assert_array_equal(tsc.action_mask, [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    wc = alem.make("mpe/simple_world_comm-v0")
    assert [wc.action_space(i).n for i in range(6)] == [20, 5, 5, 5, 5, 5]
    assert wc.obs_dims == (34, 34, 34, 34, 28, 28)
    assert [wc.role_names[r] for r in wc.agent_roles] == ["leader"] + ["adversary"] * 3 + ["good"] * 2


def test_continuous_out_of_range_is_clipped_and_flagged():
    env = alem.make("mpe/simple-v0", continuous_actions=True)
    state, _ = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    s2, ts = step(jax.random.key(1), state, jnp.array([[0.0, 0.0, 3.0, 0.0, 0.0]]))
    s3, _ = step(jax.random.key(1), state, jnp.array([[0.0, 0.0, 1.0, 0.0, 0.0]]))
    assert bool(ts.info["illegal_action"][0])
    np.testing.assert_allclose(s2.vel, s3.vel)


def test_crypto_ignores_silent_zero_messages():
    env = alem.make("mpe/simple_crypto-v0", continuous_actions=True)
    state, _ = env.reset(jax.random.key(0))
    state = state.replace(goal=jnp.array([1, 0]))
    zero = jnp.zeros((3, 4))
    step = jax.jit(env.step)
    _, ts = step(jax.random.key(0), state, zero)
    np.testing.assert_array_equal(ts.reward, [0.0, 0.0, 0.0])
    acts = zero.at[0, 1].set(1.0).at[1, 0].set(1.0)  # eve right (0 error), bob wrong (error 2)
    _, ts = step(jax.random.key(0), state, acts)
    np.testing.assert_allclose(ts.reward, [0.0, -2.0, -2.0])


def test_episodes_are_exactly_max_steps_and_truncated():
    env = alem.make("mpe/simple_spread-v0")
    step = jax.jit(env.step)
    params = env.default_params
    for horizon in (25, 7):
        p = params.replace(max_steps=jnp.int32(horizon))
        state, ts = env.reset(jax.random.key(0), p)
        flags = []
        for t in range(horizon):
            state, ts = step(jax.random.key(t), state, jnp.zeros(3, jnp.int32), p)
            flags.append((bool(ts.terminated), bool(ts.truncated)))
        assert flags == [(False, False)] * (horizon - 1) + [(False, True)]


def test_bad_configuration_raises():
    with pytest.raises(alem.EnvArgumentError, match="num_agents"):
        alem.make("mpe/simple_spread-v0", num_agents=1)
    with pytest.raises(alem.EnvArgumentError, match="local_ratio"):
        alem.make("mpe/simple_spread-v0", local_ratio=1.5)
    with pytest.raises(alem.EnvArgumentError, match="max_steps"):
        alem.make("mpe/simple_tag-v0", max_steps=0)
    with pytest.raises(alem.EnvArgumentError, match="num_food"):
        alem.make("mpe/simple_world_comm-v0", num_food=0)


@pytest.mark.parametrize("env_id", ALL)
def test_every_scenario_takes_the_shared_options_through_one_constructor(env_id):
    """The scenario's own counts come first, then the options every scenario shares;
    ``local_ratio`` only where the rewards read it (elsewhere it is refused, not ignored)."""
    import inspect

    env = alem.make(env_id)
    names = list(inspect.signature(type(env)).parameters)
    shared = ["continuous_actions", "max_steps", "max_cycles"]
    shared += ["local_ratio"] if type(env).uses_local_ratio else []
    assert names[-len(shared) - 1 :] == shared + ["illegal_action"]
    assert all(n.startswith("num_") for n in names[: -len(shared) - 1]), names
    assert alem.make(env_id, continuous_actions=True).continuous_actions
    with pytest.raises(alem.EnvArgumentError, match="illegal_action='nope'"):
        alem.make(env_id, illegal_action="nope")
    if type(env).uses_local_ratio:
        assert float(alem.make(env_id, local_ratio=0.25).default_params.local_ratio) == 0.25
    else:
        with pytest.raises(alem.EnvArgumentError, match="local_ratio"):
            alem.make(env_id, local_ratio=0.25)
        with pytest.raises(alem.EnvArgumentError, match="local_ratio is not read"):
            type(env)(local_ratio=0.25)


@pytest.mark.parametrize("env_id", ALL)
def test_max_cycles_is_an_alias_of_max_steps(env_id):
    assert int(alem.make(env_id).default_params.max_steps) == 25
    assert int(alem.make(env_id, max_steps=9).default_params.max_steps) == 9
    assert int(alem.make(env_id, max_cycles=7).default_params.max_steps) == 7
    with pytest.raises(alem.EnvArgumentError, match="max_cycles must be >= 1"):
        alem.make(env_id, max_cycles=0)
    with pytest.raises(alem.EnvArgumentError, match=r"max_steps or max_cycles.*not both"):
        alem.make(env_id, max_steps=9, max_cycles=9)


@pytest.mark.parametrize("env_id", ALL)
def test_render_rgb(env_id):
    env, states, _ = _resets(env_id)
    state = jax.tree.map(lambda x: x[0], states)
    first = env.render_rgb(state)
    assert first.shape == (256, 256, 3) and first.dtype == np.uint8
    assert (first != 255).any(), "something must be drawn"
    # Agents move (or, where nobody moves, speak): the picture changes.
    a = env.num_agents
    moved = state.replace(pos=state.pos.at[:a].add(0.2), comm=jnp.ones_like(state.comm))
    assert not np.array_equal(first, env.render_rgb(moved))
    with pytest.raises(alem.EnvArgumentError, match="one state"):
        env.render_rgb(jax.tree.map(lambda x: x[None], state))


def test_render_draws_entities_in_their_colours():
    env = alem.make("mpe/simple-v0")
    s = _state(env, [[0.5, 0.5], [-0.5, -0.5]])
    img = env.render_rgb(s, size=200)
    # The view is [-1.05, 1.05]^2 (y up): (0.5, 0.5) is right of and above the centre.
    scale = 200 / 2.1
    x, y = int((0.5 + 1.05) * scale), int((1.05 - 0.5) * scale)
    np.testing.assert_array_equal(img[y, x], [63, 63, 63])  # agent 0.25 grey
    np.testing.assert_array_equal(img[200 - y, 200 - x], [191, 63, 63])  # landmark 0.75/0.25/0.25
    np.testing.assert_array_equal(img[5, 100], [255, 255, 255])
