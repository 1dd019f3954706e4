#!/usr/bin/env bash
# Serves the live-preview editor (www/) with the embedded storefront config on 127.0.0.1.
#
#   scripts/serve-demo.sh          (make demo)   PORT=8123 scripts/serve-demo.sh
#
# Builds the WASM package first when pkg/wasm/ is missing or older than the Rust sources
# (installing the tools it needs: scripts/setup.sh --no-browser), then serves the repository root
# (the page imports ../pkg/ and fetches ../examples/storefront.json) until interrupted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${PORT:-8000}"
wasm=pkg/wasm/nudge_rules_bg.wasm
if [ ! -f "$wasm" ] || [ -n "$(find src Cargo.toml Cargo.lock -newer "$wasm" -print -quit)" ]; then
  echo "== building the WASM package (scripts/build-wasm.sh)"
  scripts/build-wasm.sh
fi
echo
echo "  nudge-rules editor: open http://127.0.0.1:${port}/www/"
echo "  (Ctrl+C stops the server)"
echo
exec node www/test/server.mjs "$port"
