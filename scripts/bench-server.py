#!/usr/bin/env python3
"""Load runs of the preview server (`make bench-server`; docs/PERFORMANCE.md, "Load figures").

For each limiter (in process, then Redis with a real redis-server), one release server runs
with `--constant-route`, and wrk drives it at 64 connections: the preview route and the
constant-body route (the same pipeline of lifecycle, key, limiter, content type and body,
answering a fixed body instead of calling the engine), in alternating rounds (6 rounds of 5 s
each per route, order P C C P P C ...) after a warm-up, so that a change in the machine's
other load hits both routes alike. Requests rotate over 256 keys of one site so the limit
(100,000 per key and minute) is never reached. Reported per route: requests per second over
all its rounds, p50 and p99 latency from the merged latency histograms of its rounds, non-2xx
answers and socket errors, the ratio of the preview route to the constant route of the same
server in the same run, and the server's peak RSS (VmHWM).

    python3 scripts/bench-server.py [--duration 30] [--rounds 6] [--connections 64] [--write]

--write puts the table into docs/PERFORMANCE.md between the server-bench markers.
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from doc_markers import write_between  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "nudge-rules-server"
REQUEST = '{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}'
KEYS = 256
ROUTES = [("preview", "/v1/nudges/preview"), ("constant", "/v1/_bench/constant")]

# wrk's end of run, shared by every bench script: one BENCH line with the totals, and the latency
# histogram (microseconds: count) written to BENCH_HISTOGRAM for the Python side to merge.
WRK_DONE = r"""
done = function(summary, latency, requests)
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  -- The latency histogram (microseconds: count), merged over rounds by the Python side.
  local out = io.open(os.getenv("BENCH_HISTOGRAM"), "w")
  for i = 1, #latency do
    local value, count = latency(i)
    out:write(string.format("%d %d\n", value, count))
  end
  out:close()
end
"""

WRK_SCRIPT = r"""
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do keys[#keys + 1] = line end
local body = os.getenv("BENCH_BODY")
local requests = {}
local n = 0
init = function(args)
  for i, key in ipairs(keys) do
    requests[i] = wrk.format("POST", wrk.path, {
      ["Authorization"] = "Bearer " .. key,
      ["Content-Type"] = "application/json",
    }, body)
  end
  n = math.random(#requests)
end
request = function()
  n = n % #requests + 1
  return requests[n]
end
""" + WRK_DONE
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis():
    if not shutil.which("redis-server"):
        sys.exit("redis-server not found: scripts/setup.sh installs it")
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not answer PING")


def start_server(sites, redis_url=None, extra_args=("--constant-route",)):
    """A release server on free loopback ports, ready: (process, API address, admin address)."""
    args = [str(BINARY), "--sites", str(sites), "--listen", "127.0.0.1:0",
            "--admin-listen", "127.0.0.1:0", *extra_args]
    if redis_url:
        args += ["--redis", redis_url]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "RUST_LOG": "warn"})
    api = admin = None
    while api is None or admin is None:
        line = proc.stdout.readline()
        if not line:
            sys.exit("the server exited before printing its addresses")
        if m := re.match(r"API:\s+http://([^/\s]+)", line):
            api = m.group(1)
        if m := re.match(r"admin:\s+http://([^/\s]+)", line):
            admin = m.group(1)
    for _ in range(500):
        try:
            with urllib.request.urlopen(f"http://{admin}/readyz", timeout=1) as r:
                if r.status == 200:
                    return proc, api, admin
        except OSError:
            time.sleep(0.02)
    sys.exit("the server did not become ready")


def wrk(api, path, seconds, connections, env):
    """One wrk run: its summary and its latency histogram {microseconds: count}."""
    histogram_file = pathlib.Path(env["BENCH_SCRIPT"]).with_name("histogram.txt")
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", env["BENCH_SCRIPT"],
         f"http://{api}{path}"],
        capture_output=True, text=True, env={**os.environ, **env, "BENCH_HISTOGRAM": str(histogram_file)},
        check=True,
    ).stdout
    line = next(l for l in out.splitlines() if l.startswith("BENCH "))
    result = json.loads(line[len("BENCH "):])
    histogram = {}
    for row in histogram_file.read_text().split("\n"):
        if row:
            value, count = map(int, row.split())
            histogram[value] = histogram.get(value, 0) + count
    result["histogram"] = histogram
    return result


def merge(runs):
    """The rounds of one route as one result: totals, and percentiles of the merged histogram
    (wrk's own rule: the smallest value whose cumulative count reaches round(p/100 * n + 0.5))."""
    histogram = {}
    for run in runs:
        for value, count in run["histogram"].items():
            histogram[value] = histogram.get(value, 0) + count
    total = sum(histogram.values())

    def percentile(p):
        rank = round(p / 100 * total + 0.5)
        seen = 0
        for value in sorted(histogram):
            seen += histogram[value]
            if seen >= rank:
                return value
        return 0

    requests = sum(r["requests"] for r in runs)
    seconds = sum(r["duration_us"] for r in runs) / 1e6
    return {
        "requests": requests,
        "rps": requests / seconds,
        "p50_us": percentile(50),
        "p99_us": percentile(99),
        "non2xx": sum(r["non2xx"] for r in runs),
        "socket_errors": sum(r["socket_errors"] for r in runs),
    }


def peak_rss_mib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def five_xx(admin):
    with urllib.request.urlopen(f"http://{admin}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith("nudge_http_requests_total") and 'status="5' in l)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=30, help="seconds per route, over all rounds")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not BINARY.exists():
        sys.exit(f"{BINARY} missing: cargo build --release -p nudge-rules-server")
    if not shutil.which("wrk"):
        sys.exit("wrk not found: scripts/setup.sh installs it")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        keys = [f"sk_test_bench{i:08d}KeyForLoad" for i in range(KEYS)]
        (tmp / "keys.txt").write_text("\n".join(keys) + "\n")
        shutil.copy(ROOT / "examples" / "storefront.json", tmp / "storefront.json")
        hashes = ", ".join(f'"sha256:{hashlib.sha256(k.encode()).hexdigest()}"' for k in keys)
        sites = tmp / "sites.toml"
        sites.write_text(f'[[site]]\nid = "bench"\nconfig = "storefront.json"\n'
                         f"rate_limit = 100000\nkeys = [{hashes}]\n")
        (tmp / "bench.lua").write_text(WRK_SCRIPT)
        env = {"BENCH_KEYS": str(tmp / "keys.txt"), "BENCH_BODY": REQUEST,
               "BENCH_SCRIPT": str(tmp / "bench.lua")}

        rows = []
        for limiter in ["in process", "Redis"]:
            redis = None
            redis_url = None
            if limiter == "Redis":
                redis, redis_url = start_redis()
            server, api, admin = start_server(sites, redis_url)
            try:
                for _, path in ROUTES:
                    wrk(api, path, args.warmup, args.connections, env)
                runs = {name: [] for name, _ in ROUTES}
                seconds = max(1, args.duration // args.rounds)
                for round_ in range(args.rounds):
                    order = ROUTES if round_ % 2 == 0 else ROUTES[::-1]
                    for name, path in order:
                        runs[name].append(wrk(api, path, seconds, args.connections, env))
                results = {name: merge(runs[name]) for name, _ in ROUTES}
                for name, _ in ROUTES:
                    r = results[name]
                    print(f"{limiter:10} {name:8} {r['rps']:9.0f} req/s  p50 {r['p50_us'] / 1000:.2f} ms  "
                          f"p99 {r['p99_us'] / 1000:.2f} ms  non-2xx {r['non2xx']}  socket errors {r['socket_errors']}",
                          flush=True)
                rss = peak_rss_mib(server.pid)
                errors_5xx = five_xx(admin)
            finally:
                server.terminate()
                server.wait(timeout=60)
                if redis:
                    redis.kill()
                    redis.wait()
            for name, _ in ROUTES:
                rows.append((limiter, name, results[name], results[name]["rps"] / results["constant"]["rps"],
                             rss, errors_5xx))

    commit = subprocess.run(["git", "describe", "--always", "--dirty= with uncommitted changes"],
                            cwd=ROOT, capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "unknown CPU")
    lines = [
        f"Run of `make bench-server` on {time.strftime('%Y-%m-%d')}, tree {commit}; {os.cpu_count()} cores "
        f"({cpu}) shared by the server and wrk (2 threads, {args.connections} connections, "
        f"{args.duration} s per route in {args.rounds} alternating rounds after a {args.warmup} s warm-up, "
        f"{KEYS} keys of one site; load average {os.getloadavg()[0]:.1f} at the end).",
        "",
        "| limiter | route | requests/s | p50 | p99 | non-2xx | preview / constant | server peak RSS |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for limiter, name, r, ratio, rss, _ in rows:
        ratio_cell = f"**{ratio:.2f}x**" if name == "preview" else "1.00x"
        lines.append(f"| {limiter} | {name} | {r['rps']:,.0f} | {r['p50_us'] / 1000:.2f} ms | "
                     f"{r['p99_us'] / 1000:.2f} ms | {r['non2xx'] + r['socket_errors']} | {ratio_cell} | {rss:.1f} MiB |")
    total_5xx = sum(r[5] for r in rows[::2])
    lines += ["", f"5xx answers counted by the servers' /metrics during the runs: {total_5xx:.0f}."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("server-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
