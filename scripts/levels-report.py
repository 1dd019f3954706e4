#!/usr/bin/env python3
"""Renders the opt-level comparison of scripts/bench-levels.sh (one benches/node.mjs JSON per
level in DIR) as a table, and with --write puts it into docs/PERFORMANCE.md between the
"levels:begin" and "levels:end" markers.

    python3 scripts/levels-report.py DIR [--write]"""
import json
import pathlib
import re
import sys

from benchlib import write_between

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
# The measured tree, recorded by scripts/bench-levels.sh before it builds.
run_file = directory / "run.txt"
tree = run_file.read_text().strip() if run_file.exists() else "an unrecorded tree"
text = (
    f"Run of {tree}, Node {run['node']}; per call, best of 3 interleaved rounds of 9 runs.\n\n"
    + "\n".join(lines)
    + f"\n\nChosen: `opt-level = {setting}` (`[profile.wasm]` in Cargo.toml), in bold.\n"
)
print(text)

if "--write" in sys.argv:
    write_between("levels", text)
