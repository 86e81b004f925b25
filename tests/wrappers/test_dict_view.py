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
