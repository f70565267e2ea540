#!/usr/bin/env bash
# The whole test suite: formatting, lints, every test, the MSRV check.
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
  local status=$? i end
  printf '\n==> step times (wall seconds)\n'
  for i in "${!step_names[@]}"; do
    end=${step_starts[$((i + 1))]:-$SECONDS}
    printf '%6d  %s\n' "$((end - step_starts[i]))" "${step_names[i]%% (*}"
  done
  printf '%6d  in all\n' "$SECONDS"
  return "$status"
}
trap step_times EXIT

# A one-shot run gains nothing from incremental caches, and they would double
# the disk the build takes: CI machines have little to spare.
if [[ "${CI:-}" == "true" ]]; then
  export CARGO_INCREMENTAL=0
  df -h . | tail -n 1 | awk '{print "disk: " $4 " free before the build"}'
fi

step "formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (cargo clippy -D warnings, MSRV-aware)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "MSRV: no dependency needs a newer Rust than we promise"
python3 scripts/check_msrv.py

step "docs (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "packaging (cargo package of the published crates, each verified against the others)"
# cargo verifies each crate against the others through a local overlay
# registry, and takes what it unpacked or built from that registry before
# as current, by name and version alone: a copy from an earlier run of the
# same version would stand in for today's code. So the check builds in a
# folder of its own, where only this project's crates are dropped first.
pkg_target=target/package-check
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/toolsmith-* \
  "$pkg_target"/package "$pkg_target"/debug/.fingerprint/toolsmith* "$pkg_target"/debug/deps/*toolsmith*
CARGO_TARGET_DIR=$pkg_target cargo package --locked --quiet -p toolsmith -p toolsmith-macros -p toolsmith-builtins

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

step "tests (cargo test --workspace)"
cargo test --workspace --locked

step "fuzzing: 30,000 inputs from a fixed seed per target (scripts/fuzz.sh; run it longer by hand)"
FUZZ_RUNS=30000 ./scripts/fuzz.sh 1
