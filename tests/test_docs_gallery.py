"""The site's gallery (docs/gallery.py): every registered id has a current GIF within the
budget, and the generator renders what is missing or stale and nothing else."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from pathlib import Path

import pytest

import alem

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("alem_docs_gallery_test", ROOT / "docs" / "gallery.py")
gallery = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gallery)


def test_every_registered_id_has_a_current_gif_within_the_budget():
    Image = pytest.importorskip("PIL.Image")
    stale = gallery.problems()
    assert stale == {}, f"run `python docs/gallery.py`: {stale}"
    entries = gallery.load_manifest()
    assert entries.keys() == alem.registry().keys()
    total = 0
    for env_id, entry in entries.items():
        path = gallery.GALLERY / entry["file"]
        total += path.stat().st_size
        with Image.open(path) as gif:
            assert gif.format == "GIF" and gif.size == (entry["width"], entry["height"]), env_id
            assert max(gif.size) <= gallery.MAX_SIDE, env_id
            # Pillow merges identical consecutive frames into a longer one: count time instead.
            duration = 0
            for i in range(gif.n_frames):
                gif.seek(i)
                duration += gif.info["duration"]
            assert duration == (gallery.STEPS + 1) * round(1000 / gallery.FPS), env_id
    assert total == gallery.total_bytes() <= gallery.BUDGET_BYTES


def test_update_renders_the_missing_and_the_stale_and_drops_the_unregistered(tmp_path):
    pytest.importorskip("PIL.Image")
    spec = alem.registry()["prisoners_dilemma-v0"]  # one cheap id
    registry = {spec.id: spec}
    log: list[str] = []
    assert gallery.update(tmp_path, log=log.append, registry=registry) == {}
    assert log == ["rendered prisoners_dilemma-v0: " + log[0].split(": ")[1]]
    assert gallery.problems(tmp_path, registry) == {}
    gif = tmp_path / gallery.file_name(spec.id)
    first = gif.read_bytes()
    assert gallery.load_manifest(tmp_path)[spec.id]["sha256"] == hashlib.sha256(first).hexdigest()

    log.clear()
    gallery.update(tmp_path, log=log.append, registry=registry)
    assert log == []  # current: nothing rendered again

    gif.write_bytes(first[:100])  # a torn or edited file
    assert "not the file the manifest records" in gallery.problems(tmp_path, registry)[spec.id]
    changed = {spec.id: dataclasses.replace(spec, kwargs={**spec.kwargs, "num_rounds": 3})}
    assert "registered with" in gallery.problems(tmp_path, changed)[spec.id]
    gallery.update(tmp_path, log=log.append, registry=changed)
    assert gallery.problems(tmp_path, changed) == {}
    assert gallery.load_manifest(tmp_path)[spec.id]["kwargs"]["num_rounds"] == 3

    log.clear()
    gallery.update(tmp_path, log=log.append, registry={})  # the id is no longer registered
    assert log == ["removed prisoners_dilemma-v0"] and not gif.exists()
    assert gallery.load_manifest(tmp_path) == {}
