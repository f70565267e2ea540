#!/usr/bin/env bash
# The whole test suite: formatting, lints, every test, the MSRV check, the
# unsafe code under Miri, a short fuzzing run.
# Installs nothing by hand: every tool it needs comes from the project's own
# scripts, idempotently. Run from anywhere: `./scripts/test.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time, printed as a table when the run ends (passed or
# not), so a slow run shows which step to look at.
step_names=()
step_starts=()
step() {
  step_names+=("$*")
  step_starts+=("$SECONDS")
  printf '\n==> %s\n' "$*"
}
step_times() {
  local i end
  printf '\n==> step times (wall seconds)\n'
  for i in "${!step_names[@]}"; do
    end=${step_starts[$((i + 1))]:-$SECONDS}
    printf '%6d  %s\n' "$((end - step_starts[i]))" "${step_names[i]%% (*}"
  done
  printf '%6d  in all\n' "$SECONDS"
}
# The run's own status is kept: under `set -e` a failing command in the
# trap would end it early.
trap 'status=$?; step_times || true; disk_used || true; exit $status' EXIT

# A one-shot run gains nothing from incremental caches, and they would double
# the disk the build takes: CI machines have little to spare. Nor from debug
# information: about 130 test binaries each link the whole core and its
# dependencies, and the line tables (the workspace's and the standard
# library's) are about a third of each; a panic still names its file and
# line without them.
if [[ "${CI:-}" == "true" ]]; then
  export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_STRIP=debuginfo
  df -h . | tail -n 1 | awk '{print "disk: " $4 " free before the build"}'
fi
# What the build took, printed when the run ends, passed or not.
disk_used() {
  du -sh target fuzz/target 2>/dev/null | awk '{printf "disk: %s in %s\n", $1, $2}'
}

step "formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (cargo clippy -D warnings, MSRV-aware)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "MSRV: no dependency needs a newer Rust than we promise"
python3 scripts/check_msrv.py

step "docs (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "chromium for the browser tool's tests (scripts/install_chromium.sh)"
./scripts/install_chromium.sh

step "the book (mdbook build, every include and local link resolves)"
./scripts/book.sh

step "MCP peers for the MCP tests (scripts/mcp_peers.sh: Node 22, the conformance suite, reference servers, Inspector, Python mcp and FastMCP)"
./scripts/mcp_peers.sh >/dev/null

step "The authorization server for the MCP client's OAuth tests (scripts/oauth_peers.sh: oidc-provider)"
./scripts/oauth_peers.sh >/dev/null

step "HAProxy and openssl for the load-balancing and TLS tests (scripts/install_haproxy.sh)"
./scripts/install_haproxy.sh

step "tests (scripts/test_lanes.sh: cargo test --workspace, the longest binaries in a lane of their own)"
./scripts/test_lanes.sh

step "packaging (cargo package of the published crates, each verified against the others)"
# Runs after the tests and in their target directory, without debug info as
# the tests' dependencies are built, so that the verification builds only
# what the tests did not (about 90 of its 230 crates) instead of all again.
# cargo verifies each crate against the others through a local overlay
# registry, and takes what it built from a registry before as current, by
# name and version alone: a build from an earlier run of the same version
# would stand in for today's code. So what an earlier check built from that
# registry (its dep-info names a registry source) is dropped first, and the
# unpacked copies with it.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/toolsmith-* target/package
for dep_info in target/debug/deps/toolsmith*.d; do
  [ -e "$dep_info" ] && grep -q '/registry/src/' "$dep_info" || continue
  hash=${dep_info##*-}
  hash=${hash%.d}
  rm -rf target/debug/deps/*-"$hash".* target/debug/deps/*-"$hash" target/debug/.fingerprint/*-"$hash"
done
CARGO_PROFILE_DEV_DEBUG=false cargo package --locked --quiet \
  -p toolsmith -p toolsmith-macros -p toolsmith-builtins

step "Miri: the unsafe code's tests under both aliasing models (scripts/miri.sh)"
./scripts/miri.sh

step "fuzzing: 30,000 inputs from a fixed seed per target (scripts/fuzz.sh; run it longer by hand)"
FUZZ_RUNS=30000 ./scripts/fuzz.sh 1
