"""A results page: one self-contained HTML file for an arena or tournament run directory.

``python -m alem.arena.report <run dir>`` (or ``report=html`` on ``python -m alem.evaluate``)
writes ``<run dir>/report.html`` from the run's files alone: for a tournament the ranking
(payoff against the pool with its CI, Nash averaging, Elo with its CI and OpenSkill where the
game is won or lost, exploitability) as a table that sorts when a column head is clicked,
the pairwise payoff matrix as a heatmap, each player's invalid-reply, fallback and
env-illegal rates over all its games, and a few LLM games whose prompts and replies expand;
for a cross-play run (:mod:`alem.arena.crossplay`) each player's self-play, cross-play, gap and
normalised score, and the player x partner matrices of team returns and normalised scores; for
a single match the per-seat table and its LLM games. The page needs no network: the
styles and the few lines of script that sort are inline, and there are no images. Every
string that came from a run (labels, prompts, replies) is escaped, so a reply that holds
markup is shown as text.
"""

from __future__ import annotations

import html
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alem.arena.results import ranking_note
from alem.cli import ArgumentParser, refuse_unwritable
from alem.engine.record import TRANSCRIPTS_FILE
from alem.errors import AlemError
from alem.rundir import read_jsonl, write_atomic

__all__ = ["REPORT_FILE", "write_report", "render_report", "main"]

REPORT_FILE = "report.html"
#: LLM games shown with their transcripts, at most.
MAX_GAMES = 4

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
 padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#57606a;margin:.2rem 0 1rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:right;white-space:nowrap}
th{background:#f6f8fa;position:relative}td:first-child,th:first-child{text-align:left}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
.heat td{min-width:6.5rem}.ci{color:#57606a;font-size:.8em}
details{border:1px solid #d0d7de;border-radius:6px;padding:.4rem .7rem;margin:.5rem 0}
summary{cursor:pointer;font-weight:600}
.turn{border-left:3px solid #d0d7de;margin:.5rem 0;padding-left:.6rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.4rem;margin:.2rem 0;
 font-size:.82rem}
.note{color:#57606a;font-size:.85rem;max-width:60rem}
.bad{color:#b3261e;font-weight:600}
"""

# Sorts a table by a clicked column: numbers by data-v (the cell's value), else by text.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        var u = parseFloat(x.dataset.v), v = parseFloat(y.dataset.v);
        var c = (isNaN(u) || isNaN(v)) ? x.textContent.localeCompare(y.textContent) : u - v;
        return down ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(x: Any, fmt: str) -> tuple[str, str]:
    """(text, data value) of a number cell; '-' for a missing one."""
    if x is None or (isinstance(x, float) and x != x):
        return "-", ""
    return format(x, fmt), repr(float(x))


def _table(head: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], cls: str = "sortable") -> str:
    """A table; each cell is (html text, data value for sorting or '')."""
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = "".join(f'<td data-v="{_e(v)}">{t}</td>' if v else f"<td>{t}</td>" for t, v in row)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _colour(v: float | None, scale: float) -> str:
    """A diverging background: blue where the row player gains, red where it loses."""
    if v is None or scale <= 0:
        return ""
    a = min(abs(v) / scale, 1.0) * 0.75
    rgb = "33,102,172" if v > 0 else "178,24,43"
    return f' style="background:rgba({rgb},{a:.2f})"'


def _heatmap(
    players: list[str],
    matrix: list[list[Any]],
    ci: list[list[Any]] | None,
    columns: list[str] | None = None,
    corner: str = "row vs column",
) -> str:
    """Rows ``players`` by ``columns`` (default: the players again), each cell coloured by its
    value's sign and size, with its CI half-width beneath where ``ci`` is given."""
    vals = [abs(v) for row in matrix for v in row if v is not None]
    scale = max(vals) if vals else 0.0
    out = [f'<table class="heat"><thead><tr><th>{_e(corner)}</th>']
    out += [f"<th>{_e(p)}</th>" for p in (players if columns is None else columns)]
    out.append("</tr></thead><tbody>")
    for i, p in enumerate(players):
        out.append(f"<tr><th>{_e(p)}</th>")
        for j, v in enumerate(matrix[i]):
            if v is None:
                out.append("<td>-</td>")
                continue
            c = ci[i][j] if ci else None
            half = f'<br><span class="ci">± {c:.3f}</span>' if c is not None else ""
            out.append(f"<td{_colour(v, scale)}>{v:+.3f}{half}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _load(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise AlemError(f"{path} is missing: is {path.parent} a finished arena or tournament run?") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise AlemError(f"{path} is not readable JSON ({e}); the report needs the run's results") from None


def _match_dirs(run_dir: Path) -> list[Path]:
    m = run_dir / "matches"
    return sorted(d for d in m.iterdir() if d.is_dir()) if m.is_dir() else [run_dir]


def _player_rates(run_dir: Path) -> dict[str, dict[str, float | None]]:
    """Per player over all its seats in every match: invalid-reply, fallback and env-illegal rates."""
    tot: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for d in _match_dirs(run_dir):
        if not (d / "results.json").is_file():
            continue
        for s in _load(d / "results.json").get("seats", []):
            t = tot[str(s["player"])]
            t["decisions"] += s.get("decisions") or 0
            t["env_illegal"] += s.get("env_illegal") or 0
            t["replies"] += s.get("llm_replies") or 0
            t["invalid"] += (s.get("llm_unparseable") or 0) + (s.get("llm_illegal") or 0)
            t["llm_decisions"] += s.get("llm_decisions") or 0
            t["fallbacks"] += s.get("llm_fallbacks") or 0
    out = {}
    for p, t in tot.items():
        out[p] = {
            "invalid": t["invalid"] / t["replies"] if t["replies"] else None,
            "fallback": t["fallbacks"] / t["llm_decisions"] if t["llm_decisions"] else None,
            "env_illegal": t["env_illegal"] / t["decisions"] if t["decisions"] else None,
        }
    return out


def _games(run_dir: Path, limit: int) -> str:
    """Up to ``limit`` LLM games: every decision's prompt (the last user message), reply, parse."""
    parts = []
    for d in _match_dirs(run_dir):
        path = d / TRANSCRIPTS_FILE
        if not path.is_file():
            continue
        episodes: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for rec in read_jsonl(path):
            if rec.get("type") == "decision":
                episodes[int(rec.get("episode", -1))].append(rec)
        for ep in sorted(episodes)[: max(0, limit - len(parts))]:
            turns = []
            for rec in episodes[ep]:
                last = (rec.get("attempts") or [{}])[-1]
                msgs = last.get("messages") or [{}]
                prompt = next((m.get("content") for m in reversed(msgs) if m.get("role") == "user"), "")
                bad = ' <span class="bad">fallback</span>' if rec.get("fallback") else ""
                turns.append(
                    f'<div class="turn"><b>{_e(rec.get("player"))}</b> (seat {_e(rec.get("seat"))}, decision '
                    f"{_e(rec.get('decision'))}): played <b>{_e(rec.get('action_name'))}</b>{bad}"
                    f"<pre>{_e(prompt)}</pre><pre>{_e(last.get('reply', ''))}</pre>"
                    f"status {_e(last.get('status'))}</div>"
                )
            where = d.name if d != run_dir else run_dir.name
            parts.append(
                f"<details><summary>{_e(where)}: episode {ep} ({len(turns)} LLM decisions)</summary>"
                + "".join(turns)
                + "</details>"
            )
        if len(parts) >= limit:
            break
    return "".join(parts) or '<p class="note">No LLM decisions in this run.</p>'


def _rate(x: float | None) -> tuple[str, str]:
    return _num(x, ".1%") if x is not None else ("-", "")


def _tournament_body(res: dict[str, Any], rates: dict[str, dict[str, float | None]]) -> str:
    win_lose = res.get("win_lose", True)
    nash = res.get("ranked_by") == "nash_payoff"
    expl = res.get("exploitability") or {}
    head = ["player", "payoff vs pool", "± 95% CI"]
    head += ["Nash weight", "Nash payoff"] if nash else []
    head += ["games"]
    head += ["Elo", "Elo 95% CI", "OpenSkill mu", "W/D/L"] if win_lose else []
    head += ["exploitability"] if expl else []
    head += ["invalid replies", "fallbacks", "env-illegal moves"]
    rows = []
    for r in res["ratings"]:
        row = [(_e(r["label"]), ""), _num(r.get("payoff"), "+.3f"), _num(r.get("payoff_ci95"), ".3f")]
        if nash:
            row += [_num(r.get("nash_weight"), ".2f"), _num(r.get("nash_payoff"), "+.3f")]
        row.append(_num(r.get("games"), "d"))
        if win_lose:
            ci = f"[{r['ci_low']:+.0f}, {r['ci_high']:+.0f}]" if r.get("ci_low") is not None else "-"
            row += [
                _num(r.get("elo"), "+.0f"),
                (ci, ""),
                _num(r.get("mu"), ".1f"),
                (f"{r['wins']}/{r['draws']}/{r['losses']}", ""),
            ]
        if expl:
            row.append(_num(expl.get(r["label"]), ".4f"))
        pr = rates.get(r["label"], {})
        row += [_rate(pr.get("invalid")), _rate(pr.get("fallback")), _rate(pr.get("env_illegal"))]
        rows.append(row)
    body = [
        "<h2>Ranking</h2>",
        _table(head, rows),
        f'<p class="note">{_e(ranking_note(res)[0].upper() + ranking_note(res)[1:])}. Click a column head to sort.</p>',
    ]
    if res.get("payoff_matrix") is not None:
        body += [
            "<h2>Payoffs</h2>",
            '<p class="note">Mean return of the row player against the column player over their games '
            "(both seats), with a 95% Student-t interval.</p>",
            _heatmap(res["players"], res["payoff_matrix"], res.get("payoff_ci95")),
        ]
    return "".join(body)


def _crossplay_body(res: dict[str, Any], rates: dict[str, dict[str, float | None]]) -> str:
    head = [
        "player",
        "self-play",
        "± 95% CI",
        "cross-play",
        "gap",
        "normalized",
        "invalid replies",
        "fallbacks",
    ]
    rows = []
    for i, ego in enumerate(res["players"]):
        pr = rates.get(ego, {})
        rows.append(
            [
                (_e(ego), ""),
                _num(res["selfplay"][i], "+.3f"),
                _num(res["selfplay_ci95"][i], ".3f"),
                _num(res["crossplay_mean"][i], "+.3f"),
                _num(res["gap"][i], "+.3f"),
                _num(res["normalized_mean"][i], ".2f"),
                _rate(pr.get("invalid")),
                _rate(pr.get("fallback")),
            ]
        )
    partners = res["partners"]
    return "".join(
        [
            "<h2>Players</h2>",
            _table(head, rows),
            f'<p class="note">Team return: the {_e(res["team_return"])}. Gap: self-play minus the mean '
            "over partners. Normalized: (cross-play - random pair) / (best with the partner - random "
            f"pair); the random pair makes {res['random_pair']:+.3f}. Click a column head to sort.</p>",
            "<h2>Cross-play</h2>",
            '<p class="note">Mean team return of the row player with the column partner, the row '
            "player in every seat in turn, with a 95% Student-t interval.</p>",
            _heatmap(
                res["players"],
                res["crossplay_matrix"],
                res["crossplay_ci95"],
                partners,
                "player with partner",
            ),
            "<h2>Normalized</h2>",
            _heatmap(res["players"], res["normalized"], None, partners, "player with partner"),
        ]
    )


def _match_body(res: dict[str, Any]) -> str:
    head = ["seat", "player", "episodes", "return", "± 95% CI", "win", "invalid", "fallback", "tokens in/out"]
    rows = []
    for s in res["seats"]:
        tokens = (
            f"{s['tokens_in_per_decision']:.0f}/{s['tokens_out_per_decision']:.1f}"
            if s.get("tokens_in_per_decision") is not None
            else "-"
        )
        rows.append(
            [
                _num(s["seat"], "d"),
                (_e(s["player"]), ""),
                _num(s["episodes"], "d"),
                _num(s.get("return_mean"), "+.3f"),
                _num(s.get("return_ci95"), ".3f"),
                _rate(s.get("win")),
                _rate(s.get("invalid_rate") if "invalid_rate" in s else s.get("env_illegal_rate")),
                _rate(s.get("fallback_rate")),
                (tokens, ""),
            ]
        )
    return "<h2>Seats</h2>" + _table(head, rows)


def render_report(run_dir: str | Path) -> str:
    """The page of the run in ``run_dir`` (see the module docstring)."""
    run_dir = Path(run_dir)
    res = _load(run_dir / "results.json")
    if "ratings" in res:
        games = f"{res['games']} games" + (
            f" ({res['distinct_games']} distinct)" if res.get("distinct_games") is not None else ""
        )
        title = f"{res['env_id']} {res['mode']}: {len(res['players'])} players"
        meta = f"{len(res['seatings'])} seatings x {res['episodes_per_seating']} episodes, {games}" + (
            "" if res.get("complete") else " (incomplete)"
        )
        body = _tournament_body(res, _player_rates(run_dir))
    elif res.get("mode") == "crossplay":
        title = f"{res['env_id']} crossplay: {len(res['players'])} players x {len(res['partners'])} partners"
        meta = (
            f"{len(res['seatings'])} seatings x {res['episodes_per_seating']} episodes, {res['games']} games"
            + ("" if res.get("complete") else " (incomplete)")
        )
        body = _crossplay_body(res, _player_rates(run_dir))
    elif "seats" in res:
        title = f"{res['env_id']}: {' vs '.join(map(str, res['players']))}"
        meta = f"{res['episodes']} episodes" + (
            f" ({res['distinct_games']} distinct games)" if res.get("distinct_games") is not None else ""
        )
        body = _match_body(res)
    else:
        raise AlemError(
            f"{run_dir / 'results.json'} holds neither a tournament, a cross-play run nor a match's results"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f'<h1>{_e(title)}</h1><p class="meta">{_e(meta)}</p>'
        f"{body}<h2>LLM games</h2>{_games(run_dir, MAX_GAMES)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the page (default ``<run dir>/report.html``, atomically); returns its path."""
    run_dir = Path(run_dir)
    path = Path(out) if out is not None else run_dir / REPORT_FILE
    write_atomic(path, render_report(run_dir))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    ap = ArgumentParser(prog="python -m alem.arena.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="an arena or tournament run directory (holds results.json)")
    ap.add_argument("--out", default=None, help=f"the page to write (default: <run dir>/{REPORT_FILE})")
    ap.add_argument("--overwrite", action="store_true", help="replace a page that is already there")
    a = ap.parse_args(argv)
    if not Path(a.run_dir).is_dir():
        ap.error(f"argument run_dir: {a.run_dir} is not a folder (give an arena run directory)")
    target = Path(a.out) if a.out is not None else Path(a.run_dir) / REPORT_FILE
    if target.exists() and not a.overwrite:
        ap.error(f"{target} exists; pass --overwrite to replace it")
    refuse_unwritable(ap, target)
    try:
        path = write_report(a.run_dir, a.out)
    except AlemError as e:  # from reading the run, before anything is written: a refusal
        ap.error(str(e))
    except OSError as e:
        print(f"{ap.prog}: error: {target} could not be written ({e.strerror or e})", file=sys.stderr)
        return 1
    print(f"Report written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
