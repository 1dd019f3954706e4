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
# One libFuzzer process per core (FUZZ_JOBS, default: the cores), each target with a core of its own
# for its SECONDS: the smoke run takes 3 x 30 s on two cores instead of 6 x 30 s.
jobs="${FUZZ_JOBS:-$(nproc)}"

# Runs one target; prints its summary line and returns non-zero on a crash, time-out or memory.
run_target() {
  local t="$1" log="../target/fuzz-logs/$1.log" limit=() timer=()
  [ "$runs" -gt 0 ] && limit=(-runs="$runs")
  # CPU seconds of the run (user + system) go to $log.cpu when GNU time is installed.
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o "$log.cpu")
  if ! "${timer[@]}" cargo +nightly fuzz run -O -a -s none "$t" "corpus/$t" -- \
      -max_total_time="$seconds" "${limit[@]}" -rss_limit_mb=256 -timeout=2 \
      -print_final_stats=1 > "$log" 2>&1; then
    echo "FAILED: $t (see target/fuzz-logs/$t.log)"; grep -E "panicked|ERROR|crash-|Test unit" "$log" | head -5
    return 1
  fi
  local execs slowest rss cpu=""
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  [ -f "$log.cpu" ] && cpu=", $(awk '{printf "%d", $1 + $2}' "$log.cpu") CPU seconds"
  echo "   $t: $execs executions${cpu}, slowest unit ${slowest}s, peak RSS ${rss} MB, 0 crashes"
  if [ "${rss:-0}" -gt 256 ]; then echo "FAILED: $t peak RSS ${rss} MB > 256"; return 1; fi
}

status=0
pids=()
for t in "${targets[@]}"; do
  # At most $jobs at once: wait for the oldest before starting another.
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
  bound=""
  [ "$runs" -gt 0 ] && bound=", ${runs} runs at most"
  echo "== fuzz $t: ${seconds}s${bound}"
  run_target "$t" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
