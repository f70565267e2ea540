#!/usr/bin/env bash
# Compile time of 100 tools written with our `#[tool]` against the same 100
# tools written with rmcp's `#[tool_router]`/`#[tool]`, in one run.
#
# Generates two crates into .cache/compile-bench/ (one workspace, one lock
# file copied from benches/peers so the versions are the peers benchmark's),
# builds every dependency once, then times only the crate itself:
#   clean        `cargo clean -p CRATE` then `cargo build -p CRATE`
#   incremental  one tool's body edited, then `cargo build -p CRATE`
# RUNS times each (default 5), alternating the two crates, and prints the
# medians and the ratios ours / rmcp. Debug profile, as while developing.
#
# Usage: scripts/bench_compile.sh            (RUNS=3 scripts/bench_compile.sh)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${RUNS:-5}"
tools=100
bench="$root/.cache/compile-bench"
peers="$root/benches/peers"
export CARGO_TARGET_DIR="$bench/target"

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

write_crate() { # name, dependencies, generator kind
    mkdir -p "$bench/$1/src"
    cat >"$bench/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$2
EOF
    "$generator" "$3" "$tools" >"$bench/$1/src/lib.rs"
}
write_crate ours100 "toolkit = { path = \"$root/toolkit\" }" ours
write_crate rmcp100 'rmcp = { version = "3.9", default-features = false, features = ["server", "macros"] }
schemars = { version = "1", default-features = false, features = ["derive", "std"] }
serde = { version = "1", features = ["derive"] }' rmcp

cd "$bench"
echo "building the dependencies once (not timed)"
cargo build --quiet -p ours100 -p rmcp100

now() { date +%s.%N; }
timed_build() { # crate; prints seconds
    local start end
    start="$(now)"
    cargo build --quiet -p "$1"
    end="$(now)"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
# Edit the body of tool 50, a different text each run, so the crate really
# changes, as it does when someone edits one tool.
edit_one_tool() { # crate, run
    sed -i -E "s/(:50)( edit [0-9]+)?\"/\\1 edit $2\"/" "$1/src/lib.rs"
    grep -q ":50 edit $2\"" "$1/src/lib.rs" || { echo "could not edit tool 50 of $1" >&2; exit 1; }
}

declare -A clean incremental
for run in $(seq 1 "$runs"); do
    for crate in ours100 rmcp100; do
        cargo clean --quiet -p "$crate"
        clean[$crate]+="$(timed_build "$crate") "
        edit_one_tool "$crate" "$run"
        incremental[$crate]+="$(timed_build "$crate") "
    done
    echo "run $run/$runs done" >&2
done

median() { # numbers...
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
report() { # label, ours times, rmcp times
    local ours rmcp
    # shellcheck disable=SC2086 # the times are one word each
    ours="$(median $2)"
    # shellcheck disable=SC2086
    rmcp="$(median $3)"
    printf '%-28s %9.2f s %9.2f s %8s\n' "$1" "$ours" "$rmcp" "x$(awk -v a="$ours" -v b="$rmcp" 'BEGIN { printf "%.2f", a / b }')"
    echo "    ours: $2"
    echo "    rmcp: $3"
}

echo
echo "compile time of $tools tools, median of $runs runs (dependencies prebuilt; debug profile)"
printf '%-28s %11s %11s %8s\n' "build" "#[tool]" "rmcp" "ratio"
report "clean (crate only)" "${clean[ours100]}" "${clean[rmcp100]}"
report "incremental (one tool edited)" "${incremental[ours100]}" "${incremental[rmcp100]}"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); rustc $(rustc --version | cut -d' ' -f2)"
