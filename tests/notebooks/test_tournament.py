"""notebooks/tournament.ipynb runs on a tiny tournament and shows its ratings and score matrix.

Needs nbclient and ipykernel (in the dev extra).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from alem.arena.command import run

pytestmark = pytest.mark.integration  # executes a notebook

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "tournament.ipynb"


def test_notebook_rates_a_tiny_tournament(tmp_path, monkeypatch):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(
            config_name="evaluate",
            overrides=["env.id=tic_tac_toe-v0", "mode=round_robin", "players=[minimax,random]", "episodes=4"],
        )
    results = run(cfg, tmp_path / "run")
    fig, table = tmp_path / "fig.png", tmp_path / "ratings.csv"
    monkeypatch.setenv("ALEM_TOURNAMENT", str(tmp_path / "run"))
    monkeypatch.setenv("ALEM_NOTEBOOK_FIG", str(fig))
    monkeypatch.setenv("ALEM_NOTEBOOK_TABLE", str(table))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    shown = pd.read_csv(table)
    # The notebook recomputes the CLI's ratings from the pairings' files: same order, same Elo.
    assert list(shown["player"]) == [r["label"] for r in results["ratings"]] == ["minimax", "random"]
    assert shown["elo"].round(6).tolist() == [round(r["elo"], 6) for r in results["ratings"]]
    assert (shown["losses"][0], shown["games"][0]) == (0, 8)
    assert fig.stat().st_size > 5_000
