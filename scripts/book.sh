#!/usr/bin/env bash
# Builds the book with the pinned mdbook (installed by install_mdbook.sh) and
# fails on an unresolved include or a broken local link.
set -euo pipefail
cd "$(dirname "$0")/.."
mdbook="$(./scripts/install_mdbook.sh)"
rm -rf book/build
"$mdbook" build book 2>&1 | tee .cache/mdbook-build.log
if grep -q "ERROR" .cache/mdbook-build.log; then
    echo "mdbook reported errors" >&2
    exit 1
fi
python3 scripts/check_book.py
