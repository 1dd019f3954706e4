#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/) from the conformance vectors and examples.

Idempotent: files are named by the hash of their content."""
import hashlib
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def load(name):
    return json.loads((root / "tests" / "vectors" / name).read_text())["cases"]


configs = [(root / "examples" / name).read_text() for name in ("storefront.json", "broken.json", "caps.json")]
for case in load("preview.json") + load("config.json"):
    if "config" in case:
        configs.append(json.dumps(case["config"], indent=1))
    elif "config_text" in case and len(case["config_text"]) < 100_000:
        configs.append(case["config_text"])
    if "request" in case:
        put("request", json.dumps(case["request"]))
    elif "request_text" in case and len(case["request_text"]) < 100_000:
        put("request", case["request_text"])
for c in configs:
    if len(c) < 100_000:
        put("config", c)
for case in load("normalize.json"):
    if len(case["input"]) < 10_000:
        put("normalize", case["input"])
        put("fast_path", case["input"])
for line in (root / "examples" / "requests" / "batch.jsonl").read_text().splitlines():
    put("request", line)
for i in range(64):
    put("map_vs_preview", bytes((i * 37 + k * 11) % 256 for k in range(48)))
for i in range(64):
    put("glob", bytes((i * 53 + k * 29) % 256 for k in range(40)))
for p in ["/products/*/reviews", "**/p-[0-9]?", "/a/**/b", "/collections/{sale,clearance}/*", "/x[!a]y"]:
    put("glob", b"\x00" + p.encode() + b"\xff\x02\x01\x02\x03\x04")
print("seeded", {p.name: len(list(p.iterdir())) for p in sorted(corpus.iterdir())})
