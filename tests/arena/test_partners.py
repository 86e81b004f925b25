"""alem.arena.partners (python -m alem.partners build): pools trained, listed, resumed, refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from hydra import compose, initialize_config_module

import alem
from alem.algos.checkpoint_player import load_trained
from alem.arena.command import run as evaluate_run
from alem.arena.partners import build, export_pool
from alem.errors import ConfigError
from alem.pools import checkpoint_digest, read_pool, write_manifest

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

    # Exported (actor-only): the same partners, splits and parameters, so the same cross-play.
    exported = tmp_path / "exported"
    export_pool(out, exported)
    assert not (exported / "ippo" / "checkpoints").exists()
    listed = lambda pool: [(p.name, p.split, p.kwargs) for p in read_pool(pool, env).partners]
    assert listed(exported) == listed(out)
    for k in range(3):
        for a, b in zip(
            jax.tree.leaves(load_trained(out / "ippo", env, k)[1]["actor"]),
            jax.tree.leaves(load_trained(exported / "ippo", env, k)[1]["actor"]),
            strict=True,
        ):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    again = evaluate_run(
        cfg(
            "env=coordination",
            "mode=crossplay",
            "players=[random]",
            f"partners={exported}",
            "episodes=4",
            config="evaluate",
        ),
        tmp_path / "xp_exported",
    )
    for key in ("crossplay_matrix", "selfplay", "partner_selfplay"):
        assert again[key] == res[key]

    # A build killed before its manifest: resume=true keeps the trained run and lists the pool again.
    saved = (out / "partners.json").read_text()
    (out / "partners.json").unlink()
    trained = (out / "ippo" / "results.json").stat().st_mtime_ns
    _build(out, "algos=[ippo]", "num_seeds=3", tiny, "resume=true")
    assert (out / "ippo" / "results.json").stat().st_mtime_ns == trained
    assert json.loads((out / "partners.json").read_text()) == json.loads(saved)
    with pytest.raises(ConfigError, match="holds a finished pool"):
        _build(out, "algos=[ippo]", "num_seeds=3", tiny, "resume=true")

    # Resumed with other settings (4 seeds, longer training): refused, with the pool's record
    # (build.yaml) and without it (judged by the run's config.yaml); the same settings resume.
    (out / "partners.json").unlink()
    longer = tiny.replace("algo.total_steps=64", "algo.total_steps=128")
    for holder in ("pool", "run ippo"):
        with pytest.raises(ConfigError, match=rf"num_seeds=4 \(the {holder} has 3\); .*total_steps=128"):
            _build(out, "algos=[ippo]", "num_seeds=4", longer, "resume=true")
        assert not (out / "partners.json").exists()
        (out / "build.yaml").unlink(missing_ok=True)
    _build(out, "algos=[ippo]", "num_seeds=3", tiny, "resume=true")
    assert json.loads((out / "partners.json").read_text()) == json.loads(saved)
    assert (out / "build.yaml").is_file()  # recorded again


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


def _killed_build(out, *, record=True):
    """A pool folder as a 2-seed ``algos=[ippo]`` build leaves it when killed before its manifest:
    claimed, its settings recorded (``record``), the run trained (stand-in files)."""
    from alem.rundir import CLAIM_MARKER

    (out / "ippo").mkdir(parents=True)
    (out / CLAIM_MARKER).write_text(json.dumps({"cli": "alem.partners", "pid": 1, "created": True}))
    for name, text in {"results.json": "{}", "params.bin": "trained"}.items():
        (out / "ippo" / name).write_text(text)
    (out / "ippo" / "config.yaml").write_text(
        "env:\n  id: coordination-v0\n  kwargs: {}\nseed: 0\nnum_seeds: 2\n"
        "algo:\n  name: ippo\n  total_steps: 8192\n"
    )
    if record:
        (out / "build.yaml").write_text(
            "env:\n  id: coordination-v0\n  kwargs: {}\nalgos: [ippo]\nnum_seeds: 2\nseed: 0\n"
            "scripted: true\nsplit_seed: 0\ntrain_overrides: ['algo.total_steps=8192']\n"
        )
    return sorted(p.relative_to(out) for p in out.rglob("*"))


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "runs_only"])
def test_a_resume_with_other_settings_is_refused_before_anything_is_written(tmp_path, record):
    """A 2-seed build resumed with num_seeds=4 wrote a manifest listing seeds 2 and 3, which its
    run does not have. The pool's record (build.yaml) is compared; a build begun before the record
    existed is compared with its runs' own config.yaml."""
    out = tmp_path / "pool"
    before = _killed_build(out, record=record)
    args = ["algos=[ippo]", "num_seeds=4", 'train_overrides=["algo.total_steps=16384"]', "resume=true"]
    if record:
        match = (
            r"resume=true finishes the build in .*pool as it was configured; these settings would change it: "
            r"num_seeds=4 \(the pool has 2\); train_overrides=\['algo.total_steps=16384'\] "
            r"\(the pool has \['algo.total_steps=8192'\]\)\. Start"
        )
    else:
        match = (
            r"num_seeds=4 \(the run ippo has 2\); algo.total_steps=16384 \(the run ippo has 8192\)\. Start"
        )
    with pytest.raises(ConfigError, match=match):
        _build(out, *args)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    if record:  # settings the runs do not record are compared too
        with pytest.raises(
            ConfigError, match=r"scripted=False \(the pool has True\); split_seed=3 \(the pool has 0\)"
        ):
            _build(
                out,
                "algos=[ippo]",
                "num_seeds=2",
                'train_overrides=["algo.total_steps=8192"]',
                "resume=true",
                "split_seed=3",
                "scripted=false",
            )
        (out / "build.yaml").write_text("[torn")
        with pytest.raises(ConfigError, match=r"build.yaml cannot be read"):
            _build(out, "algos=[ippo]", "num_seeds=2", "resume=true")


def test_an_export_checks_the_whole_pool_before_it_writes(tmp_path):
    """A pool whose checkpoint no longer matches its digest, a scripted-only pool copied as it is,
    and an export that fails half-way leave nothing behind."""
    env = alem.make("lbf_8x8_2p_2f_coop-v0")
    shipped = Path(alem.__file__).parent / "pools" / "lbf_8x8_2p_2f_coop"
    pool = tmp_path / "pool"
    shutil.copytree(shipped, pool)
    with (pool / "ippo" / "actor.npz").open("ab") as f:
        f.write(b"x")
    with pytest.raises(ConfigError, match=r"partner 'ippo_s\d': the files of .*ippo do not match"):
        export_pool(pool, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool"]
    # an exported pool's runs are actors already: exporting it again stops at the first, and the
    # half-written copy is removed
    shutil.rmtree(pool)
    shutil.copytree(shipped, pool)
    with pytest.raises(alem.AlemError, match="is an exported actor already"):
        export_pool(pool, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool"]
    scripted = tmp_path / "scripted"
    write_manifest(scripted / "partners.json", env, [("centre", "centre"), ("nearest", "nearest")])
    export_pool(scripted, tmp_path / "scripted_out")
    assert [p.spec for p in read_pool(tmp_path / "scripted_out", env).partners] == ["centre", "nearest"]


@pytest.mark.integration  # a subprocess
def test_the_command_needs_its_subcommand():
    res = subprocess.run(
        [sys.executable, "-m", "alem.partners", "env=coordination"], capture_output=True, text=True
    )
    assert res.returncode == 2 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(
        "alem.partners: error: expected the subcommand build or export, got 'env=coordination' (usage:"
    )


def _run_pool(root, specs):
    """A hand-made pool of stand-in run folders (``run.bin``) listed under ``specs``."""
    env = alem.make("coordination-v0")
    for folder in {os.path.normpath(s.partition(":")[2]) for s in specs if s.startswith("checkpoint:")}:
        if not (root / folder).exists():
            (root / folder).mkdir(parents=True)
            (root / folder / "run.bin").write_bytes(folder.encode())
    write_manifest(root / "partners.json", env, [(f"p{i}", s) for i, s in enumerate(specs)])
    return env


def _stand_in_export(monkeypatch):
    """export_actor replaced by a copy of the run's file: which runs are exported, and where to."""
    calls = []

    def fake(run_dir, out, *a, **k):
        calls.append((Path(run_dir), Path(out)))
        Path(out).mkdir(parents=True)
        shutil.copy(Path(run_dir) / "run.bin", Path(out) / "run.bin")
        return Path(out)

    monkeypatch.setattr("alem.algos.actor_export.export_actor", fake)
    return calls


def test_an_export_judges_where_a_run_really_is_not_how_its_path_reads(tmp_path, monkeypatch):
    """``./r0/../r0`` (inside) was refused for its ``..``; a symlink to a run outside the pool
    was exported as if it were the pool's own."""
    calls = _stand_in_export(monkeypatch)
    pool = tmp_path / "pool"
    env = _run_pool(pool, ["checkpoint:./r0/../r0", "checkpoint:r1", "random"])
    export_pool(pool, tmp_path / "out")
    assert [(src, dst.name) for src, dst in sorted(calls)] == [(pool / "r0", "r0"), (pool / "r1", "r1")]
    exported = read_pool(tmp_path / "out", env)
    assert [p.spec for p in exported.partners][:2] == [
        f"checkpoint:{tmp_path / 'out' / 'r0'}",
        f"checkpoint:{tmp_path / 'out' / 'r1'}",
    ]
    assert [p.split for p in exported.partners] == [p.split for p in read_pool(pool, env).partners]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "run.bin").write_bytes(b"not the pool's")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "r0").symlink_to(elsewhere, target_is_directory=True)
    _run_pool(linked, ["checkpoint:r0", "random"])
    calls.clear()
    with pytest.raises(ConfigError, match=r"partner 'p0': r0 is outside the pool's folder \(.*elsewhere\)"):
        export_pool(linked, tmp_path / "out2")
    assert calls == [] and not (tmp_path / "out2").exists()


def test_an_export_into_a_dangling_symlink_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """The rename onto the link raised NotADirectoryError (a traceback) from the CLI."""
    import alem.partners as cli

    env = alem.make("coordination-v0")
    write_manifest(tmp_path / "pool" / "partners.json", env, [("a", "random"), ("b", "random")])
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    monkeypatch.setattr(sys, "argv", ["alem.partners", "export", str(tmp_path / "pool"), str(link)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("alem.partners export: error: ") and f"{link} is a symlink" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "pool"] and not link.exists()
