"""alem.errors: every error class lives there, and the shared message helpers."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import alem
from alem import errors
from alem.errors import AlemError, did_you_mean, require_positive_int


def _alem_modules():
    skip = (  # optional dependencies
        "alem.text.llm.local_server",
        "alem.interop",
        "alem.interop.gymnax",
        "alem.text.train.verifiers_env",  # imports verifiers (the verifiers extra) at import
    )
    for info in pkgutil.walk_packages(alem.__path__, "alem."):
        if info.name.startswith(skip) or ".data" in info.name:
            continue
        yield importlib.import_module(info.name)


def test_every_error_class_is_defined_in_alem_errors():
    defined_elsewhere = {
        f"{mod.__name__}.{name}"
        for mod in _alem_modules()
        for name, obj in vars(mod).items()
        if inspect.isclass(obj) and issubclass(obj, AlemError) and obj.__module__ != "alem.errors"
    }
    assert not defined_elsewhere


def test_errors_for_bad_values_are_value_errors():
    for name in ("EnvArgumentError", "ConfigError", "LearnerConfigError", "UnknownEnvError", "ActionError"):
        assert issubclass(getattr(errors, name), ValueError), name
    with pytest.raises(ValueError, match="num_round"):
        alem.make("iterated_prisoners_dilemma-v0", num_round=3)


def test_did_you_mean_names_the_closest_candidate_or_nothing():
    assert did_you_mean("ipo", ["ippo", "mappo", "random"]) == " (did you mean 'ippo'?)"
    assert did_you_mean("zzzzzz", ["ippo", "mappo"]) == ""
    assert did_you_mean("x", []) == ""


@pytest.mark.parametrize("bad", [0, -3, 1.5, "4", True, None])
def test_require_positive_int_refuses_non_counts(bad):
    with pytest.raises(KeyError, match=r"num_envs must be an integer >= 1, got"):
        require_positive_int(bad, "num_envs", error=KeyError)


def test_require_positive_int_accepts_counts_and_optional_none():
    assert require_positive_int(7, "n") == 7
    assert require_positive_int(None, "n", allow_none=True) is None
    with pytest.raises(ValueError, match="null or an integer >= 1, got 0"):
        require_positive_int(0, "n", allow_none=True)


def test_require_positive_int_takes_numpy_integers_as_ints():
    import numpy as np

    out = require_positive_int(np.int64(3), "n")
    assert out == 3 and type(out) is int
    with pytest.raises(ValueError):
        require_positive_int(2.0, "n")
