#!/usr/bin/env bash
# Instructions per call for the `dispatch` comparison, counted by callgrind:
# each mode runs twice (N and N+STEP iterations), and the difference divided
# by STEP is the cost of one call, with setup cancelled out. Needs valgrind
# (Debian package `valgrind`). Then the wall time of the same calls, as the
# median ratio of paired rounds (ROUNDS, 3000 by default).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
cargo bench -p toolsmith --bench dispatch_instructions --no-run --quiet 2>/dev/null
bin=$(ls -t target/release/deps/dispatch_instructions-* | grep -v '\.d$' | head -1)
base=200; step=2000
count() { # mode iterations -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A per_call
for mode in baseline registry registry_casts; do
  low=$(count "$mode" "$base"); high=$(count "$mode" $((base + step)))
  per_call[$mode]=$(( (high - low) / step ))
done
echo "dispatch: instructions per call (callgrind), and ratio against baseline"
for mode in baseline registry registry_casts; do
  awk -v m="$mode" -v n="${per_call[$mode]}" -v b="${per_call[baseline]}" \
    'BEGIN { printf "  %-16s %8d instructions   x%.2f\n", m, n, n / b }'
done
"$bin" paired "${ROUNDS:-3000}"
