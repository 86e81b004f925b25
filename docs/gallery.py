"""The site's gallery: one short GIF per registered id, rendered by ``alem.render``.

The GIFs are kept under ``docs/envs/gallery/`` with a manifest (``manifest.json``) that records,
for each id, the constructor keywords it was rendered with, the rollout and the file's digest.
Rendering every id takes minutes (one compile each), so the site build does not render: it
reads the manifest, and ``docs/hooks.py`` fails the build when an id has no current picture.

    python docs/gallery.py            # render what is missing or stale, drop what is unregistered
    python docs/gallery.py --check    # list what is missing or stale; exit 1 if anything is
    python docs/gallery.py --force ID # render ID again even if current

An entry is stale when its id is no longer registered (a new version is a new id), its
keywords differ from the registry's, or its file is missing or not the file recorded. Every
GIF is a random-play rollout of ``STEPS`` steps from seed 0 (uniform legal actions; a fresh
episode when one ends), scaled so its long side is at most ``MAX_SIDE`` pixels. The whole
gallery must stay within ``BUDGET_BYTES``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

GALLERY = Path(__file__).resolve().parent / "envs" / "gallery"
MANIFEST = "manifest.json"
#: Env steps per GIF (frames: one more) and its speed.
STEPS = 30
FPS = 5.0
#: The long side of a GIF, in pixels (thumbnails show at about 200 px).
MAX_SIDE = 240
#: The whole gallery's weight: every id's GIF together.
BUDGET_BYTES = 4_000_000


def file_name(env_id: str) -> str:
    """``mpe/simple_spread-v0`` -> ``mpe-simple_spread-v0.gif`` (the site's anchor of the id)."""
    return env_id.replace("/", "-") + ".gif"


def _plain(value: Any) -> Any:
    """Constructor keywords as JSON would store them (tuples become lists)."""
    return json.loads(json.dumps(value, default=repr))


def load_manifest(folder: Path = GALLERY) -> dict[str, dict[str, Any]]:
    """id -> entry; empty when the folder has no (readable) manifest."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("ids") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def problems(folder: Path = GALLERY, registry: dict[str, Any] | None = None) -> dict[str, str]:
    """id -> why its picture is not current (missing, stale or unregistered); empty when all are."""
    import alem

    registry = alem.registry() if registry is None else registry
    entries = load_manifest(folder)
    out: dict[str, str] = {}
    for env_id, spec in registry.items():
        entry = entries.get(env_id)
        if entry is None:
            out[env_id] = "no picture"
            continue
        path = folder / str(entry.get("file", ""))
        if entry.get("kwargs") != _plain(dict(spec.kwargs)):
            out[env_id] = f"rendered with {entry.get('kwargs')}, registered with {_plain(dict(spec.kwargs))}"
        elif not path.is_file():
            out[env_id] = f"{path.name} is missing"
        elif hashlib.sha256(path.read_bytes()).hexdigest() != entry.get("sha256"):
            out[env_id] = f"{path.name} is not the file the manifest records"
    for env_id in entries.keys() - registry.keys():
        out[env_id] = "not registered (any more)"
    return out


def total_bytes(folder: Path = GALLERY) -> int:
    return sum(int(e.get("bytes", 0)) for e in load_manifest(folder).values())


def render(spec: Any, folder: Path = GALLERY) -> dict[str, Any]:
    """Render the GIF of ``spec`` (a registry entry) into ``folder``; returns its manifest entry
    (not yet saved)."""
    import jax
    import numpy as np
    from PIL import Image

    import alem
    from alem.render import rollout_frames, save_gif

    env_id = spec.id
    env = alem.make(env_id, **dict(spec.kwargs))
    frames = rollout_frames(env, jax.random.key(0), STEPS)
    h, w = frames[0].shape[:2]
    scale = min(1.0, MAX_SIDE / max(h, w))
    if scale < 1.0:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        frames = [np.asarray(Image.fromarray(f).resize(size, Image.Resampling.BOX)) for f in frames]
    path = folder / file_name(env_id)
    tmp = path.with_name(path.stem + ".tmp.gif")  # Pillow picks the format by suffix
    save_gif(frames, tmp, fps=FPS)
    os.replace(tmp, path)
    data = path.read_bytes()
    height, width = frames[0].shape[:2]
    return {
        "file": path.name,
        "kwargs": _plain(dict(spec.kwargs)),
        "steps": STEPS,
        "seed": 0,
        "policy": "random",
        "width": width,
        "height": height,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def save_manifest(entries: dict[str, dict[str, Any]], folder: Path = GALLERY) -> None:
    tmp = folder / (MANIFEST + ".tmp")
    body = {
        "about": "docs/gallery.py writes this file and the GIFs beside it; see its docstring",
        "budget_bytes": BUDGET_BYTES,
        "ids": dict(sorted(entries.items())),
    }
    tmp.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)


def update(
    folder: Path = GALLERY,
    force: tuple[str, ...] = (),
    log=print,
    registry: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Render every missing or stale id (and ``force``), drop unregistered ones; returns the
    ids that could not be rendered, with why. ``registry`` defaults to ``alem.registry()``."""
    import alem

    folder.mkdir(parents=True, exist_ok=True)
    registry = alem.registry() if registry is None else registry
    unknown = sorted(set(force) - registry.keys())
    if unknown:
        raise SystemExit(f"not registered: {unknown}")
    entries = load_manifest(folder)
    todo = problems(folder, registry)
    failed: dict[str, str] = {}
    for env_id in sorted(todo.keys() | set(force)):
        if env_id not in registry:
            entry = entries.pop(env_id)
            (folder / str(entry.get("file", ""))).unlink(missing_ok=True)
            log(f"removed {env_id}")
            continue
        try:
            entries[env_id] = render(registry[env_id], folder)
        except Exception as e:  # an env that cannot render: reported, the rest still render
            failed[env_id] = f"{type(e).__name__}: {e}"
            log(f"FAILED {env_id}: {failed[env_id]}")
            continue
        save_manifest(entries, folder)  # after each id: an interrupted run keeps what it made
        log(f"rendered {env_id}: {entries[env_id]['bytes']:,} bytes")
    save_manifest(entries, folder)
    return failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python docs/gallery.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="only list what is missing or stale")
    p.add_argument("--force", nargs="*", default=[], metavar="ID", help="render these ids again")
    args = p.parse_args(argv)
    if args.check:
        todo = problems()
        for env_id, why in sorted(todo.items()):
            print(f"{env_id}: {why}")
        weight = total_bytes()
        print(f"{len(todo)} ids need a new picture; gallery {weight:,} of {BUDGET_BYTES:,} bytes")
        return 1 if todo or weight > BUDGET_BYTES else 0
    failed = update(force=tuple(args.force))
    weight = total_bytes()
    print(f"gallery: {weight:,} of {BUDGET_BYTES:,} bytes; {len(failed)} ids failed")
    return 1 if failed or weight > BUDGET_BYTES else 0


if __name__ == "__main__":
    sys.exit(main())
