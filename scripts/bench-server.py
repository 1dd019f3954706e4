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
import os
import pathlib
import shutil
import sys
import tempfile
import time

import benchlib as bench
from benchlib import write_between

ROOT = bench.ROOT
BINARY = bench.BINARY
REQUEST = bench.REQUEST
KEYS = 256
ROUTES = [("preview", "/v1/nudges/preview"), ("constant", "/v1/_bench/constant")]

# The preview route and the constant route: POSTs of the preview request over the keys in turn.
WRK_SCRIPT = bench.READ_WRK_SCRIPT


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=30, help="seconds per route, over all rounds")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    bench.require_binary()
    if not shutil.which("wrk"):
        sys.exit("wrk not found: scripts/setup.sh installs it")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        keys = bench.secret_keys(KEYS)
        bench.write_keys(tmp / "keys.txt", keys)
        sites = bench.write_sites(tmp, keys=keys, rate_limit=100000)
        (tmp / "bench.lua").write_text(WRK_SCRIPT)
        env = {"BENCH_KEYS": str(tmp / "keys.txt"), "BENCH_BODY": REQUEST, "BENCH_METHOD": "POST",
               "BENCH_SCRIPT": str(tmp / "bench.lua")}

        rows = []
        for limiter in ["in process", "Redis"]:
            redis = None
            redis_url = None
            if limiter == "Redis":
                redis, redis_url = bench.start_redis()
            server, api, admin = bench.start_server(sites, redis_url)
            try:
                for _, path in ROUTES:
                    bench.wrk(api, path, args.warmup, args.connections, env)
                runs = {name: [] for name, _ in ROUTES}
                seconds = max(1, args.duration // args.rounds)
                for round_ in range(args.rounds):
                    order = ROUTES if round_ % 2 == 0 else ROUTES[::-1]
                    for name, path in order:
                        runs[name].append(bench.wrk(api, path, seconds, args.connections, env))
                results = {name: bench.merge(runs[name]) for name, _ in ROUTES}
                for name, _ in ROUTES:
                    r = results[name]
                    print(f"{limiter:10} {name:8} {r['rps']:9.0f} req/s  p50 {r['p50_us'] / 1000:.2f} ms  "
                          f"p99 {r['p99_us'] / 1000:.2f} ms  non-2xx {r['non2xx']}  socket errors {r['socket_errors']}",
                          flush=True)
                rss = bench.peak_rss_mib(server.pid)
                errors_5xx = bench.five_xx(admin)
            finally:
                bench.stop_server(server)
                if redis:
                    redis.kill()
                    redis.wait()
            for name, _ in ROUTES:
                rows.append((limiter, name, results[name], results[name]["rps"] / results["constant"]["rps"],
                             rss, errors_5xx))

    commit = bench.tree()
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
