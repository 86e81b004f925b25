"""Checkpoints of training runs: orbax directories ``<run>/checkpoints/chunk_<k>``.

A checkpoint holds a learner's whole vmapped state (any pytree; for the PPO core
:class:`~alem.algos.state.LearnerState`: parameters, optimiser, env states, PRNG keys), so a resumed run continues
exactly where the saved one stopped. Typed PRNG keys are stored as their raw
``uint32`` data and rebuilt from the template on restore. Orbax writes to a
temporary directory and renames it when complete, so a kill during a save
leaves the previous checkpoint intact.

Saves and restores are synchronous (``ocp.Checkpointer``, not the async
``StandardCheckpointer``): the loop waits for every save anyway, and a failed async
write left orbax threads waiting 300 s for signals that never came, so a run
with an unwritable directory hung five minutes at exit.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import shutil
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax

from alem.errors import CheckpointError
from alem.rundir import note_write

__all__ = ["CheckpointError", "save", "latest", "available", "restore", "CHECKPOINT_DIR"]

CHECKPOINT_DIR = "checkpoints"
_NAME = re.compile(r"^chunk_(\d{6})$")


def _checkpointer() -> Any:
    import orbax.checkpoint as ocp

    return ocp.Checkpointer(ocp.StandardCheckpointHandler())


@contextlib.contextmanager
def _failure_noise_dropped(settle_s: float = 1.0) -> Iterator[None]:
    """Hold what orbax prints to stderr during a save (and its log lines below CRITICAL); print
    the held text after a success, drop it after a failure.

    A failed write (full disk, ``ulimit -f``, a read-only directory) makes orbax log the error
    with a traceback per array (absl, to stdout), and its writer threads then print dozens of
    "Event loop is closed" tracebacks to stderr as their callbacks find the save's event loop
    gone. The caller reports the failure as one line; the threads get ``settle_s`` to finish.
    """
    absl = logging.getLogger("absl")
    level, stderr = absl.level, sys.stderr
    held = io.StringIO()
    absl.setLevel(logging.CRITICAL)
    sys.stderr = held
    failed = True
    try:
        yield
        failed = False
    finally:
        if failed:
            time.sleep(settle_s)
            # The abandoned write coroutines are collected later, at exit at the latest, each
            # with a "coroutine ... was never awaited" warning after the run's one-line error.
            warnings.filterwarnings(
                "ignore", message="coroutine .* was never awaited", category=RuntimeWarning
            )
        sys.stderr = stderr
        absl.setLevel(level)
        if not failed and held.getvalue():
            stderr.write(held.getvalue())


def _reason(e: BaseException) -> str:
    """``Type: first line of the message`` (orbax's messages run to many lines)."""
    lines = str(e).splitlines()
    return f"{type(e).__name__}: {lines[0][:200] if lines else ''}"


def _is_key(x: Any) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _to_raw(tree: Any) -> dict[str, Any]:
    """Leaves by position, PRNG keys as raw data; zero-size leaves (orbax refuses them) left out."""
    leaves = jax.tree.leaves(jax.tree.map(lambda x: jax.random.key_data(x) if _is_key(x) else x, tree))
    return {f"{i:05d}": x for i, x in enumerate(leaves) if x.size}


def save(run_dir: str | Path, chunk: int, tree: Any, keep: int = 2) -> Path:
    """Write ``tree`` as checkpoint ``chunk`` (chunks completed) and keep the newest ``keep``.

    Raises :class:`CheckpointError` (one line, naming the path and the OS error) when it cannot
    be written: an unwritable or full disk, a file size limit. The older checkpoints stay.
    """
    import orbax.checkpoint as ocp

    root = Path(run_dir) / CHECKPOINT_DIR
    path = root / f"chunk_{chunk:06d}"
    # In a multi-process run every process saves its shards (orbax syncs them); the folders are
    # process 0's to make and remove (the others enter orbax's save, which waits for it).
    primary = jax.process_index() == 0
    note_write()  # every process writes its shards: a stop from here on is a failed run, not a refusal
    ckpt = _checkpointer()
    try:
        if primary:
            root.mkdir(parents=True, exist_ok=True)
            if path.exists():
                shutil.rmtree(path)
        with _failure_noise_dropped():
            ckpt.save(path.resolve(), args=ocp.args.StandardSave(_to_raw(tree)))
    except Exception as e:  # OSError, or orbax wrapping one
        raise CheckpointError(f"checkpoint {path} could not be written ({_reason(e)})") from None
    finally:
        ckpt.close()
    if primary:
        for old in sorted(p for p in root.iterdir() if _NAME.match(p.name))[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    return path


def available(run_dir: str | Path) -> list[tuple[int, Path]]:
    """``(chunk, path)`` of every complete checkpoint of a run, newest first."""
    root = Path(run_dir) / CHECKPOINT_DIR
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _NAME.match(p.name)) and p.is_dir()]
    return sorted(found, reverse=True)


def latest(run_dir: str | Path) -> tuple[int, Path] | None:
    """``(chunk, path)`` of the newest complete checkpoint of a run, or None if it has none."""
    found = available(run_dir)
    return found[0] if found else None


def restore(path: str | Path, template: Any, leading: int | None = None) -> Any:
    """Read the checkpoint at ``path`` into the structure, shapes and dtypes of ``template``.

    ``leading``: read only the first ``leading`` leaves of ``template`` (in its flatten order),
    the others stay the template's. A learner state's parameters lead it, so a player can read
    them from a checkpoint whose later leaves are laid out otherwise (a run of an older alem
    whose env info had other entries), which a whole restore refuses.
    """
    import orbax.checkpoint as ocp

    path = Path(path).resolve()
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} does not exist")
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, _to_raw(template))
    if leading is not None:
        abstract = {k: v for k, v in abstract.items() if int(k) < leading}
    ckpt = _checkpointer() if leading is None else ocp.PyTreeCheckpointer()
    try:
        if leading is None:
            raw = ckpt.restore(path, args=ocp.args.StandardRestore(abstract))
        else:  # orbax reads a leaf into any shape asked for: the shapes are compared first
            meta = ckpt.metadata(path)
            meta = getattr(meta, "item_metadata", meta)
            for k, v in abstract.items():
                if k not in meta or (tuple(meta[k].shape), str(meta[k].dtype)) != (tuple(v.shape), str(v.dtype)):
                    raise ValueError(f"leaf {k} on disk is not {tuple(v.shape)} {v.dtype}")
            restore_args = ocp.checkpoint_utils.construct_restore_args(abstract)
            raw = ckpt.restore(
                path, args=ocp.args.PyTreeRestore(item=abstract, restore_args=restore_args, partial_restore=True)
            )
    except Exception as e:  # orbax raises many types for unreadable or mismatched data
        raise CheckpointError(
            f"checkpoint {path} could not be restored ({_reason(e)}); "
            "it is corrupt or was written by a different configuration"
        ) from None
    finally:
        ckpt.close()
    leaves, treedef = jax.tree.flatten(template)
    out = []
    for i, t in enumerate(leaves):
        r = raw.get(f"{i:05d}", t)
        out.append(
            jax.random.wrap_key_data(r, impl=jax.random.key_impl(t)) if _is_key(t) and r is not t else r
        )
    return jax.tree.unflatten(treedef, out)
