"""python3 tests/vectors/gen_spec15.py: writes the docs/contract/caps.md cases into the conformance vectors
(idempotent: replaces the cases whose name starts with 'spec15'). Expectations are worked out from
docs/contract/caps.md; holdout buckets are computed here with hashlib, independently of the engine.

Adds the docs/contract/caps.md cases to the conformance vectors (idempotent: replaces cases whose name starts
with 'spec15'). Expectations are worked out from docs/contract/caps.md; holdout buckets with hashlib."""
import hashlib, json, pathlib
root = pathlib.Path(__file__).resolve().parent

def bucket(rule, vis):
    return int.from_bytes(hashlib.sha256(f'{rule}:{vis}'.encode()).digest()[:8], 'big') % 10000

def find_vis(rule, held, pct):
    for i in range(10000):
        v = f'vis_{i}'
        if (bucket(rule, v) < pct * 100) == held:
            return v, bucket(rule, v)

CONFIG = {"version": 1, "max_nudges_per_session": 2, "quiet_zones": ["/checkout/**"], "rules": [
    {"id": "exit-offer", "holdout_percent": 10, "cap": {"per_session": 1, "cooldown_ms": 604800000},
     "nudge": {"type": "exit_modal", "message": "Wait! 10% off", "cta": "Get code", "cta_url": "/discount"},
     "when": {"exit_intent": True, "pages": ["/products/**"]}},
    {"id": "size-help", "cap": {"per_session": 2},
     "nudge": {"type": "chat_bubble", "message": "Need a size?", "cta": "Chat"},
     "when": {"min_idle_ms": 5000, "exit_intent": False, "pages": ["/products/**"]}},
    {"id": "welcome", "nudge": {"type": "toast", "message": "Welcome", "cta": "Shop"},
     "when": {"max_intent_score": 30}}]}
HELD, HELD_B = find_vis('exit-offer', True, 10)
FREE, FREE_B = find_vis('exit-offer', False, 10)
EXIT = {"type": "exit_modal", "message": "Wait! 10% off", "cta": "Get code"}
SIZE = {"type": "chat_bubble", "message": "Need a size?", "cta": "Chat"}
WELCOME = {"type": "toast", "message": "Welcome", "cta": "Shop"}
DAY = 86400000

def fires(n): return {"response": {"data": {"would_fire": True, "nudge": n}}}
def none(*reason): return {"response": {"data": {"would_fire": False, "nudge": None}}, "reason_contains": list(reason)}
def err(*m): return {"error": "InvalidRequest", "message_contains": list(m)}
def h(rule, ms, this, **kw): return dict(rule_id=rule, ms_ago=ms, this_session=this, **kw)
def st(**kw):
    s = {"intent_score": 50, "page_url": "/products/linen-shirt"}
    s.update(kw)
    return s

preview = [
  ("the API document's three fields answer as before: exit_intent defaults to false", st(idle_ms=6000), fires(SIZE)),
  ("exit_intent true fires the exit-intent rule; the wire nudge has no cta_url", st(exit_intent=True), fires(EXIT)),
  ("exit_intent true without a visitor_id holds no one out", st(exit_intent=True, idle_ms=6000), fires(EXIT)),
  (f"a visitor in the control group (bucket {HELD_B} < 1000) gets no nudge and no later rule", st(exit_intent=True, visitor_id=HELD, intent_score=20), none("exit-offer", "control group")),
  (f"a visitor outside the control group (bucket {FREE_B} >= 1000) gets the nudge", st(exit_intent=True, visitor_id=FREE), fires(EXIT)),
  ("when.exit_intent false never fires on exit intent", st(exit_intent=True, idle_ms=6000, page_url="/about"), none()),
  ("a dismissal 1 day ago is inside the 7-day cooldown: capped", st(exit_intent=True, history=[h("exit-offer", DAY, False, outcome="dismissed")]), none("exit-offer", "capped")),
  ("a dismissal 8 days ago is past the cooldown", st(exit_intent=True, history=[h("exit-offer", 8 * DAY, False, outcome="dismissed")]), fires(EXIT)),
  ("a click 1 day ago starts no cooldown, and an earlier session counts for no per-session cap", st(exit_intent=True, history=[h("exit-offer", DAY, False, outcome="clicked")]), fires(EXIT)),
  ("cooldown_ms is exclusive: dismissed exactly cooldown_ms ago fires again", st(exit_intent=True, history=[h("exit-offer", 604800000, False, outcome="dismissed")]), fires(EXIT)),
  ("cap.per_session 2: shown once this session still fires", st(idle_ms=6000, history=[h("size-help", 1000, True)]), fires(SIZE)),
  ("cap.per_session 2: shown twice this session is capped", st(idle_ms=6000, intent_score=50, history=[h("size-help", 1000, True), h("size-help", 90000, True)]), none("size-help", "capped")),
  ("shown twice in earlier sessions caps nothing", st(idle_ms=6000, history=[h("size-help", 1000, False), h("size-help", 90000, False)]), fires(SIZE)),
  ("max_nudges_per_session 2 reached by entries of any rule id stops every rule", st(intent_score=20, page_url="/", history=[h("gone", 1, True), h("other", 2, True)]), none("max_nudges_per_session")),
  ("one entry this session is under max_nudges_per_session 2", st(intent_score=20, page_url="/", history=[h("gone", 1, True)]), fires(WELCOME)),
  ("a held-out entry this session counts for the rule's cap", st(exit_intent=True, history=[h("exit-offer", 5, True, held_out=True)]), none("exit-offer", "capped")),
  ("the default cap is once per session", st(intent_score=20, page_url="/", history=[h("welcome", 5, True, outcome="shown")]), none("welcome", "capped")),
  ("a capped rule is skipped: a later rule whose conditions hold fires", st(intent_score=20, idle_ms=6000, history=[h("size-help", 5, True)]), None),
  ("a quiet zone comes before caps and holdouts", st(page_url="/checkout/pay", exit_intent=True, visitor_id=HELD), none("/checkout/**")),
  ("exit intent on a page outside the exit rule's pages fires the rule without exit_intent", st(intent_score=20, page_url="/", exit_intent=True, visitor_id=HELD), fires(WELCOME)),
  ("a visitor_id of 64 characters after vis_ is accepted", st(idle_ms=6000, visitor_id="vis_" + "a" * 64), fires(SIZE)),
  ("200 history entries are accepted", st(idle_ms=6000, history=[h("other", i, False) for i in range(200)]), fires(SIZE)),
  ("error: 201 history entries", st(history=[h("other", i, False) for i in range(201)]), err("session_state.history", "201")),
  ("error: visitor_id without vis_", st(visitor_id="abc"), err("session_state.visitor_id", "abc")),
  ("error: visitor_id vis_ alone", st(visitor_id="vis_"), err("session_state.visitor_id")),
  ("error: visitor_id with a slash", st(visitor_id="vis_a/b"), err("session_state.visitor_id", "vis_a/b")),
  ("error: visitor_id of 65 characters after vis_", st(visitor_id="vis_" + "a" * 65), err("session_state.visitor_id", "65")),
  ("error: visitor_id not a string", st(visitor_id=5), err("session_state.visitor_id", "5")),
  ("error: ms_ago -1", st(history=[h("a", -1, True)]), err("session_state.history[0].ms_ago", "-1")),
  ("error: ms_ago over 365 days", st(history=[h("a", 31536000001, True)]), err("session_state.history[0].ms_ago", "31536000001")),
  ("error: ms_ago a fraction", st(history=[h("a", 1.5, True)]), err("session_state.history[0].ms_ago", "1.5")),
  ("error: an unknown field in a history entry", st(history=[h("a", 1, True, shown_at=1)]), err("session_state.history[0].shown_at")),
  ("error: an outcome outside the four", st(history=[h("a", 1, True, outcome="opened")]), err("session_state.history[0].outcome", "opened")),
  ("error: this_session missing", st(history=[{"rule_id": "a", "ms_ago": 1}]), err("session_state.history[0].this_session")),
  ("error: a rule_id that no rule id can be", st(history=[h("a b", 1, True)]), err("session_state.history[0].rule_id", "a b")),
  ("error: a held-out entry with an outcome", st(history=[h("a", 1, True, held_out=True, outcome="clicked")]), err("session_state.history[0].outcome", "clicked")),
  ("error: history not an array", st(history={"rule_id": "a"}), err("session_state.history")),
  ("error: exit_intent not a boolean", st(exit_intent="yes"), err("session_state.exit_intent", "yes")),
  ("error: every problem is reported at once", st(exit_intent=1, visitor_id="x", history=[h("a", -5, "no")]), err("session_state.exit_intent", "session_state.visitor_id", "session_state.history[0].ms_ago", "session_state.history[0].this_session")),
]
cases = []
for name, state, expect in preview:
    c = {"name": "spec15: " + name, "config": CONFIG, "request": {"session_state": state}, "expect": expect}
    cases.append(c)
# The "skipped" case: size-help capped at once per session, so welcome (intent 20) fires.
skip_cfg = json.loads(json.dumps(CONFIG))
skip_cfg['rules'][1]['cap'] = {"per_session": 1}
cases[17]['config'] = skip_cfg
cases[17]['expect'] = fires(WELCOME)

WRITTEN = set()


def merge(file, new):
    """Appends `new` to the file's `cases`, one case a line, keeping the rest of the text as it is;
    the lines of an earlier run (each starts with `{"name": "spec15`) are replaced."""
    p = root / file
    text = p.read_text()
    end = text.rindex(']')
    first = file not in WRITTEN  # a second call of this run appends to the first's cases
    WRITTEN.add(file)
    kept = [l for l in text[:end].rstrip().split('\n') if not (first and l.lstrip().startswith('{"name": "spec15'))]
    head = '\n'.join(kept).rstrip().rstrip(',')
    indent = ' ' * (len(kept[-1]) - len(kept[-1].lstrip()))
    lines = ',\n'.join(indent + json.dumps(c, ensure_ascii=True) for c in new)
    close = text[:end].rsplit('\n', 1)[-1]
    p.write_text(head + ',\n' + lines + '\n' + close + text[end:])
    assert json.loads(p.read_text())
    print(file, len(new))

merge('preview.json', cases)

# --- explain -------------------------------------------------------------------------------
explain = [
  {"name": "spec15: a held-out visitor: the rule's verdict is held_out, later rules shadowed, none fired",
   "config": CONFIG, "state": st(exit_intent=True, visitor_id=HELD, intent_score=20),
   "expect": {"path": "/products/linen-shirt", "fired_rule_id": None,
              "verdicts": {"exit-offer": "held_out", "size-help": "failed", "welcome": "shadowed"},
              "failing": {"size-help": ["min_idle_ms", "exit_intent"], "welcome": []}}},
  {"name": "spec15: caps are failing conditions: cap and max_nudges_per_session",
   "config": CONFIG, "state": st(idle_ms=6000, intent_score=20, history=[h("size-help", 5, True), h("size-help", 6, True)]),
   "expect": {"fired_rule_id": None,
              "verdicts": {"exit-offer": "failed", "size-help": "failed", "welcome": "failed"},
              "failing": {"exit-offer": ["exit_intent", "max_nudges_per_session"], "size-help": ["max_nudges_per_session"], "welcome": ["max_nudges_per_session"]}}},
  {"name": "spec15: a cooldown is a failing cap; exit_intent holds",
   "config": CONFIG, "state": st(exit_intent=True, history=[h("exit-offer", DAY, False, outcome="dismissed")]),
   "expect": {"fired_rule_id": None, "verdicts": {"exit-offer": "failed"}, "failing": {"exit-offer": ["cap"]}}},
  {"name": "spec15: an exit-intent rule fires; its exit_intent condition holds",
   "config": CONFIG, "state": st(exit_intent=True, visitor_id=FREE),
   "expect": {"fired_rule_id": "exit-offer", "earliest_idle_ms": 0, "earliest_rule_id": "exit-offer",
              "verdicts": {"exit-offer": "fired"}, "failing": {"exit-offer": []}}},
  {"name": "spec15: idle time is the only thing missing for a rule that is not capped",
   "config": CONFIG, "state": st(idle_ms=1000, history=[h("size-help", 5, True)]),
   "expect": {"fired_rule_id": None, "earliest_idle_ms": 5000, "earliest_rule_id": "size-help",
              "failing": {"exit-offer": ["exit_intent"], "size-help": ["min_idle_ms"]}}},
  {"name": "spec15: a capped rule missing idle time too has no earliest idle time",
   "config": CONFIG, "state": st(idle_ms=1000, history=[h("size-help", 5, True), h("size-help", 6, True)]),
   "expect": {"fired_rule_id": None, "earliest_idle_ms": None,
              "failing": {"size-help": ["min_idle_ms", "max_nudges_per_session"]}}},
]
merge('explain.json', explain)

# --- lint ----------------------------------------------------------------------------------
def rule(id, when=None, **kw):
    r = {"id": id, "nudge": {"type": "toast", "message": "m", "cta": "c"}}
    if when is not None: r["when"] = when
    r.update(kw)
    return r
lint = [
  {"name": "spec15: a holdout over 20 % is costly; 20 % is not",
   "config": {"version": 1, "rules": [rule("a", {"pages": ["/a"]}, holdout_percent=21), rule("b", {"pages": ["/b"]}, holdout_percent=20)]},
   "expect": [{"code": "costly_holdout", "path": "rules[0].holdout_percent"}], "exact": True},
  {"name": "spec15: a rule shadowed by one capped at once per session under max_nudges_per_session 1 can never fire",
   "config": {"version": 1, "max_nudges_per_session": 1, "rules": [rule("a", {"pages": ["/p/**"]}), rule("b", {"pages": ["/p/x"]})]},
   "expect": [{"code": "capped_by_session", "path": "rules[1]"}], "exact": True},
  {"name": "spec15: with room left in the session, the shadowed rule fires once the earlier one is capped",
   "config": {"version": 1, "max_nudges_per_session": 2, "rules": [rule("a", {"pages": ["/p/**"]}), rule("b", {"pages": ["/p/x"]})]},
   "expect": [{"code": "shadowed_rule", "path": "rules[1]"}], "exact": True},
  {"name": "spec15: the earlier rules' caps add up: 2 + 1 reach max_nudges_per_session 3",
   "config": {"version": 1, "max_nudges_per_session": 3, "rules": [rule("a", {"pages": ["/p/**"]}, cap={"per_session": 2}), rule("a2", {"pages": ["/p/**"]}), rule("b", {"pages": ["/p/x"]})]},
   "expect": [{"code": "capped_by_session", "path": "rules[2]"}], "exact": False},
  {"name": "spec15: an exit-intent rule shadows no rule that fires without exit intent",
   "config": {"version": 1, "rules": [rule("exit", {"exit_intent": True}), rule("b", {"pages": ["/p"]})]},
   "expect": [], "exact": True},
  {"name": "spec15: an exit-intent rule shadows a later exit-intent rule",
   "config": {"version": 1, "rules": [rule("exit", {"exit_intent": True, "pages": ["/**"]}), rule("b", {"pages": ["/p"], "exit_intent": True})]},
   "expect": [{"code": "shadowed_rule", "path": "rules[1]"}], "exact": True},
  {"name": "spec15: a rule with exit_intent is no catch-all",
   "config": {"version": 1, "rules": [rule("exit", {"exit_intent": False}), rule("b", {"exit_intent": True})]},
   "expect": [], "exact": True},
]
merge('lint.json', lint)

# --- config --------------------------------------------------------------------------------
def cfg(**top):
    c = {"version": 1, "rules": [rule("a")]}
    c.update(top)
    return c
def cfg_rule(**kw):
    r = rule("a")
    nudge = kw.pop("nudge", None)
    if nudge: r["nudge"].update(nudge)
    r.update(kw)
    return {"version": 1, "rules": [r]}
config = [
  ("valid: every docs/contract/caps.md field at an edge of its range", {"version": 1, "max_nudges_per_session": 100, "rules": [
      dict(rule("a", {"exit_intent": True}), cap={"per_session": 100, "cooldown_ms": 31536000000}, holdout_percent=50,
           nudge={"type": "toast", "message": "m", "cta": "c", "cta_url": "https://shop.example/cart?x=1#y"}),
      dict(rule("b", {"exit_intent": False}), cap={"per_session": 1, "cooldown_ms": 0}, holdout_percent=0,
           nudge={"type": "toast", "message": "m", "cta": "c", "cta_url": "/" + "a" * 2047})]}, []),
  ("valid: max_nudges_per_session 1", cfg(max_nudges_per_session=1), []),
  ("valid: an empty cap takes its defaults", cfg_rule(cap={}), []),
  ("invalid: max_nudges_per_session 0", cfg(max_nudges_per_session=0), ["max_nudges_per_session"]),
  ("invalid: max_nudges_per_session 101", cfg(max_nudges_per_session=101), ["max_nudges_per_session"]),
  ("invalid: max_nudges_per_session a string", cfg(max_nudges_per_session="2"), ["max_nudges_per_session"]),
  ("invalid: cap.per_session 0", cfg_rule(cap={"per_session": 0}), ["rules[0].cap.per_session"]),
  ("invalid: cap.per_session 101", cfg_rule(cap={"per_session": 101}), ["rules[0].cap.per_session"]),
  ("invalid: cap.cooldown_ms -1", cfg_rule(cap={"cooldown_ms": -1}), ["rules[0].cap.cooldown_ms"]),
  ("invalid: cap.cooldown_ms over 365 days", cfg_rule(cap={"cooldown_ms": 31536000001}), ["rules[0].cap.cooldown_ms"]),
  ("invalid: an unknown field in cap", cfg_rule(cap={"per_visit": 1}), ["rules[0].cap.per_visit"]),
  ("invalid: cap not an object", cfg_rule(cap=1), ["rules[0].cap"]),
  ("invalid: holdout_percent 51", cfg_rule(holdout_percent=51), ["rules[0].holdout_percent"]),
  ("invalid: holdout_percent 10.5", cfg_rule(holdout_percent=10.5), ["rules[0].holdout_percent"]),
  ("invalid: when.exit_intent a string", cfg_rule(when={"exit_intent": "yes"}), ["rules[0].when.exit_intent"]),
  ("invalid: cta_url javascript:", cfg_rule(nudge={"cta_url": "javascript:alert(1)"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url JAVASCRIPT: in capitals", cfg_rule(nudge={"cta_url": "JavaScript:alert(1)"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url data:", cfg_rule(nudge={"cta_url": "data:text/html,<b>x</b>"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url http:", cfg_rule(nudge={"cta_url": "http://shop.example/x"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url protocol-relative //host", cfg_rule(nudge={"cta_url": "//evil.example/x"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url relative", cfg_rule(nudge={"cta_url": "cart"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url with a control character", cfg_rule(nudge={"cta_url": "/cart\u0001"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url with a space", cfg_rule(nudge={"cta_url": "/my cart"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url with a backslash", cfg_rule(nudge={"cta_url": "/\\evil.example"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url https: without a host", cfg_rule(nudge={"cta_url": "https:///x"}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url empty", cfg_rule(nudge={"cta_url": ""}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url of 2,049 bytes", cfg_rule(nudge={"cta_url": "/" + "a" * 2048}), ["rules[0].nudge.cta_url"]),
  ("invalid: cta_url not a string", cfg_rule(nudge={"cta_url": None}), ["rules[0].nudge.cta_url"]),
  ("invalid: every docs/contract/caps.md error at once", {"version": 1, "max_nudges_per_session": 0, "rules": [dict(rule("a", {"exit_intent": 1}), holdout_percent=99, cap={"per_session": 0}, nudge={"type": "toast", "message": "m", "cta": "c", "cta_url": "ftp://x"})]},
   ["max_nudges_per_session", "rules[0].when.exit_intent", "rules[0].holdout_percent", "rules[0].cap.per_session", "rules[0].nudge.cta_url"]),
]
merge('config.json', [{"name": "spec15 " + n, "config": c, "expect_paths": p} for n, c, p in config])

# --- scenarios and coverage -------------------------------------------------------------------
SCENARIOS = {"scenarios": [
  {"name": "exit intent fires the exit offer", "session_state": st(exit_intent=True, visitor_id=FREE), "expect": {"rule": "exit-offer"}},
  {"name": "a visitor of the control group", "session_state": st(exit_intent=True, visitor_id=HELD), "expect": {"held_out": "exit-offer"}},
  {"name": "dismissed yesterday", "session_state": st(exit_intent=True, history=[h("exit-offer", DAY, False, outcome="dismissed")]), "expect": {"no_nudge": True}},
  {"name": "size help once more", "session_state": st(idle_ms=6000, history=[h("size-help", 1000, True)]), "expect": {"rule": "size-help"}},
  {"name": "a bad history entry", "session_state": st(history=[h("size-help", -1, True)]), "expect": {"error": "InvalidRequest"}},
]}
merge('scenarios.json', [
  {"name": "spec15: scenarios give the new state fields and expect held_out", "config": CONFIG, "scenarios": SCENARIOS,
   "expect": {"passed": 5, "failed": 0}},
  {"name": "spec15: a held_out expectation that does not hold fails with what was got", "config": CONFIG,
   "scenarios": {"scenarios": [{"name": "not held out", "session_state": st(exit_intent=True, visitor_id=FREE), "expect": {"held_out": "exit-offer"}}]},
   "expect": {"passed": 0, "failed": 1, "results": [{"name": "not held out", "passed": False, "expected": {"held_out": "exit-offer"}, "got": {"rule": "exit-offer"}}]}},
])
merge('coverage.json', [
  {"name": "spec15: coverage counts held-out and capped scenarios and the exit_intent condition", "config": CONFIG, "scenarios": SCENARIOS,
   "expect": {"scenarios": 5, "rejected": 1, "rules": [
     {"id": "exit-offer", "fired": 1, "held_out": 1, "capped": 1,
      "conditions": [{"condition": "pages", "seen_true": 4, "seen_false": 0}, {"condition": "exit_intent", "seen_true": 3, "seen_false": 1}]},
     {"id": "size-help", "fired": 1, "held_out": 0, "capped": 0,
      "conditions": [{"condition": "min_idle_ms", "seen_true": 1, "seen_false": 3}, {"condition": "pages", "seen_true": 4, "seen_false": 0}, {"condition": "exit_intent", "seen_true": 1, "seen_false": 3}]},
     {"id": "welcome", "fired": 0, "held_out": 0, "capped": 0,
      "conditions": [{"condition": "max_intent_score", "seen_true": 0, "seen_false": 4}]}]}},
])

# --- replay --------------------------------------------------------------------------------
REPLAY_CONFIG = {"version": 1, "rules": [
    {"id": "exit-offer", "nudge": {"type": "exit_modal", "message": "Wait", "cta": "Get code"},
     "when": {"exit_intent": True, "pages": ["/products/**"]}},
    {"id": "size-help", "nudge": {"type": "chat_bubble", "message": "Size?", "cta": "Chat"},
     "when": {"min_idle_ms": 5000, "pages": ["/products/**"]}}]}
HOLD_CONFIG = {"version": 1, "rules": [
    {"id": "size-help", "holdout_percent": 30, "nudge": {"type": "chat_bubble", "message": "Size?", "cta": "Chat"},
     "when": {"min_idle_ms": 5000, "pages": ["/products/**"]}}]}
HOLD_IN, _ = find_vis('size-help', True, 30)
HOLD_OUT, _ = find_vis('size-help', False, 30)
def ev(t, url, s, **kw): return dict(type=t, url=url, occurred_at=f"2026-03-01T12:00:{s:02d}Z", **kw)
merge('replay.json', [
  {"name": "spec15: the default cap fires a rule once per session; exit-intent rules are tried at the end of the last page",
   "config": REPLAY_CONFIG,
   "sessions": [{"id": "sess_a", "intent_score": 50, "ended_at": "2026-03-01T12:00:23Z", "nudges": [], "events": [
       ev("PAGE_VIEW", "/products/a", 0), ev("PAGE_VIEW", "/products/b", 10), ev("PAGE_VIEW", "/products/c", 20)]}],
   "expect": {"sessions": [{"pages": [
       {"outcome": {"kind": "fired", "rule_id": "size-help", "at_ms": 5000}},
       {"outcome": {"kind": "no_nudge"}, "capped_rule_id": "size-help"},
       {"outcome": {"kind": "fired", "rule_id": "exit-offer", "at_ms": 3000}}]}],
     "summary": {"page_views": 3, "page_views_with_nudge": 2, "rules": [
       {"rule_id": "exit-offer", "sessions": 1, "page_views": 1, "capped_page_views": 0, "held_out_events": 0},
       {"rule_id": "size-help", "sessions": 1, "page_views": 1, "capped_page_views": 1, "held_out_events": 0}]}}},
  {"name": "spec15: a recorded NUDGE_HELD_OUT is no page view and counts for the rule's cap from the next page on",
   "config": REPLAY_CONFIG,
   "sessions": [{"id": "sess_b", "intent_score": 50, "ended_at": "2026-03-01T12:00:30Z", "nudges": [], "events": [
       ev("PAGE_VIEW", "/blog/a", 0), ev("NUDGE_HELD_OUT", "/blog/a", 2, rule_id="size-help"), ev("PAGE_VIEW", "/products/b", 10)]}],
   "expect": {"sessions": [{"pages": [
       {"page_url": "/blog/a", "dwell_ms": 10000, "outcome": {"kind": "no_nudge"}},
       {"page_url": "/products/b", "outcome": {"kind": "fired", "rule_id": "exit-offer", "at_ms": 20000}, "capped_rule_id": "size-help"}]}],
     "summary": {"page_views": 2, "rules": [
       {"rule_id": "exit-offer", "page_views": 1},
       {"rule_id": "size-help", "page_views": 0, "capped_page_views": 1, "held_out_events": 1}]}}},
  {"name": "spec15: a NUDGE_HELD_OUT event needs its rule_id",
   "config": REPLAY_CONFIG,
   "sessions": [{"id": "sess_c", "intent_score": 50, "ended_at": "2026-03-01T12:00:30Z", "events": [
       ev("PAGE_VIEW", "/blog/a", 0), ev("NUDGE_HELD_OUT", "/blog/a", 2)]}],
   "expect_error": {"kind": "InvalidSessions", "diagnostics": [{"code": "missing_field", "path": "[0].events[1].rule_id"}]}},
  {"name": "spec15: a session's visitor_id is bucketed: the control group is held out (counted for caps), the rest reached",
   "config": HOLD_CONFIG,
   "sessions": [
     {"id": "sess_h", "visitor_id": HOLD_IN, "intent_score": 50, "ended_at": "2026-03-01T12:00:20Z", "events": [
       ev("PAGE_VIEW", "/products/a", 0), ev("PAGE_VIEW", "/products/b", 10)]},
     {"id": "sess_t", "visitor_id": HOLD_OUT, "intent_score": 50, "ended_at": "2026-03-01T12:00:20Z", "events": [
       ev("PAGE_VIEW", "/products/a", 0), ev("PAGE_VIEW", "/products/b", 10)]},
     {"id": "sess_n", "intent_score": 50, "ended_at": "2026-03-01T12:00:20Z", "events": [
       ev("PAGE_VIEW", "/products/a", 0)]}],
   "expect": {"sessions": [
       {"pages": [{"outcome": {"kind": "held_out", "rule_id": "size-help", "at_ms": 5000}},
                  {"outcome": {"kind": "no_nudge"}, "capped_rule_id": "size-help"}]},
       {"pages": [{"outcome": {"kind": "fired", "rule_id": "size-help", "at_ms": 5000}},
                  {"outcome": {"kind": "no_nudge"}, "capped_rule_id": "size-help"}]},
       {"pages": [{"outcome": {"kind": "fired", "rule_id": "size-help", "at_ms": 5000}}]}],
     "summary": {"page_views": 5, "page_views_with_nudge": 2, "rules": [
       {"rule_id": "size-help", "sessions": 2, "held_out_sessions": 1, "page_views": 2, "capped_page_views": 2}]}}},
  {"name": "spec15: a session's visitor_id must be vis_ then 1 to 64 of A-Za-z0-9_-",
   "config": HOLD_CONFIG,
   "sessions": [{"id": "sess_v", "visitor_id": "visitor-1", "intent_score": 50, "ended_at": "2026-03-01T12:00:20Z", "events": []}],
   "expect_error": {"kind": "InvalidSessions", "diagnostics": [{"code": "invalid_visitor_id", "path": "[0].visitor_id"}]}},
])

# --- history order ---------------------------------------------------------------------------
merge('preview.json', [
  {"name": "spec15: error: a history that is not newest first (ms_ago decreasing)", "config": CONFIG,
   "request": {"session_state": st(history=[h("a", 5000, True), h("b", 10, True)])},
   "expect": err("session_state.history[1].ms_ago", "newest first")},
  {"name": "spec15: error: an entry of this session after one of an earlier session", "config": CONFIG,
   "request": {"session_state": st(history=[h("a", 5, False), h("b", 10, True)])},
   "expect": err("session_state.history[1].ms_ago", "newest first")},
  {"name": "spec15: entries of earlier sessions past every cooldown count for nothing", "config": CONFIG,
   "request": {"session_state": st(idle_ms=6000, history=[h("size-help", 1000, True)] + [h("size-help", 700000000 + i, False, outcome="dismissed") for i in range(150)])},
   "expect": fires(SIZE)},
])
