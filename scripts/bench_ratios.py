#!/usr/bin/env python3
"""Print each benchmark of a criterion group as a ratio against its baseline.

Usage: python3 scripts/bench_ratios.py GROUP [BASELINE]
Reads target/criterion/GROUP/*/new/estimates.json written by the last
`cargo bench` run; BASELINE defaults to "baseline".
"""
import json
import pathlib
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    group = sys.argv[1]
    baseline_name = sys.argv[2] if len(sys.argv) > 2 else "baseline"
    root = pathlib.Path("target/criterion") / group
    estimates = {}
    for path in sorted(root.glob("*/new/estimates.json")):
        data = json.loads(path.read_text())
        estimates[path.parent.parent.name] = data["mean"]["point_estimate"]
    if baseline_name not in estimates:
        print(f"no '{baseline_name}' in {root}; run the benchmark first")
        return 1
    base = estimates[baseline_name]
    print(f"{group}: mean time per iteration, and ratio against {baseline_name}")
    for name, ns in sorted(estimates.items(), key=lambda kv: kv[1]):
        print(f"  {name:<32} {ns:>12.1f} ns   x{ns / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
