#!/usr/bin/env bash
# This SDK side by side with rmcp and rig, in one run: dispatch of one call and
# the definitions of 200 tools. Runs the criterion benchmarks of benches/peers
# (a standalone project, built into .cache/peers-target) and prints each
# comparison as a ratio of two figures from this same run.
#
# Usage: scripts/bench_peers.sh [BENCH] [-- criterion options]
#   scripts/bench_peers.sh                 both benchmarks
#   scripts/bench_peers.sh dispatch        one of them
#   scripts/bench_peers.sh --report        print the ratios of the last run only
# Compile time is measured by scripts/bench_compile.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="$root/.cache/peers-target"

if [[ "${1:-}" != "--report" ]]; then
    benches=(--bench dispatch --bench definitions)
    if [[ $# -gt 0 && "$1" != "--" ]]; then
        benches=(--bench "$1")
        shift
    fi
    [[ "${1:-}" == "--" ]] && shift
    (cd "$root/benches/peers" && cargo bench "${benches[@]}" -- "$@")
fi

python3 - "$CARGO_TARGET_DIR/criterion" <<'EOF'
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1])


def estimates(group):
    found = {}
    for path in sorted((root / group).glob("*/new/estimates.json")):
        found[path.parent.parent.name] = json.loads(path.read_text())["mean"]["point_estimate"]
    return found


def show(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def table(group, title, rows):
    found = estimates(group)
    if not found:
        print(f"{group}: no results in {root / group}; run the benchmark first\n")
        return
    print(f"{title} (mean per iteration; ratio = first / second)")
    for first, second in rows:
        if first not in found or second not in found:
            print(f"  {first} / {second}: missing")
            continue
        a, b = found[first], found[second]
        ratio = f"x{a / b:.2f}" if a / b >= 0.1 else f"x{a / b:.4f} ({b / a:.0f} times faster)"
        print(f"  {first:<28} {show(a):>10}   {second:<26} {show(b):>10}   {ratio}")
    print()


table("peers_dispatch", "dispatch: one call of the 3-argument tool", [
    ("ours_well_typed", "baseline"),
    ("rmcp_well_typed", "baseline"),
    ("ours_well_typed", "rmcp_well_typed"),
    ("ours_well_typed_from_text", "baseline_from_text"),
    ("rig_well_typed", "baseline_from_text"),
    ("ours_well_typed_from_text", "rig_well_typed"),
    ("ours_needs_casts", "baseline_casting_by_hand"),
    ("ours_needs_casts", "rmcp_well_typed"),
    ("rmcp_needs_casts_fails", "baseline"),
    ("rig_needs_casts_fails", "baseline_from_text"),
])
table("peers_definitions", "definitions: 200 tools", [
    ("ours_build_and_fetch", "rmcp_build_and_fetch"),
    ("ours_build_and_fetch", "rig_build_and_fetch"),
    ("ours_build_only", "rmcp_build_only"),
    ("ours_build_only", "rig_build_only"),
    ("ours_fetch_again", "rmcp_fetch_again"),
    ("ours_fetch_again", "rig_fetch_again"),
    ("ours_fetch_again_as_json", "rmcp_fetch_again_as_json"),
    ("ours_fetch_again_as_json", "rig_fetch_again_as_json"),
])
EOF
