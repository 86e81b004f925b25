"""LLMSettings: the LLM player's options, frozen and checked up front; the player's keywords build it."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import alem
from alem.text import LLMSettings
from alem.text.llm.player import LLMPlayer


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


def test_settings_are_frozen_and_default_to_the_local_model():
    s = LLMSettings()
    assert (s.backend, s.invalid, s.reprompts, s.seed) == ("local", "random", 2, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.reprompts = 5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("backend", "gpt"),
        ("invalid", "pass"),
        ("reprompts", -1),
        ("history", 1.5),
        ("max_concurrency", 0),
        ("max_consecutive_failures", True),
        ("max_failure_rate", 1.5),
        ("min_decisions", 0),
        ("legal_moves", "all"),
        ("rules", "long"),
        ("format", "xml"),
        ("obfuscate", "maybe"),
        ("seed", 1.0),
        ("structured", "yes"),
        ("cache_mode", "sometimes"),
        ("cache", 3),
        ("extra_body", [1]),
        ("price_in_per_mtok", -1),
        ("temperature", -0.5),
        ("max_tokens", 0),
        ("model", 7),
        ("threads", 0),
        ("model_path", "no/such/model.gguf"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_field(field, value):
    with pytest.raises(alem.AlemError, match=rf"llm\.{field}\b") as e:
        LLMSettings(**{field: value})
    assert "\n" not in str(e.value) and repr(value) in str(e.value)


def test_a_scripted_seat_plays_random_or_first():
    with pytest.raises(alem.AlemError, match=r"llm.script='best'.*'first'"):
        LLMSettings(backend="scripted", script="best")
    assert callable(LLMSettings(backend="scripted", script=lambda body: "x").script)


def test_the_player_builds_its_settings_from_its_keywords(ttt):
    llm = LLMPlayer(ttt, backend="scripted", reprompts=0, invalid="first", history=1)
    assert isinstance(llm.settings, LLMSettings)
    assert (llm.settings.reprompts, llm.settings.invalid, llm.settings.history) == (0, "first", 1)
    given = LLMSettings(backend="scripted", invalid="forfeit")
    assert LLMPlayer(ttt, settings=given).settings == given
    assert LLMPlayer(ttt, settings=given, reprompts=1).settings == dataclasses.replace(given, reprompts=1)
    with pytest.raises(alem.AlemError, match=r"llm.reprompt .*reprompts"):
        LLMPlayer(ttt, backend="scripted", reprompt=1)


def test_fallback_is_a_deprecated_alias_of_invalid(ttt):
    with pytest.warns(DeprecationWarning, match=r"llm.fallback.*llm.invalid"):
        llm = LLMPlayer(ttt, backend="scripted", fallback="first")
    assert llm.settings.invalid == "first" and llm.describe()["invalid"] == "first"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LLMPlayer(ttt, backend="scripted", fallback=None)  # the config's unset alias: no warning
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(alem.AlemError, match=r"llm.fallback.*'forfeit'.*'pass'"),
    ):
        LLMPlayer(ttt, backend="scripted", fallback="pass")
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(alem.AlemError, match="llm.fallback=first and llm.invalid=forfeit"),
    ):
        LLMPlayer(ttt, backend="scripted", fallback="first", invalid="forfeit")
    with pytest.warns(DeprecationWarning):  # the config holds invalid's default beside the old flag
        assert (
            LLMPlayer(ttt, backend="scripted", fallback="forfeit", invalid="random").settings.invalid
            == "forfeit"
        )
    with pytest.warns(DeprecationWarning, match="INVALID_RULES"):
        from alem.text.llm.player import FALLBACKS
    assert FALLBACKS == ("random", "first", "forfeit")


@pytest.mark.parametrize("preset", ["local", "openai", "scripted"])
def test_every_llm_preset_is_settings_and_keeps_the_old_flag(ttt, preset):
    """configs/llm/<preset>.yaml holds settings fields only (plus the unset deprecated alias), and
    ``llm.fallback=first`` on the command line still plays the first legal move."""
    cfg = OmegaConf.load(Path(alem.__file__).parents[1] / "configs" / "llm" / f"{preset}.yaml")
    cfg.seed = 0
    options = OmegaConf.to_container(cfg, resolve=True)
    assert options.pop("fallback") is None
    assert set(options) <= {f.name for f in dataclasses.fields(LLMSettings)}
    s = LLMSettings.from_options(options)
    assert s.invalid == "random" and s.backend == preset
    cfg.fallback = "first"
    with pytest.warns(DeprecationWarning, match="llm.fallback"):
        llm = LLMPlayer(ttt, **OmegaConf.to_container(cfg, resolve=True))
    assert llm.settings.invalid == "first"
