#!/usr/bin/env python3
"""Renders the opt-level comparison of scripts/bench-levels.sh (one benches/node.mjs JSON per
level in DIR) as a table, and with --write puts it into docs/PERFORMANCE.md between the
"levels:begin" and "levels:end" markers.

    python3 scripts/levels-report.py DIR [--write]"""
import json
import os
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
directory = pathlib.Path(sys.argv[1])
chosen = re.search(r'\[profile\.wasm\][^\[]*?opt-level = "?(\w+)"?', (root / "Cargo.toml").read_text())
chosen = chosen.group(1) if chosen else "?"

lines = [
    "| opt-level + wasm-opt | raw bytes | gzip -9 | previewFields (WASM/native) | preview, objects (WASM/native) | previewBody | new NudgeEngine |",
    "|---|---|---|---|---|---|---|",
]
for level in ["3", "2", "s", "z"]:
    path = directory / f"{level}.json"
    if not path.exists():
        continue
    run = json.loads(path.read_text())
    w, n, size = run["wasm"], run["native"], run["wasm_size"]
    name = f"{level} + `-O{level}`"
    cells = [
        name,
        f"{size['raw_bytes']:,}",
        f"{size['gzip_bytes']:,}",
        f"{w['preview_fields_ns']:.0f} ns ({w['preview_fields_ns'] / n['preview_fields_ns']:.2f}x)",
        f"{w['preview_object_ns'] / 1000:.2f} us ({w['preview_object_ns'] / n['preview_object_ns']:.2f}x)",
        f"{w['preview_body_ns'] / 1000:.2f} us",
        f"{w['compile_us']:.0f} us",
    ]
    if level == chosen:
        cells = [f"**{c}**" for c in cells]
    lines.append("| " + " | ".join(cells) + " |")
setting = chosen if chosen.isdigit() else f'"{chosen}"'
head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
text = (
    f"Run of {head}, Node {run['node']}, load average {load:.1f} when rendered; per call, median of 5.\n\n"
    + "\n".join(lines)
    + f"\n\nChosen: `opt-level = {setting}` (`[profile.wasm]` in Cargo.toml), in bold.\n"
)
print(text)

if "--write" in sys.argv:
    doc = root / "docs" / "PERFORMANCE.md"
    content = doc.read_text()
    begin, end = "<!-- levels:begin -->", "<!-- levels:end -->"
    if begin in content and end in content:
        before, rest = content.split(begin, 1)
        after = rest.split(end, 1)[1]
        doc.write_text(f"{before}{begin}\n{text}{end}{after}")
        print(f"wrote {doc.relative_to(root)}")
    else:
        print(f"no {begin} marker in {doc}; not written", file=sys.stderr)
        sys.exit(1)
