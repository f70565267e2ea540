#!/usr/bin/env bash
# Installs the authorization server the MCP client's OAuth tests sign in
# at, pinned, into .cache/oauth-peers: Node's `oidc-provider` (OpenID
# Connect and OAuth 2.1: dynamic client registration, PKCE, refresh tokens,
# resource indicators), run by tests/mcp-fixtures/oauth_server.mjs.
# Idempotent: a second run with everything in place does nothing. Works
# without a TTY and as root. Prints the folder it filled.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/npm.sh
source scripts/lib/npm.sh

PEERS="$PWD/.cache/oauth-peers"
NPM_PKGS=("oidc-provider@9.13.3")

want="${NPM_PKGS[*]}"
exit_if_installed "$PEERS" "$want"

npm_install_pinned "$PEERS" '{"name":"oauth-peers","private":true,"type":"module"}' "${NPM_PKGS[@]}"

mark_installed "$PEERS" "$want"
