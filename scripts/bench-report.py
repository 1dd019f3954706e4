#!/usr/bin/env python3
"""Prints one table of the benchmark figures and ratios (issue targets beside them) from the
criterion results (target/criterion/) and the Node benchmark (target/bench-node.json), and with
--write puts it into docs/PERFORMANCE.md between the "bench:begin" and "bench:end" markers.

    python3 scripts/bench-report.py [--write]      (make bench runs it)

Ratios use figures from the same run; absolute times are for orientation only."""
import json
import os
import pathlib
import subprocess
import sys

from benchlib import write_between

root = pathlib.Path(__file__).resolve().parent.parent
crit = root / "target" / "criterion"


def ns(bench_id):
    """Mean time in ns of a criterion benchmark id such as "scale/rules/10"."""
    for candidate in (crit / bench_id, crit / bench_id.replace("/", "_")):
        est = candidate / "new" / "estimates.json"
        if est.exists():
            return json.loads(est.read_text())["mean"]["point_estimate"]
    return None


def fmt_time(x):
    if x is None:
        return "n/a"
    if x >= 1e6:
        return f"{x / 1e6:.2f} ms"
    if x >= 1e3:
        return f"{x / 1e3:.2f} us"
    return f"{x:.0f} ns"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


node_file = root / "target" / "bench-node.json"
node = json.loads(node_file.read_text()) if node_file.exists() else None
n_states = len(json.loads((root / "benches" / "states.json").read_text())["states"])

rows = []  # (measure, figure, target, met: True/False/None)


def row(measure, figure, target, met):
    rows.append((measure, figure, target, "n/a" if met is None else ("yes" if met else "**no**")))


floor, preview, datalogic = ns("storefront/floor"), ns("storefront/preview"), ns("storefront/datalogic")
r = ratio(preview, floor)
row("storefront preview, parsed, vs hand-written floor",
    f"{fmt_time(preview / n_states if preview else None)} vs {fmt_time(floor / n_states if floor else None)} per state: {r:.2f}x" if r else "n/a",
    "at most 2x", r is not None and r <= 2)
r = ratio(datalogic, preview)
row("vs datalogic-rs (JSON Logic), same states", f"{r:.2f}x faster" if r else "n/a", "at least 5x", r is not None and r >= 5)
for kind, label in (("rules", "literal and X/** patterns"), ("glob_rules", "plus a wildcard glob per rule"), ("quiet_zones", "quiet zones")):
    a, b = ns(f"scale/{kind}/10"), ns(f"scale/{kind}/1000")
    r = ratio(b, a)
    row(f"1,000 vs 10 {kind.replace('_', ' ')} worst case ({label})",
        f"{fmt_time(b)} vs {fmt_time(a)}: {r:.2f}x" if r else "n/a", "at most 3x", r is not None and r <= 3)
for kind, label in (("prefix_glob_rules", "`/collections/c{i}/*` (globs sharing a literal prefix)"),
                    ("infix_glob_rules", "`/shop/*/c{i}/*-sale` (the distinguishing literal after a wildcard)"),
                    ("infix_glob_tree_rules", "`/brands/*/b{i}/**` (the same, then `**`)")):
    a, b = ns(f"scale/{kind}/10"), ns(f"scale/{kind}/1000")
    r = ratio(b, a)
    row(f"1,000 vs 10 rules {label}",
        f"{fmt_time(b)} vs {fmt_time(a)}: {r:.2f}x" if r else "n/a", "at most 1.2x", r is not None and r <= 1.2)
ten = ns("scale/rules/10")
row("10 rules worst case", fmt_time(ten), "about 120 ns or less", ten is not None and ten <= 130)
fast, slow = ns("normalize/canonical_short"), ns("normalize/slow_same_path")
r = ratio(slow, fast)
row("canonical-path fast path vs full normalization (same page)",
    f"{fmt_time(fast)} vs {fmt_time(slow)}: {r:.1f}x faster" if r else "n/a", "at least 3x", r is not None and r >= 3)
for n, limit in ((10, 0.2e6), (1000, 5e6)):
    for kind in ("rules", "glob_rules"):
        t = ns(f"compile/{kind}/{n}")
        row(f"compile {n:,} {kind.replace('_', ' ')} incl. JSON parse", fmt_time(t),
            f"at most {fmt_time(limit)}", t is not None and t <= limit)
plain, visited = ns("visit/plain"), ns("visit/history_200")
r = ratio(visited, plain)
row("docs/contract/caps.md: preview with a 200-entry history and a visitor id vs the plain preview (examples/caps.json)",
    f"{fmt_time(visited)} vs {fmt_time(plain)}: {r:.2f}x" if r else "n/a", "at most 1.5x", r is not None and r <= 1.5)
worst = ns("visit/history_200_worst")
r = ratio(worst, plain)
row("docs/contract/caps.md: the same with 200 entries all inside the cooldown (every entry read)",
    f"{fmt_time(worst)}: {r:.2f}x" if r else "n/a", "(reported)", None)
wire = ns("wire/preview_body")
row("wire: request body bytes to response body", fmt_time(wire), "(reported)", None)
dmap, previews = ns("map/decision_map"), ns("map/previews_200")
r = ratio(dmap, previews)
row("decision map of a storefront page vs 200 previews",
    f"{fmt_time(dmap)} vs {fmt_time(previews)}: {r:.3f}x" if r else "n/a", "at most 1x", r is not None and r <= 1)
replayed, parsed = ns("replay/sessions_10000"), ns("replay/parse_json_10000")
r = ratio(replayed, parsed)
row("replay 10,000 recorded sessions (11 MB JSONL to summary) vs serde_json reading the lines",
    f"{fmt_time(replayed)} vs {fmt_time(parsed)}: {r:.2f}x" if r else "n/a", "under 1 s", replayed is not None and replayed < 1e9)
for shape in ("canonical_long", "full_url_query", "needs_decoding", "dot_segments", "case_folding"):
    row(f"normalize: {shape.replace('_', ' ')}", fmt_time(ns(f"normalize/{shape}")), "(reported)", None)

if node:
    w, nat, p = node["wasm"], node["native"], node["peers"]
    r = ratio(w["preview_fields_ns"], nat["preview_fields_ns"])
    row("WASM previewFields hot loop vs native", f"{fmt_time(w['preview_fields_ns'])} vs {fmt_time(nat['preview_fields_ns'])}: {r:.2f}x",
        "at most 2x", r <= 2)
    if "preview_fields_copied_ns" in w:
        r = ratio(w["preview_fields_copied_ns"], nat["preview_fields_ns"])
        row("WASM previewFields, the URL copied on every call (a URL not seen before) vs native",
            f"{fmt_time(w['preview_fields_copied_ns'])}: {r:.2f}x", "(reported)", None)
    row("WASM object API (preview) per call", f"{fmt_time(w['preview_object_ns'])} (native {fmt_time(nat['preview_object_ns'])})",
        "at most 1.5 us", w["preview_object_ns"] <= 1500)
    row("WASM previewBody (JSON text) per call", f"{fmt_time(w['preview_body_ns'])} (native {fmt_time(nat['preview_body_ns'])})",
        "(reported)", None)
    r = ratio(p["json_logic_engine_ns"], w["preview_fields_ns"])
    row("vs json-logic-engine compiled, in Node", f"{fmt_time(p['json_logic_engine_ns'])}: WASM {r:.2f}x faster", "at least 10x", r >= 10)
    r = ratio(p["picomatch_js_ns"], w["preview_fields_ns"])
    row("vs picomatch hand-written JS, in Node", f"{fmt_time(p['picomatch_js_ns'])}: WASM {r:.2f}x faster", "faster", r > 1)
    gz = node["wasm_size"]["gzip_bytes"]
    row(".wasm shipped in pkg/, gzip -9", f"{gz:,} bytes ({node['wasm_size']['raw_bytes']:,} raw)", "at most 200 KB", gz <= 200_000)
    row("new NudgeEngine (storefront) in WASM", f"{w['compile_us']:.0f} us", "(reported)", None)

cpu = "unknown CPU"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
# The tree that was measured: `make bench` records it before running (target/bench-run.txt), so
# that rendering later names the run's commit, not the current one.
run_file = root / "target" / "bench-run.txt"
if run_file.exists():
    tree = run_file.read_text().strip()
else:
    head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=root).stdout.strip()
    dirty = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'], capture_output=True, text=True, cwd=root).stdout.strip()
    tree = f"{head}{' with uncommitted changes' if dirty else ''}"
header = (f"Run of {tree} "
          f"on {os.cpu_count()} cores ({cpu}), {rustc}, Node {node['node'] if node else 'n/a'}; "
          f"storefront figures per state over the {n_states}-state mix of benches/states.json.")
table = ["| measure | figure | target | met |", "|---|---|---|---|"] + [f"| {m} | {f} | {t} | {ok} |" for m, f, t, ok in rows]
text = header + "\n\n" + "\n".join(table) + "\n"
print(text)

if "--write" in sys.argv:
    write_between("bench", text)
