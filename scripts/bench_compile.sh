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
#   incremental  the body of one tool edited, then the same two builds;
#                twice: a text of the same length, then a longer one that
#                moves the tools after it (see `edit_one_tool`)
# RUNS times each (default 5), alternating the two crates; prints the medians
# of the wall time and of the CPU time (user + system), and the ratios
# ours / rmcp. Debug profile, as while developing.
#
# With BASELINE=<commit>, a third crate, base100, holds the same 100 tools
# built with the toolkit of that commit (exported into the cache, in a
# workspace of its own, sharing the target directory), measured in the same
# runs: a change is then compared with what it changes under the same load.
#
# Usage: scripts/bench_compile.sh            (RUNS=3 scripts/bench_compile.sh)
#        BASELINE=HEAD~1 scripts/bench_compile.sh
#        DISTINCT_TYPES=1 scripts/bench_compile.sh   (see distinct_types)
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

# With DISTINCT_TYPES=1, no two tools take the same parameter types: tool N's
# `days` and `metric` become integers of the widths N % 10 and N / 10 name
# (u8 ... isize), so each tool's arguments are a type of their own, as in a
# real crate, instead of 100 tools sharing one.
distinct_types() { # lib.rs
    python3 - "$1" <<'PY'
import re, sys
path = sys.argv[1]
ints = ["u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize"]
text = open(path).read()
def retype(match):
    n = int(match.group(1))
    block = match.group(0)
    block = re.sub(r"days: u32,", f"days: {ints[n % 10]},", block, count=1)
    return re.sub(r"metric: bool,", f"metric: {ints[n // 10]},", block, count=1)
# Each tool's parameters (ours) or arguments struct (rmcp), up to its
# closing parenthesis or brace.
text = re.sub(r"(?s)fn forecast_(\d{3})\((?:(?!\) ->).)*\) ->", retype, text)
text = re.sub(r"(?s)struct Forecast(\d{3})Args \{.*?\}", retype, text)
open(path, "w").write(text)
PY
}
if [[ "${DISTINCT_TYPES:-0}" == 1 ]]; then
    distinct_types "$bench/ours100/src/lib.rs"
    distinct_types "$bench/rmcp100/src/lib.rs"
fi

crates=(ours100 rmcp100)
declare -A manifest=([ours100]="$bench/Cargo.toml" [rmcp100]="$bench/Cargo.toml")
if [[ -n "${BASELINE:-}" ]]; then
    base="$bench/baseline"
    # Beside the baseline's workspace, not in it: a path dependency inside a
    # workspace's folder becomes one of its members, and the exported
    # toolkit must read its settings from its own workspace.
    export_dir="$bench/baseline-src"
    rm -rf "$base" "$export_dir"
    mkdir -p "$base" "$export_dir"
    git -C "$root" archive "$BASELINE" | tar -x -C "$export_dir"
    printf '[workspace]\nresolver = "3"\nmembers = ["base100"]\n' >"$base/Cargo.toml"
    cp "$peers/Cargo.lock" "$base/Cargo.lock"
    main_rs="$(sed 's/use ours100 as _;/use base100 as _;/' "$bench/ours100/src/main.rs")"
    (
        bench="$base"
        write_crate base100 ours "toolsmith = { path = \"$export_dir/toolkit\" }" "$main_rs"
    )
    if [[ "${DISTINCT_TYPES:-0}" == 1 ]]; then
        distinct_types "$base/base100/src/lib.rs"
    fi
    crates=(ours100 base100 rmcp100)
    manifest[base100]="$base/Cargo.toml"
fi

cd "$bench"
echo "building the dependencies once (not timed)"
for crate in "${crates[@]}"; do
    cargo build --quiet --manifest-path "${manifest[$crate]}" -p "$crate"
done
for crate in "${crates[@]}"; do
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
# Set the text of tool 50's body to `edit TEXT`, so the crate really
# changes, as it does when someone edits one tool. Each run builds clean
# with `x` repeated RUN times, then measures two edits: `same` swaps the
# letters for as many `y`s, so nothing else moves in the file; `moved` adds
# one more, so the 49 tools after it move down, as they do when someone
# types in a tool. The compiler records where each macro expansion was
# called from, so expansions that moved are checked again.
edit_one_tool() { # crate, text
    sed -i -E "s/(:50)( edit [xy]+)?\"/\\1 edit $2\"/" "$1/src/lib.rs"
    grep -q ":50 edit $2\"" "$1/src/lib.rs" || { echo "could not edit tool 50 of $1" >&2; exit 1; }
}
letters() { # letter, count
    printf '%*s' "$2" '' | tr ' ' "$1"
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
    for crate in "${crates[@]}"; do
        m=(--manifest-path "${manifest[$crate]}")
        dir="$(dirname "${manifest[$crate]}")/$crate"
        edit_one_tool "$dir" "$(letters x "$run")"
        cargo clean --quiet "${m[@]}" -p "$crate"
        measure "clean_lib_$crate" cargo build --quiet "${m[@]}" -p "$crate" --lib
        measure "clean_bin_$crate" cargo build --quiet "${m[@]}" -p "$crate"
        edit_one_tool "$dir" "$(letters y "$run")"
        measure "same_lib_$crate" cargo build --quiet "${m[@]}" -p "$crate" --lib
        measure "same_bin_$crate" cargo build --quiet "${m[@]}" -p "$crate"
        edit_one_tool "$dir" "$(letters y $((run + 1)))"
        measure "moved_lib_$crate" cargo build --quiet "${m[@]}" -p "$crate" --lib
        measure "moved_bin_$crate" cargo build --quiet "${m[@]}" -p "$crate"
    done
    echo "run $run/$runs done" >&2
done

median() { # numbers...
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
# The crates measured against rmcp's: ours, and the baseline if any.
compared=("${crates[@]/rmcp100/}")
row() { # label, rmcp seconds, then (seconds) for each compared crate
    local label="$1" rmcp="$2" t
    shift 2
    printf '%-42s %8.2f s' "$label" "$rmcp"
    for t in "$@"; do
        printf ' %8.2f s x%s' "$t" "$(awk -v a="$t" -v b="$rmcp" 'BEGIN { printf "%.2f", a / b }')"
    done
    echo
}
table() { # name of the array of times
    local -n times="$1"
    local kind step label crate
    local -A total
    printf '%-42s %10s' "build" "rmcp"
    for crate in ${compared[*]}; do
        [[ "$crate" == ours100 ]] && printf ' %16s' "#[tool] / rmcp" || printf ' %16s' "$BASELINE / rmcp"
    done
    echo
    for kind in clean same moved; do
        case "$kind" in
            clean) label="clean" ;;
            same) label="one tool edited, nothing moved" ;;
            moved) label="one tool edited, 49 moved" ;;
        esac
        total=()
        for step in lib bin; do
            local cells=()
            for crate in rmcp100 ${compared[*]}; do
                # shellcheck disable=SC2086 # the times are one word each
                cells+=("$(median ${times[${kind}_${step}_${crate}]})")
                total[$crate]="$(awk -v a="${total[$crate]:-0}" -v b="${cells[-1]}" 'BEGIN { print a + b }')"
            done
            row "$label, $step" "${cells[@]}"
        done
        local sums=()
        for crate in rmcp100 ${compared[*]}; do sums+=("${total[$crate]}"); done
        row "$label, library + binary" "${sums[@]}"
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
