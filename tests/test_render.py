"""alem.render: rollout frames, GIF export, the one-call helper."""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.render import render_gif, rollout_frames, save_gif

ENV_ID = "mpe/simple-v0"  # one agent, cheap to compile


@pytest.fixture(scope="module")
def env():
    return alem.make(ENV_ID)


def test_rollout_frames_shapes_and_motion(env):
    frames = rollout_frames(env, jax.random.key(0), 6)
    assert len(frames) == 7
    assert all(f.shape == (256, 256, 3) and f.dtype == np.uint8 for f in frames)
    assert any(not np.array_equal(frames[0], f) for f in frames[1:]), "a random agent should move"


def test_rollout_frames_uses_the_policy_and_resets_after_episodes():
    env = alem.make(ENV_ID, max_steps=3)
    calls = []

    def still(key, ts):
        calls.append(ts.obs.shape)
        return jnp.zeros((1,), jnp.int32)  # no-op: nothing moves within an episode

    frames = rollout_frames(env, jax.random.key(1), 7, policy=still)
    assert len(calls) == 7 and calls[0] == (1, 4)
    same = [np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False)]
    # Frames 1-3 are steps of the first episode (3 is its terminal state); step 4 starts from
    # a new reset, and so does step 7.
    assert same == [True, True, True, False, True, True, False]


def test_a_policy_with_a_reset_method_is_told_each_episode_start():
    """A recurrent policy zeroes its state there: reset at the first reset and after each of the
    3-step episodes, so the calls between two resets are one episode's steps."""
    env = alem.make(ENV_ID, max_steps=3)
    log = []

    class Recurrent:
        def reset(self):
            log.append("reset")

        def __call__(self, key, ts):
            log.append("act")
            return jnp.zeros((1,), jnp.int32)

    rollout_frames(env, jax.random.key(1), 7, policy=Recurrent())
    assert log == ["reset", *["act"] * 3, "reset", *["act"] * 3, "reset", "act"]


def _pil():
    return pytest.importorskip("PIL.Image")


def test_save_gif_writes_every_frame(tmp_path):
    image = _pil()
    frames = [np.full((8, 10, 3), 40 * i, np.uint8) for i in range(5)]
    path = save_gif(frames, tmp_path / "x.gif", fps=20)
    with image.open(path) as im:
        assert im.size == (10, 8)
        assert im.n_frames == 5
        assert im.info["duration"] == 50


def test_save_gif_rejects_bad_input(tmp_path):
    _pil()
    with pytest.raises(alem.EnvArgumentError, match="no frames"):
        save_gif([], tmp_path / "x.gif")
    with pytest.raises(alem.EnvArgumentError, match="one shape"):
        save_gif([np.zeros((4, 4, 3), np.uint8), np.zeros((5, 4, 3), np.uint8)], tmp_path / "x.gif")
    with pytest.raises(alem.EnvArgumentError, match="fps"):
        save_gif([np.zeros((4, 4, 3), np.uint8)], tmp_path / "x.gif", fps=0)


def test_save_gif_without_pillow_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(alem.DependencyNotInstalled, match="pip install"):
        save_gif([np.zeros((4, 4, 3), np.uint8)], tmp_path / "x.gif")


def test_render_gif_one_call(tmp_path):
    image = _pil()
    path = render_gif(ENV_ID, tmp_path / "simple.gif", num_steps=4, seed=3)
    with image.open(path) as im:
        assert im.size == (256, 256)
        assert 2 <= im.n_frames <= 5  # Pillow may merge identical consecutive frames
    with pytest.raises(alem.EnvArgumentError, match="env id"):
        render_gif(alem.make(ENV_ID), tmp_path / "y.gif", num_steps=1, max_steps=3)


def test_render_cli_writes_a_gif_and_never_overwrites_one(tmp_path, capsys):
    image = _pil()
    from alem.render import main

    out = tmp_path / "simple.gif"
    assert main([ENV_ID, str(out), "--steps", "3", "--fps", "10"]) == out
    with image.open(out) as im:  # Pillow merges identical frames and adds up their durations
        total = 0
        for i in range(im.n_frames):
            im.seek(i)
            total += im.info["duration"]
        assert total == 4 * 100  # the reset and three steps, 100 ms each
    before = out.read_bytes()
    with pytest.raises(SystemExit):
        main([ENV_ID, str(out), "--steps", "5"])
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
    with pytest.raises(SystemExit):  # a directory that is no run: a clear error, nothing written
        main([ENV_ID, str(tmp_path / "other.gif"), "--run", str(tmp_path)])
    assert "no results.json" in capsys.readouterr().err and not (tmp_path / "other.gif").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["{tmp}/missing/x.gif"],
            "cannot write {tmp}/missing/x.gif: the folder {tmp}/missing does not exist",
        ),
        (["{tmp}/x.gif", "--steps", "0"], "argument --steps: must be an integer >= 1, got 0"),
        (["{tmp}/x.gif", "--fps", "0"], "argument --fps: must be a number > 0, got 0.0"),
        (
            ["{tmp}/x.gif", "--run", "{tmp}", "--seed-index", "-1"],
            "argument --seed-index: must be an integer >= 0, got -1",
        ),
        (["{tmp}/x.gif", "--greedy"], "argument --greedy: is read with --run <train run dir> only"),
        (["{tmp}/x.png"], "argument out: the file must end in .gif, got {tmp}/x.png"),
    ],
)
def test_render_cli_refuses_bad_arguments_in_one_line_before_writing(tmp_path, capsys, args, said):
    from alem.render import main

    with pytest.raises(SystemExit) as e:
        main([ENV_ID, *(a.format(tmp=tmp_path) for a in args)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err[-1] == f"python -m alem.render: error: {said.format(tmp=tmp_path)}"
    assert list(tmp_path.iterdir()) == []
