// nudge-rules/storefront: the storefront runtime (docs/contract/storefront.md). A visitor sees the
// nudge the engine decides, and every page view, nudge and outcome goes back through
// nudge-rules/relay.
//
//   import { startNudges } from 'nudge-rules/storefront';
//   const nudges = startNudges({ endpoint: 'https://api.example.com', siteKey: 'pk_live_...' });
//
// or, with no build step, pkg/dist/storefront.js (storefront/tag.js bundled with this module, the
// relay and the engine's glue, its .wasm beside it) in a tag:
//
//   <script type="module" src="/nudges/storefront.js" data-endpoint="https://api.example.com"
//           data-site-key="pk_live_..."></script>
//
// It starts after the page's `load` event; fetches the config and the engine; observes the page,
// idle time, exit intent and the intent score; decides at each page view, intent change, exit
// intent and at the idle time the engine names; shows at most one nudge in a Shadow DOM; keeps the
// visitor's nudge history (caps, cooldowns) with a `vis_` id in localStorage. It never throws into
// the page and writes none of its globals: every failure goes to `onError`. docs/STOREFRONT.md.
//
// This module only wires the runtime's parts, one concern each, in storefront/ (docs/STOREFRONT.md,
// "The runtime's modules"): the store (the only access to Web Storage), the config source, the
// engine, the page observer, the idle clock and exit intent, the decider, the presenter (the
// nudge on screen, drawn by ui.js), and the relay (relay.js).
import { openRelay } from './relay.js';
import { mark, randomChars, yieldToPage } from './storefront/browser.js';
import { configSource } from './storefront/config.js';
import { createDecider } from './storefront/decider.js';
import { createEngine } from './storefront/engine.js';
import { messageOf, reporter } from './storefront/errors.js';
import { exitIntent, idleClock } from './storefront/idle.js';
import { intentScore } from './storefront/intent.js';
import { pageObserver } from './storefront/page.js';
import { createPresenter } from './storefront/presenter.js';
import { engineHistory, openStore, visitAfterView, withPage } from './storefront/store.js';

export { CONFIG_MAX_AGE_MS } from './storefront/config.js';
export { NudgesError } from './storefront/errors.js';
export { builtInIntentScore } from './storefront/intent.js';

const PUBLISHABLE_KEY = /^pk_(live|test)_[A-Za-z0-9]{16,}$/;

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
  const reporting = reporter(o.onError);
  try {
    return start(o, reporting);
  } catch (e) {
    reporting.fail('config', `${messageOf(e)}; nudges are off`);
    return inertHandle('config');
  }
}

function start(o, { report, fail, guard }) {
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
  const now = () => Date.now();
  const store = openStore(() => randomChars(22));
  // The endpoint, the key and the visitor id are checked here and by the store: the relay's own
  // checks (createRelay's) are left out of the bundle.
  const relay = openRelay({ endpoint: `${base}/v1/events`, siteKey, storage: store.relayStorage, flushIntervalMs: o.flushIntervalMs }, store.visitor.id, report);
  const engine = createEngine({ wasmUrl: o.wasmUrl, fail });
  const config = configSource({ base, siteKey, preview: o.previewConfig, cache: store.config(siteKey), engine, fail, now });
  const presenter = createPresenter({ doc, fail, guard });
  let running = true;

  // The intent score of a visit: the page's own, or the built-in one (a returning visitor had
  // another session).
  const visit = () => store.visit(relay.sessionId);
  const scoreOf = (v) => intentScore({
    pages: v.pages.length,
    addedToCart: v.cart,
    returning: store.visitor.sessions.some((s) => s !== v.sid),
  }, o.intentScore, fail);

  const idle = idleClock({ win, doc, now, guard, onHidden: () => decider.pause(), onVisible: () => decider.resume() });
  const decider = createDecider({
    engine,
    idle,
    inputs: () => {
      if (page.path === null || presenter.showing) return null;
      const t = now();
      const sid = relay.sessionId;
      const state = { intent_score: scoreOf(visit()), page_url: page.path, visitor_id: store.visitor.id, history: engineHistory(store.visitor.history, sid, t) };
      return { t, sid, state };
    },
    onHeldOut: (ruleId, { t, sid, state }) => {
      store.remember({ rule_id: ruleId, at: t, sid, held_out: true });
      relay.nudgeHeldOut({ ruleId, nudgeType: engine.nudgeType(ruleId), url: win.location.href, intentScore: state.intent_score });
    },
    onFire: ({ nudge, rule_id: ruleId }, { t, sid, state }) => {
      const nudgeId = `nudg_${t.toString(36)}${randomChars(10)}`;
      const entry = store.remember({ rule_id: ruleId, at: t, sid });
      relay.nudgeShown({ nudgeId, nudgeType: nudge.type, ruleId, url: win.location.href, intentScore: state.intent_score });
      presenter.show(nudge, ruleId, (outcome) => {
        store.setOutcome(entry, outcome);
        relay.nudgeOutcome({ nudgeId, outcome });
        if (outcome === 'dismissed') decider.decide(false);
        if (outcome === 'chat_opened' && typeof o.onChatOpen === 'function') {
          try {
            o.onChatOpen({ ruleId, message: nudge.message });
          } catch (e) {
            fail('on_chat_open', `onChatOpen threw: ${messageOf(e)}`, e);
          }
        }
      });
    },
    fail,
    guard,
  });

  // A page view: the nudge shown goes, idle time starts again, the page counts for the intent
  // score it is recorded with, and the view may start a new session (30 minutes without an
  // event), whose pages then start with this one.
  const page = pageObserver({
    win,
    fail,
    guard,
    onView: (path) => {
      mark('page-view');
      presenter.close();
      idle.restart();
      const seen = withPage(visit(), path);
      relay.pageView(win.location.href, { intentScore: scoreOf(seen) });
      const sid = relay.sessionId;
      store.keepVisit(visitAfterView(seen, sid, path));
      store.noteSession(sid);
      if (config.stale) void config.refresh().then(() => decider.decide(false));
      else decider.decide(false);
    },
  });
  const observers = [page, idle, exitIntent({ win, doc, guard, onExit: () => decider.decide(true) })];

  const begin = async () => {
    if (!running) return;
    mark('start');
    // An observer that cannot be installed is reported; the others carry on.
    for (const observer of observers) guard('install', observer.install)();
    // The module compiles (streaming, off the main thread) while the config is fetched; the
    // config's compile waits for it, in a task of its own.
    engine.load();
    await config.refresh();
    // The first decision gets a task of its own too, apart from the compile.
    await yieldToPage();
    if (running) page.check();
  };

  let resolveReady;
  const ready = new Promise((r) => {
    resolveReady = r;
  });
  const onLoad = () => {
    setTimeout(() => {
      begin()
        .catch((e) => fail('internal', messageOf(e), e))
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
        decider.stop();
        presenter.close();
        for (const observer of observers) observer.uninstall();
        win.removeEventListener('load', onLoad);
        return relay.close().then(() => undefined, () => undefined);
      } catch (e) {
        fail('internal', String(e), e);
        return Promise.resolve();
      }
    },
    addToCart: guard('addToCart', (url) => {
      if (!running) return;
      store.keepVisit({ ...visit(), cart: true });
      const score = scoreOf(visit());
      relay.addToCart(url ?? win.location.href, { intentScore: score });
      if (score !== decider.lastScore) decider.decide(false);
    }),
    purchase: guard('purchase', (url) => {
      if (!running) return;
      relay.purchase(url ?? win.location.href, { intentScore: scoreOf(visit()) });
    }),
    refresh: guard('refresh', () => {
      if (running && scoreOf(visit()) !== decider.lastScore) decider.decide(false);
    }),
    flush: () => relay.flush().then(() => undefined, () => undefined),
    get visitorId() {
      return store.visitor.id;
    },
    get sessionId() {
      return relay.sessionId;
    },
    get running() {
      return running;
    },
  };
}
