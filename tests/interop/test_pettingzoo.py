"""alem envs as PettingZoo envs (PettingZoo's own API and seed tests), and alem players in mpe2.

The default suite runs PettingZoo's tests on one env of each kind (simultaneous, N > 2,
turn-based, heterogeneous agents, continuous actions, agents that leave early); the
``slow`` sweep runs them on every registered id. Episodes through the adapters are
replayed in plain alem (same keys, same actions) and must match step by step.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import alem
from alem.interop import _common
from alem.interop._common import episode_keys
from alem.interop.pettingzoo import AlemAECEnv, aec_env, parallel_env, play
from alem.players import FunctionPlayer
from tests.ids import contract_ids

#: One env of each kind, with small shapes: (id, make kwargs).
DEFAULT = {
    "iterated_prisoners_dilemma-v0": ("iterated_prisoners_dilemma-v0", {}),
    "iterated_public_goods-v0": ("iterated_public_goods-v0", {"num_rounds": 5}),
    "tic_tac_toe-v0": ("tic_tac_toe-v0", {}),
    "mpe/simple_speaker_listener-v0": ("mpe/simple_speaker_listener-v0", {}),
    "mpe/simple_speaker_listener-v0[continuous]": (
        "mpe/simple_speaker_listener-v0",
        {"continuous_actions": True},
    ),
    "gymnax/pendulum-v1": ("gymnax/pendulum-v1", {}),
    "pathfinding_disappear-v0[small]": ("pathfinding_disappear-v0", {"num_agents": 4, "height": 8}),
}

#: Registered ids the adapters cannot serve, with the reason (none at present).
UNFIT: dict[str, str] = {}

#: Advisory warnings PettingZoo's tests print, which its own versions of these envs avoid by
#: name (PettingZoo exempts mpe2's envs from them); anything else fails the test.
MPE_ADVISORY = (
    "observation space value is infinity",
    "observation space value is -infinity",
    "Agents have different observation space sizes",
    "Observations are different shapes",
    "Observation numpy array is all zeros",  # simple_crypto: eve's first observation (as in mpe2)
)


#: SMAX: a dead unit's observation is all zeros (as JaxMARL's); its agent stays in the env.
SMAX_ADVISORY = ("Observation numpy array is all zeros",)


def _advisory(id: str) -> tuple[str, ...]:
    if id.startswith("smax_"):
        return SMAX_ADVISORY
    return MPE_ADVISORY if id.startswith("mpe/") else ()


def _run_pettingzoo_tests(env: alem.MultiAgentEnv, num_cycles: int) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(parallel_env(env), num_cycles=num_cycles)
        api_test(aec_env(env), num_cycles=num_cycles)
        parallel_seed_test(lambda: parallel_env(env), num_cycles=num_cycles)
        seed_test(lambda: aec_env(env), num_cycles=num_cycles)
    allowed = _advisory(env.id)
    unexpected = sorted(
        {str(w.message) for w in caught if not any(a in str(w.message) for a in allowed)} - {""}
    )
    assert not unexpected, f"{env.id}: PettingZoo warned {unexpected}"
    reset, step = _common.compiled(env)
    assert reset._cache_size() == 1 and step._cache_size() == 1, "reset/step compiled more than once"


@pytest.mark.parametrize("name", list(DEFAULT))
def test_pettingzoo_api_and_seed_tests(name, alem_env):
    id, kwargs = DEFAULT[name]
    _run_pettingzoo_tests(alem_env(id, **kwargs), num_cycles=40)


@pytest.mark.exhaustive
@pytest.mark.parametrize("id", contract_ids())  # every id; SMAX by three maps (tests/ids.py)
def test_pettingzoo_api_sweep(id, alem_env):
    if id in UNFIT:
        pytest.skip(UNFIT[id])
    _run_pettingzoo_tests(alem_env(id), num_cycles=200)
    if id.startswith("mpe/") and id != "mpe/simple-v0":
        _run_pettingzoo_tests(alem_env(id, continuous_actions=True), num_cycles=50)


# ---------------------------------------------------------------------------- same as alem
def _sample(space: Any, info: dict, rng: np.random.Generator) -> Any:
    mask = info.get("action_mask")
    if mask is not None:
        return int(rng.choice(np.flatnonzero(mask)))
    return rng.uniform(space.low, space.high).astype(space.dtype)


def _alem_replay(env: alem.MultiAgentEnv, seed: int, joint: list[np.ndarray]) -> list:
    """Plain alem: the adapter's documented key chain and the given joint actions."""
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    keys = episode_keys(seed)
    state, ts = reset(next(keys), env.default_params)
    out = [jax.device_get(ts)]
    for actions in joint:
        state, ts = step(next(keys), state, jnp.asarray(actions), env.default_params)
        out.append(jax.device_get(ts))
    return out


def _true(env: alem.MultiAgentEnv, obs: np.ndarray, i: int) -> np.ndarray:
    dims = getattr(env, "obs_dims", None)
    return obs[i, : dims[i]] if dims is not None else obs[i]


@pytest.mark.parametrize(
    "name",
    ["iterated_prisoners_dilemma-v0", "mpe/simple_speaker_listener-v0", "pathfinding_disappear-v0[small]"],
)
def test_parallel_episode_equals_alem_rollout(name, alem_env):
    id, kwargs = DEFAULT[name]
    env = alem_env(id, **kwargs)
    pz = parallel_env(env)
    rng = np.random.default_rng(0)
    seed = 7
    obs, infos = pz.reset(seed=seed)
    agents_seen, records, joint = [list(pz.agents)], [], []
    while pz.agents:
        actions = {a: _sample(pz.action_space(a), infos[a], rng) for a in pz.agents}
        arr = np.zeros(env.num_agents, np.int32)  # alem ignores the actions of agents that left
        for a, act in actions.items():
            arr[env.agents.index(a)] = act
        joint.append(arr)
        obs, rewards, terms, truncs, infos = pz.step(actions)
        records.append((obs, rewards, terms, truncs))
        agents_seen.append(list(pz.agents))

    ref = _alem_replay(env, seed, joint)
    totals_pz = dict.fromkeys(env.agents, 0.0)
    totals_alem = np.zeros(env.num_agents)
    for t, (obs, rewards, terms, truncs) in enumerate(records):
        ts = ref[t + 1]
        done = bool(ts.terminated or ts.truncated)
        live_before = agents_seen[t]
        assert sorted(rewards) == sorted(live_before)
        for a in live_before:
            i = env.agents.index(a)
            assert rewards[a] == pytest.approx(float(ts.reward[i]))
            np.testing.assert_array_equal(obs[a], _true(env, ts.obs, i))
            assert obs[a].shape == pz.observation_space(a).shape
            assert pz.observation_space(a).contains(obs[a])
            assert terms[a] == (bool(ts.terminated) or not ts.acting[i])
            assert truncs[a] == bool(ts.truncated)
            totals_pz[a] += rewards[a]
        totals_alem += np.asarray(ts.reward)
        expected_after = [] if done else [a for a in live_before if ts.acting[env.agents.index(a)]]
        assert agents_seen[t + 1] == expected_after
    assert np.allclose([totals_pz[a] for a in env.agents], totals_alem)
    assert len(records) == len(ref) - 1 and bool(ref[-1].terminated or ref[-1].truncated)
    if id.startswith("pathfinding"):  # agents left one by one before the end, as the env says
        assert any(0 < len(s) < env.num_agents for s in agents_seen[1:-1]) or len(records) == 64


def test_turn_based_aec_episode_equals_alem_rollout(alem_env):
    env = alem_env("tic_tac_toe-v0")
    pz = aec_env(env)
    assert isinstance(pz, AlemAECEnv)
    rng = np.random.default_rng(3)
    totals = dict.fromkeys(env.agents, 0.0)
    joint, movers = [], []
    pz.reset(seed=5)
    for agent in pz.agent_iter():
        obs, reward, term, trunc, info = pz.last()
        totals[agent] += reward
        if term or trunc:
            pz.step(None)
            continue
        action = _sample(pz.action_space(agent), info, rng)
        arr = np.zeros(env.num_agents, np.int32)
        arr[env.agents.index(agent)] = action
        joint.append(arr)
        movers.append(agent)
        pz.step(action)
    assert not pz.agents
    ref = _alem_replay(env, 5, joint)
    for t, agent in enumerate(movers):  # the selected agent is the one alem says is to move
        assert env.agents[int(np.argmax(ref[t].acting))] == agent
    returns = np.sum([np.asarray(ts.reward) for ts in ref[1:]], axis=0)
    assert [totals[a] for a in env.agents] == pytest.approx(returns.tolist())
    assert bool(ref[-1].terminated)


def test_parallel_view_of_a_turn_based_game(alem_env):
    env = alem_env("tic_tac_toe-v0")
    pz = parallel_env(env)
    obs, infos = pz.reset(seed=0)
    assert pz.agents == list(env.agents)
    mover = [a for a in pz.agents if infos[a]["action_mask"].any()]
    assert mover == ["player_0"] and infos["player_1"]["action_mask"].sum() == 0
    with pytest.raises(ValueError, match="no action for acting agent 'player_0'"):
        pz.step({"player_1": 0})
    _, rewards, *_ = pz.step({"player_0": 4})  # the waiting player may omit its action
    assert rewards == {"player_0": 0.0, "player_1": 0.0}
    assert pz.agents == ["player_0", "player_1"]


def test_adapter_details(alem_env):
    env = alem_env("mpe/simple_speaker_listener-v0")
    a, b = parallel_env(env), parallel_env(env, render_mode="rgb_array")
    assert a.session._step is b.session._step is _common.compiled(env)[1]  # compiled once per env
    assert a.observation_space("speaker_0").shape == (3,)
    assert a.observation_space("listener_0").shape == (11,)
    assert a.action_space("speaker_0").n == 3 and a.action_space("listener_0").n == 5
    b.reset(seed=1)
    frame = b.render()
    assert frame.ndim == 3 and frame.shape[-1] == 3
    assert b.state().shape == b.state_space.shape == (14,)
    with pytest.raises(RuntimeError, match="episode is over"):
        while True:
            b.step({ag: 0 for ag in b.agents})
    with pytest.raises(ValueError, match="render_mode"):
        parallel_env(env, render_mode="human")
    assert parallel_env("iterated_prisoners_dilemma-v0", num_rounds=3).env.default_params.num_rounds == 3


# ---------------------------------------------------------------------------- players in PettingZoo envs
def _constant(action: int) -> FunctionPlayer:
    return FunctionPlayer(lambda key, turn: jnp.full((1,), action, jnp.int32), f"always_{action}")


def test_play_exact_returns_in_both_views(alem_env):
    env = alem_env("iterated_prisoners_dilemma-v0")
    players = [_constant(0), _constant(1)]  # cooperate vs defect: S=0 and T=5 for 20 rounds
    expected = {"player_0": 0.0, "player_1": 100.0}
    assert play(parallel_env(env), players, episodes=2) == expected
    assert play(aec_env(env), players, episodes=2) == expected


def test_play_random_players_in_mpe2(alem_env):
    mpe2 = pytest.importorskip("mpe2")
    from mpe2 import simple_speaker_listener_v4, simple_spread_v3

    like = alem_env("mpe/simple_spread-v0")
    par = play(simple_spread_v3.parallel_env(), ["random"] * 3, episodes=1, seed=0, like=like)
    aec = play(simple_spread_v3.env(), ["random"] * 3, episodes=1, seed=0, like=like)
    assert par == aec  # same seeds, same keys per seat decision: the same episodes
    assert set(par) == {"agent_0", "agent_1", "agent_2"}
    assert all(np.isfinite(v) and v < 0 for v in par.values())
    other = play(simple_spread_v3.parallel_env(), ["random"] * 3, episodes=1, seed=1, like=like)
    assert other != par
    # heterogeneous agents, continuous actions, no alem twin
    cont = play(simple_speaker_listener_v4.parallel_env(continuous_actions=True), ["random"] * 2, episodes=1)
    assert cont["speaker_0"] == cont["listener_0"] < 0  # a shared team reward
    del mpe2


def test_play_reads_dict_observation_masks():
    """PettingZoo's classic tic-tac-toe puts the mask in a Dict observation and ends a game with
    -1 for an illegal move (0 for the other player): returns sum to zero only if masks are read."""
    pytest.importorskip("pettingzoo.classic")
    from pettingzoo.classic import tictactoe_v3

    returns = play(tictactoe_v3.env(), ["random", "random"], episodes=30, seed=0)
    assert set(returns) == {"player_1", "player_2"}
    assert returns["player_1"] + returns["player_2"] == pytest.approx(0.0)


def test_an_action_outside_the_space_is_refused_naming_the_agent(alem_env, fault_report):
    """They used to be cast and stepped: 9 in tic-tac-toe became the first legal move, 1.5 became 1."""
    aec = aec_env(alem_env("tic_tac_toe-v0"))
    aec.reset(seed=0)
    for bad in (9, -1, 1.5, np.array([1, 2])):
        with pytest.raises(ValueError, match=r"tic_tac_toe-v0 'player_0': action .* not in the action space"):
            aec.step(bad)
    aec.step(4)  # inside the space: played
    assert aec.agent_selection == "player_1"
    pz = parallel_env(alem_env("mpe/simple_speaker_listener-v0", continuous_actions=True))
    pz.reset(seed=0)
    good = {a: pz.action_space(a).low.copy() for a in pz.agents}
    for bad in (np.full(3, np.nan), np.full(3, 2.0), np.zeros(4)):
        with pytest.raises(ValueError, match=r"'speaker_0': action .* not in the action space Box"):
            pz.step({**good, "speaker_0": bad})
    pz.step(good)
    fault_report(faults=1)
