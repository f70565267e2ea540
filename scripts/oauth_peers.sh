#!/usr/bin/env bash
# Installs the authorization server the MCP client's OAuth tests sign in
# at, pinned, into .cache/oauth-peers: Node's `oidc-provider` (OpenID
# Connect and OAuth 2.1: dynamic client registration, PKCE, refresh tokens,
# resource indicators), run by tests/mcp-fixtures/oauth_server.mjs.
# Idempotent: a second run with everything in place does nothing. Works
# without a TTY and as root. Prints the folder it filled.
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS="$PWD/.cache/oauth-peers"
NPM_PKGS=("oidc-provider@9.13.3")

want="${NPM_PKGS[*]}"
if [[ -f "$PEERS/.installed" && "$(cat "$PEERS/.installed")" == "$want" ]]; then
  echo "$PEERS"
  exit 0
fi

mkdir -p "$PEERS"
cd "$PEERS"
[[ -f package.json ]] || echo '{"name":"oauth-peers","private":true,"type":"module"}' >package.json
export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
npm install --save-exact --loglevel=error "${NPM_PKGS[@]}" >&2

echo "$want" >"$PEERS/.installed"
echo "$PEERS"
