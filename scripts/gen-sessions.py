#!/usr/bin/env python3
"""Writes examples/sessions.jsonl: recorded storefront sessions in the shape of the API document's
section 2.2 (the `data` object of GET /v1/sessions/{id}), one per line, for `nudge-rules replay`.

    python3 scripts/gen-sessions.py                 write examples/sessions.jsonl (250 sessions)
    python3 scripts/gen-sessions.py --count N -o F  N sessions into F ("-" for stdout)
    python3 scripts/gen-sessions.py --check         fail if examples/sessions.jsonl differs

Deterministic (a fixed seed): the same command writes the same bytes. The visits follow the
storefront of examples/storefront.json: entries from ads, search and the blog, collections,
product pages, search, the cart and checkout (its quiet zones), purchases; dwell times drawn from
log-normal distributions per kind of page. The recorded nudges are what a live system showed: the
same kinds of rule as the storefront's, with an older tuning (the stylist after about 10 s, the
exit offer after about 25 s) and some noise, so that a replay of the current config differs from
the record in instructive ways. Outcomes and `influenced_conversion` follow plausible rates;
`influenced_conversion` is true only when the session purchased within 30 minutes of an
interaction (API document section 8). The `nudges` array is sometimes out of time order, as the
API document warns.
"""
import argparse
import json
import math
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "sessions.jsonl"
SEED = 20260302
START = datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)

PRODUCTS = [
    "linen-shirt", "oxford-shirt", "chino-trousers", "wool-sweater", "rain-jacket", "denim-jacket",
    "canvas-sneakers", "leather-belt", "silk-scarf", "summer-dress", "cotton-tee", "linen-shorts",
]
COLLECTIONS = ["linen", "shirts", "outerwear", "new-arrivals", "accessories"]
SALE = ["/collections/sale/summer", "/collections/sale/shirts", "/collections/clearance/shoes"]
POSTS = ["linen-care", "packing-light", "capsule-wardrobe", "how-to-fit-a-shirt"]
TAGS = ["summer", "care", "style"]


def lognormal(rng, median_s, spread=0.6, low=0.8, high=600.0):
    """A dwell time in ms: log-normal around `median_s` seconds, clamped."""
    s = median_s * math.exp(rng.gauss(0, spread))
    return int(min(max(s, low), high) * 1000) + rng.randrange(1000)


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def product_url(rng, slug):
    forms = [f"/products/{slug}"] * 6 + [
        f"/products/{slug}?variant={rng.randrange(1, 6)}",
        f"https://shop.example/products/{slug}",
        f"/Products/{slug}",
    ]
    return rng.choice(forms)


def visit(rng, intent):
    """A list of (event type, url, dwell ms, kind) for one visit, and whether it purchased."""
    steps = []
    entry = rng.random()
    if entry < 0.30:
        steps.append(("PAGE_VIEW", rng.choice(["/", "https://shop.example/?utm_source=newsletter"]), lognormal(rng, 6), "home"))
    elif entry < 0.55:
        slug = rng.choice(PRODUCTS)
        steps.append(("PAGE_VIEW", product_url(rng, slug), lognormal(rng, 14), "product"))
    elif entry < 0.70:
        steps.append(("PAGE_VIEW", f"/blog/{rng.choice(POSTS)}", lognormal(rng, 45, 0.7), "blog"))
        if rng.random() < 0.25:
            steps.append(("PAGE_VIEW", f"/blog/tags/{rng.choice(TAGS)}", lognormal(rng, 8), "blog"))
    elif entry < 0.85:
        steps.append(("PAGE_VIEW", rng.choice(SALE), lognormal(rng, 9), "sale"))
    else:
        steps.append(("PAGE_VIEW", f"/collections/{rng.choice(COLLECTIONS)}", lognormal(rng, 8), "collection"))
    browsing = int(intent / 20) + rng.randrange(0, 4)
    cart = []
    for _ in range(browsing):
        r = rng.random()
        if r < 0.45:
            slug = rng.choice(PRODUCTS + ["gift-card"])
            steps.append(("PAGE_VIEW", product_url(rng, slug), lognormal(rng, 12 + intent / 10), "product"))
            if rng.random() < intent / 160:
                steps.append(("ADD_TO_CART", f"/products/{slug}", lognormal(rng, 3, 0.4), "product"))
                cart.append(slug)
        elif r < 0.65:
            steps.append(("PAGE_VIEW", f"/collections/{rng.choice(COLLECTIONS)}", lognormal(rng, 7), "collection"))
        elif r < 0.75:
            steps.append(("PAGE_VIEW", rng.choice(SALE), lognormal(rng, 9), "sale"))
        elif r < 0.87:
            steps.append(("PAGE_VIEW", "/search?q=" + rng.choice(["linen", "shirt", "belt", "jacket"]), lognormal(rng, 7), "search"))
        elif r < 0.93:
            steps.append(("PAGE_VIEW", rng.choice(["/about", "/shipping", "/returns"]), lognormal(rng, 15), "info"))
        else:
            steps.append(("PAGE_VIEW", "/account/orders", lognormal(rng, 10), "quiet"))
    purchased = False
    if cart and rng.random() < 0.35 + intent / 250:
        steps.append(("PAGE_VIEW", "/cart", lognormal(rng, 12), "quiet"))
        steps.append(("PAGE_VIEW", "/checkout", lognormal(rng, 40), "quiet"))
        steps.append(("PAGE_VIEW", "/checkout/payment", lognormal(rng, 35), "quiet"))
        if rng.random() < 0.8:
            steps.append(("PURCHASE", "/checkout/thank-you", lognormal(rng, 10), "quiet"))
            purchased = True
    if rng.random() < 0.01:
        # A URL that docs/contract/urls.md rejects, as a badly configured tracker records it.
        steps.insert(1, ("PAGE_VIEW", "/search?q=linen shirt", lognormal(rng, 5), "search"))
    return steps, purchased


def live_nudge(rng, kind, intent, dwell_ms, url):
    """What the live system showed on a page (older tuning, some noise): (type, ms after the
    page's event) or None."""
    jitter = rng.randrange(0, 900)
    if kind == "quiet":
        return None
    if kind in ("product", "collection", "sale") and intent >= 85 and dwell_ms > 25_000 + jitter:
        return "exit_modal", 25_000 + jitter
    if kind == "product" and intent >= 60 and "gift-card" not in url and dwell_ms > 10_000 + jitter:
        return "chat_bubble", 10_000 + jitter
    if kind == "sale" and intent >= 30 and dwell_ms > 2_000 + jitter:
        return "toast", 2_000 + jitter
    if kind in ("product", "collection") and 30 <= intent <= 59 and rng.random() < 0.9:
        return "sticky_bar", min(jitter, dwell_ms)
    if kind == "search" and intent >= 20 and dwell_ms > 6_000 + jitter:
        return "chat_bubble", 6_000 + jitter
    if kind == "blog" and "/tags/" not in url and dwell_ms > 15_000 + jitter:
        return "toast", 15_000 + jitter
    if kind == "home" and intent <= 40 and dwell_ms > 3_000 + jitter:
        return "sticky_bar", 3_000 + jitter
    return None


OUTCOMES = {
    "chat_bubble": [("chat_opened", 0.22), ("dismissed", 0.38), ("shown", 0.40)],
    "toast": [("clicked", 0.14), ("dismissed", 0.30), ("shown", 0.56)],
    "exit_modal": [("clicked", 0.24), ("dismissed", 0.58), ("shown", 0.18)],
    "sticky_bar": [("clicked", 0.07), ("dismissed", 0.10), ("shown", 0.83)],
}


def pick(rng, weighted):
    r, acc = rng.random(), 0.0
    for value, weight in weighted:
        acc += weight
        if r < acc:
            return value
    return weighted[-1][0]


def session(rng, index):
    intent = max(0, min(100, int(rng.betavariate(2.0, 2.2) * 100)))
    steps, purchased = visit(rng, intent)
    t = START + timedelta(minutes=rng.randrange(0, 7 * 24 * 60), milliseconds=rng.randrange(60_000))
    started = t
    events, nudges = [], []
    purchase_at = None
    for event_type, url, dwell, kind in steps:
        events.append({"type": event_type, "url": url, "occurred_at": stamp(t)})
        shown = live_nudge(rng, kind, intent, dwell, url)
        if shown:
            nudge_type, at = shown
            nudges.append({"type": nudge_type, "at": t + timedelta(milliseconds=at)})
        if event_type == "PURCHASE":
            purchase_at = t
        t += timedelta(milliseconds=dwell)
    ended = t
    recorded = []
    for n in nudges:
        outcome = pick(rng, OUTCOMES[n["type"]])
        interacted = outcome in ("clicked", "chat_opened")
        influenced = (
            purchase_at is not None
            and interacted
            and timedelta(0) <= purchase_at - n["at"] <= timedelta(minutes=30)
        )
        recorded.append({
            "nudge_id": f"nudg_{rng.getrandbits(48):012x}",
            "type": n["type"],
            "shown_at": stamp(n["at"]),
            "outcome": outcome,
            "influenced_conversion": influenced,
        })
    if len(recorded) > 1 and rng.random() < 0.3:
        recorded.reverse()  # the API document does not promise an order
    return {
        "id": f"sess_{index:04d}{rng.getrandbits(32):08x}",
        "started_at": stamp(started),
        "ended_at": stamp(ended),
        "page_count": len({e["url"] for e in events}),
        "intent_score": intent,
        "converted": purchased,
        "nudge_count": len(recorded),
        "events": events,
        "nudges": recorded,
    }


def generate(count):
    rng = random.Random(SEED)
    lines = [json.dumps(session(rng, i), separators=(",", ":")) for i in range(count)]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=250)
    parser.add_argument("-o", "--output", default=str(OUT))
    parser.add_argument("--check", action="store_true", help="fail if the file differs")
    args = parser.parse_args()
    text = generate(args.count)
    if args.check:
        if Path(args.output).read_text() != text:
            print(f"{args.output} differs from what scripts/gen-sessions.py writes", file=sys.stderr)
            return 1
        print(f"{args.output}: up to date ({args.count} sessions)")
        return 0
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
        print(f"wrote {args.count} sessions to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
