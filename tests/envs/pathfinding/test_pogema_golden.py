"""Replays POGEMA 1.4.0 golden fixtures (scripts/pogema_fixtures.py) through alem's env.

Every case: identical cells for every agent after reset and after every step, identical
goals (lifelong goal sequences), rewards, episode ends, final metrics, and identical
default observations (obstacles, agents, target channels) at every step.
Cases with one shape share one compiled replay (vmapped over instances).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import defaultdict
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.pathfinding.env import PathfindingEnv, make_params

FIXTURE = Path(__file__).parent / "fixtures" / "pogema_golden.json.gz"
MODE = {"nothing": "one_shot", "restart": "lifelong", "finish": "disappear"}
#: POGEMA metric -> alem info key (same names).
METRICS = {
    "nothing": ("ISR", "CSR", "SoC", "makespan", "ep_length"),
    "restart": ("avg_throughput",),
    "finish": ("ISR", "CSR", "ep_length"),
}


def _load() -> list[dict]:
    with gzip.open(FIXTURE, "rt") as f:
        return json.load(f)["cases"]


CASES = _load()


def _groups() -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for c in CASES:
        kind = c["name"].split("/")[0]
        # The mode is a param: one compiled replay per collision system and shape.
        groups[(kind, c["collision"])].append(c)
    return dict(groups)


GROUPS = _groups()
# Default run: all micro-cases (every system) and the random instances (every mode) under
# soft and priority; random instances under block_both are slow.
FAST = {k for k in GROUPS if k[0] == "micro" or k[1] != "block_both"}


def _goal_seqs(c: dict, length: int) -> np.ndarray:
    """Goals as ``[N, L, 2]`` sequences (single goals repeated; only the first is used)."""
    g = np.asarray(c["goals"])
    g = g[:, None] if g.ndim == 2 else g
    return np.concatenate([g, np.repeat(g[:, -1:], length - g.shape[1], axis=1)], axis=1)


def _replay(cases: list[dict], pogema_occupancy: bool = False) -> dict[str, np.ndarray]:
    c0 = cases[0]
    n = len(c0["starts"])
    h, w = len(c0["map"]), len(c0["map"][0])
    seq_len = max(np.asarray(c["goals"]).shape[1] if np.ndim(c["goals"]) == 3 else 1 for c in cases)
    env = PathfindingEnv(
        n,
        h,
        w,
        collision=c0["collision"],
        obs_radius=c0["obs_radius"],
        lower_bounds=False,
        maps="\n".join(c0["map"]),
        starts=c0["starts"],
        goals=_goal_seqs(c0, seq_len),
        pogema_occupancy=pogema_occupancy,
    )
    assert env.goal_sequence_len == seq_len
    params = [
        make_params(
            env,
            maps="\n".join(c["map"]),
            starts=c["starts"],
            goals=_goal_seqs(c, seq_len),
            max_steps=c["max_steps"],
            mode=MODE[c["on_target"]],
        )
        for c in cases
    ]
    params = jax.tree.map(lambda *x: jnp.stack(x), *params)
    horizon = max(len(c["actions"]) for c in cases)
    acts = np.zeros((len(cases), horizon, n), np.int32)
    for i, c in enumerate(cases):
        acts[i, : len(c["actions"])] = c["actions"]

    def run(p, a):
        state, ts = env.reset(jax.random.key(0), p)

        def body(state, act):
            state, ts = env.step(jax.random.key(1), state, act, p)
            return state, (state.pos, state.goal, ts.reward, ts.terminated, ts.truncated, ts.info, ts.obs)

        _, traj = jax.lax.scan(body, state, a)
        return state.pos, state.goal, ts.obs, traj

    pos0, goal0, obs0, (pos, goal, rew, term, trunc, info, obs) = jax.jit(jax.vmap(run))(
        params, jnp.asarray(acts)
    )
    return dict(
        pos=np.concatenate([np.asarray(pos0)[:, None], np.asarray(pos)], 1),
        goal=np.concatenate([np.asarray(goal0)[:, None], np.asarray(goal)], 1),
        obs=np.concatenate([np.asarray(obs0)[:, None], np.asarray(obs)], 1),
        reward=np.asarray(rew),
        terminated=np.asarray(term),
        truncated=np.asarray(trunc),
        info={k: np.asarray(v) for k, v in info.items()},
    )


_RESULTS: dict[tuple[tuple, bool], dict] = {}


def _result(key: tuple, pogema_occupancy: bool = False) -> dict:
    if (key, pogema_occupancy) not in _RESULTS:
        _RESULTS[key, pogema_occupancy] = _replay(GROUPS[key], pogema_occupancy)
    return _RESULTS[key, pogema_occupancy]


def _params(keys):
    return [
        pytest.param(k, id="-".join(k), marks=() if k in FAST else pytest.mark.exhaustive)
        for k in sorted(keys)
    ]


def test_fixture_covers_the_issue():
    names = {(c["name"].split("/")[-1], c["collision"]) for c in CASES if c["name"].startswith("micro")}
    for micro in ("swap", "vertex_contest", "follow_lower_leader", "follow_higher_leader", "rotation"):
        for system in ("soft", "priority", "block_both"):
            assert (micro, system) in names
    modes = {(c["on_target"], c["collision"]) for c in CASES if c["name"].startswith("random")}
    assert {(m, s) for m in MODE for s in ("soft", "priority", "block_both")} <= modes
    solved = [c for c in CASES if c["on_target"] == "nothing" and c["metrics"] and c["metrics"]["CSR"] == 1.0]
    assert solved, "the fixtures need a one-shot instance that is solved"


@pytest.mark.parametrize("key", _params(GROUPS))
def test_matches_pogema_step_by_step(key):
    res = _result(key)
    for i, c in enumerate(GROUPS[key]):
        steps = len(c["actions"])
        where = f"{c['name']} ({c['on_target']}, {c['collision']})"
        want = np.asarray(c["positions"])
        got = res["pos"][i, : steps + 1]
        bad = np.nonzero((got != want).any(axis=(1, 2)))[0]
        assert bad.size == 0, (
            f"{where}: cells differ first after step {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"
        )
        np.testing.assert_array_equal(res["goal"][i, : steps + 1], np.asarray(c["goals_seen"]), err_msg=where)
        np.testing.assert_array_equal(res["reward"][i, :steps], np.asarray(c["rewards"]), err_msg=where)
        np.testing.assert_array_equal(
            res["terminated"][i, :steps], np.asarray(c["terminated"]), err_msg=where
        )
        trunc = np.asarray(c["truncated"]) & ~np.asarray(c["terminated"])
        np.testing.assert_array_equal(res["truncated"][i, :steps], trunc, err_msg=where)
        bits = np.frombuffer(base64.b64decode(c["obs_bits"]), np.uint8)
        want_obs = np.unpackbits(bits)[: int(np.prod(c["obs_shape"]))].reshape(c["obs_shape"])
        ok = np.asarray(c["occupancy_consistent"])
        # POGEMA's soft system can drop an agent from its own occupancy grid (see the fixture
        # script); there only the obstacle and target channels are comparable.
        assert ok.all() or c["collision"] == "soft", f"{where}: POGEMA occupancy grid out of sync"
        got_obs = res["obs"][i, : steps + 1]
        np.testing.assert_array_equal(got_obs[ok], want_obs[ok], err_msg=f"{where}: observations")
        np.testing.assert_array_equal(
            got_obs[~ok][:, :, [0, 2]],
            want_obs[~ok][:, :, [0, 2]],
            err_msg=f"{where}: obstacle/target channels",
        )
        if c["metrics"] is not None:
            for name in METRICS[c["on_target"]]:
                got_m = float(res["info"][name][i, steps - 1])
                assert got_m == pytest.approx(c["metrics"][name], rel=1e-6, abs=1e-6), f"{where}: {name}"


def _agents_channel_cases(key):
    res = _result(key, pogema_occupancy=True)
    for i, c in enumerate(GROUPS[key]):
        steps = len(c["actions"])
        bits = np.frombuffer(base64.b64decode(c["obs_bits"]), np.uint8)
        want = np.unpackbits(bits)[: int(np.prod(c["obs_shape"]))].reshape(c["obs_shape"])
        yield c, np.asarray(c["occupancy_consistent"]), res["obs"][i, : steps + 1], want


@pytest.mark.parametrize("key", _params(k for k in GROUPS if k[1] == "soft"))
def test_pogema_occupancy_reproduces_1_4_0s_agents_channel_where_its_grid_lost_an_agent(key):
    """POGEMA's PR #51 (soft collisions: an agent following a higher-index agent drops out of
    POGEMA 1.4.0's occupancy grid, hence out of every agents channel, until it moves again).
    alem's default follows the fix (the test above compares the other channels there); with
    ``pogema_occupancy=True`` every channel, the agents one included, equals 1.4.0's at every
    step, those where its grid was out of sync too."""
    lost = 0
    for c, ok, got, want in _agents_channel_cases(key):
        where = f"{c['name']} ({c['on_target']}, soft)"
        np.testing.assert_array_equal(got, want, err_msg=f"{where}: observations with pogema_occupancy")
        lost += int((~ok).sum())
    if key == ("micro", "soft"):
        assert lost > 0, "the micro-cases must include a step where POGEMA 1.4.0's grid lost an agent"
    default = _result(key)
    for i, (c, ok, _, want) in enumerate(_agents_channel_cases(key)):
        got_default = default["obs"][i, : len(c["actions"]) + 1]
        if (~ok).any():  # the default shows the agent that 1.4.0 lost: the two differ exactly there
            assert not np.array_equal(got_default[~ok][:, :, 1], want[~ok][:, :, 1])
        np.testing.assert_array_equal(got_default[ok], want[ok])


def test_pogema_occupancy_is_a_local_observation_option():
    with pytest.raises(alem.EnvArgumentError, match="pogema_occupancy=True changes the agents channel"):
        PathfindingEnv(4, 8, obs_type="global", pogema_occupancy=True)
    with pytest.raises(alem.EnvArgumentError, match="pogema_occupancy must be true or false"):
        PathfindingEnv(4, 8, pogema_occupancy="yes")
