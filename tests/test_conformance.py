"""The conformance suite: every registered env is checked against the env contract (exhaustive tier).

Each env id gets one harness of jitted functions per session (``harness`` in tests/conftest.py),
shared with the smoke, parsing and hidden-information tests, and all items of one id run on the
same xdist worker (``--dist loadgroup``), so each id's programs compile once per run.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.rollout import random_actions
from tests.ids import contract_ids

ENV_IDS = contract_ids()  # every id; SMAX by three of its maps (tests/ids.py)


pytestmark = pytest.mark.exhaustive  # the default run smoke-tests every id in tests/test_smoke.py


@pytest.fixture(params=ENV_IDS)
def h(request, harness):
    """The env id's shared harness (tests/conftest.py); items of one id run on one xdist worker."""
    return harness(request.param)


def test_registry_entry_matches_env(h):
    spec = alem.registry()[h.env.id]
    assert spec.family in {"games", "pathfinding", "coordination", "single_agent"}
    assert spec.text == h.env.supports_text
    if isinstance(spec.num_agents, int):
        assert spec.num_agents == h.env.num_agents
    assert h.env.__class__.__doc__ and len(h.env.__class__.__doc__) > 40, "every env needs a docstring card"


def test_spaces_consistent(h):
    env = h.env
    n = env.num_agents
    assert len(env.agents) == n == len(env.agent_roles)
    assert all(0 <= r < len(env.role_names) for r in env.agent_roles)
    stacked = env.observation_space()
    assert stacked.shape[0] == n
    per = [env.observation_space(i) for i in range(n)]
    assert all(p.shape == stacked.shape[1:] for p in per)
    if not env.continuous_actions:
        assert env.action_space().shape == (n,)
        assert env.num_actions == max(env.action_space(i).n for i in range(n))


def test_reset_timestep_shapes_and_dtypes(h):
    env = h.env
    n = env.num_agents
    state, ts = h.reset(jax.random.key(0))
    assert ts.obs.shape == env.observation_space().shape
    assert ts.reward.shape == (n,) and ts.reward.dtype == jnp.float32
    assert ts.terminated.shape == () and ts.terminated.dtype == jnp.bool_
    assert ts.truncated.shape == () and ts.truncated.dtype == jnp.bool_
    assert ts.acting.shape == (n,) and ts.acting.dtype == jnp.bool_
    if not env.continuous_actions:
        assert ts.action_mask.shape == (n, env.num_actions) and ts.action_mask.dtype == jnp.bool_
    assert not bool(ts.done)
    assert "illegal_action" in ts.info


def test_step_info_has_same_structure_as_reset(h):
    state, ts0 = h.reset(jax.random.key(0))
    acts = h.random_actions(jax.random.key(1), ts0)
    _, ts1 = h.step(jax.random.key(2), state, acts)
    s0 = jax.tree.map(lambda x: (x.shape, x.dtype), ts0)
    s1 = jax.tree.map(lambda x: (x.shape, x.dtype), ts1)
    assert s0 == s1


def test_vmap_over_one_env(h):
    """vmap over a batch of 1 (the rollout fixture covers many envs)."""
    keys = jax.random.split(jax.random.key(3), 1)
    state, ts = h.vreset(keys)
    assert ts.obs.shape == (1, *h.env.observation_space().shape)
    acts = random_actions(h.env, keys[0], ts)
    state, ts = h.vstep(keys, state, acts)
    assert ts.reward.shape == (1, h.env.num_agents)
    _, many = h.traj(0)
    assert many[0].reward.shape == (h.NUM_STEPS, h.NUM_ENVS, h.env.num_agents)


def test_rollout_obs_in_space_and_masks_valid(h):
    ts0, (ts, gs, acts) = h.traj(0)
    space = h.env.observation_space()
    contains = jax.jit(jax.vmap(jax.vmap(space.contains)))
    assert bool(jnp.all(contains(ts.obs))), "observation outside the declared space"
    assert bool(jnp.all(jax.vmap(space.contains)(ts0.obs)))
    assert bool(jnp.all(contains(ts.info["final_obs"])))
    if not h.env.continuous_actions:
        legal_any = ts.action_mask.any(-1)
        assert bool(jnp.all(legal_any | ~ts.acting)), "an acting agent has no legal action"
        assert not bool(ts.info["illegal_action"].any()), "random legal actions were flagged illegal"
    assert bool(jnp.all(jnp.isfinite(ts.reward)))
    assert bool(ts.acting.any(-1).all()), "nobody acts"


def test_turn_based_flag_matches_the_dynamics(h):
    """``turn_based`` envs let at most one agent act, and waiting agents' mask rows are all False."""
    _, (ts, _, _) = h.traj(0)
    several = bool((ts.acting.sum(-1) > 1).any())
    if h.env.turn_based:
        assert not several, "turn_based env with several acting agents in one step"
        if not h.env.continuous_actions:
            assert not bool((ts.action_mask & ~ts.acting[..., None]).any()), "a waiting agent has legal moves"
    elif h.env.num_agents > 1:
        assert several, "several agents act at once: declare nothing; one at a time: set turn_based"


def test_zero_sum_flag_matches_the_rewards(h):
    _, (ts, _, _) = h.traj(0)
    if h.env.zero_sum:
        np.testing.assert_allclose(np.asarray(ts.reward.sum(-1)), 0.0, atol=1e-5)


def test_fixed_start_flag_matches_reset(h):
    """``fixed_start`` envs return the same state and timestep for every reset key."""
    keys = jax.random.split(jax.random.key(11), 8)
    states, ts = h.vreset(keys)
    same = all(bool((x == x[:1]).all()) for x in jax.tree.leaves((states, ts)))
    if h.env.fixed_start:
        assert same, "fixed_start env whose reset depends on the key"


def test_global_state_in_its_space(h):
    _, (ts, gs, _) = h.traj(0)
    space = h.env.global_state_space()
    assert gs.shape[2:] == space.shape
    assert bool(jnp.all(jax.jit(jax.vmap(jax.vmap(space.contains)))(gs)))


def test_same_key_same_trajectory(h):
    a = h.traj(0)
    b = jax.device_get(h.rollout(jax.random.key(0), h.params))
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def test_different_keys_differ_where_stochastic(h):
    if not h.env.stochastic:
        pytest.skip("deterministic env (given actions)")
    # Same actions, different env keys: replay the actions of seed 0 under another key.
    state, ts = h.reset(jax.random.key(0))
    obs_a, obs_b = [], []
    sb, tsb = h.reset(jax.random.key(1))
    for t in range(h.NUM_STEPS):
        acts = h.random_actions(jax.random.key(100 + t), ts)
        state, ts = h.auto_step(jax.random.key(t), state, acts)
        sb, tsb = h.auto_step(jax.random.key(10_000 + t), sb, acts)
        obs_a.append(np.asarray(ts.obs))
        obs_b.append(np.asarray(tsb.obs))
    assert not np.array_equal(np.stack(obs_a), np.stack(obs_b))


def test_episodes_end_and_autoreset_keeps_final_obs(h):
    """AutoReset.step == raw step (with the split key) until done, then == reset."""
    state, ts = h.reset(jax.random.key(7))
    ended = False
    # Long enough for any horizon (rware's presets keep the reference's 500 steps, and random
    # play never delivers, so only the horizon ends them).
    horizon = int(getattr(h.params, "max_steps", 0) or 0)
    for t in range(max(400, horizon + 1)):
        key = jax.random.key(1000 + t)
        acts = h.random_actions(jax.random.key(5000 + t), ts)
        k_step, k_reset = jax.random.split(key)
        raw_state, raw_ts = h.step(k_step, state, acts)
        auto_state, auto_ts = h.auto_step(key, state, acts)
        np.testing.assert_array_equal(auto_ts.info["final_obs"], raw_ts.obs)
        np.testing.assert_array_equal(auto_ts.reward, raw_ts.reward)
        assert bool(auto_ts.terminated) == bool(raw_ts.terminated)
        assert bool(auto_ts.truncated) == bool(raw_ts.truncated)
        if bool(raw_ts.done):
            re_state, re_ts = h.reset(k_reset)
            np.testing.assert_array_equal(auto_ts.obs, re_ts.obs)
            np.testing.assert_array_equal(auto_ts.action_mask, re_ts.action_mask)
            for x, y in zip(jax.tree.leaves(auto_state), jax.tree.leaves(re_state), strict=True):
                np.testing.assert_array_equal(x, y)
            ended = True
            break
        np.testing.assert_array_equal(auto_ts.obs, raw_ts.obs)
        state, ts = raw_state, raw_ts
    assert ended, f"no episode ended within {max(400, horizon + 1)} random steps"


def test_wrong_action_shape_and_dtype_raise_clear_errors(h):
    env = h.env
    state, ts = h.reset(jax.random.key(0))
    n = env.num_agents
    bad_shape = jnp.zeros((n + 1,), jnp.int32) if not env.continuous_actions else jnp.zeros((n + 1, 1))
    with pytest.raises(alem.ActionError, match=f"{env.id}.*actions.*shape"):
        env.step(jax.random.key(1), state, bad_shape)
    with pytest.raises(alem.ActionError, match="vmap"):
        env.step(
            jax.random.key(1), state, jnp.zeros((3, *env.action_space().shape), env.action_space().dtype)
        )
    if not env.continuous_actions:
        with pytest.raises(alem.ActionError, match="integer"):
            env.step(jax.random.key(1), state, jnp.zeros((n,), jnp.float32))


def test_a_batch_of_keys_without_vmap_is_rejected(h):
    """A [B] typed key or a [B, 2] raw key is one call's mistake, never a silent batch."""
    env = h.env
    state, ts = h.reset(jax.random.key(0))
    acts = h.random_actions(jax.random.key(1), ts)
    for keys in (jax.random.split(jax.random.key(0), 4), jax.random.split(jax.random.PRNGKey(0), 4)):
        with pytest.raises(alem.EnvArgumentError, match=r"one PRNG key per call.*batch shape \(4,\).*vmap"):
            env.reset(keys)
        with pytest.raises(alem.EnvArgumentError, match=r"one PRNG key per call.*vmap"):
            env.step(keys, state, acts)


def test_int64_actions_beyond_int32_raise_instead_of_wrapping(h):
    env = h.env
    if env.continuous_actions:
        pytest.skip("discrete actions only")
    state, ts = h.reset(jax.random.key(0))
    # Wrapped to int32 these would be each agent's first legal action.
    first = np.argmax(np.asarray(ts.action_mask), axis=1).astype(np.int64)
    with pytest.raises(alem.ActionError, match=rf"action {2**32 + first[0]} \(dtype int64\).*int32 range"):
        env.step(jax.random.key(1), state, first + 2**32)


# Episode limits under the names the envs use (nested: gymnax params inside FromGymnaxParams).
_LIMIT = re.compile(r"^(max_(\w+_)?(steps|cycles)(_\w+)?|num_rounds)$")


def _limit_fields(params, prefix=""):
    for name, value in vars(params).items():
        if _LIMIT.match(name):
            yield prefix + name
        elif hasattr(value, "__dataclass_fields__"):
            yield from _limit_fields(value, f"{prefix}{name}.")


def _replace_path(params, path, value):
    head, _, rest = path.partition(".")
    return params.replace(**{head: _replace_path(getattr(params, head), rest, value) if rest else value})


def test_check_params_rejects_a_nonpositive_episode_limit(h):
    fields = list(_limit_fields(h.params))
    if not fields:
        pytest.skip("no episode-limit param")
    h.env.check_params(h.params)
    h.auto.check_params(h.params)
    for field in fields:
        bad = _replace_path(h.params, field, -1)
        match = rf"{re.escape(h.env.id)}: params\.{re.escape(field)}=-1 is out of range; it must be >= 1"
        with pytest.raises(alem.EnvArgumentError, match=match):
            h.env.check_params(bad)
        with pytest.raises(alem.EnvArgumentError, match=match):
            h.env.reset(jax.random.key(0), bad)
        with pytest.raises(alem.EnvArgumentError, match=match):
            h.auto.check_params(bad)  # wrappers forward to the env's own ranges


def test_out_of_range_actions_are_replaced_and_counted(h):
    env = h.env
    if env.continuous_actions:
        pytest.skip("discrete actions only")
    state, ts = h.reset(jax.random.key(0))
    for bad in (env.num_actions + 3, -1):
        acts = jnp.full((env.num_agents,), bad, jnp.int32)
        s2, ts2 = h.step(jax.random.key(1), state, acts)
        np.testing.assert_array_equal(ts2.info["illegal_action"], ts.acting)
        # Same outcome as playing each agent's first legal action.
        first = jnp.argmax(ts.action_mask, axis=1).astype(jnp.int32)
        s3, ts3 = h.step(jax.random.key(1), state, first)
        np.testing.assert_array_equal(ts2.obs, ts3.obs)
        np.testing.assert_array_equal(ts2.reward, ts3.reward)


def test_text_hooks_round_trip(h):
    env = h.env
    if not env.supports_text:
        pytest.skip("no text support")
    state, ts = h.reset(jax.random.key(0))
    for i in range(env.num_agents):
        rules = env.rules_text(agent=i)
        assert isinstance(rules, str) and len(rules) > 20
        view = env.render_text(state, agent=i)
        assert isinstance(view, str) and view
        names = env.action_names(i)
        assert len(names) == env.action_space(i).n
        assert len(set(n.lower() for n in names)) == len(names), "action names must be unique"
        for j, name in enumerate(names):
            assert env.parse_action(name, i) == j
            assert env.parse_action(f"  {name.upper()}. ", i) == j
        assert env.parse_action("no idea at all, sorry", i) is None
        legal = env.legal_action_names(state, i)
        assert set(legal) <= set(names)
        assert legal or not bool(ts.acting[i])
    assert isinstance(env.render_text(state), str)
