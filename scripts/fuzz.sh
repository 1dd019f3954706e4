#!/usr/bin/env bash
# Runs the cargo-fuzz targets (fuzz/) and checks libFuzzer's final statistics.
#
#   scripts/fuzz.sh SECONDS [RUNS] [TARGET...]
#
# Each target runs for SECONDS (and at most RUNS executions, when RUNS > 0) from a corpus seeded
# by the test vectors, with a 256 MiB memory limit and a 2 s time-out (libFuzzer counts whole
# seconds, and the fuzz build has debug assertions on a shared machine; the 100 ms bound is
# checked by replaying the corpora in release: tools/src/bin/corpus_timing.rs).
# Fails on a crash, a time-out or peak memory over 256 MiB. Logs go to target/fuzz-logs/.
#   make fuzz-smoke  = scripts/fuzz.sh 30     (CI)
#   make fuzz        = scripts/fuzz.sh 3600 10000000   (docs/RELIABILITY.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

seconds="${1:-30}"
runs="${2:-0}"
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config request normalize fast_path map_vs_preview glob)

scripts/setup.sh --fuzz --no-browser
python3 scripts/fuzz-seed.py
mkdir -p target/fuzz-logs
cd fuzz
# The crate has no unsafe code: no sanitizer, for speed; debug assertions on.
cargo +nightly fuzz build -O -a -s none
status=0
for t in "${targets[@]}"; do
  log="../target/fuzz-logs/$t.log"
  limit=()
  [ "$runs" -gt 0 ] && limit=(-runs="$runs")
  echo "== fuzz $t: ${seconds}s${limit:+, ${runs} runs at most}"
  # CPU seconds of the run (user + system) go to $log.cpu when GNU time is installed.
  timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o "$log.cpu")
  if ! "${timer[@]}" cargo +nightly fuzz run -O -a -s none "$t" "corpus/$t" -- \
      -max_total_time="$seconds" "${limit[@]}" -rss_limit_mb=256 -timeout=2 \
      -print_final_stats=1 > "$log" 2>&1; then
    echo "FAILED: $t (see target/fuzz-logs/$t.log)"; grep -E "panicked|ERROR|crash-|Test unit" "$log" | head -5
    status=1; continue
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  cpu=""
  [ -f "$log.cpu" ] && cpu=", $(awk '{printf "%d", $1 + $2}' "$log.cpu") CPU seconds"
  echo "   $t: $execs executions${cpu}, slowest unit ${slowest}s, peak RSS ${rss} MB, 0 crashes"
  if [ "${rss:-0}" -gt 256 ]; then echo "FAILED: $t peak RSS ${rss} MB > 256"; status=1; fi
done
exit $status
