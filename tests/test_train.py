"""Tests for the training entry point ``python -m alem.train`` (random algorithm) and its configs."""

from __future__ import annotations

import importlib.resources
import json
import math
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_module
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

import alem
from alem.errors import ConfigError, TrainingInterrupted
from alem.train import run

# one worker builds the module fixtures (the PPO run) once
pytestmark = pytest.mark.xdist_group("test_train")

NUM_ENVS, NUM_STEPS, TOTAL = 256, 32, 16_384  # 2 chunks; one-shot game: 16,384 episodes per seed


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "alem.train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**__import__("os").environ, "WANDB_MODE": "disabled", "HYDRA_FULL_ERROR": "0"},
    )


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One real CLI run: the one-shot prisoner's dilemma, two seeds, tiny sizes."""
    tmp = tmp_path_factory.mktemp("train")
    run_dir = tmp / "run"
    proc = _cli(
        [
            f"hydra.run.dir={run_dir}",
            "env=prisoners_dilemma",
            "algo=random",
            "num_seeds=2",
            "seed=3",
            f"algo.num_envs={NUM_ENVS}",
            f"algo.num_steps={NUM_STEPS}",
            f"algo.total_steps={TOTAL}",
        ],
        cwd=tmp,
    )
    return proc, run_dir


@pytest.mark.integration  # python -m alem.train in a subprocess
def test_cli_writes_results_and_matches_uniform_random_value(cli_run):
    proc, run_dir = cli_run
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    path = run_dir / "results.json"
    assert lines[-1] == f"Results written to {path.resolve()}"
    assert sum(line.startswith("Results written to") for line in lines) == 1
    assert sum(line.startswith("[chunk ") for line in lines) == 2  # a progress line per chunk
    assert "env-steps/s" in lines[-2]

    res = json.loads(path.read_text())
    assert res["env_id"] == "prisoners_dilemma-v0" and res["algo"] == "random"
    assert res["seeds"] == [3, 4] and res["agents"] == ["player_0", "player_1"]
    assert res["illegal_actions"] == 0
    assert res["env_steps_per_seed"] == TOTAL and res["env_steps"] == 2 * TOTAL
    assert res["episodes_per_seed"] == [TOTAL, TOTAL]
    assert res["episode_length_mean"] == 1.0
    assert res["jax_version"] and res["jax_backend"] and res["wall_time_s"] > 0 and res["steps_per_s"] > 0
    assert res["config"]["env"]["id"] == "prisoners_dilemma-v0"
    assert res["config"]["output_dir"] == str(run_dir.resolve())

    # Analytic value of uniform random play, from the env's own payoff table.
    payoffs = np.asarray(alem.make("prisoners_dilemma-v0").default_params.payoffs)  # [2, 2, 2]
    expected = payoffs.reshape(2, -1).mean(axis=1)
    assert expected[0] == pytest.approx((3 + 0 + 5 + 1) / 4)
    sd = payoffs.reshape(2, -1).std(axis=1)
    for per_seed in res["episode_return_per_seed"]:
        np.testing.assert_allclose(per_seed, expected, atol=6 * sd.max() / np.sqrt(TOTAL))
    np.testing.assert_allclose(res["episode_return_mean"], expected, atol=6 * sd.max() / np.sqrt(2 * TOTAL))

    # The config is written too, resolved.
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert cfg["env"]["id"] == "prisoners_dilemma-v0" and cfg["num_seeds"] == 2


@pytest.mark.integration  # python -m alem.train in a subprocess
def test_cli_seeds_give_different_results(cli_run):
    proc, run_dir = cli_run
    assert proc.returncode == 0, proc.stderr
    res = json.loads((run_dir / "results.json").read_text())
    a, b = res["episode_return_per_seed"]
    assert a != b


@pytest.mark.integration  # python -m alem.train in a subprocess
def test_cli_bad_env_id_is_a_clean_error(tmp_path):
    proc = _cli([f"hydra.run.dir={tmp_path / 'run'}", "env.id=prisoners_dilema-v0"], cwd=tmp_path)
    assert proc.returncode != 0
    assert "prisoners_dilemma-v0" in proc.stderr  # the closest registered id
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3, proc.stderr
    assert not (tmp_path / "run" / "results.json").exists()


def test_config_composes_from_package_in_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may depend on the repo being the working directory
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config")
        assert cfg.env.id == "mpe/simple_spread-v0"
        assert OmegaConf.to_container(cfg.env.kwargs) == {}
        # the main job (benchmarks/training.md, "The main job"): MAPPO, 16 envs x 128 steps, 614,400 steps
        assert cfg.algo.name == "mappo" and cfg.algo.total_steps == 614_400 and cfg.algo.lr == 5e-4
        assert min(cfg.algo.num_envs, cfg.algo.num_steps, cfg.algo.total_steps) >= 1
        assert cfg.seed == 0 and cfg.num_seeds == 1 and cfg.output_dir is None
        assert cfg.logger == "none" and cfg.wandb.mode == "offline"

        other = compose(config_name="config", overrides=["env=stag_hunt", "seed=7"])
        assert other.env.id == "stag_hunt-v0" and other.seed == 7
        free = compose(config_name="config", overrides=["env.id=chicken-v0", "+env.kwargs.num_rounds=3"])
        assert free.env.id == "chicken-v0" and free.env.kwargs.num_rounds == 3

        with pytest.raises(MissingConfigException, match="random"):
            compose(config_name="config", overrides=["algo=no_such_algo"])


def test_every_env_yaml_names_a_registered_id():
    folder = importlib.resources.files("alem.configs") / "env"
    files = [f for f in folder.iterdir() if f.name.endswith(".yaml")]
    assert {f.name for f in files} >= {
        "iterated_prisoners_dilemma.yaml",
        "prisoners_dilemma.yaml",
        "stag_hunt.yaml",
        "public_goods.yaml",
    }
    for f in files:
        spec = yaml.safe_load(f.read_text())
        assert set(spec) == {"id", "kwargs"}, f.name
        assert spec["id"] in alem.registry(), f"{f.name}: {spec['id']} is not registered"
        alem.make(spec["id"], **spec["kwargs"])


def _cfg(*overrides: str):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="config", overrides=list(overrides))


def test_unknown_algorithm_and_bad_values_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown algorithm 'nope'.*'random'"):
        run(_cfg("algo.name=nope"), tmp_path)
    with pytest.raises(ConfigError, match="logger"):
        run(_cfg("logger=tensorboard"), tmp_path)
    with pytest.raises(ConfigError, match="wandb.mode"):
        run(_cfg("wandb.mode=sometimes"), tmp_path)
    with pytest.raises(alem.AlemError, match="num_roundz"):
        run(_cfg("+env.kwargs.num_roundz=3"), tmp_path)
    with pytest.raises(ConfigError, match="num_envs"):
        run(_cfg("algo=random", "algo.num_envs=0"), tmp_path)
    assert not (tmp_path / "results.json").exists()


def test_wandb_logs_each_chunk_and_finishes(tmp_path, monkeypatch):
    """wandb.mode=offline goes through wandb.init(mode=...), log per chunk, finish (a stand-in module)."""
    calls: dict[str, list] = {"init": [], "log": [], "finish": []}

    class FakeRun:
        summary: dict = {}

        def log(self, metrics, step=None):
            calls["log"].append((step, dict(metrics)))

        def finish(self, exit_code=0):
            calls["finish"].append(exit_code)

    def init(**kwargs):
        calls["init"].append(kwargs)
        return FakeRun()

    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(init=init))
    cfg = _cfg(
        "env=public_goods",
        "algo=random",
        "logger=wandb",
        "algo.num_envs=16",
        "algo.num_steps=8",
        "algo.total_steps=384",
    )
    path = run(cfg, tmp_path)
    assert path == tmp_path.resolve() / "results.json" and path.exists()
    assert len(calls["init"]) == 1 and calls["init"][0]["mode"] == "offline"
    assert calls["init"][0]["config"]["env"]["id"] == "public_goods-v0"
    steps = [s for s, _ in calls["log"]]
    assert steps == [128, 256, 384]  # 3 chunks of 16 x 8 env-steps
    assert {"env_steps", "episode_return/player_0", "episode_return/mean"} <= set(calls["log"][0][1])
    assert calls["finish"] == [0]
    res = json.loads(path.read_text())
    assert res["episodes"] == 384 and len(res["episode_return_mean"]) == 4


def test_a_wandb_that_cannot_start_leaves_the_run_dir_unwritten(tmp_path, monkeypatch, fault_report):
    def init(**kwargs):
        raise RuntimeError("not logged in")

    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(init=init))
    cfg = _cfg("algo=random", "logger=wandb", "algo.num_envs=4", "algo.num_steps=2", "algo.total_steps=8")
    with pytest.raises(ConfigError, match="wandb.init"):
        run(cfg, tmp_path / "run")
    assert not (tmp_path / "run" / "config.yaml").exists()
    assert run(
        _cfg("algo=random", "algo.num_envs=4", "algo.num_steps=2", "algo.total_steps=8"), tmp_path / "run"
    ).exists()
    fault_report(faults=1)


# ---------------------------------------------------------------------------- PPO-core learners
PPO_SMALL = [
    "env.id=coordination-v0",
    "algo=ippo",
    "algo.num_envs=8",
    "algo.num_steps=4",
    "algo.num_minibatches=2",
    "algo.lr=0.003",
    "algo.hidden=[16]",
    "algo.total_steps=960",  # 30 updates
    "chunk_updates=10",
    "num_seeds=2",
    "eval.num_steps=16",
]


def _rows(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    path = run(_cfg(*PPO_SMALL), run_dir)
    return run_dir, json.loads(path.read_text())


def test_ppo_run_writes_rows_checkpoints_and_beats_random(ppo_run):
    run_dir, res = ppo_run
    rows = _rows(run_dir)
    assert [(r["chunk"], r["seed"]) for r in rows] == [(c, s) for c in range(3) for s in (0, 1)]
    assert [r["env_steps"] for r in rows[::2]] == [320, 640, 960]
    assert {"policy_loss", "value_loss", "entropy", "approx_kl", "episode_return"} <= set(rows[0])
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["chunk_000002", "chunk_000003"]
    assert res["algo"] == "ippo" and res["updates"] == 30 and res["env_steps"] == 2 * 960
    assert (run_dir / "config.yaml").exists()
    # Coordination game: the optimum is 1, uniform random play gets 0.5.
    assert res["trained_return_mean"] > 0.9 and abs(res["random_return_mean"] - 0.5) < 0.15


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def _resume(run_dir: Path, *overrides: str) -> Path:
    """Resume as the CLI does: the composed config and the command line's overrides."""
    args = ["resume=" + str(run_dir), *overrides]
    return run(_cfg(*args), run_dir.parent / "ignored", overrides=args)


@pytest.mark.integration  # resumes and replays a run (tests/test_faults.py kills them too)
def test_resume_continues_exactly_past_a_torn_tail_and_a_corrupt_newest_checkpoint(ppo_run, tmp_path):
    full_dir, full = ppo_run
    run_dir = tmp_path / "run"
    with pytest.raises(TrainingInterrupted, match="resume="):
        run(_cfg(*PPO_SMALL, "stop_after_chunks=2"), run_dir)
    assert len(_rows(run_dir)) == 4 and not (run_dir / "results.json").exists()
    # The newest checkpoint is unreadable: resume falls back to the older kept one (chunk 1)
    # and recomputes the rows of chunk 2, which are on disk already.
    for f in (run_dir / "checkpoints" / "chunk_000002").rglob("*"):
        if f.is_file():
            f.write_bytes(b"garbage")
    with (run_dir / "metrics.jsonl").open("a") as f:  # a kill in the middle of a row
        f.write('{"chunk": 2, "seed": 0, "episode_ret')
    path = _resume(run_dir)
    resumed = json.loads(path.read_text())
    assert path.parent == run_dir.resolve() and resumed["resumed_from_chunk"] == 1
    a, b = _rows(full_dir), _rows(run_dir)
    assert [(r["chunk"], r["seed"]) for r in a] == [(r["chunk"], r["seed"]) for r in b]
    for ra, rb in zip(a, b, strict=True):
        for k in ra:
            if k != "steps_per_s":
                np.testing.assert_allclose(ra[k], rb[k], rtol=1e-5, err_msg=k)
    np.testing.assert_allclose(resumed["trained_return_per_seed"], full["trained_return_per_seed"], rtol=1e-5)
    # Resuming a finished run changes nothing.
    before = _snapshot(run_dir)
    assert _resume(run_dir) == path and _snapshot(run_dir) == before


def test_resume_refuses_overrides_that_change_the_run_and_writes_nothing(ppo_run, tmp_path):
    run_dir, _ = ppo_run
    before = _snapshot(run_dir)
    with pytest.raises(ConfigError) as e:
        _resume(run_dir, "algo.lr=0.1", "seed=3", "env=stag_hunt")
    msg = str(e.value)
    assert "algo.lr=0.1" in msg and "seed=3" in msg and "env=" in msg and "total_steps" in msg
    with pytest.raises(ConfigError, match="only an extension"):
        _resume(run_dir, "algo.total_steps=320")
    with pytest.raises(ConfigError, match="its own directory"):
        _resume(run_dir, f"output_dir={tmp_path}")
    # Overrides equal to the run's own values, and Hydra's settings, are not changes.
    assert _resume(run_dir, "algo.lr=0.003", "hydra.run.dir=x").exists()
    assert _snapshot(run_dir) == before


@pytest.mark.integration  # resumes and replays a run (tests/test_faults.py kills them too)
def test_resume_extends_total_steps_and_keeps_the_run_before_it(ppo_run, tmp_path):
    import shutil

    full_dir, full = ppo_run
    run_dir = tmp_path / "run"
    shutil.copytree(full_dir, run_dir)
    path = _resume(run_dir, "algo.total_steps=1280")  # 30 -> 40 updates: one more chunk
    res = json.loads(path.read_text())
    assert res["updates"] == 40 and res["resumed_from_chunk"] == 3
    assert OmegaConf.load(run_dir / "config.yaml").algo.total_steps == 1280
    rows = _rows(run_dir)
    assert [r["chunk"] for r in rows] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert rows[:6] == _rows(full_dir)


@pytest.mark.integration  # three CLI processes
def test_an_interrupted_extension_resumes_to_its_end_through_the_cli(ppo_run, tmp_path, fault_report):
    """An extension rewrites config.yaml before it trains; killed (here: stopped) after one of
    its two chunks, ``resume=R`` must finish it, not call the run finished because the shorter
    run's results.json is still there."""
    import shutil

    full_dir, _ = ppo_run
    run_dir = tmp_path / "run"
    shutil.copytree(full_dir, run_dir)
    hydra = f"hydra.run.dir={tmp_path / 'h'}"
    ext = _cli([f"resume={run_dir}", "algo.total_steps=1600", "stop_after_chunks=4", hydra], cwd=tmp_path)
    assert ext.returncode == 1 and "stopped after chunk 4/5" in ext.stderr, ext.stdout + ext.stderr
    done = _cli([f"resume={run_dir}", hydra], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "already finished" not in done.stdout
    res = json.loads((run_dir / "results.json").read_text())
    assert res["updates"] == 50 and res["resumed_from_chunk"] == 4
    assert [r["chunk"] for r in _rows(run_dir)][::2] == [0, 1, 2, 3, 4]
    again = _cli([f"resume={run_dir}", hydra], cwd=tmp_path)  # now it is finished
    assert again.returncode == 0 and "already finished; nothing to do" in again.stdout
    fault_report(faults=1)


@pytest.mark.integration  # two CLI processes
def test_a_cli_run_owns_one_directory_and_a_refused_one_changes_nothing(ppo_run, tmp_path, fault_report):
    """With output_dir=R, Hydra makes no second directory (./outputs/...), writes no .hydra/ (a
    copy of the command line) and no log into R; a second run refused at R leaves R as it was."""
    run_dir, _ = ppo_run
    before = _snapshot(run_dir)
    new = tmp_path / "new"
    tiny = [
        "env.id=coordination-v0",
        "algo=random",
        "algo.num_envs=4",
        "algo.num_steps=2",
        "algo.total_steps=8",
    ]
    ok = _cli([*tiny, f"output_dir={new}"], cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]  # no ./outputs
    assert sorted(p.name for p in new.iterdir()) == [
        ".alem-run",
        "config.yaml",
        "metrics.jsonl",
        "results.json",
    ]
    refused = _cli([*tiny, f"output_dir={run_dir}"], cwd=tmp_path)
    assert refused.returncode == 2 and "already holds a run" in refused.stderr
    assert _snapshot(run_dir) == before
    fault_report(faults=1)


@pytest.mark.integration  # a CLI process
def test_a_saved_config_with_an_env_interpolation_is_refused_not_resolved(ppo_run, tmp_path, fault_report):
    """config.yaml is data: an ${oc.env:...} in it must not pull this machine's secret into the
    run (it used to be resolved on resume and written back into config.yaml and results.json)."""
    import shutil

    full_dir, _ = ppo_run
    run_dir = tmp_path / "run"
    shutil.copytree(full_dir, run_dir)
    cfg = (run_dir / "config.yaml").read_text()
    (run_dir / "config.yaml").write_text(cfg.replace("project: alem", "project: ${oc.env:ALEM_TEST_SECRET}"))
    before = _snapshot(run_dir)
    env = {**__import__("os").environ, "ALEM_TEST_SECRET": "hunter2"}
    proc = subprocess.run(
        [sys.executable, "-m", "alem.train", f"resume={run_dir}", "algo.total_steps=1280"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 2 and "holds an interpolation at wandb.project" in proc.stderr
    assert "hunter2" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert _snapshot(run_dir) == before
    fault_report(faults=1)


def test_new_runs_never_write_into_a_directory_that_holds_anything(ppo_run, tmp_path):
    from alem.rundir import RunDirError

    run_dir, _ = ppo_run
    before = _snapshot(run_dir)
    with pytest.raises(RunDirError, match="already holds a run"):
        run(_cfg(*PPO_SMALL, "algo.lr=0.1"), run_dir)
    with pytest.raises(RunDirError, match=r"resume="):
        run(_cfg("algo=random", "algo.num_envs=4", "algo.num_steps=2", "algo.total_steps=8"), run_dir)
    assert _snapshot(run_dir) == before
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    with pytest.raises(RunDirError, match="todo.txt"):
        run(_cfg("algo=random", "algo.num_envs=4", "algo.num_steps=2", "algo.total_steps=8"), other)
    assert [p.name for p in other.iterdir()] == ["todo.txt"]


@pytest.mark.integration  # resumes and replays a run (tests/test_faults.py kills them too)
def test_resume_errors_are_clear_and_overwrite_nothing(ppo_run, tmp_path):
    from alem.checkpoint import CheckpointError
    from alem.rundir import RunDirError

    with pytest.raises(RunDirError, match="no config.yaml"):
        run(_cfg("resume=" + str(tmp_path / "nowhere")), tmp_path)
    run_dir = tmp_path / "run"
    with pytest.raises(TrainingInterrupted):
        run(_cfg(*PPO_SMALL, "stop_after_chunks=1"), run_dir)
    rows_before = (run_dir / "metrics.jsonl").read_text()
    ckpt = run_dir / "checkpoints" / "chunk_000001"
    for f in ckpt.rglob("*"):
        if f.is_file():
            f.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="corrupt"):
        run(_cfg("resume=" + str(run_dir)), tmp_path)
    assert (run_dir / "metrics.jsonl").read_text() == rows_before
    import shutil

    # Killed before the first checkpoint was complete: the run starts over, rows recomputed.
    shutil.rmtree(run_dir / "checkpoints")
    res = json.loads(_resume(run_dir).read_text())
    drop = lambda rows: [{k: v for k, v in r.items() if k != "steps_per_s"} for r in rows]
    assert res["resumed_from_chunk"] == 0 and drop(_rows(run_dir)) == drop(_rows(ppo_run[0]))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.yaml").write_text("algo: [unclosed\n")
    with pytest.raises(RunDirError, match="cannot be read"):
        run(_cfg("resume=" + str(bad)), tmp_path)


@pytest.mark.integration  # python -m alem.train in a subprocess
def test_cli_resume_override_is_a_one_line_error(ppo_run, tmp_path):
    run_dir, _ = ppo_run
    before = _snapshot(run_dir)
    proc = _cli(
        [f"resume={run_dir}", "algo.lr=0.5", "seed=9", f"hydra.run.dir={tmp_path / 'h'}"], cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "algo.lr=0.5" in err[0] and "seed=9" in err[0] and "Traceback" not in proc.stderr
    assert _snapshot(run_dir) == before


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["algo.num_minibatches=3"], "must divide algo.num_envs"),
        (["algo.total_steps=-5"], "total_steps must be an integer >= 1"),
        (["algo.critic=oracle"], "algo.critic='oracle'"),
        (["algo=happo", "algo.sharing=shared"], "separate"),
        (
            ["algo=cppo", "env.id=mpe/simple_spread-v0", "+env.kwargs.continuous_actions=true"],
            "continuous actions",
        ),
        (["algo=cppo_joint", "env.id=public_goods-v0", "+env.kwargs.num_agents=16"], "joint_action"),
        (["devices=64"], "devices must be"),
        (["algo.hidden=[0]"], "hidden"),
        (["algo.hidden=[abc]"], "hidden"),
        (["eval.num_steps=0"], "eval.num_steps must be auto or an integer >= 1"),
        (["env.id=mpe/simple_spread-v0", "eval.num_steps=8"], "shorter than an episode"),
        (["stop_after_chunks=0"], "stop_after_chunks"),
    ],
)
def test_bad_learner_configs_fail_before_compiling(tmp_path, overrides, message):
    with pytest.raises(alem.AlemError, match=message):
        run(_cfg(*PPO_SMALL, *overrides), tmp_path / "run")
    assert not (tmp_path / "run").exists()  # nothing written, not even the directory


@pytest.mark.integration  # resumes and replays a run (tests/test_faults.py kills them too)
def test_trained_run_plays_as_a_checkpoint_policy(ppo_run):
    import jax

    from alem.players import Turn, make_player

    run_dir, _ = ppo_run
    env = alem.make("coordination-v0")
    players = [make_player("checkpoint", env, spec=str(run_dir), seed_index=s, greedy=True) for s in (0, 1)]
    state, ts = jax.vmap(env.reset, (0, None))(jax.random.split(jax.random.key(0), 64), env.default_params)
    acts = [
        p.act(jax.random.key(i), Turn(env, env.default_params, i, state, ts, None, None))
        for i, p in enumerate(players)
    ]
    _, ts2 = jax.vmap(env.step, (0, 0, 0, None))(
        jax.random.split(jax.random.key(1), 64), state, np.stack(acts, 1), env.default_params
    )
    # Each seed's greedy policy coordinates with itself; across seeds they may pick different
    # conventions, so score seat 0 and seat 1 from the same seed.
    same = make_player("checkpoint", env, spec=str(run_dir), seed_index=0, greedy=True)
    a0 = same.act(jax.random.key(2), Turn(env, env.default_params, 0, state, ts, None, None))
    a1 = same.act(jax.random.key(3), Turn(env, env.default_params, 1, state, ts, None, None))
    assert (np.asarray(a0) == np.asarray(a1)).all()
    assert ts2.reward.shape == (64, 2)
    with pytest.raises(alem.AlemError, match="trained on 'coordination-v0'"):
        make_player("checkpoint", alem.make("stag_hunt-v0"), spec=str(run_dir))
    with pytest.raises(alem.AlemError, match="results.json"):
        make_player("checkpoint", env, spec=str(run_dir / "nowhere"))


def test_a_run_shorter_than_one_chunk_cannot_be_extended_and_its_config_stays(tmp_path):
    """Its only chunk held 2 updates; an extension would make chunks of 10. Refused before any write."""
    short = [o for o in PPO_SMALL if not o.startswith(("algo.total_steps", "num_seeds"))]
    run_dir = tmp_path / "run"
    run(_cfg(*short, "algo.total_steps=64"), run_dir)  # 2 updates of 8 x 4
    before = _snapshot(run_dir)
    with pytest.raises(ConfigError, match="cannot be extended"):
        _resume(run_dir, "algo.total_steps=960")
    assert _snapshot(run_dir) == before  # config.yaml still says 64: the run can be resumed as it was


def _files(run_dir: Path) -> set[str]:
    """The run's files, with checkpoint chunk numbers and orbax's file names folded away."""
    top = {p.name for p in run_dir.iterdir()}
    return top | {"checkpoints/*"} if (run_dir / "checkpoints").is_dir() else top


@pytest.mark.integration  # short runs, each stopped after a chunk and resumed
# PQN (rollout learning) and QMIX (replay, target network, mixer): every part of the other presets
@pytest.mark.parametrize("name", ["pqn", "qmix"])
def test_value_based_presets_train_resume_and_write_what_ppo_writes(name, ppo_run, tmp_path):
    ppo_dir, ppo_res = ppo_run
    small = [
        "env.id=coordination-v0",
        f"algo={name}",
        "algo.num_envs=8",
        "algo.num_steps=4",
        "algo.hidden=[16]",
        "algo.total_steps=960",  # 30 updates, 3 chunks of 10
        "algo.learning_starts=8",
        "algo.lr=0.003",
        "num_seeds=2",
        "eval.num_steps=8",
    ]
    run_dir = tmp_path / "run"
    with pytest.raises(TrainingInterrupted, match="resume="):
        run(_cfg(*small, "stop_after_chunks=1"), run_dir)
    res = json.loads(_resume(run_dir).read_text())
    assert res["algo"] == name and res["resumed_from_chunk"] == 1 and res["updates"] == 30
    assert res["learner"]["name"] == name and res["learner"]["total_steps"] == 960
    assert _files(run_dir) == _files(ppo_dir)
    assert set(ppo_res) <= set(res)
    rows = _rows(run_dir)
    assert [(r["chunk"], r["seed"]) for r in rows] == [(c, s) for c in range(3) for s in (0, 1)]
    assert {"q_loss", "q_mean", "epsilon", "episode_return"} <= set(rows[0])
    # the final evaluation: the greedy policy and the random one on the coordination game (random: 0.5)
    assert 0.0 <= res["trained_return_mean"] <= 1.0 and abs(res["random_return_mean"] - 0.5) < 0.2
    # the run plays as an arena player: its greedy legal action, the same as its Q-values say
    from alem.algos.checkpoint_player import CheckpointPlayer

    env = alem.make("coordination-v0")
    player = CheckpointPlayer(env, spec=str(run_dir), seed_index=1)
    obs, mask = (
        np.zeros((2, *env.observation_space().shape[1:]), np.float32),
        np.array([[True, True], [False, True]]),
    )
    probs = np.asarray(player.action_probs(obs, mask, 0))
    h = player.learner.q_net.initial_hidden((2, 2))
    _, q = player.learner.q_values(
        player.params, h, np.repeat(obs[None, :, None], 2, 2), np.ones((1, 2), bool)
    )
    assert probs.tolist()[1] == [0.0, 1.0]  # the only legal move
    assert probs[0].argmax() == int(np.asarray(q)[0, 0, 0].argmax()) and probs.sum() == 2.0
    assert player.describe() == {"algo": name, "greedy": True}


#: The refusals a preset may give on an env it does not fit (each names why, before anything runs).
NOT_A_FIT = (
    "does not fit",  # team-value learners off cooperative envs; league self-play off 2-player zero-sum games
    "nothing to learn",  # a centralised team actor in a zero-sum game
    "outputs for",  # a joint-action actor whose output layer would be A**N wide
)


_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
_ENV_CONFIGS = sorted(p.stem for p in (_CONFIGS / "env").glob("*.yaml"))


@pytest.mark.exhaustive  # about 150 plans (no compile, but every learner's init is traced)
@pytest.mark.parametrize("env_config", _ENV_CONFIGS)  # one item per env: xdist spreads them
def test_every_preset_plans_on_every_env_config_it_fits_without_overrides(env_config, monkeypatch):
    """``python -m alem.train env=<e> algo=<a>`` for every file of configs/env and configs/algo:
    the plan is made with the defaults alone (``env=tic_tac_toe algo=iql`` used to stop on
    algo.sequence_length), or refused with one of the fit reasons above."""
    from alem.algos import seps
    from alem.train import plan

    # SePS's role discovery trains a VAE at plan time (40 s on pathfinding_follow); it has its own
    # tests (tests/algos/test_seps.py), and the plan's fit does not depend on which roles it finds
    monkeypatch.setattr(
        seps,
        "discover_roles",
        lambda env, cfg, key: np.arange(env.num_agents, dtype=np.int32) % cfg.seps_roles,
    )

    # a leading underscore marks a shared fragment (_ppo_budget.yaml), not a preset
    algos = sorted(p.stem for p in (_CONFIGS / "algo").glob("*.yaml") if not p.stem.startswith("_"))
    planned, refused = [], []
    with initialize_config_module(config_module="alem.configs", version_base=None):
        for a in algos:
            cfg = compose(config_name="config", overrides=[f"env={env_config}", f"algo={a}"])
            env = alem.make(cfg.env.id, **cfg.env.kwargs)
            try:
                plan(cfg, env)
                planned.append(a)
            except ConfigError as err:
                assert any(r in str(err) for r in NOT_A_FIT), f"env={env_config} algo={a}: {err}"
                refused.append(a)
    # every env config has learners that fit it; the cooperative ones fit nearly all of them
    assert planned, f"env={env_config}: no preset plans"
    if env_config in ("tic_tac_toe", "simple_spread"):
        assert {"tic_tac_toe": "iql", "simple_spread": "qmix"}[env_config] in planned
    if alem.make(cfg.env.id, **cfg.env.kwargs).cooperative:
        assert len(planned) > 3 * len(refused), (planned, refused)


def test_the_coordination_families_have_env_presets():
    """`configs/env` had no SMAX or Overcooked file: `env=smax_3m` was refused."""
    assert {"smax_3m", "smax_2s3z", "overcooked_cramped_room", "lbf_8x8_2p_2f_coop", "rware_tiny_2ag"} <= set(
        _ENV_CONFIGS
    )
    for name in ("smax_3m", "overcooked_cramped_room"):
        env = _cfg(f"env={name}").env
        assert alem.make(env.id, **env.kwargs).id == f"{name}-v0"


def test_the_ppo_presets_share_one_default_budget_and_league_says_why_not():
    """`algo=ippo` was 64 envs x 2M steps and `algo=mappo` 16 x 614k: "train IPPO and MAPPO" ran
    one 3.3x longer than the other without saying so."""
    from alem.algos import VARIANTS

    budgets = {}
    for name in [*VARIANTS, "league"]:
        if not (_CONFIGS / "algo" / f"{name}.yaml").is_file():
            continue
        algo = _cfg(f"algo={name}").algo
        budgets[name] = (algo.num_envs, algo.num_steps, algo.total_steps)
    league = budgets.pop("league")
    assert len(budgets) >= 8 and set(budgets.values()) == {(16, 128, 614_400)}, budgets
    assert (
        league != (16, 128, 614_400)
        and "Not the PPO presets' budget" in (_CONFIGS / "algo" / "league.yaml").read_text()
    )


def test_the_default_evaluation_covers_one_episode_of_long_envs():
    """`env=rware_tiny_2ag` (500-step episodes) was refused without an override: the default
    eval.num_steps=256 finished no episode. `auto` is 256 or one episode, whichever is longer."""
    from alem.training.command import _check_eval

    for name, episode, rollout, want in (
        ("rware_tiny_2ag", 500, 128, 512),
        ("overcooked_cramped_room", 400, 128, 512),
        ("simple_spread", 25, 128, 256),
    ):
        cfg = _cfg(f"env={name}")
        env = alem.make(cfg.env.id, **cfg.env.kwargs)
        assert math.ceil(env.episode_steps_hint) == episode
        assert _check_eval(cfg, env, rollout) == want
    with pytest.raises(ConfigError, match="eval.num_steps must be auto or an integer"):
        _check_eval(_cfg("eval.num_steps=often"), alem.make("mpe/simple_spread-v0"), 128)
