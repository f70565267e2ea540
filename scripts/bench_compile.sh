#!/usr/bin/env bash
# Compile time of 100 tools written with our `#[tool]` against the same 100
# tools written with rmcp's `#[tool_router]`/`#[tool]`, in one run.
#
# Generates two crates into .cache/compile-bench/ (one workspace, with the lock
# file of benches/peers so the versions are the peers benchmark's). Each crate
# is a library of 100 tools (src/lib.rs, written by benches/peers/generator)
# and a binary that builds the registry or router of all of them and counts
# their definitions (src/main.rs), so whatever code generation the library
# leaves to its user is paid too, and the binary is linked.
#
# Every dependency is built once first; only the crate itself is timed:
#   clean        `cargo clean -p CRATE`, then `cargo build -p CRATE --lib`
#                (the library), then `cargo build -p CRATE` (the binary on top)
#   incremental  the body of one tool edited, then the same two builds
# RUNS times each (default 5), alternating the two crates; prints the medians
# of the wall time and of the CPU time (user + system), and the ratios
# ours / rmcp. Debug profile, as while developing.
#
# Usage: scripts/bench_compile.sh            (RUNS=3 scripts/bench_compile.sh)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${RUNS:-5}"
tools=100
bench="$root/.cache/compile-bench"
peers="$root/benches/peers"
export CARGO_TARGET_DIR="$bench/target"
# Edits while developing are rebuilt incrementally: measure that, whatever
# the environment or a cargo config says.
export CARGO_INCREMENTAL=1

mkdir -p "$bench"
echo "generating $tools tools twice into $bench"
generator="$root/.cache/peers-target/release/peers-generator"
CARGO_TARGET_DIR="$root/.cache/peers-target" \
    cargo build --quiet --release --manifest-path "$peers/Cargo.toml" -p peers-generator

cat >"$bench/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = ["ours100", "rmcp100"]
EOF
cp "$peers/Cargo.lock" "$bench/Cargo.lock"

write_crate() { # name, generator kind, dependencies, main.rs
    mkdir -p "$bench/$1/src"
    cat >"$bench/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$3
EOF
    "$generator" "$2" "$tools" >"$bench/$1/src/lib.rs"
    printf '%s\n' "$4" >"$bench/$1/src/main.rs"
}
write_crate ours100 ours "toolsmith = { path = \"$root/toolkit\" }" \
    '//! Builds the registry of the 100 tools and counts their definitions.
use toolsmith::{DefinitionFormat, ToolFilter, ToolRegistry};
// Links the library, whose tools register themselves.
use ours100 as _;

fn main() {
    let registry = ToolRegistry::from_inventory(&ToolFilter::all()).expect("unique names");
    println!("{}", registry.definitions(DefinitionFormat::OpenAi).len());
}'
write_crate rmcp100 rmcp 'rmcp = { version = "3.9", default-features = false, features = ["server", "macros"] }
schemars = { version = "1", default-features = false, features = ["derive", "std"] }
serde = { version = "1", features = ["derive"] }' \
    '//! Builds the router of the 100 tools and counts their definitions.
fn main() {
    println!("{}", rmcp100::Tools::tool_router().list_all().len());
}'

cd "$bench"
echo "building the dependencies once (not timed)"
cargo build --quiet -p ours100 -p rmcp100
for crate in ours100 rmcp100; do
    count="$("$CARGO_TARGET_DIR/debug/$crate")"
    [[ "$count" == "$tools" ]] || { echo "$crate lists $count tools, not $tools" >&2; exit 1; }
done

# Runs a build; prints its wall time and its CPU time (user + system, of
# cargo and rustc together), in seconds. On a shared machine the CPU time
# moves much less than the wall time when others are busy.
timed() { # command...
    local TIMEFORMAT='%R %U %S' report
    report="$({ time "$@" >"$bench/last-build.log" 2>&1; } 2>&1)" || {
        cat "$bench/last-build.log" >&2
        exit 1
    }
    awk '{ printf "%.3f %.3f", $1, $2 + $3 }' <<<"$report"
}
# Edit the body of tool 50, a different text each run, so the crate really
# changes, as it does when someone edits one tool.
edit_one_tool() { # crate, run
    sed -i -E "s/(:50)( edit [0-9]+)?\"/\\1 edit $2\"/" "$1/src/lib.rs"
    grep -q ":50 edit $2\"" "$1/src/lib.rs" || { echo "could not edit tool 50 of $1" >&2; exit 1; }
}

declare -A wall cpu
measure() { # key, command...
    local key="$1" both
    shift
    both="$(timed "$@")"
    wall[$key]+="${both% *} "
    cpu[$key]+="${both#* } "
}
for run in $(seq 1 "$runs"); do
    for crate in ours100 rmcp100; do
        cargo clean --quiet -p "$crate"
        measure "clean_lib_$crate" cargo build --quiet -p "$crate" --lib
        measure "clean_bin_$crate" cargo build --quiet -p "$crate"
        edit_one_tool "$crate" "$run"
        measure "incr_lib_$crate" cargo build --quiet -p "$crate" --lib
        measure "incr_bin_$crate" cargo build --quiet -p "$crate"
    done
    echo "run $run/$runs done" >&2
done

median() { # numbers...
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
row() { # label, ours seconds, rmcp seconds
    printf '%-48s %9.2f s %9.2f s   x%s\n' "$1" "$2" "$3" \
        "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"
}
table() { # name of the array of times
    local -n times="$1"
    local kind step label ours rmcp total_ours total_rmcp
    printf '%-48s %11s %11s   %s\n' "build" "#[tool]" "rmcp" "ratio"
    for kind in clean incr; do
        label="clean"
        [[ "$kind" == incr ]] && label="incremental (one tool edited)"
        total_ours=0
        total_rmcp=0
        for step in lib bin; do
            # shellcheck disable=SC2086 # the times are one word each
            ours="$(median ${times[${kind}_${step}_ours100]})"
            # shellcheck disable=SC2086
            rmcp="$(median ${times[${kind}_${step}_rmcp100]})"
            row "$label, $step" "$ours" "$rmcp"
            total_ours="$(awk -v a="$total_ours" -v b="$ours" 'BEGIN { print a + b }')"
            total_rmcp="$(awk -v a="$total_rmcp" -v b="$rmcp" 'BEGIN { print a + b }')"
        done
        row "$label, library + binary" "$total_ours" "$total_rmcp"
    done
}

echo
echo "compile time of $tools tools, median of $runs runs (dependencies prebuilt; debug profile)"
echo "wall time:"
table wall
echo "CPU time (user + system):"
table cpu
echo
echo "every run, wall / CPU seconds:"
for key in $(printf '%s\n' "${!wall[@]}" | sort); do
    echo "  $key: ${wall[$key]}/ ${cpu[$key]}"
done
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); rustc $(rustc --version | cut -d' ' -f2)"
