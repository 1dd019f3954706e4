#!/usr/bin/env python3
"""Load runs of the read API on a real store (`make bench-server`; docs/PERFORMANCE.md, "Store figures").

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own started here, as the
tests do), the store is filled by `nudge-rules-server import` with generated sessions of one site
(about 5 page events and 0.6 nudges each, spread over the last 25 days), first 10,000, then up to
1,000,000. At each size one release server runs on that store and wrk drives it at 64
connections over 256 keys: the preview route (the baseline of the same run),
`GET /v1/sessions?limit=50` and `GET /v1/sessions/{id}` of a session with 20 events and 3 nudges,
in alternating rounds. Reported: requests/s, p50 and p99 per route, the list route's ratio to the
preview's, the p99 at 1,000,000 against that at 10,000, the import speed (events per second) and
the bytes the store takes per session.

    python3 scripts/bench-store.py [--sizes 10000,1000000] [--duration 12] [--rounds 3] [--write]

--write puts the table into docs/PERFORMANCE.md between the store-bench markers.
"""
import argparse
import os
import pathlib
import tempfile
import time

import benchlib as bench
from benchlib import write_between

ROOT = bench.ROOT
KEYS = 256


def sqlite_size_bytes(path):
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def measure(api, routes, args, env):
    for _, path, method in routes:
        bench.wrk(api, path, 2, args.connections, {**env, "BENCH_METHOD": method})
    runs = {name: [] for name, _, _ in routes}
    seconds = max(1, args.duration // args.rounds)
    for round_ in range(args.rounds):
        order = routes if round_ % 2 == 0 else routes[::-1]
        for name, path, method in order:
            runs[name].append(bench.wrk(api, path, seconds, args.connections, {**env, "BENCH_METHOD": method}))
    return {name: bench.merge(runs[name]) for name, _, _ in routes}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--duration", type=int, default=12, help="seconds per route and size, over all rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    bench.require_binary()
    now_ms = int(time.time() * 1000)
    rows = []
    imports = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        keys = bench.secret_keys(KEYS)
        bench.write_keys(tmp / "keys.txt", keys)
        sites = bench.write_sites(tmp, keys=keys, rate_limit=100000)
        (tmp / "bench.lua").write_text(bench.READ_WRK_SCRIPT)
        env = {"BENCH_KEYS": str(tmp / "keys.txt"), "BENCH_BODY": bench.REQUEST,
               "BENCH_SCRIPT": str(tmp / "bench.lua")}
        # The detail route's session: 20 events, 3 nudges.
        (tmp / "detail.jsonl").write_text(bench.detail_line(now_ms) + "\n")
        detail_id = bench.DETAIL_ID
        routes = [("preview", "/v1/nudges/preview", "POST"), ("list", "/v1/sessions?limit=50", "GET"),
                  ("detail", f"/v1/sessions/{detail_id}", "GET")]
        for backend in args.backends.split(","):
            store, db, pg = bench.open_store(backend, tmp, "store.db")
            try:
                bench.import_file(sites, store, tmp / "detail.jsonl")
                have = 0
                for size in sizes:
                    print(f"{backend}: filling to {size:,} sessions", flush=True)
                    events, seconds = bench.import_sessions(tmp, sites, store, have, size, now_ms)
                    imports.append((backend, size - have, events, seconds))
                    have = size
                    if pg:
                        # The import's writes flushed before measuring, not by the checkpointer
                        # during the runs (a million sessions leave about 3 GB to write).
                        pg.checkpoint()
                    server, api, admin = bench.start_store_server(sites, store)
                    try:
                        results = measure(api, routes, args, env)
                        rss = bench.peak_rss_mib(server.pid)
                        errors_5xx = bench.five_xx(admin)
                    finally:
                        bench.stop_server(server)
                    size_bytes = pg.size_bytes() if pg else sqlite_size_bytes(db)
                    for name, _, _ in routes:
                        r = results[name]
                        print(f"  {name:8} {r['rps']:9.0f} req/s  p50 {r['p50_us'] / 1000:.2f} ms  "
                              f"p99 {r['p99_us'] / 1000:.2f} ms  non-2xx {r['non2xx']}", flush=True)
                    rows.append((backend, size, results, rss, errors_5xx, size_bytes / (size + 1)))
            finally:
                if pg:
                    pg.stop()

    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-store.py` (part of `make bench-server`) on {time.strftime('%Y-%m-%d')}, tree "
        f"{commit}; {os.cpu_count()} cores shared by the server, the database and wrk (2 threads, "
        f"{args.connections} connections, {args.duration} s per route in {args.rounds} alternating rounds, "
        f"{KEYS} keys of one site; load average {os.getloadavg()[0]:.1f} at the end).",
        "",
        "| store | sessions | route | requests/s | p50 | p99 | non-2xx | / preview | p99 / p99 at the smallest size |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    first_p99 = {}
    for backend, size, results, rss, errors_5xx, per_session in rows:
        for name in ["preview", "list", "detail"]:
            r = results[name]
            key = (backend, name)
            first_p99.setdefault(key, r["p99_us"])
            ratio = r["rps"] / results["preview"]["rps"]
            growth = r["p99_us"] / max(1, first_p99[key])
            lines.append(f"| {backend} | {size:,} | {name} | {r['rps']:,.0f} | {r['p50_us'] / 1000:.2f} ms | "
                         f"{r['p99_us'] / 1000:.2f} ms | {r['non2xx'] + r['socket_errors']} | "
                         f"{'**' if name == 'list' else ''}{ratio:.2f}x{'**' if name == 'list' else ''} | "
                         f"{'**' if name != 'preview' else ''}{growth:.2f}x{'**' if name != 'preview' else ''} |")
    lines += ["", "| store | sessions imported | events | seconds | events/s | store bytes per session (at the size) |",
              "|---|---:|---:|---:|---:|---:|"]
    for (backend, count, events, seconds), row in zip(imports, rows):
        lines.append(f"| {backend} | {count:,} | {events:,} | {seconds:.1f} | {events / max(seconds, 1e-9):,.0f} | "
                     f"{row[5]:,.0f} (at {row[1]:,}) |")
    lines += ["", "5xx answers counted by the servers' /metrics during the runs: "
              f"{sum(r[4] for r in rows):.0f}; server peak RSS "
              + ", ".join(f"{r[0]} {r[1]:,}: {r[3]:.0f} MiB" for r in rows) + "."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("store-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
