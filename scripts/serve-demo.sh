#!/usr/bin/env bash
# Serves the live-preview editor (www/) with the embedded storefront config on 127.0.0.1.
#
#   scripts/serve-demo.sh          (make demo)   PORT=8123 scripts/serve-demo.sh
#
# Builds the WASM package first when pkg/wasm/ is missing or older than the Rust sources
# (installing the tools it needs: scripts/setup.sh --no-browser), bundles the editor with esbuild
# (www/build.mjs into www/dist/, under a second), then serves the repository root (the worker
# fetches ../pkg/wasm/, the page fetches ../examples/storefront.json) until interrupted, with
# brotli or gzip for browsers that accept it (www/test/server.mjs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${PORT:-8000}"
wasm=pkg/wasm/nudge_rules_bg.wasm
if [ ! -f "$wasm" ] || [ -n "$(find src Cargo.toml Cargo.lock -newer "$wasm" -print -quit)" ]; then
  echo "== building the WASM package (scripts/build-wasm.sh)"
  scripts/build-wasm.sh
fi
if [ ! -x node_modules/.bin/esbuild ]; then
  echo "== npm packages missing: scripts/setup.sh --no-browser"
  scripts/setup.sh --no-browser
fi
echo "== bundling the editor (www/build.mjs)"
node www/build.mjs
echo
echo "  nudge-rules editor: open http://127.0.0.1:${port}/www/"
echo "  (Ctrl+C stops the server)"
echo
exec node www/test/server.mjs "$port"
