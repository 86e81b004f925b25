"""The results of a run as files and text: ``results.json``, ``results.csv`` (:data:`CSV_COLUMNS`)
and the plain-text table (:func:`format_table`)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from alem.arena.stats import HIGH_FALLBACK_RATE
from alem.rundir import write_atomic

__all__ = [
    "CSV_COLUMNS",
    "RATING_COLUMNS",
    "write_results",
    "format_table",
    "write_tournament_results",
    "format_tournament",
    "write_crossplay_results",
    "format_crossplay",
]

#: The per-seat columns of ``results.csv`` (after ``env_id``), in order.
CSV_COLUMNS = [
    "seat",
    "agent",
    "player",
    "episodes",
    "return_mean",
    "return_ci95",
    "win",
    "draw",
    "loss",
    "env_illegal_rate",
    "invalid_rate",
    "fallback_rate",
    "llm_unparseable",
    "llm_illegal",
    "llm_api_errors",
    "llm_retried_errors",
    "llm_fallbacks",
    "fallback_warning",
    "tokens_in_per_decision",
    "tokens_out_per_decision",
    "llm_tokens_in",
    "llm_tokens_out",
    "latency_mean_s",
    "latency_p95_s",
    "cost",
]


def write_results(run_dir: str | Path, results: dict[str, Any]) -> None:
    """Write ``results`` (from :func:`~alem.arena.stats.summarize_run`) as ``results.json`` and
    ``results.csv`` in ``run_dir``, each atomically."""
    _write_json_and_csv(Path(run_dir), results, results["seats"], CSV_COLUMNS, "results.csv")


def _write_json_and_csv(
    run_dir: Path, results: dict[str, Any], rows: list[dict[str, Any]], columns: list[str], csv_name: str
) -> None:
    """``results.json``, and ``rows`` as the CSV ``csv_name`` (``env_id`` first), atomically."""
    write_atomic(run_dir / "results.json", json.dumps(results, indent=2, default=str) + "\n")
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["env_id", *columns], extrasaction="ignore")
    w.writeheader()
    for row in rows:
        w.writerow({"env_id": results["env_id"], **{k: row.get(k) for k in columns}})
    write_atomic(run_dir / csv_name, buf.getvalue())


def _f(x: Any, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def format_table(results: dict[str, Any]) -> str:
    """The results as a plain-text table, one row per seat."""
    head = [
        "seat",
        "player",
        "episodes",
        "return (95% CI)",
        "W/D/L",
        "invalid",
        "fallback",
        "tokens in/out",
        "latency",
    ]
    rows = [_table_row(s) for s in results["seats"]]
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    lines = [
        f"{results['env_id']}: {results['episodes']} episodes"
        + (
            f" ({results['distinct_games']} distinct games)"
            if results.get("distinct_games") is not None
            else ""
        )
        + (
            f", cost {sum(s.get('cost') or 0 for s in results['seats']):.4f}"
            if any("cost" in s for s in results["seats"])
            else ""
        ),
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
    ]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    metrics = results.get("episode_metrics") or {}
    if metrics:  # the env's own measures of an episode (pathfinding: POGEMA's CSR, ISR, SoC, ...)
        cells = [
            f"{k} {_f(v['mean'])}" + (f" ± {v['ci95']:.3f}" if v.get("ci95") is not None else "")
            for k, v in metrics.items()
        ]
        lines.append("episode metrics (mean, 95% CI): " + ", ".join(cells))
    lines.append(
        "invalid: LLM seats: unparseable or illegal replies / replies; others: env-flagged illegal moves / moves"
    )
    if any(s.get("fallback_warning") for s in results["seats"]):
        lines.append(
            f"!: more than {HIGH_FALLBACK_RATE:.0%} of this seat's moves were the fallback policy's, not the "
            "model's (see llm_api_errors, invalid); its results describe the fallback as much as the model"
        )
    return "\n".join(lines)


def _table_row(s: dict[str, Any]) -> list[str]:
    """One seat's cells of the table."""
    ci = s["return_ci95"]
    ret = _f(s["return_mean"]) + (f" ± {ci:.3f}" if ci is not None else "")
    wdl = f"{s['win']:.2f}/{s['draw']:.2f}/{s['loss']:.2f}" if "win" in s else "-"
    tokens = (
        f"{s['tokens_in_per_decision']:.0f}/{s['tokens_out_per_decision']:.1f}"
        if s.get("tokens_in_per_decision") is not None
        else "-"
    )
    latency = f"{s['latency_mean_s']:.2f}s" if s.get("latency_mean_s") is not None else "-"
    invalid = _f(s.get("invalid_rate"), ".1%") if "invalid_rate" in s else _f(s["env_illegal_rate"], ".1%")
    return [
        f"{s['seat']} {s['agent']}",
        s["player"],
        str(s["episodes"]),
        ret,
        wdl,
        invalid,
        _f(s.get("fallback_rate"), ".1%") + (" !" if s.get("fallback_warning") else ""),
        tokens,
        latency,
    ]


#: The columns of a tournament's ``ratings.csv``, in order; then one ``vs <player>`` column per
#: player (the payoff matrix's row: the mean return against that player).
RATING_COLUMNS = [
    "label",
    "payoff",
    "payoff_ci95",
    "nash_weight",
    "nash_payoff",
    "elo",
    "ci_low",
    "ci_high",
    "mu",
    "sigma",
    "games",
    "wins",
    "draws",
    "losses",
]


def write_tournament_results(run_dir: str | Path, results: dict[str, Any]) -> None:
    """Write a tournament's ``results.json`` and ``ratings.csv`` in ``run_dir``, each atomically."""
    players = results["players"]
    vs = [f"vs {p}" for p in players]
    matrix = results.get("payoff_matrix")
    rows = []
    for r in results["ratings"]:
        row = dict(r)
        if matrix is not None:
            row.update(zip(vs, matrix[players.index(r["label"])], strict=True))
        rows.append(row)
    _write_json_and_csv(Path(run_dir), results, rows, RATING_COLUMNS + vs, "ratings.csv")


def ranking_note(results: dict[str, Any]) -> str:
    """How a tournament's players are ordered (the table's and the results page's footnote)."""
    note = "ranked by " + (
        "Nash-averaged payoff (the payoff against the pool's maximum-entropy Nash mixture), then payoff"
        if results.get("ranked_by") == "nash_payoff"
        else "mean payoff against the pool (each opponent weighted equally)"
    )
    if results.get("win_lose", True):
        note += "; Elo: Bradley-Terry maximum likelihood on games won (a draw is half), 95% bootstrap CI"
    return note


def _pm(x: float | None, ci: float | None) -> str:
    return "-" if x is None else f"{x:+.3f}" + ("" if ci is None else f" ± {ci:.3f}")


def _grid(lines: list[str], title: str, names: list[str], cells: list[list[str]]) -> None:
    short = [n if len(n) <= 12 else n[:11] + "~" for n in names]
    first = max(len(n) for n in short)
    col = max(6, *(len(n) for n in short), *(len(c) for row in cells for c in row))
    lines.append(title)
    lines.append(" " * first + "  " + "  ".join(n.rjust(col) for n in short))
    for name, row in zip(short, cells, strict=True):
        lines.append(name.ljust(first) + "  " + "  ".join(c.rjust(col) for c in row))


def format_tournament(results: dict[str, Any]) -> str:
    """A tournament's ranking, one row per player (best first: by payoff, see
    :mod:`alem.arena.payoffs`), then the payoff matrix (and, for win/lose games, the score matrix)."""
    expl = results.get("exploitability")
    perfect = results.get("vs_perfect")
    nash = results.get("ranked_by") == "nash_payoff"
    win_lose = results.get("win_lose", True)
    head = ["player", "payoff vs pool (95% CI)"]
    if nash:
        head += ["Nash weight", "Nash payoff"]
    head += ["games"]
    if win_lose:
        head += ["Elo", "95% CI", "OpenSkill mu ± sigma", "W/D/L"]
    if perfect:
        head.append(f"vs {perfect['player']} W/D/L")
    if expl:
        head.append("exploitability")
    rows = []
    for r in results["ratings"]:
        row = [r["label"], _pm(r.get("payoff"), r.get("payoff_ci95"))]
        if nash:
            row += [_f(r.get("nash_weight"), ".2f"), _f(r.get("nash_payoff"), "+.3f")]
        row.append(str(r["games"]))
        if win_lose:
            row += [
                f"{r['elo']:+.0f}",
                f"[{r['ci_low']:+.0f}, {r['ci_high']:+.0f}]" if r.get("ci_low") is not None else "-",
                f"{r['mu']:.1f} ± {r['sigma']:.1f}",
                f"{r['wins']}/{r['draws']}/{r['losses']}",
            ]
        if perfect:
            wdl = perfect["win_draw_loss"].get(r["label"])
            row.append("/".join(map(str, wdl)) if wdl else "-")
        if expl:
            row.append(_f(expl.get(r["label"]), ".4f"))
        rows.append(row)
    widths = [max(len(str(x[k])) for x in [head, *rows]) for k in range(len(head))]
    lines = [
        f"{results['env_id']} {results['mode']}: {len(results['players'])} players, "
        f"{len(results['seatings'])} seatings x {results['episodes_per_seating']} episodes "
        f"(the same deals from every seat), {results['games']} games"
        + (f" ({results['distinct_games']} distinct)" if results.get("distinct_games") is not None else "")
        + ("" if results["complete"] else " (incomplete)"),
        "  ".join(h.ljust(wd) for h, wd in zip(head, widths, strict=True)),
    ]
    lines += ["  ".join(str(c).ljust(wd) for c, wd in zip(r, widths, strict=True)) for r in rows]
    lines.append(ranking_note(results))
    players = results["players"]
    if results.get("payoff_matrix") is not None:
        ci = results.get("payoff_ci95") or [[None] * len(players)] * len(players)
        cells = [
            [_pm(v, c) if v is not None else "-" for v, c in zip(row, crow, strict=True)]
            for row, crow in zip(results["payoff_matrix"], ci, strict=True)
        ]
        _grid(lines, "mean payoff of row against column (95% CI):", players, cells)
    if win_lose:
        cells = [["-" if v is None else f"{v:.2f}" for v in row] for row in results["pairwise_score"]]
        _grid(lines, "mean score of row against column (1: always won, 0.5: even):", players, cells)
    return "\n".join(lines)


#: The columns of a cross-play run's ``crossplay.csv``: one row per (ego, partner) cell.
CROSSPLAY_COLUMNS = ["player", "partner", "split", "team_return_mean", "team_return_ci95", "normalized"]


def _crossplay_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    split = (results.get("config") or {}).get("partners_resolved") or []
    split_of = {p["name"]: p["split"] for p in split}
    return [
        {
            "player": ego,
            "partner": mate,
            "split": split_of.get(mate),
            "team_return_mean": results["crossplay_matrix"][i][j],
            "team_return_ci95": results["crossplay_ci95"][i][j],
            "normalized": results["normalized"][i][j],
        }
        for i, ego in enumerate(results["players"])
        for j, mate in enumerate(results["partners"])
    ]


def write_crossplay_results(run_dir: str | Path, results: dict[str, Any]) -> None:
    """Write a cross-play run's ``results.json`` and ``crossplay.csv``, each atomically."""
    _write_json_and_csv(Path(run_dir), results, _crossplay_rows(results), CROSSPLAY_COLUMNS, "crossplay.csv")


def format_crossplay(results: dict[str, Any]) -> str:
    """A cross-play run: per ego its self-play, mean cross-play, gap and normalised score, then
    the ego x partner matrix of mean team returns (95% CI)."""
    head = ["player", "self-play", "cross-play", "gap", "normalized"]
    rows = [
        [
            ego,
            _pm(results["selfplay"][i], results["selfplay_ci95"][i]),
            _f(results["crossplay_mean"][i], "+.3f"),
            _f(results["gap"][i], "+.3f"),
            _f(results["normalized_mean"][i], ".2f"),
        ]
        for i, ego in enumerate(results["players"])
    ]
    widths = [max(len(str(x[k])) for x in [head, *rows]) for k in range(len(head))]
    lines = [
        f"{results['env_id']} crossplay: {len(results['players'])} players x {len(results['partners'])} "
        f"partners, every seat, {results['episodes_per_seating']} episodes per seating, {results['games']} games"
        + ("" if results["complete"] else " (incomplete)"),
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
    ]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append(
        f"team return: {results['team_return']}; normalized: (cross-play - random pair "
        f"{results['random_pair']:+.3f}) / (best with the partner - random pair)"
    )
    names = [n if len(n) <= 14 else n[:13] + "~" for n in results["partners"]]
    cells = [
        [_pm(v, c) for v, c in zip(row, crow, strict=True)]
        for row, crow in zip(results["crossplay_matrix"], results["crossplay_ci95"], strict=True)
    ]
    first = max(len(e) for e in results["players"])
    col = max(6, *(len(n) for n in names), *(len(c) for row in cells for c in row))
    lines.append("mean team return of row with column (95% CI):")
    lines.append(" " * first + "  " + "  ".join(n.rjust(col) for n in names))
    for ego, row in zip(results["players"], cells, strict=True):
        lines.append(ego.ljust(first) + "  " + "  ".join(c.rjust(col) for c in row))
    return "\n".join(lines)
