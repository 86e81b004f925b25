"""Partner pools: the manifest format and the pools that ship with alem.

A pool is a folder with a manifest, ``partners.json`` (:func:`write_manifest`, :func:`read_pool`)::

    {"format": "alem-partners/1", "env_id": "lbf_8x8_2p_2f_coop-v0", "num_agents": 2, "seed": 0,
     "partners": [{"name": "ippo_s0", "spec": "checkpoint:ippo_s0", "split": "train",
                   "digest": "sha256:..."}, ...]}

A partner is any player spec; ``checkpoint:<path>`` paths are relative to the manifest's folder,
and a checkpoint partner carries the digest of its run directory's files, so a torn or swapped
checkpoint is refused by name before anything is played. Splits (``train``, ``validation``,
``heldout``) are disjoint and stable: :func:`assign_splits` ranks partners by a seeded hash of
their names, so the same names and seed always give the same split, whatever their order.

The format sits below its users: cross-play and the pool builder (:mod:`alem.arena.crossplay`,
:mod:`alem.arena.partners`) and population play's learner (:mod:`alem.algos.population`). The
subfolders of this package are the pools that ship (``partners=builtin``; scripts/ship_pool.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import ConfigError
from alem.rundir import write_atomic

__all__ = [
    "BUILTIN",
    "MANIFEST_FORMAT",
    "SPLITS",
    "Partner",
    "PartnerPool",
    "assign_splits",
    "builtin_pool",
    "checkpoint_digest",
    "read_pool",
    "shipped_pools",
    "split_arg",
    "write_manifest",
]

MANIFEST_FORMAT = "alem-partners/1"
SPLITS = ("train", "validation", "heldout")
#: Shares of a pool held out and kept for validation (rounded up; the rest trains).
HELDOUT_SHARE, VALIDATION_SHARE = 0.25, 0.125
#: ``partners=builtin[:split]``: the pool shipped for the env, from ``alem/pools/<env name>/``.
BUILTIN = "builtin"


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


def split_arg(arg: str, option: str = "partners") -> tuple[Path, str | None]:
    """``<manifest>[:split]``; a colon belongs to the path unless a split name follows it."""
    head, sep, tail = str(arg).rpartition(":")
    if sep and tail in SPLITS:
        return Path(head), tail
    if sep and tail and "/" not in tail and not Path(arg).exists():
        raise ConfigError(f"{option}={arg}: unknown split {tail!r}; choose one of {list(SPLITS)}")
    return Path(arg), None


def shipped_pools() -> list[str]:
    """Env ids with a partner pool inside the package (``partners=builtin``)."""
    root = Path(__file__).parent
    if not root.is_dir():
        return []
    return sorted(
        json.loads((d / "partners.json").read_text())["env_id"]
        for d in root.iterdir()
        if (d / "partners.json").is_file()
    )


def builtin_pool(env: MultiAgentEnv, option: str = "partners") -> Path:
    """The folder of ``env``'s pool shipped with the package (``partners=builtin[:split]``)."""
    folder = Path(__file__).parent / env.id.rsplit("-v", 1)[0]
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
    path, split = split_arg(str(arg), option)
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
