#!/usr/bin/env bash
# Renders the book's diagrams (book/diagrams/*.dot) to SVG. The SVGs are
# committed, so building the book needs no Graphviz; run this after editing
# a diagram (Graphviz: `apt-get install graphviz`).
set -euo pipefail
cd "$(dirname "$0")/.."
for source in book/diagrams/*.dot; do
    name="$(basename "$source" .dot)"
    dot -Tsvg "$source" -o "book/src/images/$name.svg"
done
