#!/usr/bin/env bash
# Installs the pinned mdbook into .cache/mdbook (git-ignored) unless it is
# already there, and prints the binary's path. crates.io is the one registry
# that ships mdbook, so it is built from source once; later runs reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."

version="0.4.52"
root=".cache/mdbook"
bin="$root/bin/mdbook"

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "v$version"; then
    echo "$bin"
    exit 0
fi

# Only the `build` command is needed: no server, no file watcher, no search
# index dependencies beyond the defaults that `build` uses. Unoptimised
# (`--debug`): it builds in about half the time, and renders this book in
# well under a second all the same.
cargo install mdbook --version "$version" --locked --no-default-features --debug \
    --root "$root" --quiet >&2
echo "$bin"
