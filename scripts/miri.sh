#!/usr/bin/env bash
# The tests of the project's unsafe code under Miri, the nightly
# toolchain's interpreter, which reports undefined behaviour that no run on
# real hardware shows (an aliasing violation, a use after free). Today that
# is `ToolFuture`, which holds a tool's future in place and polls it
# through raw pointers, and the future of a registry's call, which holds
# the tool's future where it runs beside the entry it borrows from: their
# tests (`toolkit/tests/tool_future.rs`, `call_future.rs`, and the
# `in_place` ones of `call_future_paths`), under both of Miri's aliasing
# models.
#
# Needs the nightly toolchain (rustup); adds its `miri` and `rust-src`
# components if missing. Builds in target/miri, apart from the normal build.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup component add --toolchain nightly miri rust-src
fi
export CARGO_TARGET_DIR=target/miri
for model in stacked tree; do
  flags=""
  [ "$model" = tree ] && flags="-Zmiri-tree-borrows"
  echo "Miri, $model borrows:"
  MIRIFLAGS="$flags" cargo +nightly miri test -q -p toolsmith --test tool_future --test call_future
  MIRIFLAGS="$flags" cargo +nightly miri test -q -p toolsmith --test call_future_paths -- in_place::
done
