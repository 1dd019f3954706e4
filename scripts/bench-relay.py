#!/usr/bin/env python3
"""Sustained event ingestion through the relay (`make bench-server`; docs/PERFORMANCE.md, "Relay figures").

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own), a release server
runs on an empty store and wrk sends batches of 50 events (one session each, unique message ids)
from 16 connections over 1,000 publishable keys (so the 10,000 events per key and minute never
bind), for `--duration` seconds: half of it events as the SDK sent them before docs/contract/caps.md, half with
a `visitor_id` on every event, in alternating rounds. Reported: events per second (202 answers
times 50) of each, their ratio, p50 and p99 of a batch, the server's peak RSS, and the floor: the same rows (the `events` table's
columns) inserted by a bare batched insert into the same kind of store in the same run (Python's
sqlite3 with 50 rows per transaction and the server's pragmas; psql with 50-row INSERTs per
transaction for PostgreSQL), with the relay's ratio to it.

    python3 scripts/bench-relay.py [--duration 40] [--write]
"""
import argparse
import os
import pathlib
import sqlite3
import subprocess
import tempfile
import time

import benchlib as bench
from benchlib import BATCH, RELAY_KEYS as KEYS, accepted_per_s, relay_setup, write_between

ROOT = bench.ROOT
# Rounds of each variant (without and with `visitor_id`), alternating, in one run.
ROUNDS = 2

COLUMNS = ("site, mode, message_id, session_id, type, occurred_at, url, path_key, intent_score, "
           "nudge_id, nudge_type, rule_id, outcome, received_at")


def floor_rows(n, now_ms):
    for r in range(n // BATCH):
        yield [("bench", "test", f"f-{r}-{i}", f"sess_f{r}", "PAGE_VIEW", now_ms, f"/p{i}", f"/p{i}", i,
                None, None, None, None, now_ms) for i in range(BATCH)]


def sqlite_floor(path, seconds, now_ms):
    """Rows per second of 50-row transactions into the events table of a migrated store."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    done = 0
    t = time.monotonic()
    for batch in floor_rows(10_000_000, now_ms):
        db.execute("BEGIN")
        db.executemany(f"INSERT INTO events ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                       "ON CONFLICT (site, mode, message_id) DO NOTHING", batch)
        db.execute("COMMIT")
        done += len(batch)
        if time.monotonic() - t >= seconds:
            break
    return done / (time.monotonic() - t)


def pg_floor(pg, seconds, now_ms):
    """Rows per second of 50-row INSERT transactions sent by psql."""
    sql = pathlib.Path(tempfile.mkstemp(suffix=".sql")[1])
    rows_total = 0
    with sql.open("w") as f:
        for r, batch in enumerate(floor_rows(400_000, now_ms)):
            values = ",".join(
                f"('bench','test','f-{r}-{i}','sess_f{r}','PAGE_VIEW',{now_ms},'/p{i}','/p{i}',{i},NULL,NULL,NULL,NULL,{now_ms})"
                for i in range(BATCH))
            f.write(f"BEGIN; INSERT INTO events ({COLUMNS}) VALUES {values} ON CONFLICT DO NOTHING; COMMIT;\n")
            rows_total += BATCH
    t = time.monotonic()
    proc = subprocess.Popen(["psql", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "bench",
                             "-f", str(sql)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait()
    elapsed = time.monotonic() - t
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "bench", "-Atc",
                          "SELECT count(*) FROM events WHERE message_id LIKE 'f-%'"],
                         capture_output=True, text=True, check=True).stdout
    sql.unlink()
    return int(out.strip()) / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=40, help="seconds of load in all, shared by the two variants")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    bench.require_binary()
    rows = []
    now_ms = int(time.time() * 1000)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        sites, env = relay_setup(tmp, now_ms)
        for backend in args.backends.split(","):
            store, db, pg = bench.open_store(backend, tmp, "relay.db")
            try:
                server, api, admin = bench.start_store_server(sites, store)
                try:
                    bench.wrk(api, "/v1/events", 2, args.connections, {**env, "BENCH_RUN": "warm"})
                    # Events without and with `visitor_id`, in alternating rounds of one run (the
                    # store grows through the run; alternating spreads that over both).
                    runs = {"plain": [], "visitor": []}
                    seconds_each = max(1, args.duration // (2 * ROUNDS))
                    for round_ in range(2 * ROUNDS):
                        variant = ("plain", "visitor")[round_ % 2]
                        runs[variant].append(bench.wrk(api, "/v1/events", seconds_each, args.connections, {
                            **env, "BENCH_RUN": str(round_), "BENCH_VISITOR": "1" if variant == "visitor" else "0"}))
                    r = bench.merge(runs["plain"])
                    rv = bench.merge(runs["visitor"])
                    rss = bench.peak_rss_mib(server.pid)
                    errors_5xx = bench.five_xx(admin)
                finally:
                    bench.stop_server(server)
                floor_s = max(1, args.duration // 2)
                floor = sqlite_floor(db, floor_s, now_ms) if pg is None else pg_floor(pg, floor_s, now_ms)
            finally:
                if pg:
                    pg.stop()
            events_per_s, with_visitor = accepted_per_s(r), accepted_per_s(rv)
            print(f"{backend}: {events_per_s:,.0f} events/s (floor {floor:,.0f} rows/s), p50 {r['p50_us'] / 1000:.2f} ms, "
                  f"p99 {r['p99_us'] / 1000:.2f} ms, non-2xx {r['non2xx']}, RSS {rss:.0f} MiB; with visitor_id "
                  f"{with_visitor:,.0f} events/s ({with_visitor / events_per_s:.2f}x)", flush=True)
            rows.append((backend, events_per_s, r, floor, rss, errors_5xx, with_visitor))
    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-relay.py` (part of `make bench-server`) on {time.strftime('%Y-%m-%d')}, tree {commit}; "
        f"{os.cpu_count()} cores shared by the server, the database and wrk ({args.connections} connections, batches of "
        f"{BATCH} events, {args.duration} s, {KEYS} publishable keys; load average {os.getloadavg()[0]:.1f} at the end).",
        "",
        "| store | events/s through the relay (202 answers only) | batch p50 | batch p99 | non-2xx | floor: bare 50-row inserts, rows/s | relay / floor | with `visitor_id` on every event, events/s | with / without (target at least 0.95x) | server peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for backend, eps, r, floor, rss, _, eps_v in rows:
        lines.append(f"| {backend} | {eps:,.0f} | {r['p50_us'] / 1000:.2f} ms | {r['p99_us'] / 1000:.2f} ms | "
                     f"{r['non2xx'] + r['socket_errors']} | {floor:,.0f} | **{eps / floor:.2f}x** | {eps_v:,.0f} | "
                     f"**{eps_v / eps:.2f}x** | {rss:.0f} MiB |")
    lines += ["", "5xx answers counted by the servers' /metrics: "
              f"{sum(r[5] for r in rows):.0f}. One site sending 10,000 events per minute is 167 events/s: at the "
              "rates above, one instance carries "
              + ", ".join(f"{backend} about {eps / (10_000 / 60):,.0f} such sites" for backend, eps, *_ in rows) + "."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("relay-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
