"""JSONL files written as things happen: transcripts, episode results, request caches.

Every record is one line, flushed at once, so an interrupted run loses at most
the line being written; :func:`read_jsonl` skips such a torn last line.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["JsonlWriter", "read_jsonl", "rewrite_jsonl"]


class JsonlWriter:
    """Append-only JSONL file; each :meth:`write` is one flushed line."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=_default) + "\n"
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


def _default(x: Any) -> Any:
    """NumPy scalars and arrays to plain Python."""
    if hasattr(x, "tolist"):
        return x.tolist()
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Records of a JSONL file; a torn (unparseable) last line is skipped, a torn middle line raises."""
    path = Path(path)
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            if k == len(lines) - 1:
                return  # interrupted mid-write
            raise ValueError(f"{path}: line {k + 1} is not JSON") from None


def rewrite_jsonl(path: str | Path, keep: Callable[[Any], bool]) -> int:
    """Keep only the records for which ``keep`` is True (atomic replace); returns how many were dropped."""
    path = Path(path)
    if not path.exists():
        return 0
    records = list(read_jsonl(path))
    kept = [r for r in records if keep(r)]
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in kept:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    return len(records) - len(kept)
