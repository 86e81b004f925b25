"""Copy a built partner pool into the package, trimmed: ``python scripts/ship_pool.py <pool> <env name>``.

``python -m alem.partners build`` leaves full training runs (every kept checkpoint, the metrics);
a pool that ships needs only what a checkpoint partner loads: each run's ``results.json``,
``config.yaml`` and its last checkpoint. The copy goes to ``alem/arena/pools/<env name>/`` with a
manifest written anew (same names, specs, keywords and split seed, so the same splits; digests
of the trimmed folders). Refuses a destination that exists.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from omegaconf import OmegaConf

import alem
from alem.arena.crossplay import write_manifest
from alem.training.checkpoint import latest

ROOT = Path(__file__).resolve().parents[1]


def ship(pool: Path, name: str) -> Path:
    manifest = json.loads((pool / "partners.json").read_text())
    dest = ROOT / "alem" / "arena" / "pools" / name
    if dest.exists():
        raise SystemExit(f"{dest} exists; remove it first")
    env = alem.make(manifest["env_id"])
    runs = {
        p["spec"].partition(":")[2].split("#")[0]
        for p in manifest["partners"]
        if p["spec"].startswith("checkpoint:")
    }
    for run in sorted(runs):
        src, out = pool / run, dest / run
        (out / "checkpoints").mkdir(parents=True)
        # the run's own folder, not the building machine's path
        results = json.loads((src / "results.json").read_text())
        results["output_dir"] = results["config"]["output_dir"] = run
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        config = OmegaConf.load(src / "config.yaml")
        config.output_dir = run
        (out / "config.yaml").write_text(OmegaConf.to_yaml(config))
        _, last = latest(src)
        shutil.copytree(last, out / "checkpoints" / Path(last).name)
        for marker in (out / "checkpoints").rglob("commit_success.txt"):  # orbax writes its path there
            marker.write_text(f"Checkpoint commit was successful to {marker.parent.relative_to(dest)}")
    entries = [(p["name"], p["spec"], p.get("kwargs") or {}) for p in manifest["partners"]]
    write_manifest(dest / "partners.json", env, entries, seed=manifest["seed"])
    return dest


if __name__ == "__main__":
    print(ship(Path(sys.argv[1]), sys.argv[2]))
