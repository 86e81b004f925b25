"""Actor-only partners: a trained PPO-core run's acting parameters in two small files.

A run directory keeps the whole learner state (critic, optimiser moments, env states) so that
training can resume; a partner only acts. :func:`export_actor` writes the actors of chosen seeds
of a run into a folder of its own::

    <folder>/actor.json   format "alem-actor/1": the env id and keywords, the learner
                          configuration, the roles, the rows kept and where they came from
    <folder>/actor.npz    the actor's parameter leaves, stacked over the rows kept

The folder plays wherever a run directory does (``checkpoint:<folder>``, ``seed_index`` picks a
row; :func:`alem.algos.checkpoint_player.load_trained` reads either), as an evaluator player, a
cross-play partner or a population-play partner, and plays exactly as the run's checkpoint did
(the same float32 parameters). It is a sixth to a third of the run's last checkpoint, which is why the
shipped partner pools use it (``scripts/ship_pool.py``). It cannot resume training, and a
value-based run (no actor) or a self-play run's snapshots (``#k``) are not exported.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from alem.checkpoint import CheckpointError
from alem.errors import AlemError
from alem.rundir import write_atomic

__all__ = ["ACTOR_FORMAT", "ACTOR_FILE", "ACTOR_META", "export_actor", "is_actor_folder", "read_actor"]

ACTOR_FORMAT = "alem-actor/1"
ACTOR_META, ACTOR_FILE = "actor.json", "actor.npz"
#: The fields of a run's ``results.json`` that say how to rebuild its learner; kept in ``actor.json``.
_RUN_FIELDS = ("env_id", "algo", "learner", "roles")


def is_actor_folder(path: str | Path) -> bool:
    """Whether ``path`` is an exported actor (``actor.json``) rather than a run directory."""
    return (Path(path) / ACTOR_META).is_file()


def export_actor(
    run_dir: str | Path, out: str | Path, env: Any = None, seed_indices: Sequence[int] | None = None
) -> Path:
    """Write the actors of rows ``seed_indices`` (default: every row) of the run at ``run_dir``
    into the new folder ``out``; return it. ``env`` is the env the run trained on (default:
    rebuilt from the run's saved id and keywords). Refuses an existing ``out``, a value-based run
    and rows out of range before writing anything."""
    from alem.algos.checkpoint_player import load_state

    out = Path(out)
    if out.exists() or out.is_symlink():  # a dangling link too: the final rename would fail on it
        what = f"is a symlink to {os.readlink(out)}" if out.is_symlink() else "exists"
        raise AlemError(f"{out} {what}; an exported actor is written to a new folder")
    run_dir = Path(run_dir)
    if is_actor_folder(run_dir):
        raise AlemError(f"{run_dir} is an exported actor already; export from its run directory")
    learner, state, res = load_state(run_dir, env)
    if "actor" not in state.params:  # a core without an actor network
        raise AlemError(f"{run_dir}: a {learner.cfg.kind} run ({res.get('algo')}) has no actor to export")
    rows = jax.tree.leaves(state.params["actor"])[0].shape[0]
    picked = list(range(rows)) if seed_indices is None else [int(i) for i in seed_indices]
    if not picked or any(not 0 <= i < rows for i in picked) or len(set(picked)) != len(picked):
        raise AlemError(f"seed_indices={list(seed_indices or [])}: distinct rows of the run's 0..{rows - 1}")
    leaves = jax.tree.leaves(jax.tree.map(lambda x: np.asarray(x)[np.asarray(picked)], state.params["actor"]))
    config = res.get("config") or {}
    returns = res.get("trained_return_per_seed") or []
    meta = {
        "format": ACTOR_FORMAT,
        **{k: res[k] for k in _RUN_FIELDS},
        "num_seeds": len(picked),
        "config": {"env": config.get("env") or {"id": res["env_id"]}},
        "source": {
            "run": run_dir.name,
            "seed_indices": picked,
            "env_steps_per_seed": res.get("env_steps_per_seed"),
            # the run's own final evaluation of each row kept (with copies of itself)
            "trained_return_per_seed": [returns[i] if i < len(returns) else None for i in picked],
            "wall_time_s": res.get("wall_time_s"),
        },
        "leaves": [[list(x.shape), str(x.dtype)] for x in leaves],
    }
    buf = io.BytesIO()
    np.savez(buf, **{f"{i:05d}": x for i, x in enumerate(leaves)})
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    tmp.mkdir(parents=True)
    (tmp / ACTOR_FILE).write_bytes(buf.getvalue())
    write_atomic(tmp / ACTOR_META, json.dumps(meta, indent=1) + "\n")
    tmp.rename(out)  # the folder appears whole or not at all
    return out


def read_actor(folder: str | Path) -> tuple[dict[str, Any], list[np.ndarray]]:
    """``(meta, leaves)`` of an exported actor; any damage (unreadable, another format, leaves of
    other shapes than the metadata says) is one :class:`CheckpointError` naming the folder."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / ACTOR_META).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != ACTOR_FORMAT:
            raise ValueError(
                f"format {meta.get('format') if isinstance(meta, dict) else None!r}, not {ACTOR_FORMAT}"
            )
        missing = [k for k in (*_RUN_FIELDS, "num_seeds", "leaves") if k not in meta]
        if missing:
            raise ValueError(f"missing {missing}")
        with np.load(folder / ACTOR_FILE, allow_pickle=False) as npz:
            leaves = [npz[f"{i:05d}"] for i in range(len(meta["leaves"]))]
        for i, (x, (shape, dtype)) in enumerate(zip(leaves, meta["leaves"], strict=True)):
            if list(x.shape) != list(shape) or str(x.dtype) != dtype:
                raise ValueError(f"leaf {i} is {x.shape} {x.dtype}, the metadata says {tuple(shape)} {dtype}")
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{folder}: not a readable exported actor ({type(e).__name__}: {e})") from None
    return meta, leaves
