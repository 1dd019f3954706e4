#!/usr/bin/env python3
"""Runs the shell examples of the docs against a real `--demo` server (make test-server).

A ```sh block that follows a `<!-- runnable -->` line (blank lines between allowed) in
README.md or docs/*.md is an example a newcomer runs as written. This script starts
`target/debug/nudge-rules-server --demo` on free ports, puts those ports in place of the
documented ones (127.0.0.1:8080 for the API, 127.0.0.1:9090 for the admin listener), and runs
the blocks in document order (README.md first, then docs/*.md by name) from the repository's
root, each block in one bash (`set -euo pipefail`, so a variable set by one command is seen by
the next), command by command. It fails when a command exits non-zero, when a JSON document
it prints has a top-level `error` (curl exits 0 on a 4xx: the body says what went wrong), or
when a relay answer (`POST /v1/events`) stored none of the batch's events.

Dates in the examples must be computed when they run (`$(date -u +%Y-%m-%dT%H:%M:%SZ)`): a
fixed date is refused as too old one day later, and this test catches it.

    python3 scripts/run-doc-examples.py [--binary PATH] [--list]

Exits 0 when every runnable example passes, 1 otherwise (each failure with its file and line).
"""
import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from benchlib import free_port

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^ {0,3}(`{3,})\s*(sh|bash|shell)\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
API_PORT, ADMIN_PORT = "127.0.0.1:8080", "127.0.0.1:9090"
SEPARATOR = "@@nudge-rules-doc-example {}@@"


def files():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path):
    """(line of the block's first command, block text) of each runnable block of `path`."""
    lines = path.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARKER:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = FENCE.match(lines[j]) if j < len(lines) else None
        if not fence:
            raise SystemExit(f"{path.relative_to(ROOT)}:{i + 1}: {MARKER} is not followed by a ```sh block")
        end = j + 1
        while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
            end += 1
        found.append((j + 2, "\n".join(lines[j + 1 : end])))
        i = end + 1
    return found


def commands(text, first_line):
    """The block's commands, each (line, text): continuation lines, quotes that span lines and
    heredocs kept with their command; comments and blank lines dropped."""
    out = []
    pending, start, heredoc = [], None, None
    for number, line in enumerate(text.splitlines(), first_line):
        if heredoc is not None:
            pending.append(line)
            if line.strip() == heredoc:
                out.append((start, "\n".join(pending)))
                pending, heredoc = [], None
            continue
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        pending.append(line)
        joined = "\n".join(pending)
        if joined.endswith("\\"):
            continue
        try:
            shlex.split(joined, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        match = HEREDOC.search(line)
        if match:
            heredoc = match.group(2)
            continue
        out.append((start, joined))
        pending = []
    if pending:
        out.append((start, "\n".join(pending)))
    return out


def json_documents(text):
    """Every JSON object or array printed in `text` (curl's bodies, with or without headers)."""
    decoder = json.JSONDecoder()
    found, i = [], 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return found
        p = min(starts)
        try:
            value, end = decoder.raw_decode(text, p)
        except ValueError:
            i = p + 1
            continue
        found.append(value)
        i = end


def start_server(binary):
    api, admin = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [binary, "--demo", "--listen", api, "--admin-listen", admin],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{binary} --demo exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://{admin}/readyz", timeout=2) as response:
                if response.status == 200:
                    return process, api, admin
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{binary} --demo was not ready within 60 s")


def run_block(path, first_line, text, api, admin):
    """Runs one block; returns the failures as `file:line: what`."""
    where = path.relative_to(ROOT)
    cmds = commands(text, first_line)
    script = ["set -euo pipefail"]
    for index, (_, command) in enumerate(cmds):
        command = command.replace(API_PORT, api).replace(ADMIN_PORT, admin)
        script.append(f"printf '\\n{SEPARATOR.format(index)}\\n'")
        script.append(command)
    result = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    parts = re.split(r"\n" + re.escape(SEPARATOR).replace(r"\{\}", r"(\d+)") + r"\n", result.stdout)
    outputs = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    failures = []
    for index, (line, command) in enumerate(cmds):
        if index not in outputs:
            break
        output = outputs[index]
        shown = command.splitlines()[0][:100]
        print(f"  {where}:{line}: {shown}")
        for document in json_documents(output):
            if not isinstance(document, dict):
                continue
            if "error" in document:
                failures.append(f"{where}:{line}: the answer is an error: {json.dumps(document)[:400]}")
            data = document.get("data")
            if isinstance(data, dict) and "accepted" in data and "rejected" in data:
                # A relay answer: an example batch must store something (a batch dated on a
                # fixed day is refused whole, event by event, one day later).
                if data.get("accepted", 0) + data.get("duplicates", 0) == 0:
                    failures.append(f"{where}:{line}: the relay stored none of the events: {json.dumps(data)[:400]}")
    if result.returncode != 0:
        last = max(outputs) if outputs else 0
        line = cmds[last][0] if cmds else first_line
        failures.append(
            f"{where}:{line}: exit status {result.returncode}: {result.stderr.strip()[-400:]}"
        )
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "target" / "debug" / "nudge-rules-server"))
    parser.add_argument("--list", action="store_true", help="list the runnable commands, run nothing")
    args = parser.parse_args()
    found = [(path, line, text) for path in files() for line, text in blocks(path)]
    if not found:
        print(f"no {MARKER} block in README.md or docs/*.md", file=sys.stderr)
        return 1
    if args.list:
        for path, line, text in found:
            for number, command in commands(text, line):
                print(f"{path.relative_to(ROOT)}:{number}: {command.splitlines()[0]}")
        return 0
    if not os.access(args.binary, os.X_OK):
        print(f"{args.binary} not found; build it: cargo build -p nudge-rules-server", file=sys.stderr)
        return 1
    process, api, admin = start_server(args.binary)
    failures = []
    try:
        print(f"run-doc-examples: {len(found)} runnable blocks against --demo on {api} (admin {admin})")
        for path, line, text in found:
            failures += run_block(path, line, text, api, admin)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"run-doc-examples: {len(found)} blocks, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
