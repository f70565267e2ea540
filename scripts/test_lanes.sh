#!/usr/bin/env bash
# Every test of the workspace (`cargo test --workspace`), in two lanes.
#
# cargo runs test binaries one after another. The longest of them spend
# most of their time waiting (on sandboxed commands, a browser, child
# processes), so they run in a lane of their own beside the rest: about
# half the wall time on two cores. Each lane is one `cargo test` over the
# whole workspace, so both see the features and the build that
# `cargo test --workspace` would, and nothing is built twice.
#
# Run from anywhere: `./scripts/test_lanes.sh`. Extra arguments reach both
# lanes' test binaries (after `--`).
set -euo pipefail
cd "$(dirname "$0")/.."

# The long ones, by name. A name that no longer exists fails the run, so
# the list cannot silently go stale.
long=(shell_walls_review browser_tool shell_lifetime deep_arguments compile_fail)

cargo test --workspace --locked --no-run

# Every other test target of the workspace's packages, from cargo's own
# discovery rather than a glob that would restate it.
mapfile -t rest < <(
  cargo metadata --no-deps --format-version 1 --locked | LONG="${long[*]}" python3 -c '
import json, os, sys
long = set(os.environ["LONG"].split())
names = {t["name"] for p in json.load(sys.stdin)["packages"]
         for t in p["targets"] if "test" in t["kind"]}
missing = long - names
if missing:
    sys.exit("no test target named " + ", ".join(sorted(missing)))
print("\n".join(sorted(names - long)))
'
)

as_flags() {
  local name
  for name in "$@"; do printf -- '--test\n%s\n' "$name"; done
}
mapfile -t long_flags < <(as_flags "${long[@]}")
mapfile -t rest_flags < <(as_flags "${rest[@]}")

# The long lane writes to a file, shown whole when it ends, so the log
# reads as two runs, not one interleaved.
lane_log=$(mktemp)
trap 'rm -f "$lane_log"' EXIT
cargo test --workspace --locked "${long_flags[@]}" -- "$@" > "$lane_log" 2>&1 &
long_lane=$!

status=0
cargo test --workspace --locked --lib --bins "${rest_flags[@]}" -- "$@" || status=$?
cargo test --workspace --locked --doc -- "$@" || status=$?

long_status=0
wait "$long_lane" || long_status=$?
printf '\n==> the long lane: %s\n' "${long[*]}"
cat "$lane_log"
if ((long_status != 0)); then status=$long_status; fi
exit "$status"
