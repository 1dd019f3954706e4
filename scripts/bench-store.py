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
import hashlib
import importlib.util
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from doc_markers import write_between  # noqa: E402

spec = importlib.util.spec_from_file_location("bench_server", ROOT / "scripts" / "bench-server.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

BINARY = bench.BINARY
KEYS = 256
DAY_MS = 86_400_000
PATHS = ["/", "/collections/new-arrivals", "/products/linen-shirt", "/products/wool-sweater",
         "/search?q=jacket", "/cart", "/blog/packing-light", "/products/canvas-sneakers"]
TYPES = ["chat_bubble", "toast", "exit_modal", "sticky_bar"]

WRK_SCRIPT = r"""
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do keys[#keys + 1] = line end
local method = os.getenv("BENCH_METHOD")
local body = os.getenv("BENCH_BODY")
local requests = {}
local n = 0
init = function(args)
  for i, key in ipairs(keys) do
    local headers = { ["Authorization"] = "Bearer " .. key }
    if method == "POST" then headers["Content-Type"] = "application/json" end
    requests[i] = wrk.format(method, wrk.path, headers, method == "POST" and body or nil)
  end
  n = math.random(#requests)
end
request = function()
  n = n % #requests + 1
  return requests[n]
end
""" + bench.WRK_DONE
def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def session_line(rng, n, now_ms, events=None, nudges=None):
    start = now_ms - rng.randrange(1, 25 * DAY_MS)
    count = events if events is not None else rng.randint(3, 7)
    at = start
    evs = []
    for _ in range(count):
        evs.append({"type": "PAGE_VIEW", "url": rng.choice(PATHS), "occurred_at": iso(at)})
        at += rng.randint(2_000, 40_000)
    shown = nudges if nudges is not None else (1 if rng.random() < 0.6 else 0)
    nds = [{"nudge_id": f"nudg_{n:08d}x{j}", "type": rng.choice(TYPES), "shown_at": iso(start + 1000 * (j + 1)),
            "outcome": rng.choice(["shown", "clicked", "dismissed"]), "influenced_conversion": False}
           for j in range(shown)]
    return json.dumps({"id": f"sess_{n:08d}", "ended_at": iso(at), "intent_score": rng.randint(0, 100),
                       "events": evs, "nudges": nds}, separators=(",", ":"))


def import_sessions(tmp, sites, store, first, last, now_ms):
    """Imports sessions first..last-1 in files of 100,000; returns (events stored, seconds)."""
    rng = random.Random(first)
    events = 0
    seconds = 0.0
    for chunk_start in range(first, last, 100_000):
        chunk_end = min(last, chunk_start + 100_000)
        path = tmp / "sessions.jsonl"
        with path.open("w") as f:
            for n in range(chunk_start, chunk_end):
                f.write(session_line(rng, n, now_ms) + "\n")
        t = time.monotonic()
        out = subprocess.run([str(BINARY), "import", "--sites", str(sites), "--store", store, "--site", "bench",
                              "--mode", "test", str(path)], capture_output=True, text=True, check=True)
        seconds += time.monotonic() - t
        m = re.search(r": (\d+) events stored", out.stdout)
        events += int(m.group(1)) if m else 0
        print(f"  imported sessions to {chunk_end:,} ({events:,} events, {seconds:.0f} s)", flush=True)
    return events, seconds


class Postgres:
    """A cluster of its own in a temp folder, like the tests' (server/tests/integration/pg.rs)."""

    def __init__(self, tmp):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        self.bin = pathlib.Path("/usr/lib/postgresql") / str(versions[-1]) / "bin"
        self.dir = tmp / "pg"
        self.dir.mkdir()
        os.chmod(tmp, 0o755)
        self.data = self.dir / "data"
        self.data.mkdir()
        shutil.chown(self.data, "postgres", "postgres")
        os.chmod(self.dir, 0o755)
        self.port = bench.free_port()
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self.run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.data / "log"), "-o",
                 f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c max_connections=200 "
                 f"-c shared_buffers=256MB", "start")
        subprocess.run([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "bench"], check=True)
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/bench"

    def run(self, program, *args):
        subprocess.run(["runuser", "-u", "postgres", "--", str(self.bin / program), *args], check=True,
                       stdout=subprocess.DEVNULL)

    def size_bytes(self):
        out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "bench",
                              "-Atc", "SELECT pg_database_size('bench')"], capture_output=True, text=True,
                             check=True).stdout
        return int(out.strip())

    def checkpoint(self):
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "bench",
                        "-qc", "CHECKPOINT"], check=True, capture_output=True)

    def stop(self):
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")


def sqlite_size_bytes(path):
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def start_server(sites, store):
    return bench.start_server(sites, extra_args=("--store", store))


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
    if not BINARY.exists():
        sys.exit(f"{BINARY} missing: cargo build --release -p nudge-rules-server")
    now_ms = int(time.time() * 1000)
    rows = []
    imports = []
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
        env = {"BENCH_KEYS": str(tmp / "keys.txt"), "BENCH_BODY": bench.REQUEST,
               "BENCH_SCRIPT": str(tmp / "bench.lua")}
        # The detail route's session: 20 events, 3 nudges.
        rng = random.Random(7)
        (tmp / "detail.jsonl").write_text(session_line(rng, 99_999_999, now_ms, events=20, nudges=3) + "\n")
        detail_id = "sess_99999999"
        routes = [("preview", "/v1/nudges/preview", "POST"), ("list", "/v1/sessions?limit=50", "GET"),
                  ("detail", f"/v1/sessions/{detail_id}", "GET")]
        for backend in args.backends.split(","):
            pg = None
            if backend == "sqlite":
                db = tmp / "store.db"
                store = f"sqlite:{db}"
            else:
                pg = Postgres(tmp)
                store = pg.url
            try:
                subprocess.run([str(BINARY), "import", "--sites", str(sites), "--store", store, "--site", "bench",
                                "--mode", "test", str(tmp / "detail.jsonl")], check=True, capture_output=True)
                have = 0
                for size in sizes:
                    print(f"{backend}: filling to {size:,} sessions", flush=True)
                    events, seconds = import_sessions(tmp, sites, store, have, size, now_ms)
                    imports.append((backend, size - have, events, seconds))
                    have = size
                    if pg:
                        # The import's writes flushed before measuring, not by the checkpointer
                        # during the runs (a million sessions leave about 3 GB to write).
                        pg.checkpoint()
                    server, api, admin = start_server(sites, store)
                    try:
                        results = measure(api, routes, args, env)
                        rss = bench.peak_rss_mib(server.pid)
                        errors_5xx = bench.five_xx(admin)
                    finally:
                        server.terminate()
                        server.wait(timeout=60)
                    size_bytes = pg.size_bytes() if pg else sqlite_size_bytes(db)
                    for name, _, _ in routes:
                        r = results[name]
                        print(f"  {name:8} {r['rps']:9.0f} req/s  p50 {r['p50_us'] / 1000:.2f} ms  "
                              f"p99 {r['p99_us'] / 1000:.2f} ms  non-2xx {r['non2xx']}", flush=True)
                    rows.append((backend, size, results, rss, errors_5xx, size_bytes / (size + 1)))
            finally:
                if pg:
                    pg.stop()

    commit = subprocess.run(["git", "describe", "--always", "--dirty= with uncommitted changes"],
                            cwd=ROOT, capture_output=True, text=True).stdout.strip()
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
