#!/usr/bin/env python3
"""Builders for the long and big inputs used in the vectors, so they can be reproduced and reviewed.

The JSON files are the committed data; this script only documents how their big values were made.
`python3 tests/vectors/gen_big.py` checks that every big value in the JSON files equals its
builder's output (exit status 1 and a list of mismatches otherwise).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

MIB = 1024 * 1024
BODY_LIMIT = 64 * 1024


def path_of_bytes(n):
    """A page_url / pattern of exactly n bytes: "/" then n-1 ASCII letters."""
    return "/" + "a" * (n - 1)


def pattern_of_bytes(n):
    return "/" + "p" * (n - 1)


def path_of_e_acute(chars):
    """"/" then `chars` times "é" (2 bytes each): 1 + 2*chars bytes, 1 + chars characters."""
    return "/" + "\u00e9" * chars


def padded_body(total_bytes):
    """A valid preview body (storefront sizing-help state) padded with spaces to total_bytes."""
    head = '{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}'
    pad = total_bytes - len(head) - 1
    assert pad >= 0
    text = head + " " * pad + "}"
    assert len(text.encode("utf-8")) == total_bytes
    return text


def many_rules(n):
    """n valid rules r0..r{n-1}; rule i fires only on page /p{i}."""
    return [
        {"id": "r%d" % i, "nudge": {"type": "toast", "message": "m%d" % i, "cta": "c"},
         "when": {"pages": ["/p%d" % i]}}
        for i in range(n)
    ]


def many_plain_rules(n):
    """n valid rules r0..r{n-1} with no conditions."""
    return [{"id": "r%d" % i, "nudge": {"type": "toast", "message": "m", "cta": "c"}} for i in range(n)]


def many_quiet_zones(n):
    return ["/q%d" % i for i in range(n)]


def many_patterns(n):
    return ["/p%d" % i for i in range(n)]


def oversized_config_text(total_bytes=MIB + 1):
    """A syntactically valid config padded with spaces to total_bytes (> 1 MiB)."""
    head = '{"version": 1, "rules": []'
    text = head + " " * (total_bytes - len(head) - 1) + "}"
    assert len(text.encode("utf-8")) == total_bytes
    return text


# (file, case name, key path inside the case, builder)
BIG = [
    ("normalize.json", "rejected: 8193 bytes (one over the limit)", ("input",), lambda: path_of_bytes(8193)),
    ("normalize.json", "accepted: exactly 8192 bytes", ("input",), lambda: path_of_bytes(8192)),
    ("normalize.json", "accepted: exactly 8192 bytes", ("expect",), lambda: path_of_bytes(8192)),
    ("normalize.json", "rejected: 4097 characters but 8193 bytes (the limit counts bytes)", ("input",),
     lambda: path_of_e_acute(4096)),
    ("preview.json", "page_url of exactly 8192 bytes is accepted", ("request", "session_state", "page_url"),
     lambda: path_of_bytes(8192)),
    ("preview.json", "page_url of 8193 bytes is rejected", ("request", "session_state", "page_url"),
     lambda: path_of_bytes(8193)),
    ("preview.json", "body of exactly 65536 bytes (64 KiB) is accepted", ("request_text",),
     lambda: padded_body(BODY_LIMIT)),
    ("preview.json", "body of 65537 bytes (over 64 KiB) is rejected", ("request_text",),
     lambda: padded_body(BODY_LIMIT + 1)),
    ("preview.json", "1,000 rules: the last one still fires", ("config", "rules"), lambda: many_rules(1000)),
    ("preview.json", "1,000 quiet zones: the last one still silences its page", ("config", "quiet_zones"),
     lambda: many_quiet_zones(1000)),
    ("config.json", "valid: exactly 1,000 rules", ("config", "rules"), lambda: many_plain_rules(1000)),
    ("config.json", "limit: 1,001 rules", ("config", "rules"), lambda: many_plain_rules(1001)),
    ("config.json", "valid: exactly 1,000 quiet zones", ("config", "quiet_zones"), lambda: many_quiet_zones(1000)),
    ("config.json", "limit: 1,001 quiet zones", ("config", "quiet_zones"), lambda: many_quiet_zones(1001)),
    ("config.json", "valid: 100 patterns in pages and 100 in exclude_pages", ("config", "rules", 0, "when", "pages"),
     lambda: many_patterns(100)),
    ("config.json", "limit: 101 patterns in pages", ("config", "rules", 0, "when", "pages"),
     lambda: many_patterns(101)),
    ("config.json", "limit: 101 patterns in exclude_pages", ("config", "rules", 0, "when", "exclude_pages"),
     lambda: many_patterns(101)),
    ("config.json", "valid: a pattern of exactly 512 bytes", ("config", "quiet_zones", 0),
     lambda: pattern_of_bytes(512)),
    ("config.json", "limit: a pattern of 513 bytes in pages", ("config", "rules", 0, "when", "pages", 0),
     lambda: pattern_of_bytes(513)),
    ("config.json", "limit: config text of 1 MiB + 1 byte", ("config_text",), lambda: oversized_config_text()),
]


def check():
    bad = []
    cache = {}
    for fname, name, keys, build in BIG:
        if fname not in cache:
            with open(os.path.join(HERE, fname), encoding="utf-8") as f:
                cache[fname] = {c["name"]: c for c in json.load(f)["cases"]}
        case = cache[fname].get(name)
        if case is None:
            bad.append("%s: no case named %r" % (fname, name))
            continue
        v = case
        try:
            for k in keys:
                v = v[k]
        except (KeyError, IndexError, TypeError):
            bad.append("%s: %r has no %r" % (fname, name, keys))
            continue
        if v != build():
            bad.append("%s: %r %r differs from its builder" % (fname, name, keys))
    for b in bad:
        print(b)
    print("%d big values checked, %d mismatches" % (len(BIG), len(bad)))
    return not bad


if __name__ == "__main__":
    sys.exit(0 if check() else 1)
