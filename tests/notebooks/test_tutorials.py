"""The tutorials in notebooks/tutorials/ run from top to bottom.

Each tutorial asserts its own results in its cells (tutorial 1 raises when its env does not
pass the conformance checks, tutorial 2 when its learner does not beat random play, tutorial 3
when the evaluator's table, transcripts or resume disagree), so executing it is the test.
The kernels use the suite's JAX compilation cache (``tests/conftest.py``), so reruns skip
most compilation. Needs nbclient and ipykernel (in the dev extra).
"""

from __future__ import annotations

import time
from pathlib import Path

import jax
import pytest

pytestmark = pytest.mark.integration  # executes a notebook

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

TUTORIALS = Path(__file__).resolve().parents[2] / "notebooks" / "tutorials"
NAMES = [
    "01_write_your_own_env",
    "02_plug_in_your_own_learner",
    "03_evaluate_your_llm_endpoint",
]
# Text each executed tutorial must print (besides raising nothing).
EXPECTED = {
    "01_write_your_own_env": ["tutorial/rendezvous-v0 conforms", "broken_rendezvous-v0 does not conform"],
    "02_plug_in_your_own_learner": ["REINFORCE", "IPPO", "random policy:"],
    "03_evaluate_your_llm_endpoint": [
        "tic_tac_toe-v0: 12 episodes",
        "seed=1 (the run has 0)",
        "already holds a run",
    ],
}


@pytest.fixture(scope="module")
def kernel_env():
    """Kernels inherit the test process's environment: CPU JAX and the suite's compilation cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JAX_PLATFORMS", "cpu")
        cache = jax.config.jax_compilation_cache_dir
        if cache:
            mp.setenv("JAX_COMPILATION_CACHE_DIR", str(cache))
            mp.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
        yield


def _outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def test_the_tutorials_are_committed_stripped():
    assert sorted(p.stem for p in TUTORIALS.glob("*.ipynb")) == NAMES
    for name in NAMES:
        nb = nbformat.read(TUTORIALS / f"{name}.ipynb", as_version=4)
        nbformat.validate(nb)
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# Tutorial")
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and not _outputs(nb) and all(c.execution_count is None for c in code), name


@pytest.mark.parametrize("name", NAMES)
def test_tutorial_runs(name, kernel_env, tmp_path):
    nb = nbformat.read(TUTORIALS / f"{name}.ipynb", as_version=4)
    start = time.perf_counter()
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()  # raises CellExecutionError, naming the cell, if any cell raises
    print(f"{name}: executed in {time.perf_counter() - start:.1f}s")
    outputs = _outputs(nb)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    for expected in EXPECTED[name]:
        assert expected in text, f"{name} did not print {expected!r}"
    if name == "02_plug_in_your_own_learner":
        assert sum("image/png" in o.get("data", {}) for o in outputs) == 1  # the learning curves
