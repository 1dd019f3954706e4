#!/usr/bin/env python3
"""The relay while the retention purge runs (`make bench-server`; docs/PERFORMANCE.md, "The purge
under load"; issue 35).

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own), a store holds
`--events` events (10 per session) of sessions 200 days old, past the bench site's 30-day
retention, written by SQL after the server's migrations. A release server starts on it, which
purges at start; wrk sends relay batches of 50 events from 16 connections in 2 s slices while the
purge runs (until /metrics counts the purged sessions), then the same number of slices after it.
Reported: the purge's duration, the batches of each phase, the batches not answered 202 during
the purge (target 0: every batch admitted), p50 and p99 of a batch in each phase and their ratio
(target: p99 during the purge at most 2x that after it, in the same run), and the store errors
/metrics counted.

    python3 scripts/bench-purge.py [--events 1000000] [--write]
"""
import argparse
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import time

import benchlib as bench
from benchlib import DAY_MS, metric, write_between

ROOT = bench.ROOT
SLICE_S = 2


def old_rows_sql(events, old_ms, backend):
    """SQL that writes `events` page views, 10 per session, and their sessions, at `old_ms`."""
    sessions = events // 10
    if backend == "sqlite":
        series = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last}) "
        ev = series.format(last=events - 1) + (
            "INSERT INTO events (site, mode, message_id, session_id, type, occurred_at, url, path_key, intent_score, received_at) "
            f"SELECT 'bench', 'test', 'old-' || i, 'sess_old' || (i / 10), 'PAGE_VIEW', {old_ms} + i % 10, '/p', '/p', 10, {old_ms} FROM n")
        se = series.format(last=sessions - 1) + (
            "INSERT INTO sessions (site, mode, id, started_at, ended_at, page_count, intent_score, converted, nudge_count) "
            f"SELECT 'bench', 'test', 'sess_old' || i, {old_ms}, {old_ms} + 9, 1, 10, 0, 0 FROM n")
    else:
        ev = ("INSERT INTO events (site, mode, message_id, session_id, type, occurred_at, url, path_key, intent_score, received_at) "
              f"SELECT 'bench', 'test', 'old-' || i, 'sess_old' || (i / 10), 'PAGE_VIEW', {old_ms} + i % 10, '/p', '/p', 10, {old_ms} "
              f"FROM generate_series(0, {events - 1}) AS i")
        se = ("INSERT INTO sessions (site, mode, id, started_at, ended_at, page_count, intent_score, converted, nudge_count) "
              f"SELECT 'bench', 'test', 'sess_old' || i, {old_ms}, {old_ms} + 9, 1, 10, 0, 0 FROM generate_series(0, {sessions - 1}) AS i")
    return [ev, se]


def run_backend(backend, tmp, sites, env, args):
    store, db, pg = bench.open_store(backend, tmp, "purge.db")
    try:
        # The migrations first (a server started and stopped on the empty store), then the old rows.
        server, _, _ = bench.start_store_server(sites, store)
        bench.stop_server(server)
        old_ms = int(time.time() * 1000) - 200 * DAY_MS
        t = time.monotonic()
        if pg is None:
            con = sqlite3.connect(db, isolation_level=None)
            for sql in old_rows_sql(args.events, old_ms, backend):
                con.execute(sql)
            con.close()
        else:
            for sql in old_rows_sql(args.events, old_ms, backend):
                subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "bench",
                                "-c", sql], check=True, capture_output=True)
            subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "bench",
                            "-c", "VACUUM ANALYZE"], check=True, capture_output=True)
        print(f"{backend}: {args.events:,} old events written in {time.monotonic() - t:.0f} s", flush=True)
        server, api, admin = bench.start_store_server(sites, store)
        started = time.monotonic()
        try:
            during = []
            while metric(admin, "nudge_store_purged_sessions_total") == 0:
                run = bench.wrk(api, "/v1/events", SLICE_S, args.connections, {**env, "BENCH_RUN": f"d{len(during)}"})
                if metric(admin, "nudge_store_purged_sessions_total") == 0:
                    during.append(run)  # a slice wholly inside the purge
                if time.monotonic() - started > 1800:
                    sys.exit("the purge did not end in 30 minutes")
            purge_s = time.monotonic() - started
            after = [bench.wrk(api, "/v1/events", SLICE_S, args.connections, {**env, "BENCH_RUN": f"a{i}"})
                     for i in range(max(1, len(during)))]
            store_errors = metric(admin, "nudge_store_errors_total")
            purged = metric(admin, "nudge_store_purged_sessions_total")
        finally:
            bench.stop_server(server)
    finally:
        if pg:
            pg.stop()
    if not during:
        sys.exit(f"{backend}: the purge ended before a whole {SLICE_S} s slice; use more --events")
    d, a = bench.merge(during), bench.merge(after)
    print(f"{backend}: purge {purge_s:.1f} s ({purged:,.0f} sessions); during: {d['requests']} batches, "
          f"{d['non2xx'] + d['socket_errors']} not 202, p99 {d['p99_us'] / 1000:.2f} ms; after: p99 "
          f"{a['p99_us'] / 1000:.2f} ms; ratio {d['p99_us'] / max(1, a['p99_us']):.2f}x; store errors {store_errors:.0f}",
          flush=True)
    return backend, purge_s, purged, d, a, store_errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    bench.require_binary()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        sites, env = bench.relay_setup(tmp)
        for backend in args.backends.split(","):
            rows.append(run_backend(backend, tmp, sites, env, args))
    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-purge.py` (part of `make bench-server`) on {time.strftime('%Y-%m-%d')}, tree {commit}; "
        f"{os.cpu_count()} cores shared by the server, the database and wrk; a store of {args.events:,} events "
        f"({args.events // 10:,} sessions) past retention, purged at start while wrk sends relay batches of 50 events "
        f"from {args.connections} connections in {SLICE_S} s slices; then as many slices after the purge.",
        "",
        "| store | purge | batches during it | not 202 during it (target 0) | p50 during / after | p99 during / after | p99 ratio (target at most 2x) | store errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for backend, purge_s, purged, d, a, errors in rows:
        lines.append(f"| {backend} | {purge_s:.1f} s, {purged:,.0f} sessions | {d['requests']:,} | "
                     f"{d['non2xx'] + d['socket_errors']} | {d['p50_us'] / 1000:.2f} / {a['p50_us'] / 1000:.2f} ms | "
                     f"{d['p99_us'] / 1000:.2f} / {a['p99_us'] / 1000:.2f} ms | **{d['p99_us'] / max(1, a['p99_us']):.2f}x** | "
                     f"{errors:.0f} |")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("purge-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
