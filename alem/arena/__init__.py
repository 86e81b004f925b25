"""Evaluation arena: ``python -m alem.evaluate env=<id> players=[llm,random] episodes=100``.

Plays any mix of players (random, scripted, trained checkpoints, LLMs; see
:mod:`alem.players`) in the seats of an env for ``episodes`` episodes and
writes one results table.

The loop is lock-step over ``num_envs`` envs: a jitted, vmapped step that also
runs the device policies and resets finished envs. Per step the batch comes to
the host once; host policies (LLMs) answer for their active rows (async
fan-out across rows and seats); envs whose episodes are over are not queried.
Episode ``e`` always gets the same env and policy keys (derived from ``seed``
and ``e``, not from the batch layout), so results do not depend on
``num_envs``, on resuming, or on which players sit at the table: a trained
policy and an LLM are scored on the same deals.

A run directory holds ``config.yaml``, ``episodes.jsonl`` (one flushed line per
finished episode), ``transcripts.jsonl`` (one flushed line per LLM decision),
``results.json`` and ``results.csv``. ``resume=<run dir>`` finishes an
interrupted run: completed episodes are kept, transcripts of unfinished ones
are dropped and those episodes are replayed, so nothing is lost or counted twice.

Results per seat: mean return with a 95% confidence interval (Student t),
win/draw/loss rates for two-player zero-sum games, the env's illegal-action
rate, and for LLM seats the invalid-reply rate (unparseable + illegal replies),
fallbacks, API errors, tokens in/out, latency and cost (when prices are set).

Players are given as specs: ``name`` or ``name:ARG`` (``ARG`` is passed to the
policy as ``spec=ARG``, e.g. ``llm:<model>``, ``checkpoint:<run dir>``); one
spec fills every seat, otherwise one per seat. ``player_kwargs.<name>`` are
extra constructor keywords (``player_kwargs.llm`` is the ``llm`` config group).
``env=<registered id>`` is shorthand for ``env.id=<id>``; ``env=<name>`` picks
``configs/env/<name>.yaml`` as in ``alem.train``.

The modules:

- :mod:`alem.arena.players`: specs to policies, and the seating check.
- :mod:`alem.engine.record`: :class:`Match` (what to play) and :class:`EpisodeRecord`
  (a line of ``episodes.jsonl``).
- :mod:`alem.engine.lockstep`: :func:`play`, the jitted lock-step loop (a match in, records out).
- :mod:`alem.arena.evaluation`: :func:`evaluate`, one run in a run directory.
- :mod:`alem.arena.stats`: :func:`summarize_run`, the per-seat statistics.
- :mod:`alem.arena.results`: :func:`format_table` and the results files.
- :mod:`alem.arena.command`: the `python -m alem.evaluate` command, a Hydra app (:func:`run`, :func:`main`); ``alem.evaluate`` re-exports it all.
"""

from __future__ import annotations

from alem.extras import require

require("arena", "alem.arena")

from alem.arena.command import RESUME_FREE, main, run
from alem.arena.evaluation import evaluate
from alem.arena.players import build_players, label_of, parse_spec
from alem.arena.results import CSV_COLUMNS, format_table, write_results
from alem.arena.stats import HIGH_FALLBACK_RATE, ci95, summarize_run
from alem.engine.lockstep import episode_key, play
from alem.engine.record import EPISODES_FILE, TRANSCRIPTS_FILE, EpisodeRecord, Match, read_episodes, seating
from alem.errors import ConfigError, EvaluationStopped

__all__ = [
    "ConfigError",
    "EvaluationStopped",
    "Match",
    "EpisodeRecord",
    "read_episodes",
    "EPISODES_FILE",
    "TRANSCRIPTS_FILE",
    "parse_spec",
    "build_players",
    "seating",
    "label_of",
    "play",
    "episode_key",
    "evaluate",
    "summarize_run",
    "ci95",
    "HIGH_FALLBACK_RATE",
    "format_table",
    "write_results",
    "CSV_COLUMNS",
    "run",
    "main",
    "RESUME_FREE",
]
