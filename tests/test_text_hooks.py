"""The text hooks mixin (alem.text_hooks): opt-in text support and the default parser."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import alem
from alem.core import MultiAgentEnv
from alem.registry import load_entry_point
from alem.text_hooks import TEXT_HOOKS, TextHooks, words
from alem.wrappers import EpisodeStats
from alem.wrappers.episode_stats import EpisodeStatsState


class _Plain(MultiAgentEnv):
    """An env without text hooks."""

    def __init__(self):
        super().__init__()
        self.agents, self.id = ("a",), "plain-v0"


class _Talker(TextHooks, _Plain):
    """The same env with text hooks: three named actions."""

    def action_names(self, agent: int = 0) -> list[str]:
        return ["go left", "stay", "go right"]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return {"wait": 1}

    def action_space(self, agent=None):
        one = alem.spaces.Discrete(3)
        return one if agent is not None else alem.spaces.stack([one])

    @property
    def default_params(self):
        return alem.EnvParams()

    def action_mask(self, state, params):
        return state  # the state is the mask here


def test_words_keeps_lower_case_alphanumeric_words():
    assert words("  Go, LEFT!! (now) 2x ") == "go left now 2x"
    assert words("...") == ""


def test_the_mixin_turns_text_support_on_and_the_base_keeps_it_off():
    assert MultiAgentEnv.supports_text is False and TextHooks.supports_text is True
    assert _Talker().supports_text and not _Plain().supports_text
    assert alem.TextHooks is TextHooks


@pytest.mark.parametrize("hook", TEXT_HOOKS)
def test_a_text_hook_on_an_env_without_text_names_the_problem(hook):
    env = _Plain()
    assert not hasattr(env, hook)
    with pytest.raises(AttributeError, match=rf"plain-v0 has no text support.*{hook}\(\).*TextHooks"):
        getattr(env, hook)
    with pytest.raises(AttributeError, match="plain-v0 has no text support"):
        getattr(EpisodeStats(env), hook)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        env.no_such_thing  # noqa: B018  (other attributes keep the usual message)


def test_the_default_parser_reads_names_aliases_sentences_and_indices():
    env = _Talker()
    assert env.parse_action("Go Left.") == 0
    assert env.parse_action("wait") == 1
    assert env.parse_action("I will go right now") == 2
    assert env.parse_action("action 1") == 1 and env.parse_action("7") is None
    assert env.parse_action("go left or stay") is None  # names two actions
    assert env.parse_action("jump") is None


def test_one_letter_aliases_count_only_as_the_whole_reply():
    """Matching pennies' ``h``/``t``, rock-paper-scissors' ``r``/``p``/``s``: inside a sentence
    a lone letter is mostly a piece of a word ("can't" -> "can t"), not a move."""
    pennies, rps = alem.make("matching_pennies-v0"), alem.make("rock_paper_scissors-v0")
    assert pennies.parse_action("t") == 1 and pennies.parse_action(" H. ") == 0
    assert pennies.parse_action("I can't decide") is None  # was tails
    assert pennies.parse_action("heads, can't lose") == 0  # was two moves (heads, t)
    assert rps.parse_action("it's paper") == 1  # was two moves (s = scissors, paper)
    assert rps.parse_action("P") == 1
    assert alem.make("connect_four-v0").parse_action("go with 3") == 2  # digits still count


def test_legal_action_names_follow_the_mask():
    env = _Talker()
    assert env.legal_action_names(np.array([[True, False, True]]), 0) == ["go left", "go right"]
    wrapped = EpisodeStats(env)  # a wrapper maps its state to the inner one first
    stats_state = EpisodeStatsState(np.array([[False, True, False]]), *[None] * 6)
    assert wrapped.legal_action_names(stats_state, 0) == ["stay"]


def test_every_hook_is_a_method_of_the_mixin_and_not_of_the_base():
    for hook in TEXT_HOOKS:
        assert inspect.isfunction(getattr(TextHooks, hook))
        assert hook not in vars(MultiAgentEnv)


def test_registered_text_envs_are_the_envs_with_the_mixin():
    for env_id, spec in alem.registry().items():
        if not isinstance(spec.entry_point, str) or not spec.entry_point.startswith("alem."):
            continue  # ids other tests register
        ctor = load_entry_point(spec.entry_point)
        if inspect.isclass(ctor):
            assert issubclass(ctor, TextHooks) == spec.text, env_id
        else:
            assert not spec.text, env_id  # factories (gymnax) build envs without text
