"""alem.engine.lockstep.play: a match in, one record per episode out, independent of the batch layout."""

from __future__ import annotations

import alem
from alem.arena import EpisodeRecord, Match, play
from alem.policies import RandomPolicy


class Recorder(RandomPolicy):
    """Random play that logs every end_episode call."""

    def __init__(self, log: list):
        self.log = log

    def end_episode(self, episode: int) -> None:
        self.log.append(episode)


def test_play_yields_each_requested_episode_once_and_the_same_for_any_batch():
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    log: list[int] = []
    records: list[EpisodeRecord] = []
    for r in play(Match(env, [Recorder(log), RandomPolicy()], 6, num_envs=2, seed=3), [5, 1, 2]):
        assert log.count(r.episode) == 0  # the record comes before the players hear the episode ended
        records.append(r)
    assert sorted(r.episode for r in records) == [1, 2, 5] and sorted(log) == [1, 2, 5]
    assert all(isinstance(r, EpisodeRecord) and r.length == 3 and r.terminated for r in records)
    assert all(r.decisions == (3, 3) and len(r.returns) == 2 for r in records)
    # episode e is dealt from (seed, e) alone: one env at a time plays the same episodes
    alone = {r.episode: r for r in play(Match(env, [RandomPolicy()] * 2, 6, num_envs=1, seed=3), [2, 5, 1])}
    assert alone == {r.episode: r for r in records}
    assert len({r.returns for r in records}) > 1  # and they differ from one another
    assert list(play(Match(env, [RandomPolicy()] * 2, 6), [])) == []


def test_max_steps_cuts_episodes():
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    records = list(play(Match(env, [RandomPolicy()] * 2, 2, num_envs=2, max_steps=2), range(2)))
    assert [(r.length, r.cut, r.terminated, r.truncated) for r in records] == [(2, True, False, False)] * 2
