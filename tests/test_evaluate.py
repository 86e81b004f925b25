"""The evaluator: lock-step loop, reproducible keys, results table, resume, CLI and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

import alem
from alem.errors import BackendUnavailable
from alem.evaluate import ConfigError, build_players, evaluate, format_table, main, run
from alem.players import FunctionPlayer, make_player, player_names
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.testing import FakeChatServer

ROOT = Path(__file__).resolve().parents[1]


def const(a: int, name: str = "const"):
    return FunctionPlayer(lambda key, turn: jnp.full(turn.active.shape, a, jnp.int32), name)


def episodes_of(run_dir: Path) -> dict[int, dict]:
    return {r["episode"]: r for r in read_jsonl(run_dir / "episodes.jsonl")}


@pytest.fixture(scope="module")
def kuhn():
    return alem.make("kuhn_poker-v0")


def test_known_answer_and_table(tmp_path):
    """Scripted 'LLM' cooperates, a device player defects: every round pays 0 and 5."""
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    llm = LLMPlayer(env, backend="scripted", script="first")
    res = evaluate(
        env, [llm, const(1)], episodes=5, num_envs=2, seed=0, run_dir=tmp_path, labels=["llm", "defect"]
    )
    s0, s1 = res["seats"]
    assert (s0["return_mean"], s1["return_mean"]) == (0.0, 15.0)
    assert s0["return_ci95"] == 0.0 and s0["episodes"] == 5 and s0["decisions"] == 15
    assert not res["zero_sum"] and "win" not in s0
    assert s0["llm_decisions"] == 15 and s0["invalid_rate"] == 0.0 and s0["tokens_in_per_decision"] > 50
    assert "llm_decisions" not in s1
    table = format_table(res)
    assert "0.000 ± 0.000" in table and "15.000" in table
    csv_rows = (tmp_path / "results.csv").read_text().splitlines()
    assert len(csv_rows) == 3 and csv_rows[0].startswith("env_id,seat,agent,player")
    assert json.loads((tmp_path / "results.json").read_text())["seats"][1]["return_mean"] == 15.0


def test_ci_and_win_draw_loss(kuhn, tmp_path):
    players = [make_player("random", kuhn), make_player("random", kuhn)]
    res = evaluate(kuhn, players, episodes=40, num_envs=7, seed=1, run_dir=tmp_path)
    r = np.array([e["returns"] for e in episodes_of(tmp_path).values()])
    assert res["zero_sum"]
    s0 = res["seats"][0]
    from scipy import stats

    assert s0["return_mean"] == pytest.approx(r[:, 0].mean())
    assert s0["return_ci95"] == pytest.approx(stats.t.ppf(0.975, 39) * r[:, 0].std(ddof=1) / np.sqrt(40))
    assert s0["win"] == pytest.approx(np.mean(r[:, 0] > r[:, 1])) and s0["draw"] == 0.0
    assert s0["win"] + s0["loss"] == pytest.approx(1.0) and res["seats"][1]["win"] == s0["loss"]


def test_results_do_not_depend_on_batching(kuhn, tmp_path):
    """Episode e gets the same deal and policy keys whatever num_envs is."""
    out = []
    for b in (2, 7):
        players = [make_player("random", kuhn), make_player("random", kuhn)]
        evaluate(kuhn, players, episodes=7, num_envs=b, seed=5, run_dir=tmp_path / str(b), progress=False)
        out.append({e: (r["returns"], r["length"]) for e, r in episodes_of(tmp_path / str(b)).items()})
    assert out[0] == out[1] and len(out[0]) == 7
    assert len({tuple(v[0]) for v in out[0].values()}) > 1  # different deals across episodes
    players = [make_player("random", kuhn), make_player("random", kuhn)]
    evaluate(kuhn, players, episodes=7, num_envs=7, seed=6, run_dir=tmp_path / "s6", progress=False)
    assert {e: (r["returns"], r["length"]) for e, r in episodes_of(tmp_path / "s6").items()} != out[0]


def test_minimax_never_loses_at_tic_tac_toe(tmp_path):
    env = alem.make("tic_tac_toe-v0")
    if "minimax" not in player_names(env):
        pytest.skip("no minimax player registered")
    players = build_players(env, ["minimax", "random"])
    res = evaluate(env, players, episodes=16, num_envs=8, seed=0, run_dir=tmp_path, progress=False)
    s0 = res["seats"][0]
    assert res["zero_sum"] and s0["loss"] == 0.0 and s0["win"] > 0.5
    assert s0["player"] == "minimax" and s0["env_illegal"] == 0


class Crash(Exception):
    pass


def crashing_script(after: int):
    calls = [0]

    def script(body):
        calls[0] += 1
        if calls[0] > after:
            raise Crash("interrupted")
        names = body["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
        return json.dumps({"action": names[body["seed"] % len(names)]})

    return script


def test_resume_loses_nothing_and_counts_nothing_twice(tmp_path):
    env = alem.make("tic_tac_toe-v0")

    def players(after):
        return [LLMPlayer(env, backend="scripted", script=crashing_script(after)), make_player("random", env)]

    full, part = tmp_path / "full", tmp_path / "part"
    ref = evaluate(env, players(10**9), episodes=9, num_envs=3, seed=3, run_dir=full, progress=False)
    with pytest.raises(Crash):
        evaluate(env, players(13), episodes=9, num_envs=3, seed=3, run_dir=part, progress=False)
    done_before = episodes_of(part)
    assert 0 < len(done_before) < 9
    unfinished = {r["episode"] for r in read_jsonl(part / "transcripts.jsonl")} - set(done_before)
    assert unfinished  # the crash left decisions of unfinished episodes behind
    res = evaluate(
        env, players(10**9), episodes=9, num_envs=3, seed=3, run_dir=part, resume=True, progress=False
    )
    lines = list(read_jsonl(part / "episodes.jsonl"))
    assert sorted(r["episode"] for r in lines) == list(range(9))  # no duplicates, none missing
    assert episodes_of(part) == episodes_of(full)
    assert {k: v for k, v in episodes_of(part).items() if k in done_before} == done_before

    def decisions(d):
        return sorted((r["episode"], r["decision"], r["action"]) for r in read_jsonl(d / "transcripts.jsonl"))

    assert decisions(part) == decisions(full)
    assert res["seats"][0]["llm_decisions"] == ref["seats"][0]["llm_decisions"] == len(decisions(full))


def compose_cfg(*overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="evaluate", overrides=list(overrides))


def test_config_errors_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="one player spec per seat"):
        run(compose_cfg("env.id=public_goods-v0", "players=[random,random]"), tmp_path / "a")
    with pytest.raises(alem.AlemError, match="no player 'randon'.*did you mean 'random'"):
        run(compose_cfg("players=[randon,random]"), tmp_path / "b")
    with pytest.raises(ConfigError, match="episodes must be an integer >= 1"):
        run(compose_cfg("players=[random]", "episodes=0"), tmp_path / "c")
    with pytest.raises(alem.UnknownEnvError, match="tic_tac_toe-v0"):
        run(compose_cfg("env.id=tic_tac_to-v0", "players=[random]"), tmp_path / "d")
    # an llm option on a command line that seats no LLM would be ignored
    args = [
        "env.id=tic_tac_toe-v0",
        "players=[random,minimax]",
        "llm=openai",
        "llm.base_url=http://127.0.0.1:9/v1",
    ]
    with pytest.raises(
        ConfigError,
        match=r"llm=openai is read by the llm player, and players=\['random', 'minimax'\] seats none",
    ):
        run(compose_cfg(*args), tmp_path / "e", overrides=args)
    assert not any((tmp_path / x).exists() for x in "abcde")


def resume_run(run_dir, *overrides):
    args = [f"resume={run_dir}", *overrides]
    return run(compose_cfg(*args), run_dir, overrides=args)


def test_resume_refuses_a_different_setup(tmp_path):
    run(compose_cfg("players=[random]", "episodes=2", "num_envs=2"), tmp_path)
    before = (tmp_path / "config.yaml").read_text()
    with pytest.raises(ConfigError, match=r"seed=1 \(the run has 0\)"):
        resume_run(tmp_path, "seed=1")
    with pytest.raises(ConfigError, match=r"llm\.temperature=0\.5.*players="):
        resume_run(tmp_path, "llm.temperature=0.5", "players=[random,llm]")
    with pytest.raises(ConfigError, match="its own directory"):
        resume_run(tmp_path, f"output_dir={tmp_path / 'elsewhere'}")
    assert (tmp_path / "config.yaml").read_text() == before
    # more episodes, or other transport settings, are fine: only the new episodes are played
    res = resume_run(tmp_path, "episodes=4", "llm.timeout_s=5", "seed=0")
    assert res["episodes"] == 4 and sorted(episodes_of(tmp_path)) == [0, 1, 2, 3]
    assert OmegaConf.load(tmp_path / "config.yaml").player_kwargs.llm.timeout_s == 5


def test_a_new_run_never_writes_into_an_existing_run(tmp_path):
    from alem.rundir import RunDirError

    run(compose_cfg("players=[random]", "episodes=2", "num_envs=2"), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(RunDirError, match="already holds a run"):
        run(compose_cfg("players=[random]", "episodes=3", "seed=4"), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_health_check_fails_before_any_episode(tmp_path):
    with FakeChatServer() as srv:
        cfg = compose_cfg("llm=openai", f"llm.base_url={srv.base_url}", "llm.model=gpt-nope", "episodes=2")
        with pytest.raises(BackendUnavailable, match="'gpt-nope' is not served"):
            run(cfg, tmp_path)
    assert not (tmp_path / "episodes.jsonl").exists() or not (tmp_path / "episodes.jsonl").read_text()


def test_cli_against_an_openai_compatible_server(tmp_path, monkeypatch):
    """The README command shape (``alem.evaluate.main``, in process), pointed at a local URL.

    (No capsys here: Hydra's log handlers would keep pytest's closed capture stream.)
    """
    monkeypatch.chdir(tmp_path)
    with FakeChatServer(script="random") as srv:
        argv = [
            "alem.evaluate", "env=tic_tac_toe-v0", "players=[llm,random]",
            "llm=openai", f"llm.base_url={srv.base_url}", "llm.model=fake-model",
            "episodes=6", "num_envs=3", f"output_dir={tmp_path / 'run'}",
        ]  # fmt: skip
        monkeypatch.setattr(sys, "argv", list(argv))
        main()
        n_requests = len(srv.requests)
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    s0 = res["seats"][0]
    assert res["env_id"] == "tic_tac_toe-v0" and s0["player"] == "llm" and res["zero_sum"]
    assert s0["llm_requests"] == n_requests and s0["invalid_rate"] == 0.0
    assert s0["win"] + s0["draw"] + s0["loss"] == pytest.approx(1.0)
    assert res["config"]["player_kwargs"]["llm"]["base_url"] == srv.base_url

    bad = [*argv[:4], "llm.base_url=http://127.0.0.1:9/v1", *argv[5:-1], f"output_dir={tmp_path / 'bad'}"]
    assert bad[5] == "llm.model=fake-model"
    monkeypatch.setattr(sys, "argv", bad)
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2  # refused before writing; the message itself: test_health_check_fails_before_any_episode


@pytest.mark.integration
def test_module_entry_point_runs(tmp_path, fault_report):
    """``python -m alem.evaluate`` as a subprocess: results, and a clear one-line error with status 2."""
    base = [sys.executable, "-m", "alem.evaluate", "episodes=2"]
    p = subprocess.run(
        [*base, "players=[random]", f"output_dir={tmp_path}"], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert (
        "iterated_prisoners_dilemma-v0: 2 episodes" in p.stdout
        and f"Results written to {tmp_path}" in p.stdout
    )
    bad = ["llm=openai", "llm.base_url=http://127.0.0.1:9/v1", "llm.model=m", f"output_dir={tmp_path}/bad"]
    p = subprocess.run([*base, *bad], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "alem.evaluate: error: cannot reach http://127.0.0.1:9/v1" in p.stderr
    # llm.cache pointing at a file that is not a cache: refused, the file untouched (it used to
    # lose its unterminated last line and get cache JSON appended), nothing written
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes\nlast line, no newline")
    cache = [*bad[:-1], f"llm.cache={notes}", f"output_dir={tmp_path}/cache"]
    p = subprocess.run([*base, *cache], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "is not a request cache" in p.stderr and "Traceback" not in p.stderr
    assert notes.read_bytes() == b"my notes\nlast line, no newline"
    assert not (tmp_path / "cache").exists()  # a refused run creates no directory
    # a run file line that is valid JSON but not an object: one line naming it on resume
    with (tmp_path / "episodes.jsonl").open("a") as f:
        f.write("[1, 2]\n")
    p = subprocess.run([*base, f"resume={tmp_path}"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "is not a JSON record" in p.stderr and "Traceback" not in p.stderr, p.stderr
    # credentials in llm.base_url never reach an error line (nor any file: nothing is written)
    secret_url = "llm.base_url='ftp://alice:pw123@127.0.0.1:9/v1?api_key=KEY456'"
    unset_key = [
        "llm.base_url='http://alice:pw123@127.0.0.1:9/v1?api_key=KEY456'",
        "llm.api_key_env=ALEM_SURELY_UNSET_VAR",
    ]
    for extra in ([secret_url], unset_key):
        p = subprocess.run(
            [*base, *bad[:1], "llm.model=m", *extra, f"output_dir={tmp_path}/u"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 2 and "alem.evaluate: error:" in p.stderr, p.stderr[-1000:]
        assert "pw123" not in p.stdout + p.stderr and "KEY456" not in p.stdout + p.stderr
        assert not (tmp_path / "u").exists() and not (tmp_path / "outputs").exists()
    # seeds that jax.random.key would fold onto other seeds, and a non-integer: one line, nothing written
    for seed in ("-1", "4294967296", "1.5"):
        p = subprocess.run(
            [*base, "players=[random]", f"seed={seed}", f"output_dir={tmp_path}/s"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert p.returncode == 2 and "seed must be an integer in [0, 2**32 - 1]" in p.stderr, p.stderr[-500:]
        assert not (tmp_path / "s").exists()
    # players= as one string is one spec for every seat, not its characters
    p = subprocess.run(
        [*base, "players=random", f"output_dir={tmp_path}/one"], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads((tmp_path / "one" / "results.json").read_text())["players"] == ["random", "random"]
    fault_report(faults=8)  # the hostile inputs above, counted in the fault suite's summary


# ---------------------------------------------------------------------------- env episode metrics
def _corridors(**kw):
    """Two agents on a 3 x 5 open map that never meet: agent 0 three cells from its goal along
    row 0, agent 1 one cell from its goal on row 2 (the BFS player walks straight there)."""
    env_id = "pathfinding_lifelong-v0" if kw.get("mode") == "lifelong" else "pathfinding-v0"
    maps = ".....\n.....\n....."
    return alem.make(env_id, map_type="fixed", maps=maps, starts=[[0, 0], [2, 0]], **kw)


def test_pathfinding_metrics_in_results_and_table(tmp_path):
    """POGEMA's metrics reach results.json and the table, equal to the hand-computed values."""
    env = _corridors(goals=[[0, 3], [2, 1]], max_steps=8)
    res = evaluate(env, build_players(env, ["bfs"]), episodes=2, num_envs=2, run_dir=tmp_path / "a", progress=False)
    m = res["episode_metrics"]
    # Agent 0 arrives after 3 steps (cost 3), agent 1 after 1: all on goal, SoC 4, makespan 3.
    assert {k: m[k]["mean"] for k in m} == {"CSR": 1.0, "ISR": 1.0, "SoC": 4.0, "makespan": 3.0}
    assert m["CSR"]["episodes"] == 2
    assert "CSR 1.000" in format_table(res) and "makespan 3.000" in format_table(res)
    # Cut by the env's horizon after 2 steps: agent 0 never arrives (cost max_steps = 2).
    env = _corridors(goals=[[0, 3], [2, 1]], max_steps=2)
    res = evaluate(env, build_players(env, ["bfs"]), episodes=2, num_envs=2, run_dir=tmp_path / "b", progress=False)
    m = res["episode_metrics"]
    assert {k: m[k]["mean"] for k in m} == {"CSR": 0.0, "ISR": 0.5, "SoC": 3.0, "makespan": 2.0}
    # Lifelong: each agent shuttles between two adjacent goals and arrives on every step, so
    # 2 agents x 4 steps arrivals over 4 steps: throughput 2.
    env = _corridors(goals=[[[0, 1], [0, 0]], [[2, 1], [2, 0]]], max_steps=4, mode="lifelong")
    res = evaluate(env, build_players(env, ["bfs"]), episodes=1, num_envs=1, run_dir=tmp_path / "c", progress=False)
    assert {k: v["mean"] for k, v in res["episode_metrics"].items()} == {"avg_throughput": 2.0}
    assert "avg_throughput 2.000" in format_table(res)


def test_envs_without_metrics_report_none(kuhn, tmp_path):
    res = evaluate(kuhn, [const(0), const(0)], episodes=2, num_envs=2, run_dir=tmp_path, progress=False)
    assert res["episode_metrics"] == {}
    assert "metrics" not in episodes_of(tmp_path)[0]  # the episode lines of other envs are as before


@pytest.mark.integration  # the command twice, each compiling its seats' planners (~40 s on 2 busy cores)
def test_pibt_is_a_player_and_solves_at_least_what_bfs_solves(tmp_path, monkeypatch):
    """``python -m alem.evaluate env=pathfinding-v0 players=[pibt]`` (in process), against BFS on the same deals."""
    env = alem.make("pathfinding-v0", num_agents=6, height=8)
    assert "pibt" in player_names(env)
    monkeypatch.chdir(tmp_path)
    got = {}
    for name in ("pibt", "bfs"):
        argv = [
            "alem.evaluate", "env=pathfinding-v0", f"players=[{name}]", "+env.kwargs.num_agents=6",
            "+env.kwargs.height=8", "episodes=12", "num_envs=12", f"output_dir={tmp_path / name}",
        ]  # fmt: skip
        monkeypatch.setattr(sys, "argv", argv)
        main()
        got[name] = json.loads((tmp_path / name / "results.json").read_text())["episode_metrics"]
    for metric in ("CSR", "ISR"):
        assert got["pibt"][metric]["mean"] >= got["bfs"][metric]["mean"], (metric, got)
    assert got["pibt"]["ISR"]["mean"] > 0.8
