"""Cross-play: how well players cooperate with partners they did not train with.

``python -m alem.evaluate mode=crossplay env.id=<id> 'players=[...]' partners=<manifest>[:split]``
plays every ego player (``players=``) with every partner of a pool, the ego in each seat in turn
and the partner in all the others, plus each ego with itself (self-play) and the random pair;
every seating is an ordinary arena run under ``matches/`` (so an interrupted run resumes exactly,
as a tournament does), on the same episodes and keys.

**The partner pool** is a folder with a manifest, ``partners.json``; its format, splits and
digests are :mod:`alem.pools`'s (population play's learner reads the same pools).

**The results** (``results.json``, :func:`crossplay_results`). The *team return* of an episode is
the mean of the agents' returns (:attr:`alem.core.MultiAgentEnv.cooperative`).

- ``crossplay_matrix``: ego x partner, the mean team return over the ego's seats and the
  episodes, with its 95% half-width (Student t over the episodes of every seat);
- ``selfplay``: each ego with itself; ``gap`` = self-play minus the mean over partners (a pool of
  partners identical to the ego has gap 0);
- ``normalized``: ``(XP - random pair) / (best - random pair)`` per cell, where ``best`` for a
  partner is the highest mean team return any player reached with it: the partner with itself
  (a partner trained in self-play is its own best response) or with any ego; 1 is as good as
  the best partner-specific player, 0 is as good as two random players. A partner that never
  acts gives what the ego reaches alone: in foraging with cooperative food, 0 (the floor).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from alem.arena.stats import ci95
from alem.core import MultiAgentEnv
from alem.engine.record import EPISODES_FILE, read_episodes
from alem.errors import ConfigError
from alem.json_values import jsonable

__all__ = ["check_cooperative", "crossplay_seatings", "crossplay_results"]

#: How partners are labelled in the seatings and match folders (the results name them plainly).
PARTNER_PREFIX = "partner:"


def check_cooperative(env: MultiAgentEnv, what: str = "mode=crossplay measures") -> None:
    """Refuse an env whose agents do not share one return: cross-play (``what``) is about teamwork."""
    if not env.cooperative:
        kind = "zero-sum" if env.zero_sum else "not cooperative"
        raise ConfigError(
            f"{what} how well players cooperate; {env.id} is {kind} "
            "(compare players there with mode=round_robin or gauntlet)"
        )


def crossplay_seatings(num_egos: int, num_partners: int, num_seats: int) -> list[tuple[int, ...]]:
    """Seatings over the pool ``[egos..., partners..., random]``: each ego with itself, each ego
    in each seat with a partner in the others, each partner with itself, and the random pair."""
    egos = range(num_egos)
    partners = range(num_egos, num_egos + num_partners)
    rnd = num_egos + num_partners
    out = [(e,) * num_seats for e in egos]
    out += [
        tuple(e if s == seat else p for s in range(num_seats))
        for e in egos
        for p in partners
        for seat in range(num_seats)
    ]
    out += [(p,) * num_seats for p in partners]
    out.append((rnd,) * num_seats)
    return out


def _team_returns(records: dict) -> np.ndarray:
    return np.array([float(np.mean(records[e].returns)) for e in sorted(records)], float)


def crossplay_results(t: Any, run_dir: str | Path, num_egos: int, num_partners: int) -> dict[str, Any]:
    """The results of a cross-play :class:`~alem.arena.tournament.Tournament` from its pairings'
    files (see the module docstring)."""
    run_dir = Path(run_dir)
    labels = t.labels
    egos = labels[:num_egos]
    partners = [x.removeprefix(PARTNER_PREFIX) for x in labels[num_egos : num_egos + num_partners]]
    team: dict[tuple[int, ...], np.ndarray] = {}
    for k, seating in enumerate(t.seatings):
        eps = read_episodes(t.match_dir(run_dir, k) / EPISODES_FILE, below=t.episodes)
        team[seating] = _team_returns(eps)
    n = t.env.num_agents

    def solo(i: int) -> np.ndarray:
        return team[(i,) * n]

    def with_partner(e: int, p: int) -> np.ndarray:
        return np.concatenate([team[tuple(e if s == seat else p for s in range(n))] for seat in range(n)])

    xp = np.full((num_egos, num_partners), np.nan)
    xp_ci = np.full_like(xp, np.nan)
    for e in range(num_egos):
        for j in range(num_partners):
            r = with_partner(e, num_egos + j)
            xp[e, j], xp_ci[e, j] = (float(r.mean()), ci95(r)) if r.size else (np.nan, np.nan)
    sp = np.array([solo(e).mean() if solo(e).size else np.nan for e in range(num_egos)])
    sp_ci = np.array([ci95(solo(e)) for e in range(num_egos)])
    partner_sp = np.array([solo(num_egos + j).mean() for j in range(num_partners)])
    floor = float(solo(num_egos + num_partners).mean())
    best = np.nanmax(np.vstack([partner_sp[None], xp]), axis=0)
    span = best - floor
    with np.errstate(invalid="ignore", divide="ignore"):
        normalized = np.where(np.abs(span) > 1e-12, (xp - floor) / span, np.nan)
    with warnings.catch_warnings():  # an ego whose every cell is undefined has no mean: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        xp_mean, norm_mean = np.nanmean(xp, axis=1), np.nanmean(normalized, axis=1)
    games = sum(r.size for r in team.values())
    return {
        "env_id": t.env.id,
        "mode": "crossplay",
        "players": egos,
        "partners": partners,
        "seatings": [[labels[i] for i in s] for s in t.seatings],
        "episodes_per_seating": t.episodes,
        "games": games,
        "complete": games == t.episodes * len(t.seatings),
        "team_return": "mean of the agents' returns",
        "crossplay_matrix": jsonable(xp),
        "crossplay_ci95": jsonable(xp_ci),
        "selfplay": jsonable(sp),
        "selfplay_ci95": jsonable(sp_ci),
        "crossplay_mean": jsonable(xp_mean),
        "gap": jsonable(sp - xp_mean),
        "partner_selfplay": jsonable(partner_sp),
        "random_pair": floor,
        "best_with_partner": jsonable(best),
        "normalized": jsonable(normalized),
        "normalized_mean": jsonable(norm_mean),
    }
