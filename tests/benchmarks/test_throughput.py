"""Fast checks of the throughput harness (benchmarks/throughput.py), run in-process."""

from __future__ import annotations

import contextlib
import io
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.core import MultiAgentEnv
from alem.wrappers import AutoReset
from benchmarks import throughput as tp

# One CLI run serves the field checks and the reward check (each alem batch size costs a compile).
N, T = 1024, 16


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "result.json"
    argv = ["--env", "prisoners_dilemma-v0", "--num-envs", str(N), "--steps", str(T), "--reps", "1"]
    capture = io.StringIO()
    with contextlib.redirect_stdout(capture):
        result = tp.main([*argv, "--out", str(out)])
    return result, json.loads(capture.getvalue()), json.loads(out.read_text())


def test_cli_json_fields(cli_run):
    result, printed, written = cli_run
    assert printed == written == json.loads(json.dumps(result))
    machine = ("alem_version", "jax_version", "jax_backend", "device_kind", "cpu_model", "cpu_count", "date")
    for field in machine:
        assert field in printed, field
    assert printed["unit"] == "env-steps/s"
    assert (printed["env_id"], printed["T"], printed["reps"], printed["reference"]) == (
        "prisoners_dilemma-v0",
        T,
        1,
        "numpy",
    )
    [row] = printed["results"]
    assert row["N"] == N
    alem_, ref = row["alem"], row["reference"]
    assert alem_["compile_s"] > 0
    for side in (alem_, ref):
        assert len(side["steps_per_s_reps"]) == 1
        assert all(math.isfinite(r) and r > 0 for r in side["steps_per_s_reps"])
        assert side["steps_per_s"] == pytest.approx(np.median(side["steps_per_s_reps"]))
        assert side["steps_per_s_reps"][0] == pytest.approx(N * T / side["time_s_reps"][0])
    assert row["ratio"] == pytest.approx(alem_["steps_per_s"] / ref["steps_per_s"])


# The prisoner's dilemma written out here, independently of the code under test: [agent, a0, a1].
_PD = np.array([[[3, 0], [5, 1]], [[3, 5], [0, 1]]], dtype=np.float64)  # R S T P = 3 0 5 1


def test_alem_and_numpy_mean_reward_agree(cli_run):
    """Uniform random play earns the table's mean, (3 + 0 + 5 + 1) / 4 per agent and step, on both sides."""
    expected = _PD.mean()
    assert expected == pytest.approx(2.25)
    [row] = cli_run[1]["results"]
    assert abs(row["alem"]["mean_reward_per_agent_step"] - expected) < 0.1
    assert abs(row["reference"]["mean_reward_per_agent_step"] - expected) < 0.1
    # The totals behind those means, straight from the exposed rollouts.
    env = alem.make("prisoners_dilemma-v0")
    assert abs(tp.numpy_matrix_rollout(env, N, T)(7) / (N * T * 2) - expected) < 0.1


def test_argument_errors(capsys):
    with pytest.raises(SystemExit):
        tp.main(["--env", "prisoners_dilema-v0"])
    assert "prisoners_dilemma-v0" in capsys.readouterr().err  # the registry's "did you mean"
    with pytest.raises(SystemExit):
        tp.main(["--env", "prisoners_dilemma-v0", "--reference", "nope"])
    assert "numpy" in capsys.readouterr().err  # lists the known references
    with pytest.raises(SystemExit):
        tp.main(["--env", "prisoners_dilemma-v0", "--num-envs", "0"])
    with pytest.raises(alem.UnknownEnvError):
        tp.run_benchmark("no_such_env-v0", [2], 4, 1)
    with pytest.raises(ValueError, match="does not support"):
        tp.resolve_reference("numpy", "other-v0", MultiAgentEnv())


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("iterated_prisoners_dilemma-v0", {"num_rounds": 3, "history_len": 2}),
        ("iterated_public_goods-v0", {"num_agents": 3, "num_rounds": 2}),
    ],
)
def test_numpy_reference_matches_env_transitions(env_id, kwargs):
    """Same actions -> same obs, rewards and episode ends, auto-reset included."""
    env = alem.make(env_id, **kwargs)
    batch, rng = 3, np.random.default_rng(0)
    ref = tp.NumpyRepeatedGame(env, batch, rng)
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), batch)
    state, ts = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    np.testing.assert_array_equal(ref.observe(), ts.obs)
    step = jax.jit(jax.vmap(lambda k, s, a: AutoReset(env).step(k, s, a, params)))
    for _ in range(7):
        actions = ref.random_actions()
        obs, reward, terminated, truncated = ref.step(actions)
        state, ts = step(keys, state, jnp.asarray(actions))
        np.testing.assert_array_equal(obs, ts.obs)
        np.testing.assert_allclose(reward, ts.reward, rtol=1e-6)
        np.testing.assert_array_equal(terminated, ts.terminated)
        np.testing.assert_array_equal(truncated, ts.truncated)
