#!/usr/bin/env bash
# Installs what the end-to-end load harness needs on a fresh Debian machine; idempotent.
#   - wrk (the HTTP load generator) from Debian's packages
#   - python3 (the driver, run.py, uses the standard library only)
#   - valgrind (instructions.py counts each server's instructions per request with callgrind)
# The peers need more: the rmcp peer is built with cargo (see README.md), and the TypeScript
# reference server and FastMCP come from scripts/install-test-tools.sh.
set -euo pipefail

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v callgrind_control >/dev/null 2>&1 || need+=(valgrind)
if ((${#need[@]})); then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
wrk --version 2>&1 | head -1 || true   # wrk prints its version and exits 1
python3 --version
