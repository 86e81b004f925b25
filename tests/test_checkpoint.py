"""alem.checkpoint: a checkpoint is read whole into its template, or, for a player, by its
leading leaves (the parameters) when the rest is laid out otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from alem import checkpoint
from alem.errors import CheckpointError


def test_a_checkpoint_whose_later_leaves_differ_is_read_by_its_leading_ones(tmp_path):
    """A pathfinding run saved before its env info gained episode_metrics has fewer leaves after
    its parameters: a whole restore refuses it; the parameters (leading) are still read."""
    # (params, info) as a learner state's fields: the parameters lead the flatten order
    saved = ({"w": np.arange(6.0).reshape(2, 3), "b": np.ones(3)}, {"CSR": np.zeros(())})
    path = checkpoint.save(tmp_path, 7, saved)
    now = (
        {"w": np.zeros((2, 3)), "b": np.zeros(3)},
        {"CSR": np.zeros(()), "ISR": np.zeros(()), "SoC": np.zeros(())},
    )
    with pytest.raises(CheckpointError, match="could not be restored"):
        checkpoint.restore(path, now)
    got = checkpoint.restore(path, now, leading=2)
    np.testing.assert_array_equal(got[0]["w"], saved[0]["w"])
    np.testing.assert_array_equal(got[0]["b"], saved[0]["b"])
    assert float(got[1]["SoC"]) == 0.0  # the template's
    wrong = ({"w": np.zeros((3, 3)), "b": np.zeros(3)}, now[1])
    with pytest.raises(CheckpointError):  # other shapes are still refused
        checkpoint.restore(path, wrong, leading=2)


def test_the_old_module_name_warns_and_is_the_same_module():
    """alem.training.checkpoint moved beside alem.rundir; the old name is an alias for one release."""
    import importlib
    import sys

    sys.modules.pop("alem.training.checkpoint", None)
    with pytest.warns(DeprecationWarning, match="moved to alem.checkpoint"):
        old = importlib.import_module("alem.training.checkpoint")
    assert old is checkpoint and old.restore is checkpoint.restore
