"""The on-disk request cache of the chat backends.

:class:`RequestCache` stores replies keyed by the full request body (and
endpoint path, not host), so a cached run replays offline, and a cache in
``mode="replay"`` turns a recorded evaluation into a test fixture.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from alem.errors import BackendConfigError

__all__ = ["RequestCache"]


class RequestCache:
    """Replies keyed by the full request (endpoint path + body), persisted as JSONL.

    Args:
        path: the JSONL file (created on first write).
        mode: ``"readwrite"`` (look up, store misses), ``"replay"`` (look up only; a
            miss is an error, so a test can prove it ran fully offline) or ``"write"``
            (store, never look up: re-record).

    Crash safety: each entry is one whole line appended and flushed; a torn last line
    (a kill mid-write) is cut off when the cache is opened, so later appends never glue
    onto it. A file with text but no cached reply (not a cache, or a cache killed during its
    very first write) is refused and left unchanged. Corrupt entries elsewhere are skipped and counted in ``corrupt``;
    entries whose reply fails validation are dropped by :meth:`invalidate` (``invalid``).
    """

    MODES = ("readwrite", "replay", "write")

    def __init__(self, path: str | Path, mode: str = "readwrite"):
        if mode not in self.MODES:
            raise BackendConfigError(f"llm.cache_mode must be one of {list(self.MODES)}, got {mode!r}")
        self.path, self.mode = Path(path), mode
        self._store: dict[str, dict] = {}
        self.hits = self.misses = self.corrupt = self.invalid = 0
        self.check_path(self.path, mode)
        if self.path.exists():
            from alem.rundir import read_jsonl, repair_tail

            for rec in read_jsonl(self.path, on_corrupt=self._count_corrupt):
                if (
                    isinstance(rec, dict)
                    and isinstance(rec.get("key"), str)
                    and isinstance(rec.get("response"), dict)
                ):
                    self._store[rec["key"]] = rec["response"]
                else:
                    self.corrupt += 1
            # A file that holds text but not one cached reply is someone else's file: cutting
            # its "torn" last line or appending to it would damage it, so it is left untouched.
            if not self._store and self.path.read_bytes().strip():
                raise BackendConfigError(
                    f"llm.cache={self.path} is not a request cache (none of its lines is a cached "
                    "reply); it was left as it is. Give llm.cache a new file (or an existing cache)"
                )
            if mode != "replay":
                repair_tail(self.path)  # a torn entry would corrupt the next append

    @staticmethod
    def check_path(path: str | Path, mode: str) -> None:
        """Refuse a cache path that cannot serve ``mode``, before anything is read or written:
        a folder, a replay file that does not exist, a new file in a missing or read-only folder."""
        path = Path(path)
        if path.is_dir():
            raise BackendConfigError(f"llm.cache={path} is a directory; give a file path")
        if path.exists():
            return
        if mode == "replay":
            raise BackendConfigError(f"replay cache {path} does not exist")
        folder = path.parent
        if not folder.is_dir():
            raise BackendConfigError(
                f"llm.cache={path} cannot be written: the folder {folder} does not exist"
            )
        if not os.access(folder, os.W_OK):
            raise BackendConfigError(f"llm.cache={path} cannot be written: the folder {folder} is read-only")

    def _count_corrupt(self, line: int, text: str) -> None:
        self.corrupt += 1

    @staticmethod
    def key(endpoint: str, body: dict) -> str:
        blob = json.dumps({"endpoint": endpoint, "body": body}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.mode == "write":
            return None
        hit = self._store.get(key)
        if hit is None:
            self.misses += 1
        else:
            self.hits += 1
        return hit

    def invalidate(self, key: str) -> None:
        """Forget an entry whose reply failed validation (it is fetched again and re-stored)."""
        if self._store.pop(key, None) is not None:
            self.invalid += 1
            self.hits -= 1
            self.misses += 1

    def put(self, key: str, response: dict) -> None:
        if self.mode == "replay":
            return
        self._store[key] = response
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "response": response}) + "\n"  # ASCII: any text survives
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    def __len__(self) -> int:
        return len(self._store)
