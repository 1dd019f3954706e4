#!/usr/bin/env bash
# Chooses the WASM build profile by measurement (docs/PERFORMANCE.md, "WASM build profile"):
# builds the package at each opt-level (3, 2, s, z, each with the matching wasm-opt level), times
# each with benches/node.mjs (native figures of the same run beside them), then rewrites the table
# between the "levels:begin" and "levels:end" markers. Ends by rebuilding pkg/wasm with the chosen
# profile ([profile.wasm] in Cargo.toml).
#
#   scripts/bench-levels.sh          (make bench-levels; about 20 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=target/bench-levels
mkdir -p "$out"
git describe --always --dirty=' with uncommitted changes' > "$out/run.txt"
for level in 3 2 s z; do
  echo "== opt-level $level"
  scripts/build-wasm.sh --opt-level "$level" | tail -n 1
  node benches/node.mjs --json "$out/$level.json" | sed -n '2,4p'
done
python3 scripts/levels-report.py "$out" --write
echo "== back to the chosen profile"
scripts/build-wasm.sh | tail -n 1
