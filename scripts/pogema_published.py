"""Summarise the POGEMA benchmark's published raw results into benchmarks/results/pogema_published.json.

Reads a checkout of https://github.com/Cognitive-AI-Systems/pogema-benchmark (its
``raw_data_MAPF/<set>/<Algo>.json`` and ``raw_data_LMAPF/<set>/<Algo>.json``: one record per
instance with ``metrics`` and ``env_grid_search``) and writes, per mode, map set, algorithm
and agent count, the mean of each metric and the number of instances, as the benchmark's
tabular view aggregates them (a flat mean over maps and seeds). Run once by a maintainer;
nothing reads the raw data at run time::

    python scripts/pogema_published.py <pogema-benchmark checkout> --commit <hash>
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "pogema_published.json"
#: The sets alem ships (benchmark folder -> alem map set name) and the metrics kept per mode.
SETS = {"01-random": "random", "02-mazes": "mazes", "05-puzzles": "puzzles"}
METRICS = {"MAPF": ("CSR", "ISR", "SoC", "makespan"), "LMAPF": ("avg_throughput",)}


def summarise(checkout: Path) -> dict:
    out: dict = {}
    for mode, metrics in METRICS.items():
        for folder, name in SETS.items():
            for path in sorted((checkout / f"raw_data_{mode}" / folder).glob("*.json")):
                groups: dict[int, list[dict]] = defaultdict(list)
                for record in json.loads(path.read_text()):
                    groups[int(record["env_grid_search"]["num_agents"])].append(record["metrics"])
                table = {}
                for n, rows in sorted(groups.items()):
                    cell = {"instances": len(rows)}
                    for m in metrics:
                        values = [r[m] for r in rows if m in r]
                        if values:
                            cell[m] = sum(values) / len(values)
                    table[str(n)] = cell
                out.setdefault(mode, {}).setdefault(name, {})[path.stem] = table
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkout", type=Path)
    p.add_argument("--commit", required=True, help="the checkout's commit hash (recorded in the output)")
    args = p.parse_args()
    body = {
        "source": "https://github.com/Cognitive-AI-Systems/pogema-benchmark",
        "commit": args.commit,
        "licence": "Apache-2.0 (the benchmark's results, summarised)",
        "aggregation": "mean over the instances (maps x seeds) of each agent count, as the benchmark's tabular view",
        "results": summarise(args.checkout),
    }
    OUT.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
