"""Cross-play: how well players cooperate with partners they did not train with.

``python -m alem.evaluate mode=crossplay env.id=<id> 'players=[...]' partners=<manifest>[:split]``
plays every ego player (``players=``) with every partner of a pool, the ego in each seat in turn
and the partner in all the others, plus each ego with itself (self-play) and the random pair;
every seating is an ordinary arena run under ``matches/`` (so an interrupted run resumes exactly,
as a tournament does), on the same episodes and keys.

**The partner pool** is a manifest, ``partners.json`` (:func:`write_manifest`, :func:`read_pool`)::

    {"format": "alem-partners/1", "env_id": "lbf_8x8_2p_2f_coop-v0", "num_agents": 2, "seed": 0,
     "partners": [{"name": "ippo_s0", "spec": "checkpoint:ippo_s0", "split": "train",
                   "digest": "sha256:..."}, ...]}

A partner is any player spec; ``checkpoint:<path>`` paths are relative to the manifest's folder,
and a checkpoint partner carries the digest of its run directory's files, so a torn or swapped
checkpoint is refused by name before anything is played. Splits (``train``, ``validation``,
``heldout``) are disjoint and stable: :func:`assign_splits` ranks partners by a seeded hash of
their names, so the same names and seed always give the same split, whatever their order.

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

import dataclasses
import hashlib
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.arena.stats import ci95
from alem.core import MultiAgentEnv
from alem.engine.record import EPISODES_FILE, read_episodes
from alem.errors import ConfigError
from alem.json_values import jsonable
from alem.rundir import write_atomic

__all__ = [
    "MANIFEST_FORMAT",
    "SPLITS",
    "Partner",
    "PartnerPool",
    "assign_splits",
    "checkpoint_digest",
    "write_manifest",
    "read_pool",
    "crossplay_seatings",
    "crossplay_results",
]

MANIFEST_FORMAT = "alem-partners/1"
SPLITS = ("train", "validation", "heldout")
#: Shares of a pool held out and kept for validation (rounded up; the rest trains).
HELDOUT_SHARE, VALIDATION_SHARE = 0.25, 0.125
#: ``partners=builtin[:split]``: the pool shipped for the env, from ``alem/arena/pools/<env name>/``.
BUILTIN = "builtin"
POOLS_DIR = "pools"
#: How partners are labelled in the seatings and match folders (the results name them plainly).
PARTNER_PREFIX = "partner:"


@dataclasses.dataclass(frozen=True)
class Partner:
    """One partner: its ``name`` (its label in the tables), the player ``spec`` that builds it
    (checkpoint paths resolved against the manifest's folder), its ``split``, for a checkpoint
    the ``digest`` of its run directory, and constructor ``kwargs`` (``seed_index`` of a run of
    several seeds)."""

    name: str
    spec: str
    split: str
    digest: str | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PartnerPool:
    """A manifest read and checked: the env it is for and the partners of the split asked for."""

    path: Path
    env_id: str
    num_agents: int
    split: str | None
    partners: tuple[Partner, ...]


def assign_splits(names: Sequence[str], seed: int = 0) -> dict[str, str]:
    """``name -> split``: partners ranked by ``sha256(seed, name)``; the first quarter (rounded up)
    is held out, the next eighth (rounded up) validates, the rest trains. Pools of fewer than three
    keep one partner for training and hold out the rest."""
    if len(set(names)) != len(names):
        raise ConfigError(f"partner names must be distinct, got {sorted(names)}")
    ranked = sorted(names, key=lambda n: hashlib.sha256(f"{seed}:{n}".encode()).hexdigest())
    n = len(ranked)
    heldout = max(1, int(np.ceil(n * HELDOUT_SHARE))) if n > 1 else 0
    validation = int(np.ceil(n * VALIDATION_SHARE)) if n - heldout > 1 else 0
    out = {}
    for i, name in enumerate(ranked):
        out[name] = "heldout" if i < heldout else "validation" if i < heldout + validation else "train"
    return out


def checkpoint_digest(folder: str | Path) -> str:
    """``sha256:<hex>`` over every file of a run directory (relative paths and contents, sorted)."""
    folder = Path(folder)
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return f"sha256:{h.hexdigest()}"


def _checkpoint_dir(spec: str, root: Path) -> Path | None:
    name, _, arg = spec.partition(":")
    if name != "checkpoint" or not arg:
        return None
    path = Path(arg.split("#", 1)[0])
    return path if path.is_absolute() else root / path


def write_manifest(
    path: str | Path, env: MultiAgentEnv, partners: Sequence[tuple], *, seed: int = 0
) -> dict[str, Any]:
    """Write ``partners.json`` for ``(name, spec)`` or ``(name, spec, kwargs)`` entries, with
    their splits and digests; refuses an existing file (a manifest belongs to the pool that made
    it)."""
    path = Path(path)
    if path.exists():
        raise ConfigError(f"{path} exists; a partner manifest is never overwritten")
    splits = assign_splits([p[0] for p in partners], seed)
    entries = []
    for name, spec, *rest in partners:
        kwargs = dict(rest[0]) if rest else {}
        folder = _checkpoint_dir(spec, path.parent)
        if folder is not None and not folder.is_dir():
            raise ConfigError(f"partner {name!r}: checkpoint folder {folder} does not exist")
        digest = None if folder is None else checkpoint_digest(folder)
        entries.append(
            {"name": name, "spec": spec, "split": splits[name], "digest": digest, "kwargs": kwargs}
        )
    manifest = {
        "format": MANIFEST_FORMAT,
        "env_id": env.id,
        "num_agents": env.num_agents,
        "seed": seed,
        "partners": entries,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(manifest, indent=1) + "\n")
    return manifest


def _split_arg(arg: str, option: str = "partners") -> tuple[Path, str | None]:
    """``<manifest>[:split]``; a colon belongs to the path unless a split name follows it."""
    head, sep, tail = str(arg).rpartition(":")
    if sep and tail in SPLITS:
        return Path(head), tail
    if sep and tail and "/" not in tail and not Path(arg).exists():
        raise ConfigError(f"{option}={arg}: unknown split {tail!r}; choose one of {list(SPLITS)}")
    return Path(arg), None


def shipped_pools() -> list[str]:
    """Env ids with a partner pool inside the package (``partners=builtin``)."""
    root = Path(__file__).parent / POOLS_DIR
    if not root.is_dir():
        return []
    return sorted(
        json.loads((d / "partners.json").read_text())["env_id"]
        for d in root.iterdir()
        if (d / "partners.json").is_file()
    )


def builtin_pool(env: MultiAgentEnv, option: str = "partners") -> Path:
    """The folder of ``env``'s pool shipped with the package (``partners=builtin[:split]``)."""
    folder = Path(__file__).parent / POOLS_DIR / env.id.rsplit("-v", 1)[0]
    if not (folder / "partners.json").is_file():
        raise ConfigError(
            f"{option}={BUILTIN}: no partner pool ships for {env.id}; pools ship for {shipped_pools()} "
            "(build one with python -m alem.partners build)"
        )
    return folder


def read_pool(
    arg: str | Path, env: MultiAgentEnv, *, check_digests: bool = True, option: str = "partners"
) -> PartnerPool:
    """Read and check ``<manifest>[:split]`` for ``env``: the format, the env and seat count, the
    splits, and (``check_digests``) that every checkpoint partner's folder is the one recorded.
    Every failure is one :class:`~alem.errors.ConfigError` naming ``option``, the manifest and
    the partner."""
    path, split = _split_arg(str(arg), option)
    if str(path) == BUILTIN and not path.exists():
        path = builtin_pool(env, option)
    if path.is_dir():
        path = path / "partners.json"
    where = f"{option}={arg}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no manifest at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{where}: {path} is not a readable partner manifest ({e})") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"{where}: {path} is not an {MANIFEST_FORMAT} manifest (format {got!r})")
    if data.get("env_id") != env.id:
        raise ConfigError(f"{where}: the pool is for {data.get('env_id')!r}, not {env.id!r}")
    if data.get("num_agents") != env.num_agents:
        raise ConfigError(
            f"{where}: the pool's partners fill {data.get('num_agents')} seats; {env.id} has {env.num_agents}"
        )
    entries = data.get("partners")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where}: the manifest lists no partners")
    partners, seen = [], set()
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) and e[k] for k in ("name", "spec")):
            raise ConfigError(f"{where}: partner #{i} needs a name and a spec, got {e!r}")
        name = e["name"]
        if name in seen:
            raise ConfigError(f"{where}: partner name {name!r} appears twice")
        seen.add(name)
        if e.get("split") not in SPLITS:
            raise ConfigError(
                f"{where}: partner {name!r} has split {e.get('split')!r}; one of {list(SPLITS)}"
            )
        spec = e["spec"]
        folder = _checkpoint_dir(spec, path.parent)
        if folder is not None:
            if not folder.is_dir():
                raise ConfigError(f"{where}: partner {name!r}: checkpoint folder {folder} does not exist")
            if check_digests and e.get("digest") != checkpoint_digest(folder):
                raise ConfigError(
                    f"{where}: partner {name!r}: the files of {folder} do not match the manifest's digest "
                    "(torn or replaced since the pool was built)"
                )
            rest = spec.partition(":")[2]
            suffix = rest[len(rest.split("#", 1)[0]) :]
            spec = f"checkpoint:{folder}{suffix}"
        kwargs = e.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise ConfigError(f"{where}: partner {name!r} has kwargs {kwargs!r}; an object of keywords")
        row = kwargs.get("seed_index", 0)
        if not isinstance(row, int) or isinstance(row, bool) or row < 0:  # played through int(): "abc", 1.5
            raise ConfigError(
                f"{where}: partner {name!r} has kwargs.seed_index={row!r}; "
                f"a non-negative integer is expected ({path})"
            )
        partners.append(Partner(name, spec, e["split"], e.get("digest"), kwargs))
    chosen = tuple(p for p in partners if split is None or p.split == split)
    if not chosen:
        raise ConfigError(f"{where}: the manifest has no partner in split {split!r}")
    return PartnerPool(path, env.id, env.num_agents, split, chosen)


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
