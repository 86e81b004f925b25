"""CI runs the README's test command itself, word for word."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _block_after(marker: str) -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    i = lines.index(f"<!-- command:{marker} -->")
    start = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
    end = next(j for j in range(start + 1, len(lines)) if lines[j].startswith("```"))
    return lines[start + 1 : end]


def test_readme_has_exactly_two_setup_commands():
    assert len(_block_after("main")) == 1 and len(_block_after("test")) == 1
    assert "python -m alem.train" in _block_after("main")[0]
    assert "pytest" in _block_after("test")[0] and "ruff check" in _block_after("test")[0]


def test_ci_script_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [ln for ln in script if ln.strip() and not ln.lstrip().startswith("#")]
    assert commands[0] == "set -euo pipefail"
    assert commands[-1] == _block_after("test")[0]


def test_ci_script_runs_as_a_newcomer_in_a_fresh_virtualenv():
    """Both README commands run, word for word, only after a new venv in a temp folder is active."""
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [ln.strip() for ln in script if ln.strip() and not ln.lstrip().startswith("#")]
    create = next(i for i, c in enumerate(commands) if "-m venv" in c and "mktemp" not in c)
    activate = next(i for i, c in enumerate(commands) if c.startswith(". ") and "bin/activate" in c)
    assert any("mktemp -d" in c for c in commands[:create]), "the venv must live in a temporary folder"
    assert create < activate
    first_pip = next(i for i, c in enumerate(commands) if c.startswith("pip ") or " pip " in c)
    assert activate < first_pip, "nothing may be installed before the fresh venv is active"
    assert _block_after("main")[0] in commands[activate:]
    assert "system-site-packages" not in " ".join(commands)


def test_every_test_file_is_listed_with_its_tier_in_tests_readme():
    listed = (ROOT / "tests" / "README.md").read_text()
    files = sorted(p.relative_to(ROOT / "tests").as_posix() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = [f for f in files if f"| `{f}` |" not in listed]
    assert not missing, f"tests/README.md does not list: {missing}"
