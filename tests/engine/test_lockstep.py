"""alem.engine.lockstep.play: a match in, one record per episode out, independent of the batch layout."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import alem
from alem.arena import EpisodeRecord, Match, play
from alem.errors import ConfigError
from alem.players import Player, RandomPlayer


class Recorder(RandomPlayer):
    """Random play that logs every end_episode call."""

    def __init__(self, log: list):
        self.log = log

    def end_episode(self, episode: int) -> None:
        self.log.append(episode)


def test_play_yields_each_requested_episode_once_and_the_same_for_any_batch():
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    log: list[int] = []
    records: list[EpisodeRecord] = []
    for r in play(Match(env, [Recorder(log), RandomPlayer()], 6, num_envs=2, seed=3), [5, 1, 2]):
        assert log.count(r.episode) == 0  # the record comes before the players hear the episode ended
        records.append(r)
    assert sorted(r.episode for r in records) == [1, 2, 5] and sorted(log) == [1, 2, 5]
    assert all(isinstance(r, EpisodeRecord) and r.length == 3 and r.terminated for r in records)
    assert all(r.decisions == (3, 3) and len(r.returns) == 2 for r in records)
    # episode e is dealt from (seed, e) alone: one env at a time plays the same episodes
    alone = {r.episode: r for r in play(Match(env, [RandomPlayer()] * 2, 6, num_envs=1, seed=3), [2, 5, 1])}
    assert alone == {r.episode: r for r in records}
    assert len({r.returns for r in records}) > 1  # and they differ from one another
    assert list(play(Match(env, [RandomPlayer()] * 2, 6), [])) == []


def test_max_steps_cuts_episodes():
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=3)
    records = list(play(Match(env, [RandomPlayer()] * 2, 2, num_envs=2, max_steps=2), range(2)))
    assert [(r.length, r.cut, r.terminated, r.truncated) for r in records] == [(2, True, False, False)] * 2


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _won(moves) -> bool:
    """Whether tic-tac-toe moves (cells, X first) complete a line, by hand."""
    marks = {c: i % 2 for i, c in enumerate(moves)}
    return any(a in marks and marks.get(b, -1) == marks[a] == marks.get(c, -2) for a, b, c in LINES)


class FirstLegal(Player):
    """A deterministic player: the lowest legal move."""

    def act(self, key, turn):
        return jnp.argmax(turn.timestep.action_mask[:, turn.agent], axis=-1).astype(jnp.int32)


def test_openings_vary_deterministic_games_the_same_for_every_seating():
    ttt = alem.make("tic_tac_toe-v0")
    first = FirstLegal()
    # The default for fixed-start games is one random ply; none for games whose deals vary.
    assert Match(ttt, [first, first], 1).openings == 1
    assert Match(alem.make("kuhn_poker-v0"), [RandomPlayer()] * 2, 1).openings == 0
    none = list(play(Match(ttt, [first, first], 12, num_envs=4, openings=0), range(12)))
    assert len({r.game for r in none}) == 1 and all(r.opening == () for r in none)  # one game, 12 times
    two = {r.episode: r for r in play(Match(ttt, [first, first], 12, num_envs=4, openings=2), range(12))}
    assert len({r.game for r in two.values()}) > 6
    for r in two.values():
        assert len(r.opening) == 2 and r.opening[0] != r.opening[1]
        # the players took over from the position the opening made
        assert sum(r.decisions) == r.length <= 7
    # The same openings whoever plays and however the batch is laid out.
    other = {
        r.episode: r.opening
        for r in play(Match(ttt, [RandomPlayer(), first], 12, num_envs=5, openings=2), [11, 3, 0])
    }
    assert other == {e: two[e].opening for e in (11, 3, 0)}


@pytest.mark.exhaustive  # the default run's budget
def test_an_opening_ply_that_would_end_the_game_is_skipped():
    ttt = alem.make("tic_tac_toe-v0")
    recs = list(play(Match(ttt, [RandomPlayer()] * 2, 16, num_envs=16, openings=9), range(16)))
    for r in recs:
        assert sum(r.decisions) >= 1  # the players always get a move
        assert len(set(r.opening)) == len(r.opening) <= 8 and not _won(r.opening)
    assert any(len(r.opening) < 8 for r in recs)  # some plies were skipped: they would have won


def test_openings_are_checked():
    ttt = alem.make("tic_tac_toe-v0")
    for bad in (-1, 1.5, True):
        with pytest.raises(ConfigError, match="openings must be"):
            Match(ttt, [RandomPlayer()] * 2, 1, openings=bad)
    with pytest.raises(ConfigError, match="not turn-based"):
        Match(alem.make("iterated_prisoners_dilemma-v0"), [RandomPlayer()] * 2, 1, openings=1)


def test_trained_players_of_one_configuration_share_one_compiled_step(monkeypatch):
    """Cross-play plays one configuration's partners in many seatings: their parameters are
    arguments of one compiled step, and the shared step plays each seating exactly as a step
    compiled for it alone would."""
    from alem.engine import lockstep
    from tests.tiny_runs import checkpoint_stand_in

    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=4)
    a, b = checkpoint_stand_in(env, seed=1), checkpoint_stand_in(env, seed=2)
    greedy = checkpoint_stand_in(env, seed=1, greedy=True)

    def records(players):
        return {r.episode: r for r in play(Match(env, players, 6, num_envs=3, seed=5), range(6))}

    def program(players):
        return lockstep.LockStep(Match(env, players, 1))._program

    shared = {a_b: records(list(a_b)) for a_b in [(a, b), (b, a), (b, b)]}
    assert program([a, b]) is program([b, a]) is program([b, b])
    assert program([a, b]).advance._cache_size() == 1  # one compile for the three seatings
    assert program([greedy, b]) is not program([a, b])  # greedy acts otherwise: its own step
    assert program([RandomPlayer(), b]) is program([RandomPlayer(), a])
    assert len({tuple(r.returns for r in recs.values()) for recs in shared.values()}) == 3
    for seating, recs in shared.items():
        monkeypatch.setattr(lockstep, "_PROGRAMS", type(lockstep._PROGRAMS)())  # compile afresh
        assert records(list(seating)) == recs
