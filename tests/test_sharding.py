"""Scaling out uses JAX's own sharding: a batch of envs split over devices gives the same result."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.integration  # simulated devices in subprocesses

SCRIPT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import alem
    from alem.rollout import random_rollout

    assert len(jax.devices()) == 4, jax.devices()
    env = alem.make("iterated_stag_hunt-v0", num_rounds=5)
    rollout = random_rollout(env, num_envs=64, num_steps=16)
    params = env.default_params
    key = jax.random.key(0)
    state = rollout.init(key, params)

    mesh = Mesh(np.array(jax.devices()), ("envs",))
    shard = NamedSharding(mesh, P("envs"))
    sharded = jax.tree.map(lambda x: jax.device_put(x, shard), state)
    out_sharded = jax.jit(rollout)(key, params, sharded)
    out_single = jax.jit(rollout)(key, params, state)

    leaf = out_sharded[0].timestep.obs
    assert len(leaf.sharding.device_set) == 4, leaf.sharding
    for a, b in zip(jax.tree.leaves(out_sharded), jax.tree.leaves(out_single)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    print("OK", int(out_sharded[1]["episodes"]))
    """
)


def _run_on_four_cpu_devices(script: str, cwd, *args: str) -> subprocess.CompletedProcess:
    """Run ``script`` (with ``args``) in a fresh interpreter that sees 4 CPU devices; it must succeed."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    res = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, cwd=cwd
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def test_env_batch_sharded_over_four_devices_matches_one_device(tmp_path):
    res = _run_on_four_cpu_devices(SCRIPT, tmp_path)
    # 64 envs x 16 steps of 5-round games: every env finishes 3 episodes.
    assert res.stdout.strip() == "OK 192"


TRAIN_SCRIPT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh
    import alem
    import sys
    from alem.algos import make_config, make_learner, make_q_config, make_q_learner
    from alem.training import shard_state

    assert len(jax.devices()) == 4, jax.devices()
    env = alem.make("iterated_stag_hunt-v0", num_rounds=5)
    sizes = dict(num_envs=8, num_steps=8, num_minibatches=2, total_steps=8 * 8 * 3, hidden=(16,))
    if sys.argv[1] == "mappo":
        learner = make_learner(env, make_config("mappo", **sizes))
    else:  # the value-based core: replay buffer, target network and QMIX's mixer of the global state
        env = alem.make("coordination-v0")
        learner = make_q_learner(env, make_q_config("qmix", **sizes, batch_size=16, learning_starts=8))
    state = jax.vmap(learner.init)(jax.vmap(jax.random.key)(jnp.arange(2)))
    run = jax.jit(jax.vmap(lambda s: learner.run(s, 3)))
    raw = lambda t: jax.tree.map(
        lambda x: jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x, t
    )
    single = jax.device_get(raw(run(state)))
    sharded_state = shard_state(state, Mesh(np.array(jax.devices()), ("data",)))
    out = run(sharded_state)
    obs = out[0].timestep.obs
    assert len(obs.sharding.device_set) == 4 and obs.sharding.spec[1] == "data", obs.sharding
    for a, b in zip(jax.tree.leaves(jax.device_get(raw(out))), jax.tree.leaves(single), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=2e-4, atol=2e-5)
    loss = single[1]["policy_loss" if sys.argv[1] == "mappo" else "q_loss"]
    print("OK", float(loss[:, -1].mean()) != 0.0)
    """
)


@pytest.mark.parametrize("core", ["mappo", "qmix"])  # one learner of each core
def test_learner_sharded_over_four_devices_matches_one_device(tmp_path, core):
    """The env batch split over a 4-device mesh trains to the same parameters and metrics."""
    res = _run_on_four_cpu_devices(TRAIN_SCRIPT, tmp_path, core)
    assert res.stdout.strip() == "OK True"
