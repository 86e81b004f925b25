"""Shared helpers for the MPE tests: mpe2 world-state injection and step-by-step comparison.

``compare_with_mpe2(env_id, seeds, continuous)`` resets one mpe2 env per seed, copies its
world (positions, velocities, messages, goal assignments) into a batched alem state, then
steps both sides with the same random actions until the episode ends, asserting that
observations, rewards, terminated/truncated and the global state agree at ``atol``.
"""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.coordination.mpe.core import MPEState

ATOL = 1e-4

#: alem scenario -> (mpe2 module, alem make kwargs -> mpe2 kwargs)
MPE2 = {
    "simple": "simple_v3",
    "simple_spread": "simple_spread_v3",
    "simple_reference": "simple_reference_v3",
    "simple_speaker_listener": "simple_speaker_listener_v4",
    "simple_tag": "simple_tag_v3",
    "simple_adversary": "simple_adversary_v3",
    "simple_push": "simple_push_v3",
    "simple_crypto": "simple_crypto_v3",
    "simple_world_comm": "simple_world_comm_v3",
}


def _landmark_index(world, landmark) -> int:
    return next(i for i, lm in enumerate(world.landmarks) if lm is landmark)


def goals_of(scenario: str, world) -> list[int]:
    """The goal assignment of an mpe2 world in alem's ``state.goal`` layout."""
    ag = world.agents
    if scenario == "simple_reference":
        return [_landmark_index(world, ag[0].goal_b), _landmark_index(world, ag[1].goal_b)]
    if scenario == "simple_speaker_listener":
        return [_landmark_index(world, ag[0].goal_b)]
    if scenario in ("simple_adversary", "simple_push"):
        return [_landmark_index(world, ag[0].goal_a)]
    if scenario == "simple_crypto":
        key = next(i for i, lm in enumerate(world.landmarks) if np.array_equal(lm.color, ag[2].key))
        return [_landmark_index(world, ag[0].goal_a), key]
    return []


def inject(scenario: str, world) -> MPEState:
    ents = world.agents + world.landmarks
    return MPEState(
        pos=jnp.asarray(np.stack([e.state.p_pos for e in ents]), jnp.float32),
        vel=jnp.asarray(np.stack([e.state.p_vel for e in ents]), jnp.float32),
        comm=jnp.asarray(
            np.stack([a.state.c for a in world.agents]).reshape(len(world.agents), -1), jnp.float32
        ),
        goal=jnp.asarray(goals_of(scenario, world), jnp.int32),
        step=jnp.int32(0),
    )


class Comparer:
    """Jitted batched step/observe for one alem env (built once per id and action kind)."""

    def __init__(self, env_id: str, continuous: bool, **kwargs):
        self.scenario = env_id.split("/")[1].rsplit("-v", 1)[0]
        self.kwargs = kwargs
        self.env = alem.make(env_id, continuous_actions=continuous, **kwargs)
        self.continuous = continuous
        env, params = self.env, self.env.default_params
        self.params = params

        def step(s, a):  # one program: the step, and the observation and global state before it
            s2, ts = env.step(jax.random.key(0), s, a, params)
            return s2, ts, env.observe(s, params), env.global_state(s, params)

        self.step = jax.jit(jax.vmap(step))

    def mpe2_env(self):
        module = importlib.import_module(f"mpe2.{MPE2[self.scenario]}")
        kw = dict(self.kwargs)
        # alem's names for mpe2's N
        if "num_agents" in kw:
            kw["N"] = kw.pop("num_agents")
        if self.scenario == "simple_adversary" and "num_good" in kw:
            kw["N"] = kw.pop("num_good")
        return module.parallel_env(continuous_actions=self.continuous, **kw)

    def run(self, seeds, rng: np.random.Generator, atol: float = ATOL) -> int:
        env = self.env
        refs = [self.mpe2_env() for _ in seeds]
        obs0 = [r.reset(seed=int(s))[0] for r, s in zip(refs, seeds, strict=True)]
        names = list(env.agents)
        assert list(refs[0].possible_agents) == names
        states = [inject(self.scenario, r.unwrapped.world) for r in refs]
        state = jax.tree.map(lambda *x: jnp.stack(x), *states)
        dims = env.obs_dims
        steps = 0
        while True:
            ref_gs = np.stack([r.unwrapped.state() for r in refs])
            acts, ref_acts = self._actions(rng, len(refs))
            state, ts, obs_before, gs = self.step(state, acts)
            if steps == 0:
                self._check_obs(np.asarray(obs_before), obs0, names, dims, "reset", atol)
            np.testing.assert_allclose(
                np.asarray(gs), ref_gs, atol=atol, err_msg=f"global state after {steps} steps"
            )
            outs = [r.step(a) for r, a in zip(refs, ref_acts, strict=True)]
            steps += 1
            where = f"step {steps}"
            self._check_obs(np.asarray(ts.obs), [o[0] for o in outs], names, dims, where, atol)
            ref_rew = np.array([[o[1][n] for n in names] for o in outs])
            np.testing.assert_allclose(
                np.asarray(ts.reward), ref_rew, atol=atol, err_msg=f"reward at {where}"
            )
            ref_term = np.array([all(o[2][n] for n in names) for o in outs])
            ref_trunc = np.array([all(o[3][n] for n in names) for o in outs])
            np.testing.assert_array_equal(np.asarray(ts.terminated), ref_term, err_msg=where)
            np.testing.assert_array_equal(np.asarray(ts.truncated), ref_trunc, err_msg=where)
            assert not np.asarray(ts.info["illegal_action"]).any()
            if ref_term.all() or ref_trunc.all():
                assert not any(r.agents for r in refs)
                return steps

    def _check_obs(self, ours, ref_obs, names, dims, where, atol):
        for b, ref in enumerate(ref_obs):
            for i, n in enumerate(names):
                np.testing.assert_allclose(
                    ours[b, i, : dims[i]], ref[n], atol=atol, err_msg=f"obs of {n} at {where}, episode {b}"
                )
                assert not ours[b, i, dims[i] :].any(), "padding must be 0"

    def _actions(self, rng, batch):
        env = self.env
        n = env.num_agents
        if self.continuous:
            width = env.action_space().shape[1]
            acts = rng.uniform(0.0, 1.0, (batch, n, width)).astype(np.float32)
            ref = [
                {name: acts[b, i, : env.action_space(i).shape[0]] for i, name in enumerate(env.agents)}
                for b in range(batch)
            ]
        else:
            sizes = np.array([env.action_space(i).n for i in range(n)])
            acts = (rng.random((batch, n)) * sizes).astype(np.int32)
            ref = [{name: int(acts[b, i]) for i, name in enumerate(env.agents)} for b in range(batch)]
        return jnp.asarray(acts), ref


_COMPARERS: dict = {}


@pytest.fixture(scope="session")
def comparer():
    """``comparer(env_id, continuous, **kwargs) -> Comparer`` (cached for the session)."""
    pytest.importorskip("mpe2")

    def get(env_id: str, continuous: bool, **kwargs) -> Comparer:
        key = (env_id, continuous, tuple(sorted(kwargs.items())))
        if key not in _COMPARERS:
            _COMPARERS[key] = Comparer(env_id, continuous, **kwargs)
        return _COMPARERS[key]

    return get
