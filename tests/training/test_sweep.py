"""Vmapped hyperparameter sweeps (``sweep.<knob>=[...]``): one compiled program whose rows train as
separate runs of each configuration would, and one-line refusals of what cannot be swept."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hydra import compose, initialize_config_module

import alem
from alem.errors import ConfigError
from tests.tiny_runs import TINY_RUN


def _cfg(*overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="config", overrides=["env=coordination", *TINY_RUN, *overrides])


def _rows(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_each_row_of_a_sweep_trains_as_a_run_of_its_configuration_would(tmp_path, capsys):
    from alem.train import run

    grid = ["sweep.lr=[0.01,0.0003]", "sweep.gamma=[0.9]", "sweep.ent_coef=[0.2]", "num_seeds=2"]
    # row k trains as configuration k alone (the second one's run; the first differs from it)
    run(_cfg(*grid), tmp_path / "sweep")
    res = json.loads((tmp_path / "sweep" / "results.json").read_text())
    assert res["rows"] == 4 and res["num_seeds"] == 2
    configs = res["sweep"]["configurations"]
    assert [(c["lr"], c["gamma"]) for c in configs] == [(0.01, 0.9), (0.0003, 0.9)]
    # the console names every configuration (header and results) and never averages across them
    out = capsys.readouterr().out.splitlines()
    assert "sweep=2 configurations (ent_coef=[0.2] x gamma=[0.9] x lr=[0.01, 0.0003])" in out[0]
    trained = [line.split() for line in out if line.strip().startswith("trained")]
    assert [t[2:5] for t in trained] == [["ent_coef=0.2", "gamma=0.9", f"lr={lr}"] for lr in ("0.01", "0.0003")]
    assert [float(t[5]) for t in trained] == pytest.approx([c["trained_return_mean"] for c in configs], abs=1e-3)
    rows = _rows(tmp_path / "sweep")
    assert [(r["config"], r["seed"]) for r in rows[:4]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for k, lr in [(1, 0.0003)]:
        alone = tmp_path / f"lr{k}"
        run(_cfg(f"algo.lr={lr}", "algo.gamma=0.9", "algo.ent_coef=0.2", "num_seeds=2"), alone)
        mine = [r for r in rows if r["config"] == k]
        theirs = _rows(alone)
        assert [r["seed"] for r in mine] == [r["seed"] for r in theirs]
        for key in ("policy_loss", "value_loss", "entropy"):
            np.testing.assert_allclose([r[key] for r in mine], [r[key] for r in theirs], rtol=2e-4, atol=1e-6)
        want = json.loads((alone / "results.json").read_text())["trained_return_per_seed"]
        assert configs[k]["trained_return_per_seed"] == [float(np.mean(w)) for w in want]
    # the two learning rates are two different runs: the sweep is not one configuration repeated
    assert not np.allclose(
        [r["policy_loss"] for r in rows if r["config"] == 0],
        [r["policy_loss"] for r in rows if r["config"] == 1],
    )
    # a sweep's rows play as checkpoints: row 3 is the second configuration's second seed
    from alem.algos.checkpoint_player import CheckpointPlayer

    player = CheckpointPlayer(alem.make("coordination-v0"), spec=str(tmp_path / "sweep"), seed_index=3)
    assert player.learner.cfg.sweep == ("ent_coef", "gamma", "lr")
    with pytest.raises(alem.AlemError, match=r"seed_index=4 out of range: the run has 4 rows"):
        CheckpointPlayer(alem.make("coordination-v0"), spec=str(tmp_path / "sweep"), seed_index=4)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (
            ["+sweep.hidden=[8,16]"],
            r"sweep.hidden: .* hidden is structural .* python -m alem.train -m algo.hidden=",
        ),
        (["sweep.lr=0.1"], r"sweep.lr must be a non-empty list of numbers"),
        (["sweep.lr=[]"], r"sweep.lr must be a non-empty list of numbers"),
        (["sweep.lr=[0.1,abc]"], r"sweep.lr must list numbers, got 'abc'"),
        (["sweep.lr=[0.1,-1]"], r"sweep.lr=\[0.1, -1\]: algo.lr must be > 0, got -1"),
        (["sweep.gamma=[0.9,1.5]"], r"algo.gamma must be in \[0, 1\], got 1.5"),
        (["sweep.lr=[0.1,0.1]"], r"sweep.lr lists a value twice"),
        (["algo=random", "sweep.lr=[0.1,0.2]"], r"sweep.lr: a vmapped sweep varies the PPO core's knobs"),
        (["algo=iql", "sweep.lr=[0.1,0.2]"], r"sweep.lr: a vmapped sweep varies the PPO core's knobs"),
    ],
)
def test_what_cannot_be_swept_is_refused_in_one_line_before_anything_runs(overrides, match):
    from alem.train import plan

    if "algo=random" in overrides:  # the random baseline has none of TINY_RUN's options
        with initialize_config_module(config_module="alem.configs", version_base=None):
            cfg = compose(config_name="config", overrides=["env=coordination", *overrides])
    else:
        cfg = _cfg(*overrides)
    with pytest.raises(ConfigError, match=match):
        plan(cfg, alem.make(cfg.env.id, **cfg.env.kwargs))


def test_a_sweep_too_large_for_memory_is_named_as_the_cause():
    """10^6 configurations x 1 seed: the refusal names the sweep, not only num_envs and num_seeds
    (it used to advise lowering num_seeds=1)."""
    from alem.train import plan

    values = lambda scale: "[" + ",".join(f"{scale * (k + 1):g}" for k in range(100)) + "]"
    cfg = _cfg("algo.hidden=[256,256]", f"sweep.lr={values(1e-4)}", f"sweep.ent_coef={values(1e-3)}", f"sweep.clip_eps={values(1e-3)}")
    with pytest.raises(ConfigError, match=r"x 1,000,000 configurations of the sweep \(sweep\.\*\).*fewer sweep"):
        plan(cfg, alem.make(cfg.env.id, **cfg.env.kwargs))
