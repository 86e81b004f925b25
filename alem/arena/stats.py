"""Per-seat statistics of a run directory, from its episode and transcript files alone (:func:`summarize_run`).

Per seat: mean return with a 95% confidence interval (Student t, :func:`ci95`), win/draw/loss
rates for two-player zero-sum games, the env's illegal-action rate, and for LLM seats the
invalid-reply rate (unparseable + illegal replies), fallbacks, API errors, tokens in/out,
latency and cost (when prices are set). Per run: the mean and 95% interval of each of the env's
``episode_metrics`` (pathfinding: POGEMA's CSR, ISR, SoC, makespan, avg_throughput).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np
from omegaconf import OmegaConf

import alem
from alem.arena.players import parse_spec
from alem.core import MultiAgentEnv
from alem.engine.counters import COUNTERS, decision_counts
from alem.engine.record import EPISODES_FILE, TRANSCRIPTS_FILE, EpisodeRecord, read_episodes
from alem.intervals import ci95
from alem.json_values import jsonable
from alem.rundir import read_jsonl

__all__ = ["HIGH_FALLBACK_RATE", "ci95", "summarize_run"]

#: Seats whose fallback rate is above this are marked in the table and in ``results.json``.
HIGH_FALLBACK_RATE = 0.1


def _per_seat(records: Sequence[EpisodeRecord], field: str, n: int) -> np.ndarray:
    """Per-seat ``field`` of ``records`` as a float64 ``[episodes, seats]`` array."""
    return np.array([getattr(r, field) for r in records], np.float64).reshape(len(records), n)


def summarize_run(
    run_dir: str | Path, *, env: MultiAgentEnv, labels: Sequence[str], episodes: int | None = None
) -> dict[str, Any]:
    """Results of a run directory, from its episode and transcript files alone.

    ``episodes``: count only episodes ``0..episodes-1``. Returns the dict written to
    ``results.json``: the run's totals and one row per seat under ``seats``.
    """
    run_dir = Path(run_dir)
    eps = read_episodes(run_dir / EPISODES_FILE, below=episodes)
    records = [eps[e] for e in sorted(eps)]
    n = env.num_agents
    returns = _per_seat(records, "returns", n)
    dec = _per_seat(records, "decisions", n)
    bad = _per_seat(records, "env_illegal", n)
    # The env's own flag (checked against its rewards by the conformance suite): a cooperative
    # game's identical returns are not draws.
    zero_sum = bool(n == 2 and env.zero_sum and len(records) > 0)
    llm, latencies = _llm_counts(run_dir, set(eps), n)
    prices = _prices(run_dir)
    seats = []
    for i in range(n):
        r = returns[:, i]
        row: dict[str, Any] = {
            "seat": i,
            "agent": env.agents[i],
            "player": labels[i],
            "episodes": len(records),
            "return_mean": jsonable(r.mean()) if len(r) else None,
            "return_ci95": ci95(r),
            "return_std": jsonable(r.std(ddof=1)) if len(r) > 1 else None,
            "decisions": int(dec[:, i].sum()),
            "env_illegal": int(bad[:, i].sum()),
            "env_illegal_rate": jsonable(bad[:, i].sum() / dec[:, i].sum()) if dec[:, i].sum() else None,
        }
        if zero_sum:
            other = returns[:, 1 - i]
            row.update(
                win=jsonable(np.mean(r > other)),
                draw=jsonable(np.mean(r == other)),
                loss=jsonable(np.mean(r < other)),
            )
        if i in llm:
            row.update(_llm_row(llm[i], np.array(latencies[i]), prices.get(i, (None, None))))
        seats.append(row)
    return {
        "env_id": env.id,
        "agents": list(env.agents),
        "players": list(labels),
        "episodes": len(records),
        "episodes_requested": episodes,
        "zero_sum": zero_sum,
        "episode_length_mean": jsonable(np.mean([r.length for r in records])) if records else None,
        "episodes_cut": int(sum(r.cut for r in records)),
        # equal move sequences (openings included) are one game; None: records without digests
        "distinct_games": len({r.game for r in records}) if all(r.game for r in records) else None,
        "episode_metrics": episode_metrics(records),
        "seats": seats,
        "alem_version": alem.__version__,
        "jax_version": jax.__version__,
    }


def episode_metrics(records: Sequence[EpisodeRecord]) -> dict[str, dict[str, Any]]:
    """``{name: {mean, ci95, episodes}}`` of each env episode metric in ``records`` (a flat mean
    over the episodes that have it, as POGEMA's benchmark averages over instances)."""
    names = list(dict.fromkeys(k for r in records for k in r.metrics))
    out = {}
    for name in names:
        x = np.array([r.metrics[name] for r in records if name in r.metrics], np.float64)
        out[name] = {"mean": jsonable(x.mean()), "ci95": ci95(x), "episodes": len(x)}
    return out


def _llm_counts(run_dir: Path, episodes: set[int], n: int) -> tuple[dict[int, dict], dict[int, list]]:
    """Summed decision counters and uncached request latencies of each LLM seat over ``episodes``."""
    counts = {i: dict.fromkeys(COUNTERS, 0.0) for i in range(n)}
    latencies: dict[int, list[float]] = {i: [] for i in range(n)}
    has_llm = set()
    for rec in read_jsonl(run_dir / TRANSCRIPTS_FILE):
        if rec.get("type") != "decision" or int(rec["episode"]) not in episodes:
            continue
        seat = int(rec["seat"])
        has_llm.add(seat)
        for k, v in decision_counts(rec).items():
            counts[seat][k] += v
        latencies[seat] += [
            a["latency_s"] for a in rec["attempts"] if a.get("latency_s") and not a.get("cached")
        ]
    return {i: counts[i] for i in sorted(has_llm)}, latencies


def _llm_row(c: dict[str, float], lat: np.ndarray, prices: tuple) -> dict[str, Any]:
    """The LLM columns of a seat's row from its counters, latencies and ``(in, out)`` prices per Mtok."""
    replies, decs = c["replies"], c["decisions"]
    row = {f"llm_{k}": jsonable(v) for k, v in c.items()}
    row["invalid_rate"] = jsonable((c["unparseable"] + c["illegal"]) / replies) if replies else None
    row["fallback_rate"] = jsonable(c["fallbacks"] / decs) if decs else None
    # Above this, the seat's numbers describe the fallback policy as much as the model.
    row["fallback_warning"] = bool(decs and c["fallbacks"] / decs > HIGH_FALLBACK_RATE)
    row["tokens_in_per_decision"] = jsonable(c["tokens_in"] / decs) if decs else None
    row["tokens_out_per_decision"] = jsonable(c["tokens_out"] / decs) if decs else None
    row["latency_mean_s"] = jsonable(lat.mean()) if len(lat) else None
    row["latency_p95_s"] = jsonable(np.percentile(lat, 95)) if len(lat) else None
    p_in, p_out = prices
    if p_in is not None and p_out is not None:
        row["cost"] = jsonable((c["tokens_in"] * p_in + c["tokens_out"] * p_out) / 1e6)
    return row


def _prices(run_dir: Path) -> dict[int, tuple]:
    """Per-seat token prices from the run's config (``player_kwargs.llm.price_*_per_mtok``)."""
    path = run_dir / "config.yaml"
    if not path.exists():
        return {}
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    out = {}
    for i, spec in enumerate(cfg.get("players_resolved") or []):
        kw = (cfg.get("player_kwargs") or {}).get(parse_spec(spec)[0]) or {}
        if isinstance(kw, dict):
            out[i] = (kw.get("price_in_per_mtok"), kw.get("price_out_per_mtok"))
    return out
