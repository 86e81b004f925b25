"""Install commands in README.md and docs/ that bring torch bring PyTorch's CPU wheel.

A bare ``torch`` from PyPI is the CUDA build (15 nvidia packages, ~3 GB); the ``llmtrain``
extra needs only the CPU one. Every command that installs the extra (or torch itself) must
install the CPU wheel first, so that a later edit cannot bring the CUDA pull back.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The one command the docs give for the llmtrain extra's torch (PyTorch's own CPU index).
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
#: The one command that installs the extra, the same everywhere the docs give it.
LLMTRAIN = f'{CPU_TORCH} && pip install -e ".[llmtrain]"'
#: One pip install command: up to the end of the line, a backtick, ``&&``, ``;`` or ``|``.
_PIP = re.compile(r"pip install\b[^`\n;&|]*")


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _commands(text: str) -> list[tuple[int, str, str]]:
    """(line number, the text of the line before the command, the command) per pip install."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in _PIP.finditer(line):
            found.append((n, line[: m.start()], m.group(0).strip()))
    return found


def _torch_commands(text: str) -> list[tuple[int, str, str]]:
    """The pip installs that bring torch: the llmtrain extra, or torch named as a package."""
    return [
        (n, before, cmd)
        for n, before, cmd in _commands(text)
        if "llmtrain]" in cmd or re.search(r"(?<![\w.-])torch(?![\w.-])", cmd.split("pip install", 1)[1])
    ]


def test_every_install_of_llmtrain_or_torch_in_the_docs_installs_the_cpu_wheel_first():
    bad, seen = [], 0
    for path in _docs():
        for n, before, cmd in _torch_commands(path.read_text()):
            seen += 1
            if cmd == CPU_TORCH:
                continue
            # anything else that brings torch must come right after the CPU wheel's install
            if not (before + cmd).endswith(LLMTRAIN):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {cmd}")
    assert not bad, f"install llmtrain with the one command, {LLMTRAIN}:\n" + "\n".join(bad)
    assert seen >= 8  # README, installation, the guide's and the reference's LLM pages
    assert LLMTRAIN in (ROOT / "README.md").read_text()


def test_the_check_itself_catches_a_bare_torch_and_a_bare_extra():
    bare = 'pip install -e ".[llmtrain]"\n`pip install torch transformers peft gguf`\n'
    assert [cmd for _, _, cmd in _torch_commands(bare)] == [
        'pip install -e ".[llmtrain]"',
        "pip install torch transformers peft gguf",
    ]
    good = f'{CPU_TORCH} && pip install "alem[llmtrain]"\npip install torchvision-free "alem[train]"\n'
    cmds = _torch_commands(good)
    assert [c for _, _, c in cmds] == [CPU_TORCH, 'pip install "alem[llmtrain]"']
    assert (cmds[1][1] + cmds[1][2]).endswith(f'{CPU_TORCH} && pip install "alem[llmtrain]"')


def test_the_docs_say_why_ci_installs_a_pinned_torch_instead():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install torch==2.13.0" in ci  # CI's own wheel, kept on its machine's disk
    text = (ROOT / "docs" / "installation.md").read_text()
    assert "torch==2.13.0" in text and ".ci/run" in text
