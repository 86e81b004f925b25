"""alem.backend: the backend a traced program is tuned for, and the override the cost proxy uses."""

import jax
import pytest

from alem.backend import compiling_for, target_backend


def test_the_default_is_jax_default_backend_and_the_override_nests():
    default = target_backend()
    assert default == {"cuda": "gpu", "rocm": "gpu"}.get(jax.default_backend(), jax.default_backend())
    with compiling_for("gpu"):
        assert target_backend() == "gpu"
        with compiling_for("tpu"):
            assert target_backend() == "tpu"
        assert target_backend() == "gpu"
    assert target_backend() == default


def test_an_unknown_backend_is_refused_by_name():
    with pytest.raises(ValueError, match="'cuda'"), compiling_for("cuda"):
        pass
