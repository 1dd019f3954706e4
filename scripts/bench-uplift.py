#!/usr/bin/env python3
"""The uplift report over a million stored sessions (issue 32; docs/PERFORMANCE.md, "Uplift report figures").

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own started here, as the
tests do), a release server starts on an empty store and the sessions are sent through its relay
(`POST /v1/events`, batches of at most 50 events from 4 threads over 1,000 publishable keys, so
the per-key limit never binds) in the demo's shape (server/src/demo.rs): a PAGE_VIEW; a second
later the exposure, a NUDGE_SHOWN naming one of 10 rules or, for 10 % of the sessions, a
NUDGE_HELD_OUT of it; for 8 % of the treated and 6 % of the held-out sessions a PURCHASE ten
minutes later; every event with the session's `visitor_id`; the sessions spread over the 20 hours
before now (the relay takes events up to 24 hours old). Then, in alternating rounds of one run:
`GET /v1/reports/uplift` over the last 24 hours (the whole HTTP answer, timed by the client), and
the baseline, a bare `SELECT count(*)` of the same rows (the window's exposures) on the same
store (Python's sqlite3 on the file; psql's `\\timing` for PostgreSQL). Reported: the report's
median and slowest time, the count's median, their ratio, and the sessions the report counted
(checked against those sent).

    python3 scripts/bench-uplift.py [--sessions 1000000] [--rounds 5] [--backends sqlite,postgres] [--write]

--write puts the table into docs/PERFORMANCE.md between the uplift-bench markers.
"""
import argparse
import http.client
import json
import os
import pathlib
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import benchlib as bench
from benchlib import iso, write_between

ROOT = bench.ROOT
KEYS = 1000
BATCH = 50
THREADS = 4
RULES = [(f"rule-{i}", ("toast", "sticky_bar", "chat_bubble", "exit_modal")[i % 4]) for i in range(10)]
HOUR_MS = 3_600_000
SECRET = bench.RELAY_SECRET


def session_events(n, total, now_ms):
    """The events of session n of `total` (module docs): deterministic, no randomness."""
    at = now_ms - 20 * HOUR_MS + n * (20 * HOUR_MS - 60_000) // total
    sid, vid = f"sess_u{n}", f"vis_u{n}"
    rule_id, nudge_type = RULES[n % len(RULES)]
    held_out = n % 10 == 3
    common = {"session_id": sid, "visitor_id": vid, "url": "/products/linen-shirt", "intent_score": 60}
    events = [{**common, "message_id": f"u{n}p", "type": "PAGE_VIEW", "occurred_at": iso(at)}]
    exposure = {**common, "message_id": f"u{n}x", "occurred_at": iso(at + 1000), "rule_id": rule_id,
                "nudge_type": nudge_type}
    if held_out:
        exposure["type"] = "NUDGE_HELD_OUT"
    else:
        exposure.update(type="NUDGE_SHOWN", nudge_id=f"nudg_u{n}")
    events.append(exposure)
    # 8 % of the treated, 6 % of the held out convert (by n's digits: evenly spread).
    if (n // 10) % 50 < (3 if held_out else 4):
        events.append({**common, "message_id": f"u{n}b", "type": "PURCHASE", "occurred_at": iso(at + 601_000),
                       "url": "/checkout/thank-you"})
    return events


def batches(first, last, total, now_ms):
    """Batches of whole sessions, at most BATCH events each."""
    batch = []
    for n in range(first, last):
        events = session_events(n, total, now_ms)
        if len(batch) + len(events) > BATCH:
            yield batch
            batch = []
        batch.extend(events)
    if batch:
        yield batch


def fill(api, keys, total, now_ms):
    """Sends `total` sessions through the relay from THREADS threads; returns (events, seconds)."""
    host, port = api.rsplit(":", 1)
    sent = [0] * THREADS
    failures = []
    progress = {"sessions": 0, "next": total // 10}
    lock = threading.Lock()

    def worker(t):
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        lo, hi = t * total // THREADS, (t + 1) * total // THREADS
        for i, batch in enumerate(batches(lo, hi, total, now_ms)):
            key = keys[(i * THREADS + t) % len(keys)]
            body = json.dumps({"events": batch, "sent_at": iso(int(time.time() * 1000))})
            for attempt in range(5):
                conn.request("POST", "/v1/events", body, {"Authorization": f"Bearer {key}",
                                                          "Content-Type": "application/json"})
                resp = conn.getresponse()
                answer = resp.read()
                if resp.status == 202:
                    break
                if resp.status in (429, 503) and attempt < 4:
                    time.sleep(float(resp.getheader("Retry-After") or 1))
                    continue
                failures.append(f"{resp.status}: {answer[:300]!r}")
                return
            rejected = json.loads(answer).get("rejected") or []
            if rejected:
                failures.append(f"rejected: {rejected[:2]}")
                return
            sent[t] += len(batch)
            with lock:
                progress["sessions"] += len({e["session_id"] for e in batch})
                if progress["sessions"] >= progress["next"]:
                    print(f"  {progress['sessions']:,} of {total:,} sessions sent", flush=True)
                    progress["next"] += total // 10

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if failures:
        sys.exit(f"the relay refused a batch: {failures[0]}")
    return sum(sent), time.monotonic() - started


def report(api, window):
    """One GET /v1/reports/uplift: (seconds, parsed body)."""
    host, port = api.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    query = urllib.parse.urlencode({"from": iso(window[0]), "to": iso(window[1])})
    started = time.monotonic()
    conn.request("GET", f"/v1/reports/uplift?{query}", headers={"Authorization": f"Bearer {SECRET}"})
    resp = conn.getresponse()
    body = resp.read()
    elapsed = time.monotonic() - started
    if resp.status != 200:
        sys.exit(f"GET /v1/reports/uplift answered {resp.status}: {body[:300]!r}")
    return elapsed, json.loads(body)


COUNT_SQL = ("SELECT count(*) FROM exposures WHERE site = 'bench' AND mode = 'test' "
             "AND session_started_at >= {lo} AND session_started_at < {hi}")


def count_sqlite(path, window):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    started = time.monotonic()
    (n,) = db.execute(COUNT_SQL.format(lo=window[0], hi=window[1])).fetchone()
    elapsed = time.monotonic() - started
    db.close()
    return elapsed, n


def count_postgres(pg, window):
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "bench", "-At",
                          "-c", "\\timing on", "-c", COUNT_SQL.format(lo=window[0], hi=window[1])],
                         capture_output=True, text=True, check=True).stdout
    n = int(out.split()[0]) if out.split()[0].isdigit() else int(re.findall(r"^(\d+)$", out, re.M)[0])
    ms = float(re.search(r"Time: ([\d.]+) ms", out).group(1))
    return ms / 1000, n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    bench.require_binary()
    now_ms = int(time.time() * 1000)
    window = (now_ms - 24 * HOUR_MS, now_ms + 60_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        keys = bench.publishable_keys(KEYS)
        sites = bench.write_sites(tmp, keys=[SECRET], site_keys=keys)
        for backend in args.backends.split(","):
            store, db, pg = bench.open_store(backend, tmp, "uplift.db")
            try:
                server, api, admin = bench.start_store_server(sites, store)
                try:
                    print(f"{backend}: sending {args.sessions:,} sessions through the relay", flush=True)
                    events, seconds = fill(api, keys, args.sessions, now_ms)
                    print(f"{backend}: {events:,} events in {seconds:.0f} s ({events / seconds:,.0f} events/s)",
                          flush=True)
                    if pg:
                        pg.run("vacuumdb", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-z", "bench")
                    first, body = report(api, window)
                    counted = sum(r["treated"]["sessions"] + r["control"]["sessions"] for r in body["data"]["rules"])
                    if counted != args.sessions:
                        sys.exit(f"the report counted {counted:,} sessions, {args.sessions:,} were sent")
                    timings, counts = [], []
                    for _ in range(args.rounds):
                        timings.append(report(api, window)[0])
                        c, n = count_sqlite(db, window) if pg is None else count_postgres(pg, window)
                        if n != args.sessions:
                            sys.exit(f"count(*) found {n:,} exposures, {args.sessions:,} were sent")
                        counts.append(c)
                    errors_5xx = bench.five_xx(admin)
                finally:
                    bench.stop_server(server)
            finally:
                if pg:
                    pg.stop()
            med, worst, base = statistics.median(timings), max(timings), statistics.median(counts)
            print(f"{backend}: report first {first:.3f} s, median {med:.3f} s, slowest {worst:.3f} s; "
                  f"count(*) median {base:.3f} s; ratio {med / base:.1f}x; 5xx {errors_5xx:.0f}", flush=True)
            rows.append((backend, events, seconds, first, med, worst, base, errors_5xx))
    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-uplift.py` on {time.strftime('%Y-%m-%d')}, tree {commit}; {os.cpu_count()} cores "
        f"shared by the server, the database and the client; {args.sessions:,} sessions (10 rules, 10 % held out) "
        f"sent through the relay, {args.rounds} rounds; load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| store | events stored through the relay | report, first | report, median (slowest) | target | "
        "bare `count(*)` of the same rows, median | report / count |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for backend, events, seconds, first, med, worst, base, _ in rows:
        met = "met" if worst <= 2.0 else "**missed**"
        lines.append(f"| {backend} | {events:,} ({events / seconds:,.0f}/s) | {first:.3f} s | {med:.3f} s "
                     f"({worst:.3f} s) | at most 2 s: {met} | {base * 1000:.1f} ms | {med / base:.1f}x |")
    lines += ["", f"5xx answers counted by the servers' /metrics: {sum(r[7] for r in rows):.0f}."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("uplift-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
