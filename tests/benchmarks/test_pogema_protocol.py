"""benchmarks/pogema_protocol.py: the POGEMA benchmark's protocol on alem writes its tables once,
with the published means of the same instances beside alem's."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import pogema_protocol as P


def test_a_small_protocol_run_writes_instances_and_a_summary_with_the_published_means(tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "--set",
        "puzzles",
        "--num-agents",
        "2",
        "--limit-maps",
        "2",
        "--policy",
        "bfs",
        "--out",
        str(out),
    ]
    body = P.main(argv)
    rows = list(csv.DictReader((out / "instances.csv").open()))
    # 2 maps x the benchmark's 10 seeds for puzzles, 2 agents each.
    assert len(rows) == 20 and {r["map_name"] for r in rows} == {"puzzle-00", "puzzle-01"}
    assert {int(r["seed"]) for r in rows} == set(range(10)) and {r["num_agents"] for r in rows} == {"2"}
    assert {r["policy"] for r in rows} == {"bfs"}
    for r in rows:
        assert 0.0 <= float(r["ISR"]) <= 1.0 and float(r["CSR"]) in (0.0, 1.0)
        assert 1 <= float(r["makespan"]) <= 128 and float(r["SoC"]) >= float(r["makespan"])
    summary = json.loads((out / "summary.json").read_text())
    (row,) = summary["summary"]["bfs"]
    assert row["instances"] == 20 and row["CSR"] == pytest.approx(sum(float(r["CSR"]) for r in rows) / 20)
    # 20 of the 160 published instances: their published mean is not shown beside these.
    assert row["LaCAM_CSR"] is None and row["LaCAM_SoC"] is None
    assert summary["max_steps"] == 128 and summary["collision"] == "soft" and body["instances"] == 20
    assert "| 2 |" in capsys.readouterr().out  # the printed table
    with pytest.raises(SystemExit):  # the folder is taken: nothing is written over
        P.main(argv)
    assert len(list(csv.DictReader((out / "instances.csv").open()))) == 20


def test_the_published_means_stand_beside_the_whole_set_of_an_agent_count(tmp_path):
    body = P.main(
        ["--set", "puzzles", "--num-agents", "2", "--policy", "random", "--out", str(tmp_path / "o")]
    )
    (row,) = body["summary"]["random"]
    published = json.loads(P.PUBLISHED.read_text())["results"]["MAPF"]["puzzles"]["LaCAM"]["2"]
    assert row["instances"] == published["instances"] == 160
    assert row["LaCAM_CSR"] == published["CSR"] and row["LaCAM_SoC"] == published["SoC"]


def test_an_evaluation_yaml_of_the_benchmark_is_read(tmp_path):
    maps = tmp_path / "maps.yaml"
    maps.write_text("tiny-a: |-\n  ....\n  .#..\n  ....\ntiny-b: |-\n  ...\n  ...\n")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(
        "environment:\n  on_target: restart\n  max_episode_steps: 16\n  collision_system: soft\n"
        "  seed: {grid_search: [0, 1]}\n  num_agents: {grid_search: [2]}\n"
        "  map_name: {grid_search: [tiny-a, tiny-b]}\n"
    )
    from alem.envs.pathfinding import benchmark as B

    mode, steps, rows = P.instances_from_config(B.load_config(cfg), B.load_map_set(maps))
    assert (mode, steps, len(rows)) == ("lmapf", 16, 4)
    body = P.main(
        ["--maps", str(maps), "--config", str(cfg), "--policy", "random", "--out", str(tmp_path / "o")]
    )
    # Maps of two shapes ran as one padded batch; throughput is goals per step.
    assert body["mode"] == "lmapf" and body["instances"] == 4
    assert 0.0 <= body["summary"]["random"][0]["avg_throughput"] <= 2.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("environment:\n  on_target: finish\n")
    with pytest.raises(SystemExit, match="on_target 'finish'"):
        P.instances_from_config(B.load_config(bad), B.load_map_set(maps))


@pytest.mark.exhaustive
@pytest.mark.xdist_group("tiny_grid_run")
def test_a_trained_checkpoint_plays_the_protocol_under_its_folder_name(tiny_grid_run, tmp_path):
    """A run trained on 3 agents in 6x6 plays the benchmark's puzzles (2 agents, their own maps);
    greedy play on fixed instances does not depend on the key; no path of the machine is written."""
    spec = f"checkpoint:{tiny_grid_run}"
    common = [
        "--set",
        "puzzles",
        "--num-agents",
        "2",
        "--limit-maps",
        "1",
        "--policy",
        spec,
        spec + "#greedy",
    ]
    first = P.main([*common, "--seed", "0", "--out", str(tmp_path / "a")])
    second = P.main([*common, "--seed", "7", "--out", str(tmp_path / "b")])
    assert first["policies"] == ["checkpoint:run", "checkpoint:run#greedy"]
    rows = list(csv.DictReader((tmp_path / "a" / "instances.csv").open()))
    assert len(rows) == 20 and {r["policy"] for r in rows} == {"checkpoint:run", "checkpoint:run#greedy"}
    assert str(tmp_path) not in (tmp_path / "a" / "summary.json").read_text()
    greedy = lambda body: body["summary"]["checkpoint:run#greedy"][0]
    assert greedy(first)["SoC"] == greedy(second)["SoC"] and greedy(first)["CSR"] == greedy(second)["CSR"]
    with pytest.raises(SystemExit):
        P.main([*common[:-2], f"checkpoint:{tmp_path / 'nothing'}", "--out", str(tmp_path / "c")])


def test_a_checkpoint_that_cannot_play_is_one_clear_error_and_nothing_is_written(tmp_path, capsys):
    """A torn results.json, and a run whose actor depends on the team (agent ids), are refused by
    name before any folder is made; neither needs a trained run to be refused."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    common = ["--set", "puzzles", "--num-agents", "2", "--limit-maps", "1", "--out", str(tmp_path / "out")]
    (run_dir / "results.json").write_text('{"env_id": "pathfinding-v0", "learner": {"na')
    with pytest.raises(SystemExit):
        P.main([*common, "--policy", f"checkpoint:{run_dir}"])
    assert "results.json is unreadable" in capsys.readouterr().err
    result = {
        "env_id": "pathfinding-v0",
        "algo": "ippo",
        "num_seeds": 1,
        "roles": [0, 0, 0],
        "learner": {"name": "ippo", "hidden": [8], "agent_id": True},
        "config": {"env": {"id": "pathfinding-v0", "kwargs": {"num_agents": 3}}},
    }
    (run_dir / "results.json").write_text(json.dumps(result))
    with pytest.raises(SystemExit):
        P.main([*common, "--policy", "bfs", f"checkpoint:{run_dir}"])
    assert "agent-id input" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--set", "random", "--out", "{tmp}/missing/o"],
            "cannot write {tmp}/missing/o: the folder {tmp}/missing does not exist",
        ),
        (
            ["--set", "random", "--limit-maps", "0", "--out", "{tmp}/o"],
            "argument --limit-maps: must be an integer >= 1, got 0",
        ),
        (
            ["--set", "random", "--num-agents", "0", "--out", "{tmp}/o"],
            "argument --num-agents: must be agent counts >= 1, got [0]",
        ),
        (
            ["--set", "random", "--seed", "-1", "--out", "{tmp}/o"],
            "argument --seed: must be an integer >= 0, got -1",
        ),
        (["--set", "random", "--maps", "m.yaml", "--out", "{tmp}/o"], "give --set or --maps, not both"),
        (
            ["--maps", "{tmp}/m.yaml", "--config", "{tmp}/c.yaml", "--out", "{tmp}/o"],
            "argument --maps: no file {tmp}/m.yaml",
        ),
    ],
)
def test_bad_arguments_are_one_line_before_anything_runs(tmp_path, capsys, args, said):
    with pytest.raises(SystemExit) as e:
        P.main([a.format(tmp=tmp_path) for a in args])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        e.value.code == 2
        and err == f"python -m benchmarks.pogema_protocol: error: {said.format(tmp=tmp_path)}"
    )
    assert list(tmp_path.iterdir()) == []


# -- a killed run keeps its finished blocks (one per policy and agent count) and resumes from them --

TINY_MAPS = "tiny-a: |-\n  ....\n  .#..\n  ....\ntiny-b: |-\n  ...\n  ...\n"
TINY_EVAL = (
    "environment:\n  on_target: nothing\n  max_episode_steps: 8\n  collision_system: soft\n"
    "  seed: {grid_search: [0, 1]}\n  num_agents: {grid_search: [2, 3]}\n"
    "  map_name: {grid_search: [tiny-a, tiny-b]}\n"
)


class Killed(BaseException):
    """Stands for a kill: nothing in the module catches it."""


def _tiny_argv(tmp_path, out, policies=("random",)):
    """2 maps x 2 seeds x agent counts 2 and 3, 8 steps: one block per policy and agent count."""
    maps, cfg = tmp_path / "maps.yaml", tmp_path / "eval.yaml"
    maps.write_text(TINY_MAPS)
    cfg.write_text(TINY_EVAL)
    return ["--maps", str(maps), "--config", str(cfg), "--policy", *policies, "--out", str(out)]


def _counting(monkeypatch, kill_after=None):
    """Record the agent count of every block computed; raise Killed when block ``kill_after + 1`` starts."""
    computed: list[int] = []
    real = P.run_group

    def run_group(maps, rows, *a, **k):
        if kill_after is not None and len(computed) == kill_after:
            raise Killed
        computed.append(rows[0]["num_agents"])
        return real(maps, rows, *a, **k)

    monkeypatch.setattr(P, "run_group", run_group)
    return computed


def _results(out):
    return {name: (out / name).read_text() for name in ("instances.csv", "summary.csv")}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whole")
    body = P.main(_tiny_argv(tmp, tmp / "run"))
    return _results(tmp / "run"), body["summary"]


def test_a_killed_run_keeps_its_finished_blocks_and_a_resume_computes_only_the_rest(
    tmp_path, monkeypatch, uninterrupted
):
    out = tmp_path / "run"
    argv = _tiny_argv(tmp_path, out)
    with monkeypatch.context() as m:
        computed = _counting(m, kill_after=1)
        with pytest.raises(Killed):
            P.main(argv)
    assert computed == [2]
    (block,) = [json.loads(line) for line in (out / "blocks.jsonl").read_text().splitlines()]
    assert (block["policy"], block["num_agents"], len(block["instances"])) == ("random", 2, 4)
    assert not (out / "summary.json").exists()  # the summary is written from all blocks, at the end
    computed = _counting(monkeypatch)
    body = P.main([*argv, "--resume"])
    assert computed == [3]  # the finished block was kept, not computed again
    assert _results(out) == uninterrupted[0] and body["summary"] == uninterrupted[1]
    assert len((out / "blocks.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / "summary.json").read_text())["instances"] == 8


def test_a_torn_last_block_is_dropped_and_computed_again(tmp_path, monkeypatch, uninterrupted):
    out = tmp_path / "run"
    argv = _tiny_argv(tmp_path, out)
    with monkeypatch.context() as m:
        _counting(m, kill_after=1)
        with pytest.raises(Killed):
            P.main(argv)
    text = (out / "blocks.jsonl").read_text()
    (out / "blocks.jsonl").write_text(text[: len(text) // 2])  # killed mid-line
    computed = _counting(monkeypatch)
    P.main([*argv, "--resume"])
    assert computed == [2, 3]
    assert _results(out) == uninterrupted[0]


@pytest.mark.parametrize(
    ("change", "said"), [(["--seed", "1"], "seed"), (["--num-agents", "2"], "instances")]
)
def test_a_resume_with_other_settings_is_refused_in_one_line(tmp_path, monkeypatch, capsys, change, said):
    out = tmp_path / "run"
    argv = _tiny_argv(tmp_path, out)
    with monkeypatch.context() as m:
        _counting(m, kill_after=1)
        with pytest.raises(Killed):
            P.main(argv)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        P.main([*argv, *change, "--resume"])
    (err,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert e.value.code == 2 and err.startswith("python -m benchmarks.pogema_protocol: error: ")
    assert "other settings" in err and said in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing mixed in
    with pytest.raises(SystemExit) as e:  # without --resume the folder is refused, with the way on
        P.main(argv)
    assert e.value.code == 2 and "--resume" in capsys.readouterr().err


@pytest.mark.integration
def test_a_run_killed_by_a_signal_keeps_its_blocks_and_resumes_to_the_same_results(tmp_path):
    """The real thing: SIGKILL once the first block is on disk, then the same command with --resume."""
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "benchmarks.pogema_protocol",
        *_tiny_argv(tmp_path, out, ("random", "bfs")),
    ]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    blocks, deadline = out / "blocks.jsonl", time.monotonic() + 120
    while not (blocks.is_file() and blocks.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    kept = blocks.read_text().count("\n")
    assert 1 <= kept < 4 and not (out / "summary.json").exists()
    resumed = subprocess.run(
        [*command, "--resume"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert resumed.stdout.count("kept from an earlier run") == kept
    P.main(_tiny_argv(tmp_path, tmp_path / "whole", ("random", "bfs")))  # 4 blocks: 2 policies x 2 counts
    assert _results(out) == _results(tmp_path / "whole")


def test_the_shipped_learned_follower_is_a_policy_by_name():
    """The learned row needed a 25-minute training run: ``follow`` names the exported actor alem
    ships, trained with configs/env/pathfinding_follow.yaml's recipe."""
    import json

    from alem.envs.pathfinding import learned_follower
    from benchmarks.pogema_policies import policy_label, policy_spec, trained_kwargs

    spec = policy_spec("follow")
    assert spec == f"checkpoint:{learned_follower()}" and policy_label(spec) == "checkpoint:follow"
    assert policy_label(policy_spec("follow#greedy")) == "checkpoint:follow#greedy"
    meta = json.loads((learned_follower() / "actor.json").read_text())
    assert meta["algo"] == "ippo" and meta["source"]["env_steps_per_seed"] >= 3_000_000
    assert trained_kwargs(spec)[2] == {
        "num_agents": 16,
        "height": 20,
        "density": 0.3,
        "max_steps": 128,
        "goal_direction": True,
        "progress_reward": 0.1,
    }


@pytest.mark.integration  # compiles the actor's program for one agent count
def test_the_shipped_learned_follower_solves_the_random_maps_better_than_bfs(tmp_path):
    """All 128 random-map instances of 8 agents (measured: CSR 0.977 against BFS's 0.82)."""
    common = ["--set", "random", "--mode", "mapf", "--num-agents", "8"]
    body = P.main([*common, "--policy", "follow", "bfs", "--out", str(tmp_path / "out")])
    follow, bfs = body["summary"]["checkpoint:follow"][0], body["summary"]["bfs"][0]
    assert follow["CSR"] >= 0.95 and follow["CSR"] > bfs["CSR"] + 0.1, (follow, bfs)
