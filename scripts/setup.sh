#!/usr/bin/env bash
# Install everything the build and the tests need, skipping what is already
# present at the right version. Safe to re-run: a warm run takes a few seconds.
#
#   scripts/setup.sh               wasm32 target, wasm-bindgen-cli, Chromium, npm packages,
#                                  and the server tests' redis-server, PostgreSQL, wrk, curl,
#                                  schemathesis, standardwebhooks (the webhook signature verifier)
#   scripts/setup.sh --no-browser  the same without Chromium
#   scripts/setup.sh --fuzz        also a nightly toolchain and cargo-fuzz (for `make fuzz`)
#
# Only the package registries are reachable on these machines (see
# docs/CONTRIBUTING.md, "Toolchain"): no wasm-pack, no `npx playwright install`, and never
# Debian's binaryen (wasm-opt comes from the npm package `binaryen`).
set -euo pipefail

usage() { sed -n '2,9s/^# \{0,1\}//p' "$0"; }

want_browser=1
want_fuzz=0
for arg in "$@"; do
  case "$arg" in
    --no-browser) want_browser=0 ;;
    --fuzz) want_fuzz=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

t_start=$SECONDS
step_t=$SECONDS
begin() { step_t=$SECONDS; }
took() { echo "       ($(( SECONDS - step_t )) s)"; }
die() { echo "FAILED: $*" >&2; exit 1; }

for tool in rustup cargo node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done

# Heavy compiles (cargo install) run at low priority: the machine has 2 cores.
NICE=(nice -n 10)

# Debian packages: root only; `apt-get update` at most once per run.
apt_updated=0
apt_install() { # apt_install HINT PACKAGE...
  local hint=$1
  shift
  if [ "$(id -u)" != 0 ]; then
    die "$* missing and installing needs root (apt-get); run as root, or: sudo apt-get install $*$hint"
  fi
  echo "installing: $* (apt-get) ..."
  begin
  if [ "$apt_updated" = 0 ]; then
    apt-get update
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
  took
}

# --- 1. wasm32 target ---------------------------------------------------------
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "ok: wasm32 target present"
else
  echo "installing: rustup target wasm32-unknown-unknown ..."
  begin
  rustup target add wasm32-unknown-unknown
  took
fi

# --- 2. wasm-bindgen-cli, same version as the wasm-bindgen crate in Cargo.lock -
[ -f Cargo.lock ] || die "Cargo.lock not found in $(pwd)"
WB_VERSION="$(awk '
  /^\[\[package\]\]/ { in_wb = 0 }
  $0 == "name = \"wasm-bindgen\"" { in_wb = 1; next }
  in_wb && /^version = / { gsub(/^version = "|"$/, ""); print; exit }
' Cargo.lock)"
[ -n "$WB_VERSION" ] || die "no wasm-bindgen package in Cargo.lock"

wb_have() {
  # Both binaries come from the same crate; check both so a half install is redone.
  [ "$(wasm-bindgen --version 2>/dev/null || true)" = "wasm-bindgen $WB_VERSION" ] &&
    [ "$(wasm-bindgen-test-runner --version 2>/dev/null || true)" = "wasm-bindgen-test-runner $WB_VERSION" ]
}
if wb_have; then
  echo "ok: wasm-bindgen-cli $WB_VERSION present"
else
  echo "installing: wasm-bindgen-cli $WB_VERSION (cargo install, a few minutes) ..."
  begin
  if ! "${NICE[@]}" cargo install wasm-bindgen-cli --version "$WB_VERSION" --locked; then
    echo "warning: locked install of wasm-bindgen-cli $WB_VERSION failed; retrying without --locked" >&2
    "${NICE[@]}" cargo install wasm-bindgen-cli --version "$WB_VERSION" \
      || die "cargo install wasm-bindgen-cli $WB_VERSION failed"
  fi
  wb_have || die "wasm-bindgen --version does not print $WB_VERSION after install (PATH: $PATH)"
  took
fi

# --- 3. Chromium (Debian's; Playwright's own browser download fails here) ----
if [ "$want_browser" = 0 ]; then
  echo "skip: chromium (--no-browser)"
elif [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  echo "ok: chromium present ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))"
else
  apt_install "; or pass --no-browser" chromium chromium-driver
  [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after apt-get install"
fi

# --- 4. npm packages (playwright-core, binaryen's wasm-opt, typescript, @redocly/cli, ...) --
[ -f package-lock.json ] || die "package-lock.json not found in $(pwd)"
lock_hash="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1) node-$(node --version)"
stamp=node_modules/.setup-stamp
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ]; then
  echo "ok: node_modules matches package-lock.json"
else
  echo "installing: npm ci ..."
  begin
  npm ci --no-audit --no-fund
  printf '%s\n' "$lock_hash" > "$stamp"
  took
fi
node_modules/.bin/wasm-opt --version >/dev/null 2>&1 \
  || die "node_modules/.bin/wasm-opt does not run (npm package binaryen)"
node_modules/.bin/redocly --version >/dev/null 2>&1 \
  || die "node_modules/.bin/redocly does not run (npm package @redocly/cli, the OpenAPI linter of make lint)"
node_modules/.bin/esbuild --version >/dev/null 2>&1 \
  || die "node_modules/.bin/esbuild does not run (npm package esbuild, the bundler of pkg/dist/storefront.js)"

# --- 5. the server tests: redis-server, PostgreSQL, wrk (make bench-server), curl, schemathesis ---
# PostgreSQL: the store tests start clusters of their own (initdb, pg_ctl from
# /usr/lib/postgresql/N/bin, run as the `postgres` user); only the binaries are needed.
missing=()
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ "${#missing[@]}" = 0 ]; then
  echo "ok: $(redis-server --version | cut -d' ' -f1-3), PostgreSQL $(ls /usr/lib/postgresql | sort -n | tail -n 1), wrk, curl present"
else
  apt_install "" "${missing[@]}"
fi
# Pinned: the contract test's settings (server/tests/schemathesis.toml) follow this version.
ST_VERSION=4.32.5
if [ "$(python3 -m schemathesis.cli --version 2>/dev/null || true)" = "python -m schemathesis.cli, version $ST_VERSION" ]; then
  echo "ok: schemathesis $ST_VERSION present"
else
  echo "installing: schemathesis $ST_VERSION (pip) ..."
  begin
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    "schemathesis==$ST_VERSION" || die "pip install schemathesis==$ST_VERSION failed"
  took
fi

# Pinned: the independent verifier of webhook signatures (docs/contract/webhooks.md) in the server's tests.
SWH_VERSION=1.1.0
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("standardwebhooks"))' 2>/dev/null || true)" = "$SWH_VERSION" ]; then
  echo "ok: standardwebhooks $SWH_VERSION present"
else
  echo "installing: standardwebhooks $SWH_VERSION (pip) ..."
  begin
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    "standardwebhooks==$SWH_VERSION" || die "pip install standardwebhooks==$SWH_VERSION failed"
  took
fi

# --- 6. optional: nightly + cargo-fuzz ----------------------------------------
if [ "$want_fuzz" = 1 ]; then
  if rustup toolchain list | grep -q '^nightly-'; then
    echo "ok: nightly toolchain present ($(rustup run nightly rustc --version))"
  else
    echo "installing: rustup toolchain nightly (minimal) ..."
    begin
    # --no-self-update: a toolchain install may otherwise replace the rustup
    # binary itself (seen here in a RUSTUP_HOME without auto_self_update = "disable").
    rustup toolchain install nightly --profile minimal --no-self-update \
      || die "rustup could not install a nightly toolchain (cargo fuzz needs one)"
    took
  fi
  if cargo fuzz --version >/dev/null 2>&1; then
    echo "ok: cargo-fuzz present ($(cargo fuzz --version))"
  else
    echo "installing: cargo-fuzz (cargo install, a few minutes) ..."
    begin
    if ! "${NICE[@]}" cargo install cargo-fuzz --locked; then
      echo "warning: locked install of cargo-fuzz failed; retrying without --locked" >&2
      "${NICE[@]}" cargo install cargo-fuzz || die "cargo install cargo-fuzz failed"
    fi
    took
  fi
fi

echo "setup done in $(( SECONDS - t_start )) s"
