"""Tournaments: every pairing of a pool of players, from every seat, on the same deals, then ratings.

``python -m alem.evaluate mode=round_robin players=[a,b,c]`` plays every ordered pair of
distinct players (``a`` as the first seat against ``b``, and ``b`` first against ``a``);
``mode=gauntlet players=[a,b] panel=[x,y]`` plays each challenger against each member of a
fixed panel, from both seats. Every pairing plays episodes ``0..episodes-1`` with the same
``seed``, so episode ``e`` is the same deal in every pairing and from every seat.

Each pairing is an ordinary arena run in ``<run dir>/matches/<k>_<a>__<b>/`` (its own
``episodes.jsonl`` and results), so an interrupted tournament resumes exactly: finished
pairings are kept, the interrupted one finishes its missing episodes, the rest are played.
The tournament's ``results.json`` and ``ratings.csv`` are computed from those files alone
(:func:`tournament_results`): what the games pay (:mod:`alem.arena.payoffs`: the payoff matrix
with CIs, each player's payoff against the pool, Nash averaging for zero-sum round robins,
normalized relative advantage, each seating's mean returns), which orders the players; per
player Bradley–Terry Elo with a bootstrap CI and OpenSkill (:mod:`alem.arena.ratings`, on
games won: shown beside the payoff for games that are only won, drawn or lost), W/D/L, and
the pairwise score matrix; for Kuhn and Leduc poker
each player's exploitability, and for any env the result against its perfect player
(tic-tac-toe's minimax) when that player is in the pool.

Only two-seat envs can be paired; a game is won by the seat with the higher return.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.arena.evaluation import evaluate
from alem.arena.payoffs import PayoffGame, nash_average, payoff_matrix, pool_payoff, relative_advantage
from alem.arena.players import label_of
from alem.arena.stats import ci95
from alem.core import MultiAgentEnv
from alem.engine.record import EPISODES_FILE, EpisodeRecord, Match, read_episodes
from alem.errors import ConfigError
from alem.json_values import jsonable
from alem.players import Player

__all__ = [
    "MODES",
    "PERFECT_PLAYERS",
    "Tournament",
    "pairings",
    "play_tournament",
    "games_of",
    "payoffs_of",
    "tournament_results",
]

#: ``mode`` values: one match (the seats as given), or a tournament over a pool.
MODES = ("match", "round_robin", "gauntlet", "crossplay")
#: Env name -> the player that plays it perfectly (the "vs perfect play" column).
PERFECT_PLAYERS = {"tic_tac_toe": "minimax"}
#: Where the pairings' run directories go inside the tournament's.
MATCHES_DIR = "matches"


def pairings(mode: str, num_players: int, panel: int = 0) -> list[tuple[int, int]]:
    """Seatings ``(first seat, second seat)`` of player indices.

    ``round_robin``: every ordered pair of distinct players among ``num_players``.
    ``gauntlet``: players ``0..num_players-1`` are challengers and the next ``panel`` ones the
    panel; each challenger meets each panel member from both seats.
    """
    if mode == "round_robin":
        return [(a, b) for a in range(num_players) for b in range(num_players) if a != b]
    if mode == "gauntlet":
        panel_ids = range(num_players, num_players + panel)
        return [s for c in range(num_players) for p in panel_ids for s in ((c, p), (p, c))]
    raise ConfigError(f"mode must be one of {list(MODES)} for a tournament, got {mode!r}")


@dataclasses.dataclass(frozen=True, eq=False)
class Tournament:
    """A checked tournament: ``players`` (the pool, labelled), the ``seatings`` to play (one
    player index per seat), and the match settings every pairing shares."""

    env: MultiAgentEnv
    players: tuple[Player, ...]
    seatings: tuple[tuple[int, ...], ...]
    episodes: int
    num_envs: int = 8
    seed: int = 0
    max_steps: int | None = None
    mode: str = "round_robin"
    openings: int | None = None

    def __post_init__(self) -> None:
        if self.mode != "crossplay" and self.env.num_agents != 2:
            raise ConfigError(
                f"mode={self.mode} pairs players in two-seat games; {self.env.id} has "
                f"{self.env.num_agents} seats (play it with mode=match and one spec per seat)"
            )
        labels = self.labels
        if len(self.players) < 2:
            raise ConfigError(f"mode={self.mode} needs at least two players, got {labels}")
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise ConfigError(f"players must be distinct in a tournament; repeated: {dup}")
        if not self.seatings:
            raise ConfigError(f"mode={self.mode} with players {labels} has no pairing to play")
        # Every pairing is a Match with these settings: its checks run now, before any game.
        Match(
            self.env,
            tuple(self.players[i] for i in self.seatings[0]),
            self.episodes,
            num_envs=self.num_envs,
            seed=self.seed,
            max_steps=self.max_steps,
            openings=self.openings,
        )

    @property
    def labels(self) -> list[str]:
        return [label_of(p) for p in self.players]

    def match_dir(self, run_dir: Path, k: int) -> Path:
        """The run directory of seating ``k``: ``matches/<k>_<first>__<second>[__...]``."""
        names = (re.sub(r"[^A-Za-z0-9._-]+", "-", self.labels[i])[:40] for i in self.seatings[k])
        return run_dir / MATCHES_DIR / f"{k:03d}_{'__'.join(names)}"


def play_tournament(t: Tournament, run_dir: str | Path, *, progress: bool = True) -> None:
    """Play every seating of ``t`` into its own run directory under ``run_dir``.

    A seating whose directory exists is resumed (its finished episodes are kept), so calling
    this again on an interrupted tournament plays only what is missing.
    """
    run_dir = Path(run_dir)
    for k, seating in enumerate(t.seatings):
        match_dir = t.match_dir(run_dir, k)
        done = read_episodes(match_dir / EPISODES_FILE, below=t.episodes)
        if len(done) >= t.episodes:
            continue
        labels = [t.labels[i] for i in seating]
        if progress:
            print(f"pairing {k + 1}/{len(t.seatings)}: {' | '.join(labels)} (by seat)", flush=True)
        evaluate(
            t.env,
            [t.players[i] for i in seating],
            episodes=t.episodes,
            num_envs=t.num_envs,
            seed=t.seed,
            max_steps=t.max_steps,
            openings=t.openings,
            run_dir=match_dir,
            labels=labels,
            config={"pairing": k, "players": labels},
            resume=match_dir.exists(),
            progress=False,
        )


def _seating_records(t: Tournament, run_dir: str | Path) -> list[dict[int, EpisodeRecord]]:
    """Per seating, its finished episodes (read once per results computation)."""
    return [
        read_episodes(t.match_dir(Path(run_dir), k) / EPISODES_FILE, below=t.episodes)
        for k in range(len(t.seatings))
    ]


def _payoffs(t: Tournament, records: list[dict[int, EpisodeRecord]]) -> list[list[PayoffGame]]:
    return [
        [(a, b, float(eps[e].returns[0]), float(eps[e].returns[1])) for e in sorted(eps)]
        for (a, b), eps in zip(t.seatings, records, strict=True)
    ]


def _won(r0: float, r1: float) -> float:
    """The first seat's score: 1 / 0.5 / 0 for a higher / equal / lower return."""
    return 1.0 if r0 > r1 else 0.5 if r0 == r1 else 0.0


def payoffs_of(t: Tournament, run_dir: str | Path) -> list[list[PayoffGame]]:
    """Per seating, every finished game as ``(first seat's player, second seat's player, first
    seat's return, second seat's return)``, in episode order."""
    return _payoffs(t, _seating_records(t, run_dir))


def games_of(t: Tournament, run_dir: str | Path) -> list[tuple[int, int, float]]:
    """Every finished game as ``(first seat's player, second seat's player, first seat's score)``
    (:func:`_won`), in seating and episode order."""
    return [(a, b, _won(r0, r1)) for seating in payoffs_of(t, run_dir) for a, b, r0, r1 in seating]


def _distinct_games(records: list[dict[int, EpisodeRecord]]) -> int | None:
    """Different games over all seatings (a seating's equal games are one); None when some
    episode has no digest (written before digests existed)."""
    games = [(k, e.game) for k, eps in enumerate(records) for e in eps.values()]
    return None if any(g is None for _, g in games) else len(set(games))


def _seating_row(labels: list[str], seating: tuple[int, int], games: list[PayoffGame]) -> dict[str, Any]:
    """One seating's games: each seat's mean return with its 95% half-width (Student t), and NRA."""
    ret = np.array([g[2:] for g in games], float).reshape(-1, 2)
    a, b = seating
    return {
        "players": [labels[a], labels[b]],
        "games": len(games),
        "return_mean": jsonable(ret.mean(0) if len(games) else np.full(2, np.nan)),
        "return_ci95": [ci95(ret[:, 0]), ci95(ret[:, 1])],
        "relative_advantage": jsonable(relative_advantage(games, len(labels))[a, b]),
    }


def _perfect_column(t: Tournament, games: Sequence[tuple[int, int, float]]) -> tuple[str, dict] | None:
    name = PERFECT_PLAYERS.get(t.env.id.rsplit("-v", 1)[0])
    if name is None or name not in t.labels:
        return None
    ref = t.labels.index(name)
    wdl: dict[int, list[int]] = {i: [0, 0, 0] for i in range(len(t.players)) if i != ref}
    for a, b, s in games:
        if ref in (a, b) and a != b:
            me, score = (a, s) if b == ref else (b, 1.0 - s)
            wdl[me][0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
    return name, {t.labels[i]: v for i, v in wdl.items()}


def _headline(row: dict[str, Any]) -> tuple[float, float]:
    """The ranking's sort key: the Nash-averaged payoff where there is one (the players in the
    equilibrium's support tie at its value), then the payoff against the pool; best first."""

    def down(x: float | None) -> float:
        return np.inf if x is None or not np.isfinite(x) else -round(x, 9)

    return down(row["nash_payoff"]) if row["nash_payoff"] is not None else 0.0, down(row["payoff"])


def _exploitability(t: Tournament) -> dict[str, float | None] | None:
    from alem.arena.exploitability import player_exploitability

    scores = {label_of(p): player_exploitability(t.env, p) for p in t.players}  # None: not poker
    return scores if any(v is not None for v in scores.values()) else None


def tournament_results(t: Tournament, run_dir: str | Path, *, bootstrap: int = 200) -> dict[str, Any]:
    """The tournament's results from its pairings' files: ratings, W/D/L, pairwise scores and
    the game-theoretic columns (see the module docstring)."""
    from alem.arena.ratings import Game, rate, win_matrix

    records = _seating_records(t, run_dir)
    by_seating = _payoffs(t, records)
    paid = [g for seating in by_seating for g in seating]
    raw = [(a, b, _won(r0, r1)) for a, b, r0, r1 in paid]
    games = [Game(a, b, s) for a, b, s in raw]
    labels = t.labels
    n = len(labels)
    rows = rate(games, labels, reps=bootstrap, seed=t.seed)
    scores, counts = win_matrix(games, n)
    pm = payoff_matrix(paid, n)
    pool, pool_ci = pool_payoff(pm)
    nash = nash_average(pm["mean"]) if t.env.zero_sum and t.mode == "round_robin" else None
    # Elo and OpenSkill count games won; they rank alongside the payoff only where a game is
    # just won, drawn or lost (zero-sum, every return -1, 0 or 1).
    win_lose = bool(t.env.zero_sum) and all(r in (-1.0, 0.0, 1.0) for g in paid for r in g[2:])
    for r in rows:
        i = r["player"]
        r["payoff"], r["payoff_ci95"] = float(pool[i]), float(pool_ci[i])
        r["nash_weight"] = None if nash is None else float(nash[0][i])
        r["nash_payoff"] = None if nash is None else float(nash[1][i])
    rows.sort(key=_headline)
    out: dict[str, Any] = {
        "env_id": t.env.id,
        "mode": t.mode,
        "players": labels,
        "seatings": [[labels[a], labels[b]] for a, b in t.seatings],
        "episodes_per_seating": t.episodes,
        "games": len(games),
        "complete": len(games) == t.episodes * len(t.seatings),
        "distinct_games": _distinct_games(records),
        "ranked_by": "nash_payoff" if nash is not None else "payoff",
        "win_lose": win_lose,
        "ratings": jsonable(rows),
        "payoff_matrix": jsonable(pm["mean"]),
        "payoff_ci95": jsonable(pm["ci95"]),
        "relative_advantage": jsonable(relative_advantage(paid, n)),
        "pairings": [
            _seating_row(labels, s, games_k) for s, games_k in zip(t.seatings, by_seating, strict=True)
        ],
        "pairwise_score": jsonable(np.where(counts > 0, scores, np.nan)),
        "pairwise_games": counts.astype(int).tolist(),
    }
    perfect = _perfect_column(t, raw)
    if perfect is not None:
        out["vs_perfect"] = {"player": perfect[0], "win_draw_loss": perfect[1]}
    expl = _exploitability(t)
    if expl is not None:
        out["exploitability"] = expl
    return out
