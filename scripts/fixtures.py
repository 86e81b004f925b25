"""What the reference-fixture scripts share: a venv of their own for a reference that cannot live
beside alem (POGEMA's and overcooked-ai's pins), and one way to write a fixture file.

Imported by its siblings as ``from fixtures import ...`` (a script's folder is on its path, in
alem's venv and in the reference's alike).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import venv
from pathlib import Path
from typing import Any

__all__ = ["ensure_venv", "write_fixture"]


def ensure_venv(path: Path, probe: str, requirements: list[str], what: str) -> Path:
    """The Python of the venv at ``path`` (made if missing) in which ``import <probe>`` works,
    installing ``requirements`` first when it does not."""
    python = path / "bin" / "python"
    if not python.exists():
        print(f"creating a venv for {what} in {path}")
        venv.create(path, with_pip=True)
    check = subprocess.run([python, "-c", f"import {probe}"], capture_output=True)
    if check.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", *requirements], check=True)
    return python


def write_fixture(out: Path | str, doc: dict[str, Any], what: str) -> Path:
    """Write ``doc`` as compact JSON (gzip-compressed when ``out`` ends in ``.gz``), the folder made
    if needed, and say how much was written of ``what``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".gz":
        with gzip.open(out, "wt", compresslevel=9) as f:
            json.dump(doc, f, separators=(",", ":"))
    else:
        out.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    print(f"wrote {what} to {out} ({out.stat().st_size} bytes)")
    return out
