"""alem.engine.record: the Match checks and EpisodeRecord's round trip through episodes.jsonl."""

from __future__ import annotations

import pytest

import alem
from alem.arena import EPISODES_FILE, EpisodeRecord, Match, read_episodes
from alem.errors import ConfigError
from alem.players import RandomPlayer
from alem.rundir import JsonlWriter, read_jsonl


def rec(episode: int, returns=(1.0, -1.0), terminated=True, truncated=False) -> EpisodeRecord:
    return EpisodeRecord(
        episode=episode,
        returns=tuple(returns),
        length=3,
        terminated=terminated,
        truncated=truncated,
        decisions=(2, 1),
        env_illegal=(0, 1),
    )


def test_record_round_trips_through_episodes_jsonl(tmp_path):
    records = [rec(0), rec(1, (0.5, 2.25), terminated=False), rec(2, terminated=False, truncated=True)]
    with JsonlWriter(tmp_path / EPISODES_FILE) as f:
        for r in records:
            f.write(r.to_json())
    assert read_episodes(tmp_path / EPISODES_FILE) == {r.episode: r for r in records}
    # the line as the evaluator has always written it: same keys, same order, cut spelled out,
    # then the opening plies and the game's digest (added later, so readers of old lines skip them)
    lines = list(read_jsonl(tmp_path / EPISODES_FILE))
    assert list(lines[1]) == [
        "type", "episode", "returns", "length", "terminated", "truncated", "cut", "decisions", "env_illegal",
        "opening", "game",
    ]  # fmt: skip
    old = {k: v for k, v in lines[1].items() if k not in ("opening", "game")}
    assert EpisodeRecord.from_json(old) == records[1]  # a line written before them still reads
    assert [line["cut"] for line in lines] == [False, True, False]
    assert lines[1]["returns"] == [0.5, 2.25] and lines[1]["type"] == "episode"


def test_read_episodes_keeps_the_first_line_of_an_episode_and_skips_others(tmp_path):
    path = tmp_path / EPISODES_FILE
    with JsonlWriter(path) as f:
        f.write(rec(3).to_json())
        f.write({"type": "note", "episode": 9})
        f.write(rec(3, (7.0, 7.0)).to_json())
        f.write(rec(5).to_json())
    with path.open("a") as f:
        f.write('{"type": "episode", "episode": 6, "ret')  # torn by a kill
    eps = read_episodes(path)
    assert sorted(eps) == [3, 5] and eps[3].returns == (1.0, -1.0)
    assert sorted(read_episodes(path, below=5)) == [3]
    assert read_episodes(tmp_path / "missing.jsonl") == {}


def test_record_is_frozen_and_cut_is_derived():
    r = rec(0, terminated=False, truncated=False)
    assert r.cut and not rec(0).cut
    with pytest.raises(AttributeError):
        r.episode = 1


def test_match_checks_its_settings():
    env = alem.make("prisoners_dilemma-v0")
    two = [RandomPlayer(), RandomPlayer()]
    m = Match(env, two, 4)
    assert m.players == tuple(two) and m.params is env.default_params
    assert (m.num_envs, m.seed, m.max_steps) == (8, 0, None)
    assert m.device_seats == [0, 1] and m.host_seats == []
    with pytest.raises(ConfigError, match="prisoners_dilemma-v0 needs 2 players, got 3"):
        Match(env, [*two, RandomPlayer()], 4)
    with pytest.raises(ConfigError, match="episodes must be an integer >= 1, got 0"):
        Match(env, two, 0)
    with pytest.raises(ConfigError, match="num_envs must be an integer >= 1, got True"):
        Match(env, two, 4, num_envs=True)
    with pytest.raises(ConfigError, match="max_steps must be null or an integer >= 1, got 0"):
        Match(env, two, 4, max_steps=0)
    with pytest.raises(ConfigError, match="continuous actions"):
        Match(alem.make("gymnax/pendulum-v1"), [RandomPlayer()], 1)
