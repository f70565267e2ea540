#!/usr/bin/env bash
# Installs the headless Chromium the `browser` tool's tests drive, from the
# system's package manager (Debian packages it as `chromium`). Idempotent: does
# nothing when a chromium is already on PATH. Works without a TTY, as root, or
# through sudo otherwise. Set CHROMIUM to use another binary instead.
set -euo pipefail

if [ -n "${CHROMIUM:-}" ] && [ -x "${CHROMIUM}" ]; then
    exit 0
fi
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo -n)
else
    echo "install_chromium.sh: chromium is missing and neither root nor sudo is available" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium.sh: chromium is missing and this system has no apt-get; install chromium and put it on PATH (or set CHROMIUM)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "installing chromium with apt-get"
# The package lists may be stale or absent on a fresh machine.
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium
