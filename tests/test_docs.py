"""The documentation site: ``mkdocs build --strict`` succeeds and lists every registered env id.

The env pages are generated from the registry and the docstrings by ``docs/hooks.py``; this
builds the whole site (API reference included) into a temporary folder, as a user would.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import alem

ROOT = Path(__file__).resolve().parents[1]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ModuleNotFoundError, ValueError):  # a missing parent package, or a module blocked in sys.modules
        return False


# module -> distribution: the `docs` extra
_NEEDED = {
    "mkdocs": "mkdocs",
    "material": "mkdocs-material",
    "mkdocstrings": "mkdocstrings",
    "mkdocstrings_handlers.python": "mkdocstrings-python",
}
_MISSING = [dist for module, dist in _NEEDED.items() if not _installed(module)]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=f"docs build needs {', '.join(_MISSING)} (not installed): pip install -e '.[docs]'",
    ),
]

_LOG_LINE = re.compile(r"^(WARNING|ERROR)\b")


def test_strict_build_lists_every_env_id(tmp_path: Path) -> None:
    # One test on purpose: under pytest-xdist a second test would build the site again.
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = proc.stdout + proc.stderr
    problems = [line for line in log.splitlines() if _LOG_LINE.match(line)]
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    assert not problems, "the build logged warnings or errors:\n" + "\n".join(problems)

    missing: dict[str, list[str]] = {}
    for env_id, spec in alem.registry().items():
        page = site / "envs" / spec.family / "index.html"
        assert page.is_file(), (
            f"{env_id}: its family {spec.family!r} has no page (docs/envs/{spec.family}.md)"
        )
        html = page.read_text(encoding="utf-8")
        anchor = env_id.replace("/", "-")
        if f'id="{anchor}"' not in html or f"<code>{env_id}</code>" not in html:
            missing.setdefault(spec.family, []).append(env_id)
    assert not missing, f"ids without a section on their family page: {missing}"

    index = (site / "envs" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{env_id}</code>" in index for env_id in alem.registry()), "the env index misses ids"
    # The family table and the home page's cards come from the registry: each family's id
    # count, and the references its ids name (nothing about the families is hand-written).
    home = (site / "index.html").read_text(encoding="utf-8")
    for family in ("games", "coordination", "pathfinding"):
        specs = alem.registry(family).values()
        refs = {s.reference.split()[0] for s in specs if s.reference}
        row = re.search(rf"<td>{family}</td>(.*?)</tr>", index, re.S)
        assert row and f"<td>{len(specs)}</td>" in row[1], f"{family}: the family table's id count"
        assert all(r in row[1] for r in refs), f"{family}: references {refs} missing from its row"
        card = re.search(rf">{family.capitalize()}[^<]*</a></strong>: {len(specs)} ids: ([^<]*)", home)
        assert card and all(r in card[1] for r in refs), f"{family}: the home card"
    assert "SMAX" in home and "Overcooked" in home and "Hanabi" in home
    for page in ("api/core", "api/algos", "learners"):
        assert (site / page / "index.html").is_file(), page
