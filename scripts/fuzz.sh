#!/usr/bin/env bash
# Builds the fuzz targets in fuzz/ and runs each for a time budget.
#
#   ./scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target comes from the argument, else FUZZ_SECONDS, else 300;
# FUZZ_RUNS=N runs N inputs per target from a fixed seed instead.
# With no TARGET, every target runs, one after the other. For each, prints
# how many inputs it ran (libFuzzer's final stats) and whether it crashed;
# exits non-zero if any did. A crashing input is saved in
# fuzz/artifacts/TARGET/ (git-ignored); replay it with
# `fuzz/target/x86_64-unknown-linux-gnu/release/TARGET FILE`.
#
# cargo-fuzz (pinned) is installed into .cache/cargo-fuzz once. It needs
# unstable compiler flags, which a stable toolchain accepts with
# RUSTC_BOOTSTRAP=1. The targets build without a sanitizer (`-s none`):
# the code is safe Rust, what the fuzzing looks for is panics, stack
# overflows, hangs and memory blow-ups, which need none, and ASan would
# double the build time. Builds go to fuzz/target, never to the
# workspace's target directory, whose flags they would invalidate.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-${FUZZ_SECONDS:-300}}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
    echo "usage: $0 [SECONDS] [TARGET...]  (SECONDS: a whole number, at least 1)" >&2
    exit 2
fi

version="0.13.2"
root=".cache/cargo-fuzz"
cargo_fuzz="$root/bin/cargo-fuzz"
if ! { [ -x "$cargo_fuzz" ] && "$cargo_fuzz" --version 2>/dev/null | grep -q " $version$"; }; then
    echo "installing cargo-fuzz $version into $root" >&2
    # Unoptimised (`--debug`): it only starts cargo, and builds in half the time.
    cargo install cargo-fuzz --version "$version" --locked --debug --root "$root" --quiet
fi

export RUSTC_BOOTSTRAP=1
unset CARGO_TARGET_DIR
target_dir="fuzz/target"
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="$target_dir/$triple/release"

# The committed lock file is the one used: fail rather than update it.
cargo fetch --locked --quiet --manifest-path fuzz/Cargo.toml

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <("$cargo_fuzz" fuzz list)
fi

# Release with debug assertions and overflow checks (cargo-fuzz's default).
# 16 codegen units instead of cargo-fuzz's 1: a cold build of all targets
# takes about half as long, for a little less speed per input.
start=$SECONDS
"$cargo_fuzz" fuzz build -s none --codegen-units 16 --target-dir "$target_dir" \
    --target "$triple"
echo "built the fuzz targets in $((SECONDS - start)) s"

failed=()
for target in "${targets[@]}"; do
    seeds="fuzz/corpus/$target"
    work=".cache/fuzz/corpus/$target"
    artifacts="fuzz/artifacts/$target"
    log=".cache/fuzz/$target.log"
    mkdir -p "$work" "$artifacts"
    # FUZZ_RUNS: a fixed number of inputs from a fixed seed instead of a
    # time budget, so that a run (CI's) is the same wherever it runs.
    if [ -n "${FUZZ_RUNS:-}" ]; then
        budget=("-runs=$FUZZ_RUNS" -seed=1)
    else
        budget=("-max_total_time=$seconds")
    fi
    options=(
        "${budget[@]}"
        -print_final_stats=1
        # One input taking longer than this is a hang.
        -timeout=10
        -rss_limit_mb=2048
        "-artifact_prefix=$artifacts/"
    )
    if [ -f "fuzz/dict/$target.dict" ]; then
        options+=("-dict=fuzz/dict/$target.dict")
    fi
    # New inputs go to the first directory (the working corpus, kept
    # between runs in .cache); the committed seeds are only read.
    status=0
    "$bin_dir/$target" "${options[@]}" "$work" "$seeds" >"$log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    corpus="$(find "$work" -type f | wc -l)"
    if [ "$status" -eq 0 ]; then
        echo "fuzz $target: ${runs:-?} inputs, corpus $corpus, no crash"
    else
        crash="$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)"
        echo "fuzz $target: ${runs:-?} inputs, CRASHED (exit $status); input: ${crash:-see $log}"
        grep -m 5 -E "panicked|overflowed|ERROR|timeout|out-of-memory" "$log" | sed 's/^/    /' || true
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz targets that crashed: ${failed[*]} (logs in .cache/fuzz/)" >&2
    exit 1
fi
