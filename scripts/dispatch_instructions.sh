#!/usr/bin/env bash
# Instructions per call for the `dispatch` comparison, counted by callgrind:
# each mode runs twice (N and N+STEP iterations), and the difference divided
# by STEP is the cost of one call, with setup cancelled out. Needs valgrind
# (Debian package `valgrind`). Then the wall time of the same calls, as the
# median ratio of paired rounds (ROUNDS, 2000 by default), in each of
# PROCESSES processes (15 by default), and the median of those.
#
# Why several processes: each one is laid out at its own random addresses
# (ASLR), and where the stack and the heap fall moves a call's wall time by
# several percent for the whole life of the process (one binary gave
# x1.11 to x1.28 in twelve runs, and x1.215 to x1.228 in six with address
# randomization turned off). Pairing rounds cancels load within a process;
# only more processes cancel the layout.
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
processes=${PROCESSES:-15}
rounds=${ROUNDS:-2000}
echo "dispatch: wall time, median ratio of $rounds paired rounds in each of $processes processes"
for _ in $(seq "$processes"); do "$bin" paired "$rounds"; done | awk '
  $1 == "registry" || $1 == "registry_casts" { sub(/^x/, "", $4); ratios[$1] = ratios[$1] " " $4 }
  function median(list,   values, n, i, j, t) {
    n = split(list, values, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (values[j] + 0 < values[i] + 0) { t = values[i]; values[i] = values[j]; values[j] = t }
    return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
  }
  END {
    for (mode in ratios) printf "  %-16s x%.3f   (each process:%s)\n", mode, median(ratios[mode]), ratios[mode]
  }' | sort
