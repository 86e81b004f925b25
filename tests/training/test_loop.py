"""alem.training: the one loop, with a learner whose metrics are known in advance."""

from __future__ import annotations

import json
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem import struct
from alem.errors import ConfigError, TrainingDiverged, TrainingInterrupted
from alem.training import ChunkStats, JsonlMetrics, Schedule, train
from alem.training.loop import restore_latest


@struct.dataclass
class CounterState:
    updates: jax.Array  # int32 [] updates done
    batched_fields: ClassVar[tuple[str, ...]] = ()


class CounterLearner:
    """Update u (1-based) ends u % 3 episodes; agent i's returns sum to (i + 1) * u; loss = u."""

    name = "counter"

    def init(self, key):
        return CounterState(updates=jnp.int32(0))

    def run(self, state, num_updates):
        def one(s, _):
            u = s.updates + 1
            episodes = u % 3
            m = {
                "episodes": episodes,
                "return_sum": jnp.stack([u, 2 * u]).astype(jnp.float32) * (episodes > 0),
                "length_sum": (5 * episodes).astype(jnp.float32),
                "illegal_actions": jnp.int32(1),
                "outcome_won": (u % 2) * (episodes > 0),  # an outcome count (SMAX's won)
                "loss": u.astype(jnp.float32),
            }
            return CounterState(updates=u), m

        return jax.lax.scan(one, state, None, length=num_updates)


class Recorder:
    def __init__(self):
        self.calls: list = []

    def start(self, first_chunk):
        self.calls.append(("start", first_chunk))

    def chunk(self, stats: ChunkStats):
        self.calls.append(("chunk", stats))

    def close(self, summary=None, exit_code=0):
        self.calls.append(("close", exit_code))


SCHEDULE = Schedule(seed=5, num_seeds=2, chunk_updates=3, num_chunks=4, steps_per_update=10)


def test_sinks_get_each_chunk_with_the_learners_numbers():
    rec = Recorder()
    result = train(CounterLearner(), SCHEDULE, [rec])
    assert rec.calls[0] == ("start", 0)
    chunks = [c for kind, c in rec.calls[1:]]
    assert [c.chunk for c in chunks] == [0, 1, 2, 3] and [c.update for c in chunks] == [3, 6, 9, 12]
    assert [c.env_steps for c in chunks] == [30, 60, 90, 120] and chunks[0].first and not chunks[1].first
    for c in chunks:
        us = np.arange(3 * c.chunk + 1, 3 * c.chunk + 4)
        eps = us % 3
        assert c.episodes.tolist() == [eps.sum()] * 2
        expected = np.array([(us * (eps > 0)).sum(), 2 * (us * (eps > 0)).sum()]) / eps.sum()
        np.testing.assert_allclose(c.episode_return, [expected, expected])
        np.testing.assert_allclose(c.seed_return, [expected.mean()] * 2)
        np.testing.assert_allclose(c.episode_length, [5.0, 5.0])
        assert c.illegal_actions.tolist() == [3, 3]
        np.testing.assert_allclose(c.losses["loss"], [us.mean()] * 2)
        won = ((us % 2) * (eps > 0)).sum()
        np.testing.assert_allclose(c.outcomes["won_rate"], [won / eps.sum()] * 2)
    assert set(chunks[0].losses) == {"loss"}  # episode sums and outcome counts are not losses
    us = np.arange(1, 13)
    assert result.totals["episodes"].tolist() == [(us % 3).sum()] * 2
    assert result.totals["outcome_won"].tolist() == [((us % 2) * (us % 3 > 0)).sum()] * 2
    assert int(result.state.updates[0]) == 12 and result.start_chunk == 0


def test_seed_return_is_nan_for_a_seed_without_episodes():
    stats = ChunkStats(
        chunk=0,
        schedule=SCHEDULE,
        seconds=1.0,
        first=True,
        episodes=np.array([0, 2]),
        episode_return=np.array([[np.nan, np.nan], [1.0, 3.0]]),
        episode_length=np.array([np.nan, 4.0]),
        illegal_actions=np.zeros(2, int),
        losses={},
    )
    ret = stats.seed_return
    assert np.isnan(ret[0]) and ret[1] == 2.0
    assert stats.steps_per_s == 30 * 2


def test_stop_and_resume_continue_from_the_checkpoint(tmp_path):
    rows = JsonlMetrics(tmp_path / "metrics.jsonl", SCHEDULE.chunk_updates)
    with pytest.raises(TrainingInterrupted, match="after chunk 2/4"):
        train(CounterLearner(), SCHEDULE, [rows], checkpoint_dir=tmp_path, stop_after_chunks=2)
    rows.close()
    rec = Recorder()
    rows = JsonlMetrics(tmp_path / "metrics.jsonl", SCHEDULE.chunk_updates)
    result = train(CounterLearner(), SCHEDULE, [rec, rows], checkpoint_dir=tmp_path, resume=True)
    rows.close()
    assert rec.calls[0] == ("start", 2) and [c.chunk for _, c in rec.calls[1:]] == [2, 3]
    assert result.start_chunk == 2 and int(result.state.updates[1]) == 12  # continued, not restarted
    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["chunk"], r["seed"]) for r in lines] == [(c, s) for c in range(4) for s in (5, 6)]
    assert [r["update"] for r in lines[::2]] == [3, 6, 9, 12]
    # Chunk 1 (updates 4..6): episodes 1 + 2 + 0, one won (update 5, the odd one): won_rate 1/3.
    assert lines[2]["won_rate"] == pytest.approx(1 / 3)


def test_a_resume_with_other_chunking_is_refused_before_rows_are_dropped(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(json.dumps({"chunk": 0, "update": 2, "seed": 0}) + "\n")
    before = path.read_text()
    with pytest.raises(ConfigError, match="cannot be extended"):
        JsonlMetrics(path, chunk_updates=3).start(first_chunk=1)
    assert path.read_text() == before


def test_a_learner_without_checkpoints_starts_over_on_resume(tmp_path):
    class Fresh(CounterLearner):
        checkpointed = False

    train(Fresh(), SCHEDULE, checkpoint_dir=tmp_path, resume=False)
    assert not (tmp_path / "checkpoints").exists()
    assert train(Fresh(), SCHEDULE, checkpoint_dir=tmp_path, resume=True).start_chunk == 0


def test_a_loss_that_turns_nan_stops_the_run_before_the_chunk_is_saved(tmp_path):
    """Update 5 (chunk 2) of the second seed gives a NaN loss: the run stops with one line naming
    the update and the seed, no sink sees chunk 2, and the newest checkpoint stays chunk 1's."""

    @struct.dataclass
    class SeededState:
        updates: jax.Array
        seed_index: jax.Array
        batched_fields: ClassVar[tuple[str, ...]] = ()

    class DivergingSeed(CounterLearner):
        """CounterLearner whose second seed (key data differs per seed) turns NaN at update 5."""

        def init(self, key):
            first_seed = jax.random.key_data(jax.random.key(SCHEDULE.seed))
            other = jnp.any(jax.random.key_data(key) != first_seed)
            return SeededState(updates=jnp.int32(0), seed_index=other.astype(jnp.int32))

        def run(self, state, num_updates):
            c, m = super().run(CounterState(updates=state.updates), num_updates)
            us = state.updates + 1 + jnp.arange(num_updates)
            m["loss"] = jnp.where((us >= 5) & (state.seed_index == 1), jnp.nan, m["loss"])
            return SeededState(updates=c.updates, seed_index=state.seed_index), m

    rec = Recorder()
    with pytest.raises(
        TrainingDiverged, match=r"loss is not finite from update 5 \(chunk 2/4\) in seed\(s\) \[6\]"
    ):
        train(DivergingSeed(), SCHEDULE, [rec], checkpoint_dir=tmp_path)
    assert [c.chunk for kind, c in rec.calls if kind == "chunk"] == [0]
    template = jax.vmap(DivergingSeed().init)(jax.random.split(jax.random.key(0), 2))
    chunk, state = restore_latest(tmp_path, template)
    assert chunk == 1 and np.asarray(state.updates).tolist() == [3, 3]


def test_compiling_is_timed_apart_so_the_first_chunks_rate_and_eta_are_the_runs(capsys):
    """The first chunk's time used to include compiling: its ETA said minutes where seconds
    remained. Compiling is timed on its own, reported once, and left out of the chunk's rate."""
    from alem.training.sinks import ConsoleProgress

    rec = Recorder()
    result = train(CounterLearner(), SCHEDULE, [rec, ConsoleProgress("header")])
    chunks = [c for kind, c in rec.calls[1:]]
    assert chunks[0].compile_s > 0 and all(c.compile_s == 0 for c in chunks[1:])
    assert chunks[0].seconds < chunks[0].compile_s  # a tiny chunk runs in far less than it compiles
    assert result.compile_s == chunks[0].compile_s and result.first_chunk_s >= result.compile_s
    lines = capsys.readouterr().out.splitlines()
    assert f"(compiled in {chunks[0].compile_s:.1f} s)" in lines[1] and "incl. compile" not in lines[1]
    assert "compiled" not in lines[2]
