#!/usr/bin/env bash
# The three runs of examples/selfplay_demo.py (SPIRAL-style self-play on Kuhn poker), one after
# the other, then the comparison table. The runs after the first reuse its before-evaluation
# (the same initial model, deals and sampling streams; the demo checks the settings match).
# Usage: bash scripts/kuhn_selfplay.sh [OUT_ROOT]   (default outputs/kuhn_selfplay)
set -euo pipefail
root=${1:-outputs/kuhn_selfplay}
# The budget of each run: the same steps x games for every mode.
common=(--steps 4 --games 24 --eval-deals 32 --held-out-deals 6 --samples 8 --threads 1 --seed 0)
export JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
mkdir -p "$root"
first=selfplay-rae
for mode in selfplay-rae fixed-cfr selfplay-raw; do
    extra=()
    [ "$mode" != "$first" ] && extra=(--before-from "$root/$first/results.json")
    start=$(date +%s)
    python -m examples.selfplay_demo --mode "$mode" "${common[@]}" "${extra[@]}" --out "$root/$mode" \
        >"$root/$mode.log" 2>&1
    echo "$mode: $(($(date +%s) - start)) s wall" | tee -a "$root/wall.txt"
done
python -m examples.selfplay_demo compare "$root"/{selfplay-rae,fixed-cfr,selfplay-raw}/results.json \
    | tee "$root/table.md"
