"""Ship built partner pools inside the package: ``python scripts/ship_pool.py <env name> <pool> [<pool> ...]``.

Each pool (``python -m alem.partners build``) is exported (``alem.arena.partners.export_pool``:
the trained partners as actor-only folders, no training state), and the pools' partners are
merged into one manifest at ``alem/pools/<env name>/`` (names and run folders must be
distinct across the pools; the first pool's split seed). Several pools let one env's pool grow
by a build without retraining what ships (a MAPPO build beside an IPPO one). Refuses a
destination that exists.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import alem
from alem.arena.partners import export_pool
from alem.pools import write_manifest

ROOT = Path(__file__).resolve().parents[1]


def ship(name: str, pools: list[Path]) -> Path:
    dest = ROOT / "alem" / "pools" / name
    if dest.exists():
        raise SystemExit(f"{dest} exists; remove it first")
    with tempfile.TemporaryDirectory() as tmp:
        manifests = [export_pool(pool, Path(tmp) / f"pool{i}") for i, pool in enumerate(pools)]
        env_ids = {m["env_id"] for m in manifests}
        if len(env_ids) != 1:
            raise SystemExit(f"the pools are for different envs: {sorted(env_ids)}")
        dest.mkdir(parents=True)
        entries = []
        for i, m in enumerate(manifests):
            for folder in (Path(tmp) / f"pool{i}").iterdir():
                if folder.is_dir():
                    if (dest / folder.name).exists():
                        raise SystemExit(f"two pools hold a run named {folder.name}")
                    shutil.copytree(folder, dest / folder.name)
            entries += [(p["name"], p["spec"], p.get("kwargs") or {}) for p in m["partners"]]
        env = alem.make(env_ids.pop())
        write_manifest(dest / "partners.json", env, entries, seed=manifests[0]["seed"])
    print(json.dumps({p[0]: p[1] for p in entries}, indent=1))
    return dest


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__.splitlines()[0])
    print(ship(sys.argv[1], [Path(p) for p in sys.argv[2:]]))
