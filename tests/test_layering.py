"""The package's layers, read from the import statements (no import is executed): what may not
import what, and the size every module stays under."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The folders of the package's modules (alem.envs and alem.algos are mapped from envs/ and algos/).
FOLDERS = {"alem": ROOT / "alem", "alem.envs": ROOT / "envs", "alem.algos": ROOT / "algos"}
MAX_LINES = 550


def _imports(path: Path, module_level_only: bool) -> set[str]:
    """Absolute modules imported by a file (all of them, or those at module level only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def _files(package: str) -> list[Path]:
    for prefix, folder in FOLDERS.items():
        if package == prefix or package.startswith(prefix + "."):
            sub = (
                folder.joinpath(*package[len(prefix) :].lstrip(".").split("."))
                if package != prefix
                else folder
            )
            if sub.with_suffix(".py").is_file():  # a module, not a package
                return [sub.with_suffix(".py")]
            return sorted(sub.rglob("*.py"))
    raise AssertionError(package)


#: Modules a package rule does not cover: the training command builds the learners it trains.
EXEMPT = {("alem.training", "alem.algos"): {"command.py"}}


def _offenders(package: str, forbidden: str, module_level_only: bool) -> list[str]:
    exempt = EXEMPT.get((package, forbidden), set())
    return [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in _files(package)
        if p.name not in exempt
        for m in sorted(_imports(p, module_level_only))
        if m == forbidden or m.startswith(forbidden + ".")
    ]


@pytest.mark.parametrize(
    ("package", "forbidden", "module_level_only"),
    [
        ("alem.arena", "alem.text", True),  # the evaluator and the LLM bridge: neither loads the other
        ("alem.text", "alem.arena", True),
        ("alem.engine", "alem.arena", False),  # the play floor below both
        ("alem.engine", "alem.text", False),
        ("alem.training", "alem.algos", False),  # the loop runs any learner (the command picks one)
        ("alem.text.llm", "alem.text.train", False),
        ("alem.envs", "alem.arena", False),  # environments know no evaluator, learner or LLM
        ("alem.envs", "alem.algos", False),
        ("alem.envs", "alem.text.llm", False),
        ("alem.algos", "alem.arena", False),  # learners read pools and checkpoints from the floor below
        ("alem.algos", "alem.training", False),
        ("alem.pools", "alem.arena", False),  # the partner-pool format: below cross-play and the learners
        ("alem.pools", "alem.algos", False),
        ("alem.checkpoint", "alem.training", False),  # run-dir I/O: below training, learners, benchmarks
        ("alem.checkpoint", "alem.algos", False),
    ],
)
def test_layers_do_not_import_upwards(package, forbidden, module_level_only):
    offenders = _offenders(package, forbidden, module_level_only)
    assert not offenders, offenders


def test_the_checker_sees_an_import_it_forbids(tmp_path):
    """The rule above can fail: a module-level and a function-level import are both found."""
    f = tmp_path / "m.py"
    f.write_text("from alem.text.llm import player\n\ndef f():\n    import alem.arena.players\n")
    assert "alem.text.llm" in _imports(f, True) and "alem.arena.players" not in _imports(f, True)
    assert "alem.arena.players" in _imports(f, False)


def test_no_module_is_over_the_size_limit():
    big = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for folder in FOLDERS.values()
        for p in sorted(folder.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not big, f"modules over {MAX_LINES} lines (split them by what they hold): {big}"


def _layout_block() -> str:
    text = (ROOT / "docs" / "guide" / "development.md").read_text(encoding="utf-8")
    section = text.split("## The layout in detail", 1)[1]
    return section.split("```", 2)[1]


def test_the_development_guide_layout_names_every_module_and_only_modules_that_exist():
    """docs/guide/development.md's layout says the same as the tree: every module and subpackage
    of alem/ and algos/ and every family of envs/ is named there, and every ``*.py`` it names
    exists (a move that forgets the guide fails here)."""
    import re

    block = _layout_block()
    named = set(re.findall(r"([A-Za-z_][\w]*)\.py\b", block)) | set(re.findall(r"([A-Za-z_]\w*)/", block))
    missing = []
    for folder in (ROOT / "alem", ROOT / "algos"):
        for p in folder.iterdir():
            name = p.stem if p.suffix == ".py" else p.name
            if p.name.startswith(("_", ".")) or (p.is_dir() and not (p / "__init__.py").is_file()):
                continue
            if (p.suffix == ".py" or p.is_dir()) and name not in named:
                missing.append(str(p.relative_to(ROOT)))
    for p in (ROOT / "envs").iterdir():
        if p.is_dir() and (p / "__init__.py").is_file() and p.name not in named:
            missing.append(str(p.relative_to(ROOT)))
    assert not missing, f"not in the development guide's layout: {missing}"
    every = {p.stem for p in ROOT.rglob("*.py") if ".git" not in p.parts}
    stale = sorted(set(re.findall(r"([A-Za-z_]\w*)\.py\b", block)) - every)
    assert not stale, f"the development guide's layout names modules that do not exist: {stale}"
