#!/usr/bin/env bash
# Build the npm package's WASM files into pkg/wasm/ (generated, gitignored).
#
#   scripts/build-wasm.sh                  build with the chosen profile (opt-level from [profile.wasm])
#   scripts/build-wasm.sh --opt-level L    override opt-level (3, 2, s or z) and the matching wasm-opt
#                                          level, for measurements (docs/PERFORMANCE.md)
#
# Steps (docs/CONTRIBUTING.md, "Toolchain"): cargo build for wasm32-unknown-unknown with the `wasm` feature,
# wasm-bindgen --target web (one build for browsers and Node: Node loads it with
# initSync({ module: fs.readFileSync(...) })), then npm binaryen's wasm-opt. Prints the .wasm
# size raw and gzip -9. Three modules: pkg/wasm/ (preview and analysis),
# pkg/wasm/config-as-code/ (the same engine with docs/contract/as-code.md's config as code, loaded on demand) and
# pkg/wasm/slim/ (decide only, for the storefront runtime); then pkg/dist/storefront.js.
# Cargo runs at nice 10, or at WASM_NICE (`make test` sets 0: its suites wait for this build).
set -euo pipefail

usage() { sed -n '2,6s/^# \{0,1\}//p' "$0"; }

opt_level=""
while [ $# -gt 0 ]; do
  case "$1" in
    --opt-level)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      opt_level="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-wasm.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
die() { echo "build-wasm.sh: $*" >&2; exit 1; }

PROFILE=wasm
TARGET=wasm32-unknown-unknown
OUT=pkg/wasm
NAME=nudge_rules
WASM_OPT=node_modules/.bin/wasm-opt

# --- the package version must be the crate version -----------------------------
crate_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
pkg_version="$(node -p 'require("./pkg/package.json").version')"
[ -n "$crate_version" ] || die "no version in Cargo.toml"
[ "$crate_version" = "$pkg_version" ] ||
  die "pkg/package.json version $pkg_version differs from the crate version $crate_version"

# --- tools: run the (idempotent) setup only when something is missing ----------
wb_version="$(awk '
  /^\[\[package\]\]/ { in_wb = 0 }
  $0 == "name = \"wasm-bindgen\"" { in_wb = 1; next }
  in_wb && /^version = / { gsub(/^version = "|"$/, ""); print; exit }
' Cargo.lock)"
tools_ok() {
  rustup target list --installed 2>/dev/null | grep -qx "$TARGET" &&
    [ "$(wasm-bindgen --version 2>/dev/null || true)" = "wasm-bindgen $wb_version" ] &&
    [ -x "$WASM_OPT" ]
}
if ! tools_ok; then
  echo "== tools missing: scripts/setup.sh --no-browser"
  scripts/setup.sh --no-browser
  tools_ok || die "tools still missing after scripts/setup.sh"
fi

# --- opt-level and the matching wasm-opt level ----------------------------------
if [ -z "$opt_level" ]; then
  opt_level="$(awk '
    /^\[/ { in_p = ($0 == "[profile.wasm]") }
    in_p && /^opt-level *=/ { sub(/^opt-level *= */, ""); gsub(/"/, ""); print; exit }
  ' Cargo.toml)"
  [ -n "$opt_level" ] || die "no opt-level in [profile.wasm] of Cargo.toml"
fi
case "$opt_level" in
  3) wasm_opt_level=-O3 ;;
  2) wasm_opt_level=-O2 ;;
  s) wasm_opt_level=-Os ;;
  z) wasm_opt_level=-Oz ;;
  *) die "unsupported opt-level: $opt_level (use 3, 2, s or z)" ;;
esac
# An override through Cargo's environment keeps Cargo.toml as it is.
export CARGO_PROFILE_WASM_OPT_LEVEL="$opt_level"

# build_module FEATURES OUT [RUSTFLAGS TARGET_DIR]: cargo build with FEATURES (and RUSTFLAGS, in
# TARGET_DIR, so that other flags do not make cargo rebuild the other modules' dependencies),
# wasm-bindgen into OUT, wasm-opt; prints the size.
build_module() {
  local features="$1" out="$2" rustflags="${3:-}" target_dir="${4:-target}"
  local flags_env=()
  [ -z "$rustflags" ] || flags_env=(RUSTFLAGS="$rustflags")
  # The module is rebuilt only when what goes into it changed: the first two modules write the
  # same target/$TARGET/$PROFILE/$NAME.wasm (a cdylib's name carries no hash), so cargo alone
  # would rebuild each one after the other on every run.
  local stamp stamp_file="target/wasm-inputs/${out//\//_}"
  stamp="$(inputs_digest "$features")"
  if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] && [ -f "$out/${NAME}_bg.wasm" ]; then
    echo "== $out is up to date ($(gzip -9 -c "$out/${NAME}_bg.wasm" | wc -c) bytes gzip -9)"
    return 0
  fi
  # Both crate types, as Cargo.toml once declared them: the cdylib alone came out 31 KB larger
  # before wasm-opt (530,860 against 499,459 bytes for the first module, 2026-11-27).
  echo "== cargo rustc --crate-type rlib,cdylib (profile $PROFILE, opt-level $opt_level, features $features)"
  nice -n "${WASM_NICE:-10}" env "${flags_env[@]}" CARGO_TARGET_DIR="$target_dir" \
    cargo rustc --profile "$PROFILE" --target "$TARGET" \
    --no-default-features --features "$features" --lib --crate-type rlib,cdylib
  local raw="$target_dir/$TARGET/$PROFILE/$NAME.wasm"
  [ -f "$raw" ] || die "cargo did not produce $raw"

  echo "== wasm-bindgen --target web"
  rm -rf "$out"
  wasm-bindgen --target web --out-dir "$out" --out-name "$NAME" "$raw"

  local bg="$out/${NAME}_bg.wasm"
  echo "== wasm-opt $wasm_opt_level"
  local before
  before=$(wc -c <"$bg")
  # The features rustc enables by default for wasm32-unknown-unknown (`rustc --print cfg --target
  # wasm32-unknown-unknown`): wasm-opt must accept them, and must not add others.
  "$WASM_OPT" "$wasm_opt_level" \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-multivalue --enable-mutable-globals \
    --enable-nontrapping-float-to-int --enable-reference-types --enable-sign-ext \
    "$bg" -o "$bg.opt"
  mv "$bg.opt" "$bg"

  local size gz
  size=$(wc -c <"$bg")
  gz=$(gzip -9 -c "$bg" | wc -c)
  echo "== $bg: $size bytes raw ($before before wasm-opt), $gz bytes gzip -9"
  mkdir -p target/wasm-inputs && echo "$stamp" > "$stamp_file"
}

# inputs_digest FEATURES: one SHA-256 over what a module is built from (the crate's sources and
# manifests, the toolchain, this script, the profile's opt-level, the features).
inputs_digest() {
  {
    echo "$1 $opt_level $wasm_opt_level"
    rustc --version
    wasm-bindgen --version
    cat Cargo.toml Cargo.lock "${BASH_SOURCE[0]}"
    find src -type f | LC_ALL=C sort | xargs cat
  } | sha256sum | cut -d' ' -f1
}

# The package's module: preview and analysis (what every page of the editor loads).
build_module wasm "$OUT"
# Config as code (docs/contract/as-code.md: scenarios, coverage, replay, diff), a second module with the whole
# engine, loaded only when asked for (`initConfigAsCode`, docs/JS-API.md), so that the first stays
# within its size budget.
build_module wasm,config-as-code "$OUT/config-as-code"
# The slim module for storefront pages (docs/contract/storefront.md: `new NudgeEngine` and `decide` only,
# src/wasm_slim.rs), which the storefront runtime loads. LLVM inlines less in it (the threshold
# of opt-level z, 25, instead of opt-level 2's 225): 4.3 KB gzip smaller for a `decide` about
# 1.14 times as long, inside docs/contract/storefront.md's 20 us (docs/PERFORMANCE.md, "Bytes before the first
# decision, step by step"). Its own target directory keeps the flag from rebuilding the
# dependencies of the other two modules.
build_module wasm,slim "$OUT/slim" "-Cllvm-args=-inline-threshold=25" target/wasm-slim
# The storefront runtime for a plain <script type="module"> tag (docs/contract/storefront.md): one bundled module and
# the slim module's .wasm beside it, in pkg/dist/ (generated, gitignored).
echo "== pkg/dist/storefront.js (scripts/build-storefront.mjs)"
node scripts/build-storefront.mjs
