#!/usr/bin/env bash
# The test shop (examples/shop) against the demo server, to see the storefront runtime work:
#
#   scripts/serve-shop.sh        (make shop)   SHOP_PORT=8091 SERVE_PORT=8081 scripts/serve-shop.sh
#
# Builds pkg/wasm/ and pkg/dist/ when missing (scripts/build-wasm.sh) and the server binary, starts
# `nudge-rules-server --demo` (loopback, the demo's publishable key pk_test_nudgeRulesDemoKey0001,
# its storefront config published) and serves the shop until interrupted; both stop together.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
serve_port="${SERVE_PORT:-8080}"
admin_port="${ADMIN_PORT:-9090}"
shop_port="${SHOP_PORT:-8090}"
if [ ! -f pkg/dist/storefront.js ] || [ ! -f pkg/wasm/nudge_rules_bg.wasm ]; then
  echo "== building the WASM package and the storefront runtime (scripts/build-wasm.sh)"
  scripts/build-wasm.sh
fi
echo "== building the server (cargo build -p nudge-rules-server)"
cargo build -p nudge-rules-server
target/debug/nudge-rules-server --demo --listen "127.0.0.1:${serve_port}" --admin-listen "127.0.0.1:${admin_port}" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
echo
echo "  the test shop: open http://127.0.0.1:${shop_port}/products/linen-shirt and wait 8 s"
echo "  (the demo config's chat bubble needs an intent of 60: view a few pages or add to cart first)"
echo "  read the visit back: curl -H 'Authorization: Bearer sk_test_nudgeRulesDemoKey0001' http://127.0.0.1:${serve_port}/v1/sessions"
echo "  (Ctrl+C stops both)"
echo
node examples/shop/serve.mjs --endpoint "http://127.0.0.1:${serve_port}" --site-key pk_test_nudgeRulesDemoKey0001 --port "$shop_port"
