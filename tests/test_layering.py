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
