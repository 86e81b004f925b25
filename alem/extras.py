"""Optional extras: which feature needs which ``pip install "alem[<extra>]"``.

``pip install alem`` is the env package (jax, numpy, jaxtyping): ``alem.make``, every env, the
wrappers, rollouts and the registry. Everything else is an extra of pyproject.toml, and each
feature checks its extra on entry with :func:`require`, so a missing one fails with a single line
naming the install command instead of an ImportError deep inside a dependency.
"""

from __future__ import annotations

import importlib.util
import sys

from alem.errors import DependencyNotInstalled

__all__ = ["EXTRAS", "missing", "require"]

#: extra -> the import names it provides (what :func:`require` looks for). pyproject.toml declares
#: the distributions; tests/test_packaging.py checks that the two agree.
EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("flax", "optax", "distrax", "hydra", "omegaconf", "orbax.checkpoint"),
    "wandb": ("wandb",),
    "arena": ("flax", "optax", "hydra", "omegaconf", "scipy", "openskill", "mctx"),
    "llm": ("httpx",),
    "serve": ("mcp",),
    "llmtrain": ("torch", "transformers", "peft", "gguf", "trl"),
    "verifiers": ("httpx", "verifiers"),
    "interop": ("pettingzoo", "gymnasium"),
    "render": ("PIL",),
    "gymnax": ("gymnax",),
}


def _importable(module: str) -> bool:
    if sys.modules.get(module) is not None:  # imported already (or stood in for, as tests do)
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ModuleNotFoundError, ValueError):  # a missing parent package; a module without __spec__
        return False


def missing(extra: str) -> list[str]:
    """The import names of ``extra`` that are not installed."""
    return [m for m in EXTRAS[extra] if not _importable(m)]


def require(extra: str, feature: str, *, cli: bool | None = None) -> None:
    """Check that ``extra`` is installed before ``feature`` imports it.

    Raises :class:`~alem.errors.DependencyNotInstalled` naming the install command. In a
    ``python -m`` entry point (``cli=True``; by default: while Python is still importing the
    packages of a ``-m`` module, when ``sys.argv[0]`` is ``"-m"``) it prints that one line on
    stderr and exits with status 2 (refused before anything ran) instead of a traceback.
    """
    gone = missing(extra)
    if not gone:
        return
    if cli is None:
        cli = sys.argv[:1] == ["-m"]
    message = f'{feature} needs the "{extra}" extra (missing: {", ".join(gone)}): pip install "alem[{extra}]"'
    if cli:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)
    raise DependencyNotInstalled(message)
