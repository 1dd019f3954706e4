"""The helpers the scripts of scripts/ share, imported by name (`import benchlib`; Python puts the
running script's folder first on its path): where figures go in the docs, the tree a run
measured, free loopback ports, the release server, Redis and PostgreSQL started for a run and
stopped by their process, wrk runs and their merged histograms, the bench site's sites file and
keys, and the generated traffic several benchmarks send (the stored sessions of
scripts/bench-store.py, the relay batches of scripts/bench-relay.py, the backtest's draft).

Each benchmark keeps what only it measures; anything a second script needs lives here.
"""
import hashlib
import json
import os
import pathlib
import random
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
PERFORMANCE = ROOT / "docs" / "PERFORMANCE.md"
# The release server the benchmarks drive.
BINARY = ROOT / "target" / "release" / "nudge-rules-server"
# The config every bench site serves, and the preview request of the load runs.
CONFIG = ROOT / "examples" / "storefront.json"
REQUEST = '{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}'
DAY_MS = 86_400_000


# --- the docs and the tree ----------------------------------------------------------------------

def write_between(name, text, doc=PERFORMANCE):
    """Replaces what is between the "<!-- NAME:begin -->" and "<!-- NAME:end -->" markers of `doc`
    (docs/PERFORMANCE.md by default) with `text`; exits 1 without them. Every block is listed at
    the top of docs/PERFORMANCE.md, and scripts/check-docs.py checks that each one a script
    writes has its markers."""
    content = doc.read_text()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in content or end not in content:
        print(f"no {begin} marker in {doc}; not written", file=sys.stderr)
        sys.exit(1)
    before, rest = content.split(begin, 1)
    after = rest.split(end, 1)[1]
    doc.write_text(f"{before}{begin}\n{text}{end}{after}")
    print(f"wrote {doc.relative_to(ROOT)}")


def tree():
    """The measured tree, as a run's header names it: `git describe --always`, with " with
    uncommitted changes" when the work tree differs from the commit."""
    return subprocess.run(["git", "describe", "--always", "--dirty= with uncommitted changes"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()


def iso(ms):
    """Unix milliseconds as RFC 3339 UTC with three fraction digits, as the server writes times."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


# --- processes for a run: ports, the server, Redis, PostgreSQL ----------------------------------

def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_binary(binary=BINARY, build="cargo build --release -p nudge-rules-server"):
    """Exits with the command that builds `binary` when it is missing."""
    if not binary.exists():
        sys.exit(f"{binary} missing: {build}")


def start_redis():
    """A redis-server on a free loopback port, without persistence, answering PING:
    (process, URL)."""
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


def start_server(sites, redis_url=None, extra_args=("--constant-route",), binary=None):
    """A release server (`binary`, BINARY by default) on free loopback ports, ready:
    (process, API address, admin address). Stop it with stop_server()."""
    args = [str(binary or BINARY), "--sites", str(sites), "--listen", "127.0.0.1:0",
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


def start_store_server(sites, store, binary=None):
    """A release server on `store` (`sqlite:PATH` or a PostgreSQL URL), without the constant
    route."""
    return start_server(sites, extra_args=("--store", store), binary=binary)


def open_store(backend, tmp, sqlite_name):
    """The store of one backend for a run: `sqlite` is the file `tmp/sqlite_name`, anything else
    a PostgreSQL cluster of its own (Postgres); returns (store URL, the SQLite file or None, the
    Postgres or None). Stop the Postgres when done."""
    if backend == "sqlite":
        db = tmp / sqlite_name
        return f"sqlite:{db}", db, None
    pg = Postgres(tmp)
    return pg.url, None, pg


def stop_server(proc):
    """Stops a server started here (SIGTERM: it drains) and waits for it, at most 60 s."""
    proc.terminate()
    proc.wait(timeout=60)


class Postgres:
    """A cluster of its own in a temp folder, like the tests' (server/tests/integration/pg.rs):
    Debian's newest PostgreSQL, run as the `postgres` user, on a free loopback port, with one
    database `bench` (`url`); stop() stops it."""

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
        self.port = free_port()
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


# --- what a server reports about itself ---------------------------------------------------------

def peak_rss_mib(pid):
    """A process's peak resident set (VmHWM), in MiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def metric(admin, name):
    """The sum of every sample of the metrics whose line starts with `name` on the admin
    listener's /metrics."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in _metrics(admin) if line.startswith(name))


def five_xx(admin):
    """The 5xx answers the server counted (`nudge_http_requests_total` with a 5xx status)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in _metrics(admin)
               if line.startswith("nudge_http_requests_total") and 'status="5' in line)


def _metrics(admin):
    with urllib.request.urlopen(f"http://{admin}/metrics", timeout=5) as r:
        return r.read().decode().splitlines()


# --- wrk ----------------------------------------------------------------------------------------

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

# Requests over the keys of BENCH_KEYS in turn, with BENCH_METHOD (POST sends BENCH_BODY as JSON):
# the preview and constant routes of scripts/bench-server.py, the read routes and the preview of
# scripts/bench-store.py and scripts/bench-compare.py.
READ_WRK_SCRIPT = r"""
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
""" + WRK_DONE


def wrk(api, path, seconds, connections, env):
    """One wrk run (2 threads; the Lua script is env's BENCH_SCRIPT): its summary and its latency
    histogram {microseconds: count}."""
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


# --- the bench site -----------------------------------------------------------------------------

def secret_keys(count=256):
    """The load runs' secret keys (`sk_test_...`), `count` of them."""
    return [f"sk_test_bench{i:08d}KeyForLoad" for i in range(count)]


def publishable_keys(count=1000):
    """The relay runs' publishable keys (`pk_test_...`), `count` of them."""
    return [f"pk_test_bench{i:08d}KeyForLoad" for i in range(count)]


def write_keys(path, keys):
    """One key a line, for wrk's scripts (BENCH_KEYS)."""
    path.write_text("\n".join(keys) + "\n")


def write_sites(tmp, keys=(), site_keys=(), rate_limit=None):
    """In `tmp`: examples/storefront.json and a sites file of one site, `bench`, serving it, with
    the hashes of `keys` (secret) and `site_keys` (publishable) and, when given, a rate limit per
    key and minute; returns the sites file."""
    shutil.copy(CONFIG, tmp / "storefront.json")
    text = '[[site]]\nid = "bench"\nconfig = "storefront.json"\n'
    if rate_limit is not None:
        text += f"rate_limit = {rate_limit}\n"
    text += f"keys = [{_hashes(keys)}]\n"
    if site_keys:
        text += f"site_keys = [{_hashes(site_keys)}]\n"
    sites = tmp / "sites.toml"
    sites.write_text(text)
    return sites


def _hashes(keys):
    return ", ".join(f'"sha256:{hashlib.sha256(k.encode()).hexdigest()}"' for k in keys)


# --- stored sessions (scripts/bench-store.py's, imported by several) -----------------------------

PATHS = ["/", "/collections/new-arrivals", "/products/linen-shirt", "/products/wool-sweater",
         "/search?q=jacket", "/cart", "/blog/packing-light", "/products/canvas-sneakers"]
TYPES = ["chat_bubble", "toast", "exit_modal", "sticky_bar"]
# The detail route's session: 20 events and 3 nudges.
DETAIL_ID = "sess_99999999"


def session_line(rng, n, now_ms, events=None, nudges=None):
    """Session `n` in the API document's 2.2 shape, one JSON line: 3 to 7 page views (or
    `events`) and a nudge 6 times in 10 (or `nudges`), started in the last 25 days."""
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


def detail_line(now_ms):
    """The detail route's session (DETAIL_ID), one JSON line."""
    return session_line(random.Random(7), 99_999_999, now_ms, events=20, nudges=3)


def import_sessions(tmp, sites, store, first, last, now_ms, binary=None):
    """Imports sessions first..last-1 in files of 100,000 with `nudge-rules-server import`;
    returns (events stored, seconds)."""
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
        out = import_file(sites, store, path, binary)
        seconds += time.monotonic() - t
        m = re.search(r": (\d+) events stored", out)
        events += int(m.group(1)) if m else 0
        print(f"  imported sessions to {chunk_end:,} ({events:,} events, {seconds:.0f} s)", flush=True)
    return events, seconds


def import_file(sites, store, path, binary=None):
    """`nudge-rules-server import` of one JSONL file into the bench site's test mode; returns
    what it printed."""
    return subprocess.run([str(binary or BINARY), "import", "--sites", str(sites), "--store", store, "--site",
                           "bench", "--mode", "test", str(path)], capture_output=True, text=True, check=True).stdout


# --- relay batches (scripts/bench-relay.py's, sent by several) ----------------------------------

RELAY_KEYS = 1000
BATCH = 50
RELAY_SECRET = "sk_test_benchSecretKey0001"

RELAY_WRK_SCRIPT = r"""
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do keys[#keys + 1] = line end
local occurred = os.getenv("BENCH_TIME")
-- Each wrk run its own message ids (BENCH_RUN), so no run's events are duplicates of another's;
-- BENCH_VISITOR=1 puts a `visitor_id` on every event (docs/contract/caps.md).
local run = os.getenv("BENCH_RUN") or "0"
local visitor = os.getenv("BENCH_VISITOR") == "1"
local counter = 0
local thread_id = 0
local threads = {}
setup = function(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
init = function(args)
  thread_id = id
end
request = function()
  counter = counter + 1
  local sid = string.format("sess_r%sw%dr%d", run, thread_id, counter)
  local extra = visitor and string.format(',"visitor_id":"vis_r%sw%dr%d"', run, thread_id, counter) or ""
  local parts = {}
  for i = 1, 50 do
    parts[i] = string.format(
      '{"message_id":"r%s-w%d-%d-%d","session_id":"%s","type":"PAGE_VIEW","occurred_at":"%s","url":"/p%d","intent_score":%d%s}',
      run, thread_id, counter, i, sid, occurred, i, i, extra)
  end
  local body = '{"events":[' .. table.concat(parts, ",") .. ']}'
  local key = keys[(counter * 7 + thread_id) % #keys + 1]
  return wrk.format("POST", wrk.path, {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
  }, body)
end
""" + WRK_DONE


def relay_setup(tmp, now_ms=None):
    """In `tmp`: the bench site (id `bench`, the secret key RELAY_SECRET and RELAY_KEYS
    publishable keys, 30-day retention) and the wrk relay script sending events 10 s before
    `now_ms`; returns the sites file and wrk's environment."""
    now_ms = now_ms or int(time.time() * 1000)
    occurred = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now_ms // 1000 - 10)) + ".000Z"
    keys = publishable_keys(RELAY_KEYS)
    write_keys(tmp / "keys.txt", keys)
    sites = write_sites(tmp, keys=[RELAY_SECRET], site_keys=keys)
    (tmp / "relay.lua").write_text(RELAY_WRK_SCRIPT)
    env = {"BENCH_KEYS": str(tmp / "keys.txt"), "BENCH_TIME": occurred, "BENCH_SCRIPT": str(tmp / "relay.lua")}
    return sites, env


def accepted_per_s(r):
    """Events per second of the batches answered 202 (a run with other answers is reported, not hidden)."""
    seconds = r["requests"] / r["rps"] if r["rps"] else 1.0
    if r["non2xx"] > r["requests"] // 100:
        print(f"warning: {r['non2xx']} of {r['requests']} batches were not answered 202", file=sys.stderr)
    return (r["requests"] - r["non2xx"]) * BATCH / seconds


# --- the backtest's draft (scripts/bench-backtest.py's, sent by scripts/bench-compare.py too) ---

def draft():
    """The storefront config without its `sizing-help` rule."""
    config = json.loads(CONFIG.read_text())
    config["rules"] = [r for r in config["rules"] if r["id"] != "sizing-help"]
    return config
