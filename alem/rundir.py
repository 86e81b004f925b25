"""Run directories and the files in them: who may write a run dir, and how files survive a kill.

The rule every CLI follows: a run directory is written only by the run that created
it or by that run's ``resume``, and nothing is written before the run's checks pass.
:func:`claim` enforces the first half: it refuses a directory that holds anything but
Hydra's own bookkeeping (``.hydra/``, ``*.log``), so a new run can never overwrite
or mix with an older one, and it takes the directory with an exclusive create (of
:data:`CLAIM_MARKER`), so of two runs started at once into one directory only one runs.
:func:`hold` is the second half: a run (new or resumed) holds an exclusive lock on its directory
for as long as its process lives (``flock``, which the system drops when the process dies, however
it dies), so a second ``resume`` of a run that is going on is refused before it writes anything.

Files are written so a kill at any moment leaves something readable:

- :class:`JsonlWriter` appends one flushed line per record (episodes, transcripts,
  metrics); :func:`read_jsonl` skips a torn last line, and :func:`repair_tail` cuts it
  off before anything is appended after it.
- :func:`write_atomic` writes whole files (``config.yaml``, ``results.json``) through a
  temporary file and a rename, so a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from alem.errors import CorruptFileError, RunDirError

__all__ = [
    "CorruptFileError",
    "RunDirError",
    "JsonlWriter",
    "check_claim",
    "claim",
    "hold",
    "release",
    "foreign_entries",
    "refuse_occupied",
    "read_run_config",
    "read_jsonl",
    "repair_tail",
    "rewrite_jsonl",
    "write_atomic",
    "wrote_anything",
    "note_write",
    "forget_writes",
]

#: Entries Hydra writes into its own run dir before the app starts; they do not make a run.
HYDRA_ENTRIES = (".hydra",)
#: The file :func:`claim` creates exclusively: whoever creates it owns the directory.
CLAIM_MARKER = ".alem-run"

#: Run directories this process holds (:func:`hold`): resolved path -> the locked descriptor.
_HELD: dict[Path, int] = {}

#: Whether this process has written into a run directory (claimed one, or written a run file):
#: a command that stops before that was refused (exit status 2), after it failed (exit 1).
_WROTE = [False]


def wrote_anything() -> bool:
    """Whether this process claimed a run directory or wrote a run file since :func:`forget_writes`."""
    return _WROTE[0]


def note_write() -> None:
    """Count a write made outside this module (a checkpoint's files) as one of this process's."""
    _WROTE[0] = True


def forget_writes() -> None:
    """Start counting anew (a command's entry point, before it runs)."""
    _WROTE[0] = False


def foreign_entries(run_dir: str | Path) -> list[str]:
    """Names in ``run_dir`` that are not Hydra's bookkeeping (sorted; empty for a missing dir)."""
    path = Path(run_dir)
    if not path.is_dir():
        return []
    return sorted(
        p.name
        for p in path.iterdir()
        if p.name not in HYDRA_ENTRIES and not (p.suffix == ".log" and p.is_file())
    )


def refuse_occupied(path: Path, *, name: str, holds: str, advice: str) -> None:
    """Raise :class:`RunDirError` if ``path`` is a file or a directory with foreign entries.

    ``name`` labels the path in the message (``output_dir=...``, ``--out ...``), ``holds`` says
    what was found ("a run or other files"), ``advice`` what to do instead.
    """
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{name}{path} is a file, not a directory")
    found = foreign_entries(path)
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise RunDirError(
            f"{path} already holds {holds} ({shown}); a run directory belongs to the run that made it. {advice}"
        )


def check_claim(run_dir: str | Path, *, cli: str) -> Path:
    """What :func:`claim` checks, writing nothing: the resolved path, or :class:`RunDirError`."""
    path = Path(run_dir).resolve()
    refuse_occupied(
        path,
        name="output_dir=",
        holds="a run or other files",
        advice=f"Continue that run with `python -m {cli} resume={path}` or pick a new output_dir",
    )
    return path


def claim(run_dir: str | Path, *, cli: str) -> Path:
    """Make ``run_dir`` the directory of a new run; refuse one that already holds anything.

    Returns the resolved path (created). ``cli`` names the command for the message,
    which says how to continue the run that is there instead.
    """
    path = check_claim(run_dir, cli=cli)
    created = not path.exists()
    # The check above and this exclusive create are not one step: of two runs started at once
    # into one directory, both may pass the check, but only one creates the marker.
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / CLAIM_MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"cli": cli, "pid": os.getpid(), "created": created}) + "\n")
        _WROTE[0] = True
        hold(path, what="output_dir=")
    except FileExistsError:
        raise RunDirError(
            f"output_dir={path} was claimed by another run started at the same moment; "
            "a run directory belongs to the run that made it. Pick another output_dir"
        ) from None
    except OSError as e:  # read-only, not a directory on the way, no space, a file size limit
        raise RunDirError(
            f"output_dir={path} cannot be written ({e.strerror or e}); pick another output_dir"
        ) from None
    return path


def hold(run_dir: str | Path, *, what: str = "resume=") -> Path:
    """Hold ``run_dir`` for this process alone until it exits; returns the resolved path.

    Writes nothing. Raises :class:`RunDirError` when the directory is missing, cannot be written
    (a read-only filesystem, no permission), or another live process holds it (a run going on
    there, or a resume of it). ``what`` starts the messages (``resume=``). Holding a directory
    twice in one process is a no-op.
    """
    path = Path(run_dir).resolve()
    if path in _HELD:
        return path
    if not path.is_dir():
        raise RunDirError(f"{what}{path}: no such directory")
    if not os.access(path, os.W_OK | os.X_OK):
        # access() answers for the filesystem too: False on a read-only mount, even for root.
        reason = "a read-only filesystem" if _read_only(path) else "no permission to write there"
        raise RunDirError(f"{what}{path} cannot be written ({reason}); nothing was changed")
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the exclusive claim marker still guards new runs
        return path
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise RunDirError(
            f"{what}{path} is in use by another process right now (a run or a resume of it); "
            "a run directory is written by one process at a time. Wait for it to end, or stop it, "
            "then resume"
        ) from None
    _HELD[path] = fd
    return path


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _unhold(path: Path) -> None:
    fd = _HELD.pop(path.resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the last descriptor drops the flock


def release(run_dir: str | Path) -> None:
    """Undo this process's :func:`claim` of ``run_dir`` when the run fails before its first write.

    Removes the claim marker (only if this process wrote it) and the directory if the claim
    created it and it is empty again, so the same ``output_dir`` can be used by the next try.
    """
    path = Path(run_dir)
    marker = path / CLAIM_MARKER
    try:
        owner = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(owner, dict) or owner.get("pid") != os.getpid():
        return
    marker.unlink(missing_ok=True)
    _unhold(path)
    if owner.get("created"):
        with contextlib.suppress(OSError):  # something else is there now: it stays
            path.rmdir()


def read_run_config(
    run_dir: str | Path, *, cli: str, required: tuple[str, ...], what: str = "resume="
) -> Any:
    """The saved ``config.yaml`` of a run to resume (an OmegaConf ``DictConfig``).

    Raises :class:`RunDirError` (one line) when it is missing, unreadable (torn), or lacks one of
    the ``required`` keys (dotted: ``algo.name``) that every ``cli`` run writes (so it was cut
    short, edited, or is some other program's directory).
    ``what`` starts the messages (``resume=<dir>``; ``export of <dir>``).
    """
    from omegaconf import DictConfig, OmegaConf

    at = f"{what}{run_dir}" if what.endswith("=") else f"{what} {run_dir}"
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise RunDirError(f"{at}: no config.yaml there; is it a `python -m {cli}` run directory?")
    try:
        saved = OmegaConf.load(path)
    except Exception as e:  # yaml and omegaconf raise several types, over several lines
        text = " ".join(str(e).split())[:300]
        raise RunDirError(
            f"{at}: its config.yaml cannot be read, torn or edited ({type(e).__name__}: {text})"
        ) from None
    if not isinstance(saved, DictConfig):
        raise RunDirError(f"{at}: its config.yaml is not a `python -m {cli}` config")
    missing = [k for k in required if OmegaConf.select(saved, k, default=None) is None]
    if missing:
        raise RunDirError(
            f"{at}: its config.yaml has no {', '.join(missing)}; every `python -m {cli}` run writes "
            "them, so the file was cut short or edited (or is another program's)"
        )
    found = _interpolation(OmegaConf.to_container(saved, resolve=False))
    if found:
        key, value = found
        raise RunDirError(
            f"{at}: its config.yaml holds an interpolation at {key} ({value[:40]!r}); a saved config is "
            "data and is never resolved (an ${oc.env:...} there would read a secret from this "
            "machine's environment into requests and files). Put the value itself in config.yaml"
        )
    return saved


def _interpolation(node: Any, key: str = "") -> tuple[str, str] | None:
    """The first ``(dotted key, value)`` of a string holding ``${`` in a plain config tree."""
    if isinstance(node, dict):
        items = ((f"{key}.{k}" if key else str(k), v) for k, v in node.items())
    elif isinstance(node, list):
        items = ((f"{key}[{i}]", v) for i, v in enumerate(node))
    else:
        return (key, node) if isinstance(node, str) and "${" in node else None
    for k, v in items:
        hit = _interpolation(v, k)
        if hit:
            return hit
    return None


def write_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    _WROTE[0] = True
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except OSError as e:  # read-only, no space, permissions: one line naming the file
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise RunDirError(f"cannot write {path} ({e.strerror or e}); what was there before is kept") from None


class JsonlWriter:
    """Append-only JSONL file; each :meth:`write` is one flushed line.

    A torn last line left by a killed writer is cut off first (:func:`repair_tail`), so
    the new records never glue onto it. Strings that UTF-8 cannot encode (lone
    surrogates from a hostile server) are written as JSON escapes instead of failing.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        _WROTE[0] = True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(self.path)
        self._f = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        line = dumps_line(record)
        with self._lock:
            self._f.write(line)
            self._f.flush()
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if not self._f.closed:
                self._f.flush()
                os.fsync(self._f.fileno())
                self._f.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dumps_line(record: Any) -> str:
    """One JSONL line: readable UTF-8, or ASCII escapes where the record holds unencodable text."""
    line = json.dumps(record, ensure_ascii=False, default=_default) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True, default=_default) + "\n"
    return line


def _default(x: Any) -> Any:
    """NumPy scalars and arrays to plain Python."""
    if hasattr(x, "tolist"):
        return x.tolist()
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def repair_tail(path: str | Path) -> int:
    """Cut a torn last line (no newline at the end) off ``path``; returns the bytes removed."""
    path = Path(path)
    if not path.is_file():
        return 0
    with path.open("rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        # Walk back to the last newline; everything after it is the torn record.
        pos, block = size, 65536
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            k = chunk.rfind(b"\n")
            if k >= 0:
                keep = start + k + 1
                break
            pos = start
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
        return size - keep


def read_jsonl(path: str | Path, *, on_corrupt: Callable[[int, str], None] | None = None) -> Iterator[Any]:
    """Records (JSON objects) of a JSONL file; a torn last line is skipped.

    A corrupt line elsewhere raises :class:`CorruptFileError` naming the file and line,
    unless ``on_corrupt(line_number, text)`` is given: then it is reported there and skipped.
    """
    path = Path(path)
    if not path.exists():
        return
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn_tail = not data.endswith(b"\n")
    for k, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
            if not isinstance(record, dict):  # every alem record is an object: `3` or `[1]` is damage
                raise ValueError("not a JSON object")
        except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            if k == len(lines) - 1 and torn_tail:
                return  # interrupted mid-write
            if on_corrupt is not None:
                on_corrupt(k + 1, raw[:80].decode("utf-8", "replace"))
                continue
            raise CorruptFileError(
                f"{path}: line {k + 1} is not a JSON record ({raw[:60].decode('utf-8', 'replace')!r}...); "
                "the file was damaged after it was written. Remove that line (or the file) and resume"
            ) from None
        yield record


def rewrite_jsonl(path: str | Path, keep: Callable[[Any], bool]) -> int:
    """Keep only the records for which ``keep`` is True (atomic replace); returns how many were dropped."""
    path = Path(path)
    if not path.exists():
        return 0
    records = list(read_jsonl(path))
    kept = [r for r in records if keep(r)]
    write_atomic(path, "".join(dumps_line(r) for r in kept))
    return len(records) - len(kept)
