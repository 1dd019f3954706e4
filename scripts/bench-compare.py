#!/usr/bin/env python3
"""Two server binaries, before and after a change, in one run (issue 34: no route slower than
0.95x of before; docs/PERFORMANCE.md, "Before and after, in one run").

For each backend (SQLite in a file per binary, PostgreSQL in one cluster of its own with a
database per binary), each binary imports the same generated sessions (`--sessions`, as
scripts/bench-store.py makes them, plus the detail route's session of 20 events and 3 nudges)
into its own store and serves it; then wrk drives both servers in turn, route by route, in
`--rounds` rounds whose order of binaries alternates, so both meet the same machine:

- preview: `POST /v1/nudges/preview` (no store);
- sessions, nudges: `GET /v1/sessions?limit=50`, `GET /v1/nudges?limit=50` (first pages);
- detail: `GET /v1/sessions/{id}`;
- relay: `POST /v1/events`, batches of 50 page views over 1,000 publishable keys (16
  connections, as scripts/bench-relay.py);
- backtest: `POST /v1/nudges/backtest` of a draft (the storefront without `sizing-help`) over
  every stored session (2 connections).

Reported per store and route: requests per second of each binary, after / before, and p99.

    python3 scripts/bench-compare.py --before PATH [--after target/release/nudge-rules-server]
        [--sessions 10000] [--duration 24] [--rounds 4] [--backends sqlite,postgres]
        [--routes preview,sessions,nudges,detail,relay,backtest] [--write]

The binaries' migrations may differ: each store is made and migrated by its own binary.
--write puts the table into docs/PERFORMANCE.md between the compare-bench markers.
"""
import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import benchlib as bench
from benchlib import DETAIL_ID, write_between

ROOT = bench.ROOT
SECRET_KEYS = bench.secret_keys()


def write_sites(tmp, now_ms):
    """One site with the secret keys of the read routes and the relay's publishable keys;
    returns (sites file, wrk environment of the reads, wrk environment of the relay)."""
    _, relay_env = bench.relay_setup(tmp, now_ms)
    sites = bench.write_sites(tmp, keys=SECRET_KEYS, site_keys=(tmp / "keys.txt").read_text().split(),
                              rate_limit=100000)
    bench.write_keys(tmp / "secret-keys.txt", SECRET_KEYS)
    (tmp / "read.lua").write_text(bench.READ_WRK_SCRIPT)
    read_env = {"BENCH_KEYS": str(tmp / "secret-keys.txt"), "BENCH_SCRIPT": str(tmp / "read.lua")}
    return sites, read_env, relay_env


def routes(read_env, relay_env):
    """(name, path, wrk environment, connections) of each route."""
    backtest = json.dumps({"config": bench.draft(), "from": "2000-01-01T00:00:00Z"})
    return [
        ("preview", "/v1/nudges/preview", {**read_env, "BENCH_METHOD": "POST", "BENCH_BODY": bench.REQUEST}, 64),
        ("sessions", "/v1/sessions?limit=50", {**read_env, "BENCH_METHOD": "GET"}, 64),
        ("nudges", "/v1/nudges?limit=50", {**read_env, "BENCH_METHOD": "GET"}, 64),
        ("detail", f"/v1/sessions/{DETAIL_ID}", {**read_env, "BENCH_METHOD": "GET"}, 64),
        ("relay", "/v1/events", relay_env, 16),
        ("backtest", "/v1/nudges/backtest", {**read_env, "BENCH_METHOD": "POST", "BENCH_BODY": backtest}, 2),
    ]


def fill(tmp, sites, store, sessions, now_ms, binary):
    """The detail session and `sessions` generated ones, imported by `binary`."""
    bench.import_file(sites, store, tmp / "detail.jsonl", binary)
    bench.import_sessions(tmp, sites, store, 0, sessions, now_ms, binary)


def run_route(api, route, seconds, tag):
    _, path, env, connections = route
    return bench.wrk(api, path, seconds, connections, {**env, "BENCH_RUN": tag})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, type=pathlib.Path, help="the server binary before the change")
    parser.add_argument("--after", type=pathlib.Path, default=bench.BINARY, help="the binary after (default: %(default)s)")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--duration", type=int, default=24, help="seconds per route and binary, over all rounds")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--routes", default="preview,sessions,nudges,detail,relay,backtest",
                        help="the routes to drive, by name (default: all)")
    parser.add_argument("--write", action="store_true", help="write the table into docs/PERFORMANCE.md")
    args = parser.parse_args()
    binaries = {"before": args.before.resolve(), "after": args.after.resolve()}
    for name, binary in binaries.items():
        if not binary.exists():
            sys.exit(f"--{name} {binary} is missing (the after binary: cargo build --release -p nudge-rules-server)")
    now_ms = int(time.time() * 1000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        sites, read_env, relay_env = write_sites(tmp, now_ms)
        (tmp / "detail.jsonl").write_text(bench.detail_line(now_ms) + "\n")
        table = [r for r in routes(read_env, relay_env) if r[0] in args.routes.split(",")]
        for backend in args.backends.split(","):
            pg = bench.Postgres(tmp) if backend == "postgres" else None
            servers = {}
            try:
                for name, binary in binaries.items():
                    if pg:
                        subprocess.run([str(pg.bin / "createdb"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", name],
                                       check=True)
                        store = pg.url.rsplit("/", 1)[0] + f"/{name}"
                    else:
                        store = f"sqlite:{tmp / (name + '.db')}"
                    print(f"{backend}, {name}: importing {args.sessions:,} sessions", flush=True)
                    fill(tmp, sites, store, args.sessions, now_ms, binary)
                    if pg:
                        pg.checkpoint()
                    servers[name] = bench.start_store_server(sites, store, binary)
                runs = {(route[0], name): [] for route in table for name in binaries}
                for route in table:
                    for name in binaries:
                        run_route(servers[name][1], route, 2, f"{backend}-{name}-warm")
                seconds = max(1, args.duration // args.rounds)
                for round_ in range(args.rounds):
                    order = list(binaries) if round_ % 2 == 0 else list(binaries)[::-1]
                    for route in table:
                        for name in order:
                            runs[(route[0], name)].append(
                                run_route(servers[name][1], route, seconds, f"{backend}-{name}-{round_}"))
                for route in table:
                    before = bench.merge(runs[(route[0], "before")])
                    after = bench.merge(runs[(route[0], "after")])
                    ratio = after["rps"] / before["rps"] if before["rps"] else float("nan")
                    errors = sum(r["non2xx"] + r["socket_errors"] for r in (before, after))
                    rows.append((backend, route[0], before, after, ratio, errors))
                    print(f"  {route[0]:9} before {before['rps']:9,.0f}/s  after {after['rps']:9,.0f}/s  "
                          f"{ratio:.2f}x  p99 {before['p99_us'] / 1000:.2f} -> {after['p99_us'] / 1000:.2f} ms"
                          f"  non-2xx {errors}", flush=True)
            finally:
                for proc, _, _ in servers.values():
                    bench.stop_server(proc)
                if pg:
                    pg.stop()
    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-compare.py` on {time.strftime('%Y-%m-%d')}, tree {commit}: before "
        f"`{args.before.name}` ({hashlib.sha256(args.before.read_bytes()).hexdigest()[:12]}), after "
        f"`{args.after.name}` ({hashlib.sha256(args.after.read_bytes()).hexdigest()[:12]}); {os.cpu_count()} cores "
        f"shared by both servers, the database and wrk; {args.sessions:,} sessions per store; {args.duration} s "
        f"per route and binary in {args.rounds} rounds of alternating order; load average "
        f"{os.getloadavg()[0]:.1f} at the end. The relay's figure is batches of 50 events per second.",
        "",
        "| store | route | before, requests/s | after, requests/s | after / before (target at least 0.95x) "
        "| p99 before | p99 after | non-2xx |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for backend, name, before, after, ratio, errors in rows:
        lines.append(f"| {backend} | {name} | {before['rps']:,.0f} | {after['rps']:,.0f} | {ratio:.2f}x | "
                     f"{before['p99_us'] / 1000:.2f} ms | {after['p99_us'] / 1000:.2f} ms | {errors} |")
    text = "\n".join(lines)
    print()
    print(text)
    if args.write:
        write_between("compare-bench", text + "\n")


if __name__ == "__main__":
    main()
