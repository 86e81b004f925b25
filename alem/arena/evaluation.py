"""One evaluation run in a run directory (:func:`evaluate`): checks, resume, play, results files."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from alem.arena.players import label_of
from alem.arena.results import write_results
from alem.arena.stats import summarize_run
from alem.core import MultiAgentEnv
from alem.engine.lockstep import play
from alem.engine.record import EPISODES_FILE, TRANSCRIPTS_FILE, EpisodeRecord, Match, read_episodes
from alem.errors import AlemError, EvaluationStopped
from alem.players import Player
from alem.rundir import JsonlWriter, claim, foreign_entries, hold, rewrite_jsonl, write_atomic

__all__ = ["evaluate"]

#: How the command is named in messages (the run dir's owner, the resume hint).
CLI = "alem.evaluate"


def evaluate(
    env: MultiAgentEnv,
    players: Sequence[Player],
    *,
    episodes: int,
    num_envs: int = 8,
    seed: int = 0,
    max_steps: int | None = None,
    params: Any = None,
    openings: int | None = None,
    run_dir: str | Path,
    labels: Sequence[str] | None = None,
    config: dict | None = None,
    resume: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Play ``episodes`` episodes with ``players[i]`` in seat ``i``; write and return the results.

    A new run (``resume=False``) needs a ``run_dir`` that holds nothing yet
    (:func:`alem.rundir.claim`); ``resume=True`` keeps the episodes already in
    ``run_dir/episodes.jsonl`` and plays the rest. Players are started (LLM health
    checks) before anything is written; ``config`` is saved as ``config.yaml``. ``openings``:
    random plies before the players move (:class:`~alem.engine.record.Match`; None: the env's
    default, :func:`~alem.engine.record.default_openings`).
    Returns the dict written to ``results.json`` (see :func:`~alem.arena.stats.summarize_run`).
    """
    match = Match(
        env,
        players,
        episodes,
        num_envs=num_envs,
        seed=seed,
        max_steps=max_steps,
        params=params,
        openings=openings,
    )
    players = match.players
    labels = list(labels) if labels is not None else [label_of(p) for p in players]
    run_dir = Path(run_dir).resolve()
    if not resume and foreign_entries(run_dir):
        claim(run_dir, cli=CLI)  # raises, naming what is there

    # Resume: keep finished episodes (read only until every check has passed).
    done_eps = set(read_episodes(run_dir / EPISODES_FILE))
    todo = [e for e in range(episodes) if e not in done_eps]
    if progress:
        skipped = f", {len(done_eps)} already done" if done_eps else ""
        print(
            f"{CLI}: env={env.id} players={labels} episodes={episodes}{skipped} num_envs={num_envs}",
            flush=True,
        )

    t_start = time.perf_counter()
    begun: list[Player] = []
    ep_log = transcript = None
    lent: list[tuple[Player, Any]] = []
    try:
        if todo:  # nothing to play: no servers to start or check
            for i, p in enumerate(players):
                p.begin(env, match.params, i)  # health checks: a dead endpoint fails before any write
                begun.append(p)
        run_dir = (hold(run_dir) if run_dir.is_dir() else run_dir) if resume else claim(run_dir, cli=CLI)
        run_dir.mkdir(parents=True, exist_ok=True)
        if config is not None:
            write_atomic(run_dir / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(config)))
        # Drop a torn line and the transcripts of unfinished episodes (they are replayed).
        rewrite_jsonl(run_dir / EPISODES_FILE, lambda r: r.get("type") == EpisodeRecord.TYPE)
        rewrite_jsonl(run_dir / TRANSCRIPTS_FILE, lambda r: int(r.get("episode", -1)) in done_eps)
        ep_log = JsonlWriter(run_dir / EPISODES_FILE)
        transcript = JsonlWriter(run_dir / TRANSCRIPTS_FILE)
        for p in players:
            if hasattr(p, "transcript"):
                lent.append((p, p.transcript))  # given back after the run: the writer closes with it
                p.transcript = transcript
        counts0 = _failure_counts(players)
        try:
            for record in play(match, todo, progress=progress):
                ep_log.write(record.to_json())
            dead = _dead_seats(players, counts0)
            if dead:
                # Every decision of a seat fell back because its endpoint never answered: the new
                # episodes describe the fallback policy, not the model. They are dropped (with
                # their transcripts), so a resume once the endpoint works plays them again.
                for f in (ep_log, transcript):
                    f.close()
                rewrite_jsonl(run_dir / EPISODES_FILE, lambda r: int(r.get("episode", -1)) in done_eps)
                rewrite_jsonl(run_dir / TRANSCRIPTS_FILE, lambda r: int(r.get("episode", -1)) in done_eps)
                raise EvaluationStopped(
                    f"{'; '.join(dead)}: the run stops rather than score the fallback policy as the model "
                    f"[the {len(todo)} episodes of this run are dropped, {len(done_eps)} of {episodes} are kept "
                    f"in {run_dir}; fix the endpoint and continue with `python -m {CLI} resume={run_dir}`]"
                )
        except EvaluationStopped:
            raise
        except AlemError as e:
            raise EvaluationStopped(
                f"{e} [{ep_log.count + len(done_eps)} of {episodes} episodes are finished and kept in "
                f"{run_dir}; continue with `python -m {CLI} resume={run_dir}`]"
            ) from e
    finally:
        for p in begun:
            p.close()
        for p, own in lent:
            p.transcript = own
        for f in (ep_log, transcript):
            if f is not None:
                f.close()
    wall = time.perf_counter() - t_start

    results = summarize_run(run_dir, env=env, labels=labels, episodes=episodes)
    results["wall_time_s"] = wall
    results["players_info"] = [
        p.describe() if hasattr(p, "describe") else {"player": labels[i]} for i, p in enumerate(players)
    ]
    results["config"] = config
    write_results(run_dir, results)
    return results


def _failure_counts(players: Sequence[Player]) -> dict[int, tuple[int, int]]:
    """Per LLM seat: (decisions so far, decisions whose requests failed for good)."""
    return {i: p.failure_counts() for i, p in enumerate(players) if hasattr(p, "failure_counts")}


def _dead_seats(players: Sequence[Player], before: dict[int, tuple[int, int]]) -> list[str]:
    """The seats that decided in this run and never got a reply: every one of their decisions is
    a fallback because the endpoint failed (the circuit breaker's thresholds need more decisions
    than a short run has, so this is checked at the end whatever the counts)."""
    out = []
    for i, (d0, f0) in before.items():
        d1, f1 = players[i].failure_counts()
        if d1 > d0 and f1 - f0 == d1 - d0:
            out.append(
                f"llm seat {i} ({label_of(players[i])}): every one of its {d1 - d0} decisions got no reply"
            )
    return out
