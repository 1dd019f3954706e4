# nudge-rules: the entry points. `make test` is what .ci/run runs.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
PORT ?= 8000
SERVE_PORT ?= 8080
ADMIN_PORT ?= 9090

.PHONY: help setup demo shop serve screenshots test lint test-rust test-server test-node test-browser test-js-beside test-browser-alone server-bin corpus-bin wasm bench bench-native bench-node bench-levels bench-server bench-compare bench-editor fuzz fuzz-smoke fuzz-beside clean

help:
	@echo "make demo          build the WASM package and serve the editor on http://127.0.0.1:$(PORT)/www/"
	@echo "make shop          the test shop (examples/shop) with the storefront runtime, against the demo server"
	@echo "make serve         the server on the embedded storefront config, a test key printed:"
	@echo "                   API http://127.0.0.1:$(SERVE_PORT)/v1/nudges/preview, admin http://127.0.0.1:$(ADMIN_PORT)"
	@echo "make test          every test (installs what it needs: scripts/setup.sh)"
	@echo "make screenshots   the docs' pictures (www/screenshots/, docs/img/) taken again by the browser tests"
	@echo "make wasm          build pkg/wasm/ (scripts/build-wasm.sh)"
	@echo "make bench         criterion + Node benchmarks, one table of figures and ratios"
	@echo "make bench-levels  WASM size and speed at each opt-level (the build profile's choice)"
	@echo "make bench-editor  the connected editor's keystroke to refreshed backtest at 10,000 sessions, release server"
	@echo "make bench-server  load runs of the server with wrk: preview, and the read API on SQLite and PostgreSQL (docs/PERFORMANCE.md)"
	@echo "make fuzz          long fuzz runs (docs/RELIABILITY.md)"

setup:
	scripts/setup.sh

demo:
	scripts/serve-demo.sh

# The test shop with the storefront runtime (docs/STOREFRONT.md) against `nudge-rules-server --demo`.
shop:
	SERVE_PORT=$(SERVE_PORT) ADMIN_PORT=$(ADMIN_PORT) scripts/serve-shop.sh

# The server (docs/SERVER.md) with the demo site: loopback only, one printed test key.
serve:
	cargo run --release -p nudge-rules-server -- --demo \
	  --listen 127.0.0.1:$(SERVE_PORT) --admin-listen 127.0.0.1:$(ADMIN_PORT)

# The docs' pictures: the browser tests write their screenshots into the ignored target/screenshots/
# (so that a test run leaves the tree clean: www/ for www/screenshots/, docs/ for docs/img/); this
# runs the suites that take them and copies them into the tracked folders.
SHOT_SUITES := pkg/test/storefront-shop.test.mjs $(shell grep -l -F shot www/test/*.test.mjs)
screenshots: wasm server-bin
	rm -rf target/screenshots
	node --test --test-concurrency=1 $(SHOT_SUITES)
	cp target/screenshots/www/*.png www/screenshots/
	cp target/screenshots/docs/*.png docs/img/
	git status --short www/screenshots docs/img

# Suites side by side where none measures time: the server's (schemathesis, mostly one Python
# process) and, as soon as the WASM package and the server binary exist, Node's and then the
# editor's files that assert no wall time (`node --test` runs one file at a time on two cores):
# each chain keeps about one core busy. The fuzz smoke run takes what they leave, at a lower
# priority (`nice -n 10`: its 30 s per target are wall time, its 2 s time-out per input far above
# what an input takes; its build has a target/ of its own, so it holds no lock the others wait
# on). The WASM build runs at the priority of the server's builds (WASM_NICE=0): at nice 10,
# beside them, the fuzz build and the server's tests, its first module took 10 min 37 s of the 16
# minutes of this step in the clean-clone run of 2026-11-27, and Node's suite waited for it. The
# editor's files that check wall time (keystroke latency, long tasks, real-time waits:
# BROWSER_ALONE) then run alone, and so does the corpus replay, which checks each input's wall
# time against 100 ms. Cargo's lock orders the builds of target/debug.
test: setup lint test-rust
	$(MAKE) --no-print-directory -j4 --output-sync=target WASM_NICE=0 corpus-bin test-js-beside fuzz-beside
	$(MAKE) --no-print-directory test-browser-alone
	cargo run --release -p nudge-rules-tools --bin corpus_timing

lint:
	python3 scripts/check-modules.py
	python3 scripts/check-docs.py
	python3 scripts/check-docs.py --self-test
	# The API document (docs/openapi.yaml) against OpenAPI 3.0 and redocly.yaml's rules.
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint docs/openapi.yaml
	cargo fmt --check
	cargo clippy --all-targets --all-features -- -D warnings
	cargo clippy -p nudge-rules-tools --all-targets -- -D warnings
	# The WASM package's configuration (no `url`; the platform's URL parser): its own cfg paths.
	cargo clippy --lib --no-default-features --features wasm --target wasm32-unknown-unknown -- -D warnings
	cargo clippy --lib --no-default-features --features wasm,config-as-code --target wasm32-unknown-unknown -- -D warnings
	cargo clippy --lib --no-default-features --features wasm,slim --target wasm32-unknown-unknown -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features

test-rust:
	cargo test
	python3 scripts/gen-sessions.py --check

# The server crate (a workspace member with its own dependencies); `lint` formats it too.
test-server:
	cargo clippy -p nudge-rules-server --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc -p nudge-rules-server --no-deps
	# The backtest test replays exported sessions with the CLI, beside the server binary: the one
	# `cargo test` builds for the library's CLI tests (fresh after test-rust; `cargo build --bin`
	# would compile serde_json, the library and the CLI again, with other features: 14 s).
	cargo test --no-run --test integration
	cargo test -p nudge-rules-server
	# The docs' examples marked runnable, as written, against target/debug/nudge-rules-server --demo.
	python3 scripts/run-doc-examples.py

# `make test`: the server's suite, then the corpus replay's binary in that chain's slack (its
# release dependencies are built by then, for pkg/test/parity.test.mjs), not in the last step.
corpus-bin: test-server
	cargo build --release -p nudge-rules-tools --bin corpus_timing

# The WASM build's priority (scripts/build-wasm.sh): 10 alone, 0 in `make test`.
WASM_NICE ?= 10
wasm:
	WASM_NICE=$(WASM_NICE) scripts/build-wasm.sh

# target/debug/nudge-rules-server, which the Node and editor tests start, built as the server's
# own tests build it (`cargo test` turns on the dev-dependencies' features, tokio's among them):
# a plain `cargo build` would compile the server, tokio, hyper, sqlx, axum, reqwest and the
# library a second time with other features (56 s of the clean-clone run of 2026-11-27), and
# replace the binary the server's tests use.
server-bin:
	cargo test -p nudge-rules-server --no-run

# The editor's files that depend on wall time: keystroke latency and first load (perf), a long
# task against a baseline and a typed word undone at once (merchant-timing; findings: CodeMirror
# groups keystrokes less than 500 ms apart), one backtest request per pause in typing (connected),
# the autosave 300 ms after an edit (features), real-time waits (demo's play button, webhooks'
# retry ladder). `make test` runs them alone; the others beside the server's suite. A beside run
# at a load average of 10 to 16 failed finding 1 of merchant.test.mjs (a word's keystrokes fell
# into two undo groups), which is why it moved to merchant-timing.test.mjs.
BROWSER_ALONE := www/test/perf.test.mjs www/test/merchant-timing.test.mjs www/test/findings.test.mjs \
  www/test/connected.test.mjs www/test/features.test.mjs www/test/demo.test.mjs www/test/webhooks.test.mjs
BROWSER_BESIDE := $(filter-out $(BROWSER_ALONE),$(sort $(wildcard www/test/*.test.mjs)))

# pkg/test/relay.test.mjs starts the server binary (target/debug/nudge-rules-server).
test-node: wasm server-bin
	node --test pkg/test/*.test.mjs
	node_modules/.bin/tsc --noEmit -p pkg

# www/test/connected.test.mjs starts the server binary (target/debug/nudge-rules-server).
test-browser: wasm server-bin
	node_modules/.bin/tsc --noEmit -p www
	node --test www/test/*.test.mjs

# `make test`: Node's suite, then the editor's files that check no wall time (one chain, beside
# the server's suite).
test-js-beside: test-node
	node_modules/.bin/tsc --noEmit -p www
	node --test $(BROWSER_BESIDE)

# `make test`: the editor's files that check wall time, alone.
test-browser-alone: wasm server-bin
	node --test $(BROWSER_ALONE)

# One table of figures and ratios (and docs/PERFORMANCE.md's results section) from one run.
bench: bench-native bench-node
	python3 scripts/bench-report.py --write

bench-native:
	mkdir -p target
	git describe --always --dirty=' with uncommitted changes' > target/bench-run.txt
	cargo bench --bench engine

bench-node: wasm
	mkdir -p target
	node benches/node.mjs --json target/bench-node.json

# The connected editor's keystroke to refreshed backtest at 10,000 sessions, 12 keystrokes against
# the release server (docs/PERFORMANCE.md); `make test` runs the same file as a test, 2 keystrokes
# against the debug server.
bench-editor: wasm
	cargo build --release -p nudge-rules-server
	NUDGE_BENCH=1 NUDGE_SERVER_BINARY=target/release/nudge-rules-server node --test www/test/backtest-perf.test.mjs

# 30 s wrk runs against the release server: the preview route and its constant-body baseline,
# local and Redis limiter; then the read routes on SQLite and PostgreSQL stores of 10,000 and
# 1,000,000 sessions (scripts/bench-store.py), the relay (scripts/bench-relay.py), the uplift
# report over a million sessions (scripts/bench-uplift.py) and the relay during a purge of a million
# events (scripts/bench-purge.py); writes the figures in docs/PERFORMANCE.md.
bench-server:
	cargo build --release -p nudge-rules-server
	python3 scripts/bench-server.py --write
	python3 scripts/bench-store.py --write
	python3 scripts/bench-relay.py --write
	python3 scripts/bench-uplift.py --write
	python3 scripts/bench-purge.py --write

# Two server binaries in one run, route by route (scripts/bench-compare.py): BEFORE is the binary
# before a change (e.g. built from the change's parent and copied aside), the release build the after.
bench-compare:
	@test -n "$(BEFORE)" || { echo "make bench-compare BEFORE=path/to/the/old/nudge-rules-server"; exit 2; }
	cargo build --release -p nudge-rules-server
	python3 scripts/bench-compare.py --before "$(BEFORE)" --write

# The WASM build profile, chosen by measurement: size and speed at opt-level 3, 2, s and z.
bench-levels:
	scripts/bench-levels.sh

fuzz-smoke:
	scripts/fuzz.sh 30
	cargo run --release -p nudge-rules-tools --bin corpus_timing

# The smoke run's targets beside the other suites (`make test`); the corpus replay runs after.
fuzz-beside:
	nice -n 10 scripts/fuzz.sh 30

# Long runs for docs/RELIABILITY.md: 10 million executions or one hour per target.
fuzz:
	scripts/fuzz.sh 3600 10000000
	cargo run --release -p nudge-rules-tools --bin corpus_timing

clean:
	cargo clean
	rm -rf pkg/wasm www/dist
