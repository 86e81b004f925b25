"""alem.arena.partners (python -m alem.partners build): pools trained, listed, resumed, refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_module

import alem
from alem.arena.command import run as evaluate_run
from alem.arena.crossplay import checkpoint_digest, read_pool
from alem.arena.partners import build
from alem.errors import ConfigError

TINY = [
    "algo.hidden=[8]",
    "algo.num_envs=4",
    "algo.num_steps=8",
    "algo.num_minibatches=2",
    "algo.total_steps=64",
    "chunk_updates=2",
    "eval.num_steps=8",
]


def cfg(*overrides, config="partners"):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name=config, overrides=list(overrides))


def _build(out, *overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        c = compose(config_name="partners", overrides=["env=coordination", *overrides])
        return build(c, out)


@pytest.mark.integration  # two tiny training runs
def test_a_built_pool_lists_each_seed_as_a_partner_and_plays_crossplay(tmp_path):
    out = tmp_path / "pool"
    tiny = "train_overrides=[" + ",".join(f'"{o}"' for o in TINY) + "]"
    manifest = _build(out, "algos=[ippo]", "num_seeds=3", tiny)
    partners = manifest["partners"]
    assert [p["name"] for p in partners] == ["ippo_s0", "ippo_s1", "ippo_s2"]
    assert [p["kwargs"] for p in partners] == [{"seed_index": k} for k in range(3)]
    assert {p["digest"] for p in partners} == {checkpoint_digest(out / "ippo")}
    assert sorted(p["split"] for p in partners) == ["heldout", "train", "validation"]
    env = alem.make("coordination-v0")
    assert len(read_pool(out, env).partners) == 3 and len(read_pool(f"{out}:train", env).partners) == 1
    res = evaluate_run(
        cfg(
            "env=coordination",
            "mode=crossplay",
            "players=[random]",
            f"partners={out}",
            "episodes=4",
            config="evaluate",
        ),
        tmp_path / "xp",
    )
    assert res["partners"] == ["ippo_s0", "ippo_s1", "ippo_s2"] and res["complete"]

    # A build killed before its manifest: resume=true keeps the trained run and lists the pool again.
    saved = (out / "partners.json").read_text()
    (out / "partners.json").unlink()
    trained = (out / "ippo" / "results.json").stat().st_mtime_ns
    _build(out, "algos=[ippo]", "num_seeds=3", tiny, "resume=true")
    assert (out / "ippo" / "results.json").stat().st_mtime_ns == trained
    assert json.loads((out / "partners.json").read_text()) == json.loads(saved)
    with pytest.raises(ConfigError, match="holds a finished pool"):
        _build(out, "algos=[ippo]", "num_seeds=3", tiny, "resume=true")


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (["algos=[ippo,nope]"], r"learner 'nope'"),
        (
            ["env=simple_spread", "+env.kwargs.continuous_actions=true", "algos=[qmix]"],
            r"learner 'qmix' on mpe/simple_spread-v0: .*box",
        ),
        (["env=tic_tac_toe", "algos=[ippo]"], r"tic_tac_toe-v0 is zero-sum"),
        (["algos=[ippo,ippo]"], "names a learner twice"),
        (["num_seeds=0"], "num_seeds must be a positive integer"),
        (["scripted=yes"], "scripted must be true or false"),
        (["algos=[ippo]", "num_seeds=1"], "at least two partners"),
        (['train_overrides=["seed=3"]'], r"train_overrides may not set .*seed=3"),
        (
            ['train_overrides=["algo.dpo_beta1=2"]'],
            r"learner 'ippo' on coordination-v0: algo.dpo_beta1 is read with algo.objective=dpo only",
        ),
        (["resume=true"], "does not exist"),
    ],
)
def test_bad_builds_are_refused_before_anything_is_written(tmp_path, overrides, match):
    out = tmp_path / "pool"
    env = [o for o in overrides if o.startswith("env=")] or ["env=coordination"]
    rest = [o for o in overrides if not o.startswith("env=")]
    with (
        pytest.raises(ConfigError, match=match),
        initialize_config_module(config_module="alem.configs", version_base=None),
    ):
        build(compose(config_name="partners", overrides=[*env, *rest]), out)
    assert not out.exists()


def test_a_build_refuses_a_folder_that_holds_anything(tmp_path):
    out = tmp_path / "pool"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(alem.AlemError, match="pool"):
        _build(out, "algos=[ippo]", "num_seeds=2")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    with pytest.raises(ConfigError, match="was not made by python -m alem.partners build"):
        _build(out, "algos=[ippo]", "num_seeds=2", "resume=true")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


@pytest.mark.integration  # a subprocess
def test_the_command_needs_its_subcommand():
    res = subprocess.run(
        [sys.executable, "-m", "alem.partners", "env=coordination"], capture_output=True, text=True
    )
    assert res.returncode == 2 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith("alem.partners: error: expected the subcommand build, got 'env=coordination' (usage:")
