"""The documentation site: ``mkdocs build --strict`` succeeds, lists every registered env id
with its picture, and reads well in a real browser.

The env pages are generated from the registry and the docstrings by ``docs/hooks.py``; this
builds the whole site (API reference included) into a temporary folder once, as a user would,
then checks the HTML and opens the main pages in headless Chromium at 1280 px.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
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
    pytest.mark.xdist_group("docs-site"),  # both tests on one worker: the site is built once
    pytest.mark.skipif(
        bool(_MISSING),
        reason=f"docs build needs {', '.join(_MISSING)} (not installed): pip install -e '.[docs]'",
    ),
]

_LOG_LINE = re.compile(r"^(WARNING|ERROR)\b")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("docs") / "site"
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
    return site


def test_strict_build_lists_every_env_id(site: Path) -> None:
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
        row = re.search(rf'<td><a href="{family}/">{family}</a></td>(.*?)</tr>', index, re.S)
        assert row and f"<td>{len(specs)}</td>" in row[1], f"{family}: the family table's id count"
        assert all(r in row[1] for r in refs), f"{family}: references {refs} missing from its row"
        card = re.search(rf">{family.capitalize()}[^<]*</a></strong>: {len(specs)} ids: ([^<]*)", home)
        assert card and all(r in card[1] for r in refs), f"{family}: the home card"
    assert "SMAX" in home and "Overcooked" in home and "Hanabi" in home
    for page in ("api/core", "api/algos", "learners"):
        assert (site / page / "index.html").is_file(), page
    # The notebooks' index is the folder's README, each notebook linked on the repository.
    notebooks = (site / "notebooks" / "index.html").read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        name = path.relative_to(ROOT / "notebooks").as_posix()
        assert f"/blob/main/notebooks/{name}" in notebooks, f"the Notebooks page does not link {name}"


#: The pages opened in the browser: home, the Environments page, every family page, the notebooks.
_PAGES = [
    "",
    "envs/",
    *(f"envs/{family}/" for family in sorted({spec.family for spec in alem.registry().values()})),
    "notebooks/",
]
#: What the theme asks of the network (the repository's facts for the header).
_GITHUB_API = "https://api.github.com/repos/alem-sim/alem"
#: The page width users read at (the issue's 1280 px).
_WIDTH = 1280


@pytest.fixture(scope="module")
def served(site: Path):
    """The site over HTTP on 127.0.0.1 (its search worker and pages need http://, not file://)."""

    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test output stays readable
        pass


_OVERFLOW_JS = """
// Inline code keeps its padding (box-decoration-break: clone) where a line breaks inside it,
// so it may hang about 3 px over the edge; anything wider is real overflow.
const SLACK = 4;
const out = [];
const doc = document.documentElement;
if (doc.scrollWidth > window.innerWidth) out.push(`page ${doc.scrollWidth} px > window ${window.innerWidth} px`);
const column = document.querySelector('.md-content__inner');
const edge = column.getBoundingClientRect();
for (const wrap of column.querySelectorAll('.md-typeset__scrollwrap')) {
  if (wrap.scrollWidth > wrap.clientWidth + 1)
    out.push(`table scrolls ${wrap.scrollWidth} > ${wrap.clientWidth} px: ${wrap.textContent.trim().slice(0, 60)}`);
}
for (const el of column.querySelectorAll('*')) {
  if (el.closest('.md-typeset__scrollwrap') || el.closest('pre')) continue;
  const box = el.getBoundingClientRect();
  if (box.width && (box.right > edge.right + SLACK || box.left < edge.left - SLACK))
    out.push(`${el.tagName.toLowerCase()} ${Math.round(box.left)}-${Math.round(box.right)} px outside ${Math.round(edge.left)}-${Math.round(edge.right)} px: ${el.textContent.trim().slice(0, 60)}`);
}
return out.slice(0, 10);
"""


def test_the_site_in_chromium_loads_every_picture_without_errors_or_overflow(served, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.browser import browser, console_problems

    shots = tmp_path / "screenshots"
    shots.mkdir()
    d = browser(_WIDTH, 900)
    seen: dict[str, str] = {}  # id -> the page whose section showed its loaded picture
    try:
        for page in _PAGES:
            d.get(served + page)
            d.save_screenshot(str(shots / f"{page.strip('/').replace('/', '_') or 'home'}.png"))
            # Every image, scrolled into view (the GIFs load lazily), must decode.
            broken = []
            for img in d.find_elements(By.CSS_SELECTOR, "article img"):
                d.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
                loaded = d.execute_async_script(
                    "const [img, done] = arguments;"
                    "if (img.complete) { done(img.naturalWidth); return; }"
                    "img.addEventListener('load', () => done(img.naturalWidth));"
                    "img.addEventListener('error', () => done(0));",
                    img,
                )
                if not loaded:
                    broken.append(img.get_attribute("src"))
                alt = img.get_attribute("alt") or ""
                if loaded and alt.startswith("Random play in "):
                    in_gallery = d.execute_script(
                        "return arguments[0].closest('.alem-gallery') !== null", img
                    )
                    if not in_gallery:  # the picture of the id's own section
                        seen.setdefault(alt.removeprefix("Random play in "), page)
            assert broken == [], f"{page or 'home'}: images that did not load: {broken}"
            # Nothing wider than the window; every table fits its column (none scrolls sideways:
            # no clipped columns); nothing else sticks out of the article column. The theme's
            # table wrapper reaches 0.8rem into the column's padding by design: it is the one
            # exception.
            overflow = d.execute_script(_OVERFLOW_JS)
            assert overflow == [], f"{page or 'home'} overflows at {_WIDTH} px: {overflow}"
            # The header's repository facts (stars, latest release) come from GitHub's API,
            # which this offline machine cannot reach; any other console message fails.
            problems = [p for p in console_problems(d) if not p["message"].startswith(_GITHUB_API)]
            assert problems == [], f"{page or 'home'}: console errors {problems}"
    finally:
        d.quit()
        print(f"screenshots: {shots}")
    missing = sorted(set(alem.registry()) - seen.keys())
    assert not missing, f"ids whose section shows no loaded picture: {missing}"
