// nudge-rules/storefront: the storefront runtime (docs/contract/storefront.md). A visitor sees the nudge the engine
// decides, and every page view, nudge and outcome goes back through nudge-rules/relay.
//
//   import { startNudges } from 'nudge-rules/storefront';
//   const nudges = startNudges({ endpoint: 'https://api.example.com', siteKey: 'pk_live_...' });
//
// or, with no build step, pkg/dist/storefront.js (this module bundled with the relay and the
// engine's glue, its .wasm beside it) in a tag:
//
//   <script type="module" src="/nudges/storefront.js" data-endpoint="https://api.example.com"
//           data-site-key="pk_live_..."></script>
//
// It starts after the page's `load` event; fetches the config (GET /v1/runtime/config, kept in
// sessionStorage for its cache time and revalidated with its ETag) and the engine; observes the
// page (location, pushState, replaceState, popstate), idle time (paused while the tab is hidden),
// exit intent and the intent score; decides with the engine at each page view, intent change,
// exit intent and at the idle time the engine names (one timer, no polling); shows at most one
// nudge in a Shadow DOM; keeps the visitor's nudge history (caps, cooldowns) with a `vis_` id in
// localStorage. It never throws into the page: every failure goes to `onError`. docs/STOREFRONT.md.
// The slim module (decide only, src/wasm_slim.rs), not the editor's: what a page needs.
import initEngine, { NudgeEngine } from './wasm/slim/nudge_rules.js';
import { createRelay } from './relay.js';
import { renderNudge } from './storefront-ui.js';

const PUBLISHABLE_KEY = /^pk_(live|test)_[A-Za-z0-9]{16,}$/;
const VISITOR_ID = /^vis_[A-Za-z0-9_-]{1,64}$/;
/** The config's cache time (the endpoint's `max-age`). */
export const CONFIG_MAX_AGE_MS = 60_000;
const MAX_HISTORY = 200;
const MAX_MS_AGO = 31_536_000_000;
const MAX_IDLE_MS = 86_400_000;
const VISITOR_KEY = 'nudge-rules.visitor';
const SESSION_KEY = 'nudge-rules.session';
const CONFIG_KEY = 'nudge-rules.config';
const ACTIVITY = ['pointermove', 'pointerdown', 'keydown', 'scroll', 'wheel', 'touchstart'];

/** A User Timing mark (`nudge-rules:...`) for benchmarks and the browser's performance panel. */
function mark(name) {
  try {
    globalThis.performance?.mark?.(`nudge-rules:${name}`);
  } catch {
    // no User Timing here
  }
}

/**
 * Resolves in a new task, so that the work before and after it are two main-thread tasks:
 * `scheduler.yield()` where the browser has it, else a MessageChannel message (not clamped like
 * a nested setTimeout).
 */
function yieldToPage() {
  try {
    const scheduler = globalThis.scheduler;
    if (typeof scheduler?.yield === 'function') return scheduler.yield();
  } catch {
    // fall through
  }
  return new Promise((resolve) => {
    try {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve(undefined);
      };
      channel.port2.postMessage(null);
    } catch {
      setTimeout(resolve, 0);
    }
  });
}

/** An error given to `onError`; never thrown into the page. */
export class NudgesError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {Record<string, unknown>} [details]
   */
  constructor(code, message, details = {}) {
    super(message);
    this.name = 'NudgesError';
    this.code = code;
    Object.assign(this, details);
  }
}

/**
 * The built-in intent score (docs/contract/storefront.md): 10 per distinct page viewed in the session (at most 50),
 * plus 30 once the session has an ADD_TO_CART, plus 20 when the visitor had an earlier session,
 * at most 100.
 * @param {{ pages: number, addedToCart: boolean, returning: boolean }} visit
 */
export function builtInIntentScore({ pages, addedToCart, returning }) {
  const score = Math.min(10 * Math.max(0, Math.floor(pages) || 0), 50) + (addedToCart ? 30 : 0) + (returning ? 20 : 0);
  return Math.min(score, 100);
}

// The engine's module (its glue finds the .wasm beside itself), compiled once per page: with
// `WebAssembly.instantiateStreaming` (the glue's path for a URL), which compiles while the bytes
// arrive and off the main thread.
let engineReady = null;
function loadEngine(wasmUrl) {
  if (typeof URL.canParse !== 'function') {
    // The engine judges hosts with URL.canParse (src/host.rs); older browsers get the same verdict.
    URL.canParse = (url, base) => {
      try {
        new URL(url, base);
        return true;
      } catch {
        return false;
      }
    };
  }
  engineReady ??= initEngine(wasmUrl ? { module_or_path: wasmUrl } : undefined).catch((e) => {
    engineReady = null;
    throw e;
  });
  return engineReady;
}

// V8 compiles a WebAssembly function when it is first called (lazy compilation), on the main
// thread: the page's first config compile and first decision would pay for most of the module's
// code in one task each. A few small calls, each in a task of its own, compile it bit by bit
// first (docs/contract/storefront.md's 50 ms budget); their results are thrown away.
const WARM_RULE = { id: 'w', nudge: { type: 'toast', message: 'm', cta: 'c' } };
const WARM_STEPS = [
  { version: 1 },
  { version: 1, rules: [{ ...WARM_RULE, when: {} }] },
  {
    version: 1,
    max_nudges_per_session: 3,
    quiet_zones: ['/q/**', '/c'],
    rules: [{ ...WARM_RULE, when: { pages: ['/p/*', '/w/**'], min_intent_score: 1, min_idle_ms: 1 }, cap: { per_session: 2, cooldown_ms: 1000 }, holdout_percent: 1 }],
  },
];
let warmed = null;
function warmEngine() {
  warmed ??= (async () => {
    let last = null;
    for (const cfg of WARM_STEPS) {
      await yieldToPage();
      mark('warm');
      try {
        const next = new NudgeEngine(cfg);
        last?.free?.();
        last = next;
      } catch {
        // a warm-up only
      }
    }
    await yieldToPage();
    mark('warm');
    try {
      last?.decide({ intent_score: 50, page_url: '/p/x', idle_ms: 0, visitor_id: 'vis_w', history: [{ rule_id: 'w', ms_ago: 1, this_session: true }] });
    } catch {
      // a warm-up only
    }
    last?.free?.();
  })();
  return warmed;
}

function storageOf(name) {
  try {
    const s = globalThis[name];
    return s && typeof s.getItem === 'function' ? s : null;
  } catch {
    return null; // a sandboxed frame or disabled storage throws on access
  }
}

function readJson(storage, key) {
  if (!storage) return null;
  try {
    const text = storage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function writeJson(storage, key, value) {
  if (!storage) return;
  try {
    storage.setItem(key, JSON.stringify(value));
  } catch {
    // full or disabled: the memory copy serves this page
  }
}

function randomChars(n) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = new Uint8Array(n);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < n; i++) bytes[i] = Math.floor(Math.random() * 256);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}

function inertHandle(reason) {
  const done = Promise.resolve();
  return {
    ready: done,
    stop: () => done,
    addToCart: () => {},
    purchase: () => {},
    refresh: () => {},
    get visitorId() {
      return null;
    },
    get sessionId() {
      return null;
    },
    get running() {
      return false;
    },
    reason,
  };
}

/**
 * Starts the runtime. Never throws: bad options are reported through `onError` and give a
 * handle that does nothing.
 * @param {import('./storefront.d.ts').NudgesOptions} options
 * @returns {import('./storefront.d.ts').NudgesHandle}
 */
export function startNudges(options) {
  const o = options && typeof options === 'object' ? options : /** @type {any} */ ({});
  const userOnError = typeof o.onError === 'function' ? o.onError : (e) => globalThis.console?.warn?.(e);
  const report = (error) => {
    try {
      userOnError(error);
    } catch {
      // an error of onError itself is swallowed
    }
  };
  try {
    return start(o, report);
  } catch (e) {
    report(new NudgesError('config', `nudge-rules/storefront: ${e instanceof Error ? e.message : String(e)}; nudges are off`));
    return inertHandle('config');
  }
}

function start(o, report) {
  if (typeof o.endpoint !== 'string' || !/^https?:\/\//i.test(o.endpoint)) {
    throw new TypeError(`endpoint must be the server's http(s) URL, got ${JSON.stringify(String(o.endpoint)).slice(0, 80)}`);
  }
  if (typeof o.siteKey !== 'string' || !PUBLISHABLE_KEY.test(o.siteKey)) {
    if (typeof o.siteKey === 'string' && o.siteKey.startsWith('sk_')) {
      throw new TypeError('siteKey is a secret key (sk_): a secret key must never be put in a page; use the site\'s publishable pk_live_ or pk_test_ key');
    }
    throw new TypeError('siteKey must be a publishable key: pk_live_ or pk_test_ followed by at least 16 letters or digits');
  }
  const win = globalThis.window;
  const doc = globalThis.document;
  if (!win || !doc) throw new TypeError('the storefront runtime needs a browser page (window and document)');
  const base = o.endpoint.replace(/\/+$/, '');
  const siteKey = o.siteKey;
  const local = storageOf('localStorage');
  const session = storageOf('sessionStorage');
  const now = () => Date.now();
  const fail = (code, message, cause) => report(new NudgesError(code, `nudge-rules/storefront: ${message}`, cause === undefined ? {} : { cause }));
  const guard = (name, fn) => (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      fail('internal', `${name}: ${e instanceof Error ? e.message : String(e)}`, e);
      return undefined;
    }
  };

  // --- the visitor: a vis_ id and the nudge history, in first-party localStorage ------------
  let visitor = readJson(local, VISITOR_KEY);
  if (!visitor || typeof visitor !== 'object' || !VISITOR_ID.test(visitor.id) || !Array.isArray(visitor.history)) {
    visitor = { id: `vis_${randomChars(22)}`, history: [], sessions: [] };
  }
  if (!Array.isArray(visitor.sessions)) visitor.sessions = [];
  visitor.history = visitor.history.filter((h) => h && typeof h.rule_id === 'string' && Number.isFinite(h.at)).slice(0, MAX_HISTORY);
  const saveVisitor = () => writeJson(local, VISITOR_KEY, visitor);
  saveVisitor();

  const relay = createRelay({
    endpoint: `${base}/v1/events`,
    siteKey,
    visitorId: visitor.id,
    storage: session ?? undefined,
    flushIntervalMs: o.flushIntervalMs,
    onError: (e) => report(e),
  });

  let running = true;
  let engine = null;
  let config = null; // the parsed config, for a held-out rule's nudge type
  let configAt = 0; // when the config was last fetched or revalidated
  let configEtag = null;
  let refreshing = null;
  let shown = null; // { nudgeId, ruleId, type, ui, historyEntry }
  let path = null;
  let timer = null;
  let timerAt = null; // the idle time the timer waits for
  let lastScore = null;
  // Idle time: ms since the last activity, counted only while the tab is visible.
  let idleBefore = 0;
  let visibleSince = doc.visibilityState === 'hidden' ? null : now();
  let resolveReady;
  const ready = new Promise((r) => {
    resolveReady = r;
  });

  const idle = () => Math.min(MAX_IDLE_MS, Math.max(0, Math.floor(idleBefore + (visibleSince === null ? 0 : now() - visibleSince))));

  // --- the session (the relay's sess_ id) and its pages, in sessionStorage ------------------
  let visit = null;
  const currentVisit = () => {
    const sid = relay.sessionId;
    if (!visit || visit.sid !== sid) {
      const stored = readJson(session, SESSION_KEY);
      visit = stored && stored.sid === sid && Array.isArray(stored.pages) ? stored : { sid, pages: [], cart: false };
    }
    return visit;
  };
  const saveVisit = () => writeJson(session, SESSION_KEY, visit);
  const noteSession = (sid) => {
    if (!sid || visitor.sessions.includes(sid)) return;
    visitor.sessions = [sid, ...visitor.sessions].slice(0, 20);
    saveVisitor();
  };

  const intentScore = () => {
    const v = currentVisit();
    const builtIn = builtInIntentScore({
      pages: v.pages.length,
      addedToCart: v.cart,
      returning: visitor.sessions.some((s) => s !== v.sid),
    });
    if (typeof o.intentScore !== 'function') return builtIn;
    let value;
    try {
      value = o.intentScore();
    } catch (e) {
      fail('intent_score', `intentScore() threw (${e instanceof Error ? e.message : String(e)}); the built-in score ${builtIn} is used`, e);
      return builtIn;
    }
    if (Number.isInteger(value) && value >= 0 && value <= 100) return value;
    fail('intent_score', `intentScore() must return an integer from 0 to 100, got ${JSON.stringify(value) ?? String(value)}; the built-in score ${builtIn} is used`);
    return builtIn;
  };

  // --- the config: sessionStorage for its cache time, revalidated with its ETag -------------
  const cacheKey = `${CONFIG_KEY}.${siteKey}`;
  // The engine's module, loading beside the config's fetch (begin); false when it failed.
  let engineLoaded = Promise.resolve(false);
  const ENGINE_DOWN = new Error('engine down'); // said once by begin, not again per config
  const install = async (text, source) => {
    const body = JSON.parse(text);
    const cfg = body?.data?.config;
    if (!cfg || typeof cfg !== 'object') throw new TypeError(`the ${source} config answer has no data.config`);
    await installConfig(cfg);
  };
  const installConfig = async (cfg) => {
    if (!(await engineLoaded)) throw ENGINE_DOWN;
    await warmEngine();
    // The config's compile gets a main-thread task of its own (docs/contract/storefront.md's 50 ms budget): apart
    // from the module's instantiation before it and the first decision after it.
    await yieldToPage();
    mark('compile');
    const next = new NudgeEngine(cfg);
    mark('compiled');
    engine?.free?.();
    engine = next;
    config = cfg;
  };
  const fetchConfig = async () => {
    if (o.previewConfig !== undefined) {
      // A draft config to preview (docs/STOREFRONT.md, "Preview a draft"): neither fetched nor
      // cached, compiled once.
      if (engine) return;
      try {
        await installConfig(o.previewConfig);
        configAt = Number.POSITIVE_INFINITY;
      } catch (e) {
        if (e === ENGINE_DOWN) return;
        fail('config_invalid', `the preview config is unusable (${e instanceof Error ? e.message : String(e)}); no nudges`, e);
      }
      return;
    }
    let raw = null;
    try {
      raw = session ? session.getItem(cacheKey) : null;
    } catch {
      raw = null;
    }
    let cached = null;
    try {
      cached = raw ? JSON.parse(raw) : null;
    } catch {
      cached = null;
    }
    const usable = cached && typeof cached.body === 'string' && Number.isFinite(cached.at);
    if (raw && !usable) {
      fail('config_cache', 'the cached config is damaged; fetching it again');
      cached = null;
    }
    if (cached && !engine) {
      try {
        await install(cached.body, 'cached');
        configEtag = typeof cached.etag === 'string' ? cached.etag : null;
        configAt = cached.at;
      } catch (e) {
        if (e === ENGINE_DOWN) return;
        fail('config_cache', `the cached config is unusable (${e instanceof Error ? e.message : String(e)}); fetching it again`, e);
        try {
          session?.removeItem(cacheKey);
        } catch {
          // ignored
        }
        configEtag = null;
      }
    }
    if (engine && now() - configAt < CONFIG_MAX_AGE_MS) return;
    const url = `${base}/v1/runtime/config?key=${encodeURIComponent(siteKey)}`;
    const headers = engine && configEtag ? { 'If-None-Match': configEtag } : undefined;
    let response;
    try {
      response = await fetch(url, { headers, credentials: 'omit', cache: 'no-cache' });
    } catch (e) {
      fail('config_fetch', `the config could not be fetched from ${url.replace(/key=[^&]*/, 'key=...')} (${e instanceof Error ? e.message : String(e)})${engine ? '; the cached config keeps serving' : '; no nudges'}`, e);
      return;
    }
    if (response.status === 304 && engine) {
      configAt = now();
      writeJson(session, cacheKey, { etag: configEtag, at: configAt, body: readJson(session, cacheKey)?.body });
      return;
    }
    if (response.status !== 200) {
      let message = '';
      try {
        message = (await response.json())?.message ?? '';
      } catch {
        // not JSON
      }
      fail('config_fetch', `the config endpoint answered ${response.status}${message ? ` (${message})` : ''}${engine ? '; the cached config keeps serving' : '; no nudges'}`, undefined);
      return;
    }
    const text = await response.text();
    try {
      await install(text, 'fetched');
    } catch (e) {
      if (e === ENGINE_DOWN) return;
      fail('config_invalid', `the fetched config is unusable (${e instanceof Error ? e.message : String(e)})`, e);
      return;
    }
    configEtag = response.headers.get('etag');
    configAt = now();
    writeJson(session, cacheKey, { etag: configEtag, at: configAt, body: text });
  };
  const refreshConfig = () => {
    refreshing ??= fetchConfig()
      .catch((e) => fail('config_fetch', e instanceof Error ? e.message : String(e), e))
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  };

  // --- the history as the engine reads it (docs/contract/caps.md) -----------------------------------------
  const historyFor = (sid, t) => visitor.history.slice(0, MAX_HISTORY).map((h) => {
    const entry = { rule_id: h.rule_id, ms_ago: Math.min(MAX_MS_AGO, Math.max(0, t - h.at)), this_session: h.sid === sid };
    if (h.outcome) entry.outcome = h.outcome;
    if (h.held_out) entry.held_out = true;
    return entry;
  });
  const remember = (entry) => {
    visitor.history = [entry, ...visitor.history].slice(0, MAX_HISTORY);
    saveVisitor();
    return entry;
  };

  // --- deciding ------------------------------------------------------------------------------
  const clearTimer = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    timerAt = null;
  };
  const armTimer = (atIdle) => {
    clearTimer();
    if (atIdle === null || atIdle === undefined || visibleSince === null || !running) return;
    timerAt = atIdle;
    timer = setTimeout(onTimer, Math.max(0, atIdle - idle()));
  };
  const onTimer = guard('idle timer', () => {
    timer = null;
    const at = timerAt;
    timerAt = null;
    if (at === null || !running) return;
    // Activity since the timer was set restarts the count: wait for the rest, without deciding.
    if (idle() < at) armTimer(at);
    else decide(false);
  });

  const decide = (exitIntent) => {
    if (!running || !engine || shown || path === null) return;
    const t = now();
    const sid = relay.sessionId;
    const score = intentScore();
    lastScore = score;
    const state = {
      intent_score: score,
      page_url: path,
      idle_ms: idle(),
      exit_intent: exitIntent === true,
      visitor_id: visitor.id,
      history: historyFor(sid, t),
    };
    let decision;
    try {
      decision = engine.decide(state);
      mark('decided');
    } catch (e) {
      fail('engine', `the engine refused the page ${path} (${e instanceof Error ? e.message : String(e)})`, e);
      clearTimer();
      return;
    }
    if (decision.held_out_rule_id) {
      const ruleId = decision.held_out_rule_id;
      const rule = Array.isArray(config?.rules) ? config.rules.find((r) => r && r.id === ruleId) : null;
      remember({ rule_id: ruleId, at: t, sid, held_out: true });
      relay.nudgeHeldOut({ ruleId, nudgeType: rule?.nudge?.type, url: win.location.href, intentScore: score });
      // Nothing is shown and no later rule is tried now (docs/contract/caps.md); the held-out entry counts
      // for caps like a shown one, so a later decision may fire another rule.
      clearTimer();
      return;
    }
    if (decision.would_fire && decision.nudge) {
      clearTimer();
      show(decision, score, sid, t);
      return;
    }
    armTimer(decision.next_idle_ms);
  };

  const show = (decision, score, sid, t) => {
    const nudge = decision.nudge;
    const nudgeId = `nudg_${t.toString(36)}${randomChars(10)}`;
    const entry = remember({ rule_id: decision.rule_id, at: t, sid });
    relay.nudgeShown({ nudgeId, nudgeType: nudge.type, ruleId: decision.rule_id, url: win.location.href, intentScore: score });
    const finish = (outcome) => {
      if (!shown || shown.nudgeId !== nudgeId) return;
      entry.outcome = outcome;
      saveVisitor();
      relay.nudgeOutcome({ nudgeId, outcome });
      close();
      if (outcome === 'dismissed') decide(false);
    };
    let ui;
    try {
      ui = renderNudge(doc, nudge, {
        onCta: guard('cta', () => {
          if (nudge.type === 'chat_bubble') {
            finish('chat_opened');
            if (typeof o.onChatOpen === 'function') {
              try {
                o.onChatOpen({ ruleId: decision.rule_id, message: nudge.message });
              } catch (e) {
                fail('on_chat_open', `onChatOpen threw: ${e instanceof Error ? e.message : String(e)}`, e);
              }
            }
          } else {
            finish('clicked');
          }
        }),
        onDismiss: guard('dismiss', () => finish('dismissed')),
      });
    } catch (e) {
      fail('render', `the ${nudge.type} could not be drawn (${e instanceof Error ? e.message : String(e)})`, e);
      return;
    }
    shown = { nudgeId, ruleId: decision.rule_id, type: nudge.type, ui };
    mark('shown');
    // A shop whose CSS hides <body> or <html> hides the nudge too: said, not thrown. Checked in
    // a later task, so that the layout it asks for is not added to the drawing's task.
    void yieldToPage().then(() => {
      try {
        if (shown?.nudgeId === nudgeId && !ui.visible()) fail('hidden', `the ${nudge.type} of rule ${decision.rule_id} is not rendered: the page's CSS hides its container`);
      } catch {
        // layout unavailable
      }
    });
  };

  const close = () => {
    const s = shown;
    shown = null;
    if (s) {
      try {
        s.ui.remove();
      } catch (e) {
        fail('render', `the nudge could not be removed (${e instanceof Error ? e.message : String(e)})`, e);
      }
    }
  };

  // --- observing the page ----------------------------------------------------------------------
  const pageView = () => {
    if (!running) return;
    const next = win.location.pathname || '/';
    if (next === path) return;
    path = next;
    mark('page-view');
    close();
    idleBefore = 0;
    if (visibleSince !== null) visibleSince = now();
    // The page counts for the intent score it is recorded with; the view may start a new
    // session (30 minutes without an event), whose pages then start with this one.
    const v = currentVisit();
    if (!v.pages.includes(path)) v.pages.push(path);
    if (v.pages.length > 100) v.pages = v.pages.slice(-100);
    relay.pageView(win.location.href, { intentScore: intentScore() });
    const sid = relay.sessionId;
    if (v.sid !== sid) visit = { sid, pages: [path], cart: v.sid === null ? v.cart : false };
    saveVisit();
    noteSession(sid);
    if (now() - configAt >= CONFIG_MAX_AGE_MS && engine) {
      void refreshConfig().then(() => decide(false));
    } else {
      decide(false);
    }
  };

  const onActivity = () => {
    idleBefore = 0;
    if (visibleSince !== null) visibleSince = now();
  };
  const onVisibility = guard('visibilitychange', () => {
    if (doc.visibilityState === 'hidden') {
      if (visibleSince !== null) idleBefore += now() - visibleSince;
      visibleSince = null;
      const at = timerAt;
      clearTimer();
      timerAt = at; // kept: armed again when the tab comes back
    } else if (visibleSince === null) {
      visibleSince = now();
      const at = timerAt;
      timerAt = null;
      if (at !== null) armTimer(at);
    }
  });
  const finePointer = () => {
    try {
      return win.matchMedia?.('(pointer: fine)').matches === true;
    } catch {
      return false;
    }
  };
  const onMouseOut = guard('exit intent', (event) => {
    if (event.relatedTarget || event.clientY > 0 || !finePointer()) return;
    decide(true);
  });
  const onPopState = guard('popstate', () => pageView());

  // history.pushState and replaceState: each new path is a PAGE_VIEW. The wrappers stay (other
  // scripts may have wrapped them since) and pass through once stopped.
  const patch = (name) => {
    const original = win.history[name];
    if (typeof original !== 'function') return;
    const wrapped = function (...args) {
      const out = original.apply(this, args);
      if (running) guard(name, pageView)();
      return out;
    };
    try {
      win.history[name] = wrapped;
    } catch (e) {
      fail('internal', `history.${name} could not be observed`, e);
    }
  };

  const listen = () => {
    for (const type of ACTIVITY) win.addEventListener(type, onActivity, { capture: true, passive: true });
    doc.addEventListener('visibilitychange', onVisibility);
    doc.addEventListener('mouseout', onMouseOut);
    win.addEventListener('popstate', onPopState);
    patch('pushState');
    patch('replaceState');
  };
  const unlisten = () => {
    for (const type of ACTIVITY) win.removeEventListener(type, onActivity, { capture: true });
    doc.removeEventListener('visibilitychange', onVisibility);
    doc.removeEventListener('mouseout', onMouseOut);
    win.removeEventListener('popstate', onPopState);
  };

  const begin = async () => {
    if (!running) return;
    mark('start');
    listen();
    // The module compiles (streaming, off the main thread) while the config is fetched; the
    // config's compile waits for it (install), in a task of its own.
    engineLoaded = loadEngine(o.wasmUrl).then(() => {
      mark('engine');
      return true;
    }, (e) => {
      fail('engine', `the engine could not be loaded (${e instanceof Error ? e.message : String(e)}); no nudges`, e);
      return false;
    });
    await fetchConfig();
    // The first decision gets a task of its own too, apart from the compile.
    await yieldToPage();
    if (!running) return;
    guard('page view', pageView)();
  };

  const onLoad = () => {
    setTimeout(() => {
      begin()
        .catch((e) => fail('internal', e instanceof Error ? e.message : String(e), e))
        .finally(() => resolveReady());
    }, 0);
  };
  if (doc.readyState === 'complete') onLoad();
  else win.addEventListener('load', onLoad, { once: true });

  return {
    ready,
    stop: () => {
      try {
        if (!running) return Promise.resolve();
        running = false;
        clearTimer();
        close();
        unlisten();
        win.removeEventListener('load', onLoad);
        return relay.close().then(() => undefined, () => undefined);
      } catch (e) {
        fail('internal', String(e), e);
        return Promise.resolve();
      }
    },
    addToCart: guard('addToCart', (url) => {
      if (!running) return;
      currentVisit().cart = true;
      saveVisit();
      const score = intentScore();
      relay.addToCart(url ?? win.location.href, { intentScore: score });
      if (score !== lastScore) decide(false);
    }),
    purchase: guard('purchase', (url) => {
      if (!running) return;
      relay.purchase(url ?? win.location.href, { intentScore: intentScore() });
    }),
    refresh: guard('refresh', () => {
      if (running && intentScore() !== lastScore) decide(false);
    }),
    flush: () => relay.flush().then(() => undefined, () => undefined),
    get visitorId() {
      return visitor.id;
    },
    get sessionId() {
      return relay.sessionId;
    },
    get running() {
      return running;
    },
  };
}
