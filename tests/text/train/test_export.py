"""Trajectory export: lines replay to the same returns, and no seat's messages hold hidden information.

Each exported episode is re-played here move by move with the plain env (``env.reset`` from the
line's seeds, ``env.step`` with the exported moves), independently of the pool that wrote it.
At every decision the seat's exported user message must be the seat's own render of the
replayed state, and the render must not change when the information hidden from that seat
is changed (the opponent's card in Kuhn and Leduc, and Leduc's public card before it is
shown; the seat's own hand in Hanabi): the counterfactual form of tests/text/test_hidden_info.py.
"""

from __future__ import annotations

import json
from collections import defaultdict

import jax
import numpy as np
import pytest

import alem
from alem.engine.lockstep import episode_key
from alem.errors import AlemError
from alem.evaluate import evaluate
from alem.players import make_player
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.prompts import turn_prompt
from alem.text.train.export import export_experts, export_run, main, read_decisions


def _kuhn_hide(env, s, seat):
    cards = np.array(s.cards)
    other = 1 - seat
    cards[other] = ({0, 1, 2} - {int(cards[seat]), int(cards[other])}).pop()
    return s.replace(cards=cards)


def _leduc_hide(env, s, seat):
    cards = np.array(s.cards)
    other = 1 - seat
    used = {int(c) for c in cards}
    cards[other] = min(set(range(6)) - used)
    if int(s.round) == 0:  # the public card is not shown yet either
        cards[2] = min(set(range(6)) - used - {int(cards[other])})
    return s.replace(cards=cards)


def _hanabi_hide(env, s, seat):
    hands = np.array(s.hands)
    kinds = env.colours * env.ranks
    hands[seat] = np.where(hands[seat] >= 0, (hands[seat] + 1) % kinds, -1)
    return s.replace(hands=hands)


CASES = {
    "tic_tac_toe-v0": ("minimax", 4, None),
    "kuhn_poker-v0": ("cfr", 12, _kuhn_hide),
    "leduc_holdem-v0": ("nash", 8, _leduc_hide),
    "hanabi_small-v0": ("rule", 2, _hanabi_hide),
}


def replay_and_check(env, lines, hide=None) -> int:
    """Re-play every episode of ``lines``; return how many hidden-information checks ran."""
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    by_episode = defaultdict(list)
    for line in lines:
        by_episode[line["episode"]].append(line)
    hidden_checks = 0
    for ep_lines in by_episode.values():
        first = ep_lines[0]
        k = jax.random.key(first["base_seed"])
        state, ts = reset(episode_key(k, first["seed"], 0))
        returns = np.zeros(env.num_agents)
        for t in range(1 + max(x["turn"] for x in ep_lines)):
            host = jax.device_get(state)
            mask = np.asarray(ts.action_mask)
            actions = np.zeros(env.num_agents, np.int32)
            at = [x for x in ep_lines if x["turn"] == t]
            assert sorted(x["seat"] for x in at) == np.flatnonzero(np.asarray(ts.acting)).tolist()
            for x in at:
                i = x["seat"]
                names = env.action_names(i)
                assert x["legal"] == [names[j] for j in np.flatnonzero(mask[i])]
                view = env.render_text(host, i)
                user = x["messages"][-1]
                assert user == {"role": "user", "content": turn_prompt(view, x["legal"])}
                assert x["reply"] == json.dumps({"action": x["action_name"]})
                if hide is not None:
                    assert env.render_text(hide(env, host, i), i) == view, (env.id, i, t)
                    hidden_checks += 1
                actions[i] = x["action"]
            key = jax.random.split(episode_key(k, first["seed"], t + 1), first["key_splits"])[0]
            state, ts = step(key, state, actions)
            returns += np.asarray(ts.reward)
        assert bool(ts.terminated or ts.truncated), "the exported episode did not end where the replay did"
        for x in ep_lines:
            assert x["return"] == pytest.approx(returns[x["seat"]])
        for i in range(env.num_agents):
            credited = sum(x["reward"] for x in ep_lines if x["seat"] == i)
            assert credited == pytest.approx(returns[i])
    return hidden_checks


@pytest.mark.parametrize(
    "env_id",
    [pytest.param(k, marks=() if k == "kuhn_poker-v0" else pytest.mark.exhaustive) for k in sorted(CASES)],
)
def test_expert_exports_replay_and_show_no_hidden_information(env_id, tmp_path):
    player, episodes, hide = CASES[env_id]
    env = alem.make(env_id)
    out = tmp_path / "x.jsonl"
    stats = export_experts(env, player, out, episodes=episodes, num_envs=4, seed=3)
    lines = read_decisions(out)
    assert stats["decisions"] == len(lines) > 0
    assert {x["episode"] for x in lines} == set(range(episodes))
    assert {x["player"] for x in lines} == {player} and all(x["scripted"] for x in lines)
    checks = replay_and_check(env, lines, hide)
    assert hide is None or checks == len(lines)
    with pytest.raises(AlemError, match="exists"):
        export_experts(env, player, out, episodes=1)


def test_export_of_an_arena_run_with_llm_and_scripted_seats(tmp_path):
    env = alem.make("kuhn_poker-v0")
    run_dir = tmp_path / "run"
    llm = LLMPlayer(env, backend="scripted", script="random", history=1)
    config = {"env": {"id": env.id}, "players": ["llm", "cfr"], "seed": 4, "num_envs": 2, "player_kwargs": {}}
    config["player_kwargs"]["llm"] = {"backend": "scripted", "script": "random", "history": 1}
    evaluate(
        env, [llm, make_player("cfr", env)], episodes=5, num_envs=2, seed=4, run_dir=run_dir, config=config
    )
    out = tmp_path / "run.jsonl"
    stats = export_run(run_dir, out)  # checks every episode's returns against episodes.jsonl
    lines = read_decisions(out)
    assert stats["episodes"] == 5 and stats["decisions"] == len(lines)
    replay_and_check(env, lines, _kuhn_hide)
    transcripts = {(r["episode"], r["decision"]): r for r in read_jsonl(run_dir / "transcripts.jsonl")}
    llm_lines = [x for x in lines if x["seat"] == 0]
    assert llm_lines and all(not x["scripted"] and x["player"] == "llm" for x in llm_lines)
    for x in llm_lines:  # the rebuilt chat is exactly what the model was sent (history included)
        rec = transcripts[(x["episode"], x["decision"])]
        assert x["messages"] == rec["attempts"][0]["messages"]
        assert x["model_reply"] == rec["attempts"][-1]["reply"] and x["action"] == rec["action"]
    assert all(x["player"] == "cfr" and x["scripted"] for x in lines if x["seat"] == 1)

    # A run whose recorded returns do not match its replay is not exported.
    eps = [json.loads(s) for s in (run_dir / "episodes.jsonl").read_text().splitlines()]
    eps[0]["returns"] = [eps[0]["returns"][0] + 1, eps[0]["returns"][1] - 1]
    (run_dir / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in eps))
    with pytest.raises(AlemError, match="replays to returns"):
        export_run(run_dir, tmp_path / "bad.jsonl")


def test_cli_writes_the_export(tmp_path, capsys):
    out = tmp_path / "ttt.jsonl"
    stats = main(
        [
            "experts",
            "--env",
            "tic_tac_toe-v0",
            "--players",
            "minimax",
            "random",
            "--episodes",
            "2",
            "--num-envs",
            "4",
            "--out",
            str(out),
        ]
    )
    assert json.loads(capsys.readouterr().out.strip()) == stats
    assert stats["players"] == ["minimax", "random"] and stats["mean_returns"][0] >= 0


def test_fallback_moves_are_marked_and_left_out_of_the_export_by_default(tmp_path, fault_report):
    """An LLM that never answers legally: every move of its seat is the random fallback's. Those
    lines used to be exported as ``status: ok, invalid: false`` with a made-up reply, so a
    fine-tune on the file would learn random moves."""
    env = alem.make("kuhn_poker-v0")
    run_dir = tmp_path / "run"
    llm = LLMPlayer(env, backend="scripted", script=lambda body: "no idea, sorry", history=0)
    config = {"env": {"id": env.id}, "players": ["llm", "cfr"], "seed": 1, "num_envs": 2, "player_kwargs": {}}
    evaluate(
        env, [llm, make_player("cfr", env)], episodes=4, num_envs=2, seed=1, run_dir=run_dir, config=config
    )
    decisions = [r for r in read_jsonl(run_dir / "transcripts.jsonl") if r.get("type") == "decision"]
    assert decisions and all(r["fallback"] == "random" for r in decisions)

    out = tmp_path / "sft.jsonl"
    stats = main(["run", str(run_dir), "--out", str(out)])
    lines = read_decisions(out)
    assert stats["fallback_decisions"] == len(decisions) and not stats["fallback_included"]
    assert lines and all(x["seat"] == 1 for x in lines)  # only the CFR seat's moves remain

    full = tmp_path / "all.jsonl"
    stats = main(["run", str(run_dir), "--out", str(full), "--include-fallback"])
    llm_lines = [x for x in read_decisions(full) if x["seat"] == 0]
    assert len(llm_lines) == len(decisions) == stats["fallback_decisions"]
    for x in llm_lines:
        assert x["invalid"] is True and x["fallback"] == "random" and x["status"] == "unparseable"
        assert x["model_reply"] == "no idea, sorry"
    fault_report(faults=1)


def test_a_failed_export_leaves_no_file_and_a_tournament_gets_the_right_hint(tmp_path, fault_report):
    env = alem.make("kuhn_poker-v0")
    run_dir = tmp_path / "run"
    config = {
        "env": {"id": env.id},
        "players": ["random", "cfr"],
        "seed": 2,
        "num_envs": 2,
        "player_kwargs": {},
    }
    evaluate(
        env,
        [make_player("random", env), make_player("cfr", env)],
        episodes=2,
        num_envs=2,
        seed=2,
        run_dir=run_dir,
        config=config,
    )
    eps = [json.loads(s) for s in (run_dir / "episodes.jsonl").read_text().splitlines()]
    eps[0]["returns"] = [eps[0]["returns"][0] + 1, eps[0]["returns"][1] - 1]
    (run_dir / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in eps))
    out = tmp_path / "out.jsonl"
    with pytest.raises(AlemError, match="replays to returns"):
        export_run(run_dir, out)
    assert list(tmp_path.glob("*.jsonl")) == [] and list(tmp_path.glob(".*.tmp")) == []
    tour = tmp_path / "tour"
    (tour / "matches").mkdir(parents=True)
    (tour / "config.yaml").write_text("mode: round_robin\npanel: [random, cfr]\n")
    with pytest.raises(AlemError, match="tournament; export one pairing") as e:
        export_run(tour, out)
    assert "resume=" not in str(e.value)
    fault_report(faults=1)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--episodes", "0"], "argument --episodes: must be an integer >= 1, got 0"),
        (["--num-envs", "0"], "argument --num-envs: must be an integer >= 1, got 0"),
        (["--history", "-1"], "argument --history: must be an integer >= 0, got -1"),
        (["--max-steps", "0"], "argument --max-steps: must be an integer >= 1, got 0"),
        (
            ["--out", "{tmp}/missing/x.jsonl"],
            "cannot write {tmp}/missing/x.jsonl: the folder {tmp}/missing does not exist",
        ),
        (["--env", "nope-v0"], "unknown env id 'nope-v0'"),
        (["--players", "foo"], "no player 'foo' for env 'tic_tac_toe-v0'"),
    ],
)
def test_the_export_command_refuses_bad_arguments_in_one_line(tmp_path, capsys, args, said):
    from alem.text.train.export import main

    base = {
        "--env": "tic_tac_toe-v0",
        "--players": "random",
        "--episodes": "2",
        "--out": str(tmp_path / "o.jsonl"),
    }
    base.update(dict(zip(args[::2], (a.format(tmp=tmp_path) for a in args[1::2]), strict=True)))
    with pytest.raises(SystemExit) as e:
        main(["experts", *(x for kv in base.items() for x in kv)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert e.value.code == 2 and err.startswith("python -m alem.text.train.export experts: error: ")
    assert said.format(tmp=tmp_path) in err and list(tmp_path.iterdir()) == []
