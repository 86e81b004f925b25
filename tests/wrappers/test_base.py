"""The wrapper base class forwards the static description, methods and text hooks."""

from __future__ import annotations

import jax
import numpy as np

import alem
from alem.core import MultiAgentEnv
from alem.wrappers import AutoReset, EpisodeStats, FlattenObs
from alem.wrappers.base import FORWARDED_ATTRIBUTES, STATE_METHODS, Wrapper


def test_every_declared_attribute_of_the_base_class_is_forwarded():
    assert set(MultiAgentEnv.__annotations__) <= set(FORWARDED_ATTRIBUTES)
    env = alem.make("tic_tac_toe-v0", illegal_action="lose")
    wrapped = EpisodeStats(AutoReset(env))
    assert isinstance(wrapped, MultiAgentEnv) and isinstance(wrapped, Wrapper)
    for name in FORWARDED_ATTRIBUTES:
        ours, theirs = getattr(wrapped, name), getattr(env, name)
        assert ours is theirs or ours == theirs, name
    assert wrapped.illegal_action == "lose" and wrapped.illegal_action_modes == ("replace", "lose")
    assert wrapped.id == "tic_tac_toe-v0" and wrapped.turn_based and wrapped.supports_text


def test_state_methods_and_text_hooks_see_the_inner_state():
    assert {"render_text", "legal_action_names", "observe", "action_mask"} <= set(STATE_METHODS)
    env = alem.make("tic_tac_toe-v0")
    wrapped = EpisodeStats(FlattenObs(env))
    state, _ = wrapped.reset(jax.random.key(0))
    state, _ = wrapped.step(jax.random.key(1), state, np.array([4, 0]))
    inner = state.env_state
    assert wrapped.render_text(state, 0) == env.render_text(inner, 0)
    assert wrapped.legal_action_names(state, 1) == env.legal_action_names(inner, 1)
    assert len(wrapped.legal_action_names(state, 1)) == 8  # the centre is taken
    np.testing.assert_array_equal(wrapped.action_mask(state, None), env.action_mask(inner, None))
    assert wrapped.rules_text() == env.rules_text()
    assert wrapped.action_names(0) == env.action_names(0)
    assert wrapped.parse_action("centre", 0) == env.parse_action("centre", 0)


def test_a_wrapper_has_text_hooks_exactly_when_the_wrapped_env_has():
    text, plain = alem.make("stag_hunt-v0"), alem.make("mpe/simple-v0")
    assert hasattr(EpisodeStats(text), "render_text") and hasattr(EpisodeStats(text), "parse_action")
    assert not hasattr(EpisodeStats(plain), "render_text")
    assert not hasattr(EpisodeStats(plain), "rules_text")
    assert EpisodeStats(plain).supports_text is False
