#!/usr/bin/env bash
# HAProxy, the load balancer the MCP scale-out test puts in front of three
# stateless servers (and the TLS test in front of one), from Debian's
# packages; and the openssl CLI that test makes its certificates with.
# Idempotent and quick: does nothing when both are already on PATH.
# Run as root (as CI does) or with passwordless sudo; never prompts.
set -euo pipefail

say() { printf 'install_haproxy: %s\n' "$*" >&2; }

missing=()
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [[ ${#missing[@]} -eq 0 ]]; then
  say "haproxy already installed ($(command -v haproxy)): nothing to do"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  say "installing ${missing[*]} needs root (or passwordless sudo); run: apt-get install -y ${missing[*]}"
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get here: install ${missing[*]} with this system's package manager"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine may be empty or stale.
say "apt-get update"
"${as_root[@]}" apt-get update -qq >&2
say "apt-get install -y --no-install-recommends ${missing[*]}"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
# The package starts a service where an init system runs; the tests start
# their own haproxy processes and need none.
say "installed: $(haproxy -v 2>/dev/null | head -n 1)"
