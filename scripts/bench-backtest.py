#!/usr/bin/env python3
"""The backtest's speed (`make bench-server`; docs/PERFORMANCE.md, "Backtest figures"; docs/contract/backtest.md).

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own started here) and
each size (10,000 and 100,000 sessions, generated as scripts/bench-store.py generates them: 3
to 7 page views and 0.6 nudges each, over the last 25 days), the sessions are written to one
JSONL file and imported into the store of one site whose live config is
examples/storefront.json. Then, in alternating rounds of the same run:

- baseline: `nudge-rules replay --summary --json` of that JSONL file against the live config
  (the CLI reads, checks and replays the file: what docs/PERFORMANCE.md's "replay 10,000
  recorded sessions" row measures);
- backtest: `POST /v1/nudges/backtest` of a draft (the storefront without `sizing-help`) over
  the same sessions, which replays each against the draft and against the live config.

Reported: sessions per second of each, the backtest's ratio to the baseline (the target is at
least 0.5x) and its wall time at 100,000 sessions (the target is at most 2 s).

    python3 scripts/bench-backtest.py [--sizes 10000,100000] [--rounds 5] [--write]

--write puts the table into docs/PERFORMANCE.md between the backtest-bench markers.
"""
import argparse
import json
import pathlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import benchlib as bench
from benchlib import CONFIG, draft, write_between

ROOT = bench.ROOT
CLI = ROOT / "target" / "release" / "nudge-rules"
KEY = "sk_test_benchBacktestKey00001"


def write_sites(tmp):
    sites = tmp / "sites.toml"
    printed = subprocess.run([str(bench.BINARY), "hash-key", KEY], capture_output=True, text=True,
                             check=True).stdout
    digest = re.search(r'"(sha256:[0-9a-f]{64})"', printed).group(1)
    sites.write_text(f'[[site]]\nid = "bench"\nconfig = "{CONFIG}"\nrate_limit = 100000\nkeys = ["{digest}"]\n')
    return sites


def write_sessions(path, count, now_ms):
    rng = random.Random(count)
    with path.open("w") as f:
        for n in range(count):
            f.write(bench.session_line(rng, n, now_ms) + "\n")


def time_cli(path):
    t = time.monotonic()
    out = subprocess.run([str(CLI), "replay", "--summary", "--json", "--config", str(CONFIG), str(path)],
                         capture_output=True, text=True, check=True)
    seconds = time.monotonic() - t
    return seconds, json.loads(out.stdout)["sessions"]


def time_backtest(api, body):
    request = urllib.request.Request(f"http://{api}/v1/nudges/backtest", data=body, method="POST", headers={
        "Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    t = time.monotonic()
    with urllib.request.urlopen(request, timeout=120) as r:
        answer = json.loads(r.read())
    seconds = time.monotonic() - t
    return seconds, answer["data"]["sessions"]


def measure(backend, store, sites, path, count, rounds):
    proc, api, _ = bench.start_store_server(sites, store)
    try:
        body = json.dumps({"config": draft(), "from": "2000-01-01T00:00:00Z"}).encode()
        time_backtest(api, body)  # warm: caches and connections
        time_cli(path)
        cli, server = [], []
        for round_ in range(rounds):
            pair = [("cli", lambda: time_cli(path)), ("server", lambda: time_backtest(api, body))]
            for name, run in pair if round_ % 2 == 0 else pair[::-1]:
                seconds, sessions = run()
                if sessions != count:
                    sys.exit(f"{name} replayed {sessions} sessions, expected {count}")
                (cli if name == "cli" else server).append(seconds)
        c, s = statistics.median(cli), statistics.median(server)
        row = {"backend": backend, "sessions": count, "cli_s": c, "backtest_s": s,
               "cli_per_s": count / c, "backtest_per_s": count / s, "ratio": c / s}
        print(f"  {backend} {count:,}: replay of the file {c * 1000:.0f} ms ({count / c:,.0f}/s), backtest "
              f"{s * 1000:.0f} ms ({count / s:,.0f}/s): {c / s:.2f}x", flush=True)
        return row
    finally:
        proc.terminate()
        proc.wait()


def table(rows):
    lines = ["| store | sessions | `nudge-rules replay` of the file (baseline) | backtest from the store "
             "(draft and live) | ratio (target >= 0.5x) | at 100,000: at most 2 s |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        within = ("yes" if r["backtest_s"] <= 2 else "no") if r["sessions"] == 100_000 else ""
        lines.append(f"| {r['backend']} | {r['sessions']:,} | {r['cli_s'] * 1000:,.0f} ms "
                     f"({r['cli_per_s']:,.0f} sessions/s) | {r['backtest_s'] * 1000:,.0f} ms "
                     f"({r['backtest_per_s']:,.0f} sessions/s) | {r['ratio']:.2f}x | {within} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    for binary in (bench.BINARY, CLI):
        if not binary.exists():
            sys.exit(f"{binary} is missing: cargo build --release -p nudge-rules-server && cargo build --release --bin nudge-rules")
    sizes = [int(s) for s in args.sizes.split(",")]
    now_ms = int(time.time() * 1000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        sites = write_sites(tmp)
        for backend in args.backends.split(","):
            pg = bench.Postgres(tmp) if backend == "postgres" else None
            try:
                for size in sizes:
                    path = tmp / f"sessions-{size}.jsonl"
                    write_sessions(path, size, now_ms)
                    if backend == "sqlite":
                        store = f"sqlite:{tmp / f'backtest-{size}.db'}"
                    else:
                        store = pg.url
                        subprocess.run(["psql", pg.url, "-qc",
                                        "DROP TABLE IF EXISTS events, sessions, nudges, config_versions, _sqlx_migrations"],
                                       check=True, capture_output=True)
                    bench.import_file(sites, store, path)
                    rows.append(measure(backend, store, sites, path, size, args.rounds))
            finally:
                if pg:
                    pg.stop()
    tree = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=ROOT).stdout.strip()
    load = open("/proc/loadavg").read().split()[0]
    text = (f"Run of `scripts/bench-backtest.py` (part of `make bench-server`) on {time.strftime('%Y-%m-%d')}, "
            f"tree {tree}; 2 cores shared by the server, the database and the CLI; median of {args.rounds} "
            f"alternating rounds (load average {load} at the end).\n\n{table(rows)}\n")
    print(text)
    if args.write:
        write_between("backtest-bench", text, ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
