#!/usr/bin/env python3
"""Webhook delivery (docs/contract/webhooks.md; docs/PERFORMANCE.md, "Webhook figures"), on each store.

For each backend (SQLite in a file, then PostgreSQL in a cluster of its own), a release server
runs with `--webhook-allow-http --webhook-allow-private 127.0.0.0/8` and a receiver on the
loopback (Node's `http`, answering 204 at once) subscribed to `nudge.shown`:

1. The relay with and without the subscription: wrk sends batches of 50 events (one session
   each: 40 page views and 10 NUDGE_SHOWN of 10 nudges) from 16 connections over 1,000
   publishable keys for `--duration` seconds, in alternating rounds with the endpoint enabled
   (each NUDGE_SHOWN writes a message to the outbox in the batch's transaction, and the worker
   delivers it meanwhile) and disabled (`PATCH {"status": "disabled"}`: nothing written).
   Reported: events per second of each and their ratio (docs/contract/webhooks.md target: at least 0.8x).
2. Deliveries per second: with the relay idle, `--messages` NUDGE_SHOWN in batches of 500,
   then the time from the first delivery to the last at the receiver (one endpoint: at most 8
   attempts in flight), and the same with 4 endpoints.

    python3 scripts/bench-webhooks.py [--duration 80] [--messages 5000] [--write]
"""
import argparse
import json
import os
import pathlib
import subprocess
import tempfile
import time
import urllib.request

import benchlib as bench
from benchlib import accepted_per_s, write_between

ROOT = bench.ROOT
SECRET = bench.RELAY_SECRET

# The relay's wrk script with 10 NUDGE_SHOWN among each batch's 50 events.
WRK_SCRIPT = bench.RELAY_WRK_SCRIPT.replace(
    """    parts[i] = string.format(
      '{"message_id":"r%s-w%d-%d-%d","session_id":"%s","type":"PAGE_VIEW","occurred_at":"%s","url":"/p%d","intent_score":%d%s}',
      run, thread_id, counter, i, sid, occurred, i, i, extra)""",
    """    if i <= 10 then
      parts[i] = string.format(
        '{"message_id":"r%s-w%d-%d-%d","session_id":"%s","type":"NUDGE_SHOWN","occurred_at":"%s","nudge_id":"nudg_r%sw%dr%dn%d","nudge_type":"toast","rule_id":"r"}',
        run, thread_id, counter, i, sid, occurred, run, thread_id, counter, i)
    else
      parts[i] = string.format(
        '{"message_id":"r%s-w%d-%d-%d","session_id":"%s","type":"PAGE_VIEW","occurred_at":"%s","url":"/p%d","intent_score":%d%s}',
        run, thread_id, counter, i, sid, occurred, i, i, extra)
    end""")
assert "NUDGE_SHOWN" in WRK_SCRIPT, "benchlib.py's relay script changed: update bench-webhooks.py"

RECEIVER = r"""
const http = require('node:http');
let count = 0, first = 0, last = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(JSON.stringify({count, first, last})); return; }
  req.resume();
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now();
    if (count === 0) first = now;
    count++; last = now;
    res.statusCode = 204; res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
"""


def call(api, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://{api}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read() or b"null")


def receiver_state(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
        return json.loads(r.read())


def deliveries_per_s(api, ports, messages, keys):
    """Sends `messages` NUDGE_SHOWN through the relay, then waits until every receiver has them."""
    now = int(time.time() * 1000) - 10_000
    occurred = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now // 1000)) + ".000Z"
    before = [receiver_state(p)["count"] for p in ports]
    tag = f"d{time.monotonic_ns()}"
    for b in range(messages // 500):
        events = [{"message_id": f"{tag}-{b}-{i}", "session_id": f"sess_{tag}b{b}i{i // 50}", "type": "NUDGE_SHOWN",
                   "occurred_at": occurred, "nudge_id": f"nudg_{tag}b{b}i{i}", "nudge_type": "toast", "rule_id": "r"}
                  for i in range(500)]
        request = urllib.request.Request(f"http://{api}/v1/events", data=json.dumps({"events": events}).encode(),
                                         method="POST", headers={"Authorization": f"Bearer {keys[b % len(keys)]}",
                                                                 "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            assert r.status == 202
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        states = [receiver_state(p) for p in ports]
        if all(s["count"] - b >= messages for s, b in zip(states, before)):
            break
        time.sleep(0.2)
    first = min(s["first"] for s in states) if before == [0] * len(ports) else None
    last = max(s["last"] for s in states)
    return states, first, last


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=80, help="seconds of relay load in all, both variants, in alternating rounds of about 10 s")
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    bench.require_binary()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        sites, env = bench.relay_setup(tmp)
        (tmp / "relay.lua").write_text(WRK_SCRIPT)
        keys = (tmp / "keys.txt").read_text().split()
        for backend in args.backends.split(","):
            pg = None
            receivers = []
            try:
                store, _, pg = bench.open_store(backend, tmp, "sqlite.db")
                for _ in range(4):
                    p = subprocess.Popen(["node", "-e", RECEIVER], stdout=subprocess.PIPE, text=True)
                    receivers.append((p, int(p.stdout.readline())))
                server, api, admin = bench.start_server(sites, extra_args=(
                    "--store", store, "--webhook-allow-http", "--webhook-allow-private", "127.0.0.0/8"))
                try:
                    endpoint = call(api, "POST", "/v1/webhook_endpoints", {
                        "url": f"http://127.0.0.1:{receivers[0][1]}/", "event_types": ["nudge.shown"]})["data"]["id"]
                    bench.wrk(api, "/v1/events", 2, args.connections, {**env, "BENCH_RUN": "warm"})
                    runs = {"without": [], "with": []}
                    # Rounds of about 10 s, alternating (at least four): the machine's speed
                    # drifts over a run, and short alternating rounds give both variants the
                    # same share of each state.
                    rounds = max(4, args.duration // 10 // 2 * 2)
                    seconds_each = max(1, args.duration // rounds)
                    for round_ in range(rounds):
                        variant = ("without", "with")[round_ % 2]
                        call(api, "PATCH", f"/v1/webhook_endpoints/{endpoint}",
                             {"status": "enabled" if variant == "with" else "disabled"})
                        runs[variant].append(bench.wrk(api, "/v1/events", seconds_each, args.connections,
                                                       {**env, "BENCH_RUN": f"{backend}{round_}"}))
                    without = accepted_per_s(bench.merge(runs["without"]))
                    with_hook = accepted_per_s(bench.merge(runs["with"]))
                    print(f"{backend}: relay {without:,.0f} events/s without an endpoint, {with_hook:,.0f} with "
                          f"({with_hook / without:.2f}x)", flush=True)
                    # Deliveries: wait for the relay rounds' messages to drain, then a fresh set.
                    call(api, "PATCH", f"/v1/webhook_endpoints/{endpoint}", {"status": "disabled"})
                    call(api, "DELETE", f"/v1/webhook_endpoints/{endpoint}")
                    fresh = []
                    for p, port in receivers[1:]:
                        fresh.append(port)
                    one = call(api, "POST", "/v1/webhook_endpoints", {
                        "url": f"http://127.0.0.1:{fresh[0]}/", "event_types": ["nudge.shown"]})["data"]["id"]
                    _, first, last = deliveries_per_s(api, [fresh[0]], args.messages, keys)
                    one_rate = args.messages / ((last - first) / 1000)
                    call(api, "DELETE", f"/v1/webhook_endpoints/{one}")
                    four_ports = [fresh[1], fresh[2], receivers[0][1], fresh[0]]
                    for port in four_ports:
                        call(api, "POST", "/v1/webhook_endpoints", {
                            "url": f"http://127.0.0.1:{port}/", "event_types": ["nudge.shown"]})
                    t0 = time.time() * 1000
                    states, _, last = deliveries_per_s(api, four_ports, args.messages, keys)
                    four_rate = 4 * args.messages / ((last - t0) / 1000)
                    print(f"{backend}: {one_rate:,.0f} deliveries/s to one endpoint, {four_rate:,.0f} to four",
                          flush=True)
                    errors_5xx = bench.five_xx(admin)
                finally:
                    bench.stop_server(server)
                rows.append((backend, without, with_hook, one_rate, four_rate, errors_5xx))
            finally:
                for p, _ in receivers:
                    p.terminate()
                if pg:
                    pg.stop()
    commit = bench.tree()
    lines = [
        f"Run of `scripts/bench-webhooks.py` on {time.strftime('%Y-%m-%d')}, tree {commit}; {os.cpu_count()} cores "
        f"shared by the server, the database, wrk and the receivers (Node, answering 204); relay batches of 50 events "
        f"with 10 NUDGE_SHOWN each, {args.connections} connections, {args.duration} s in alternating rounds; "
        f"{args.messages:,} messages per delivery run; load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| store | relay events/s, no endpoint | relay events/s, an endpoint on `nudge.shown` | with / without (target at least 0.8x) | deliveries/s to one endpoint (8 in flight) | deliveries/s to four endpoints |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for backend, without, with_hook, one_rate, four_rate, _ in rows:
        lines.append(f"| {backend} | {without:,.0f} | {with_hook:,.0f} | **{with_hook / without:.2f}x** | "
                     f"{one_rate:,.0f} | {four_rate:,.0f} |")
    lines += ["", f"5xx answers counted by the servers' /metrics: {sum(r[5] for r in rows):.0f}."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write:
        write_between("webhook-bench", text, doc=ROOT / "docs" / "PERFORMANCE.md")


if __name__ == "__main__":
    main()
