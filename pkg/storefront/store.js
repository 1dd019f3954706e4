// The visitor and session store of the storefront runtime (docs/STOREFRONT.md, "What it does":
// Remembers): the one module that reads or writes Web Storage, so that whether anything is stored
// is decided here (consent, docs/contract/privacy.md, gates this module and nothing else).
//
// - localStorage `nudge-rules.visitor`: the visitor `{ id, history, sessions }`: the `vis_` id,
//   the last 200 nudges shown or held out (`{ rule_id, at, sid, outcome?, held_out? }`, newest
//   first) and the last 20 relay sessions;
// - sessionStorage `nudge-rules.session`: the session's visit `{ sid, pages, cart }` (the relay's
//   `sess_` id, the distinct paths viewed, at most 100, whether it added to the cart);
//   `nudge-rules.config.KEY`: the cached config of site key KEY; `nudge-rules.preview.KEY`: a
//   draft being previewed (the tag's data-preview); and the relay's own session
//   (`nudge-rules.relay.session`, through `relayStorage`).
//
// The records change only through the pure functions below (`withEntry`, `withOutcome`,
// `withSession`, `withPage`, `visitAfterView`), each returning a new record that the store
// keeps and writes; storage that is full, disabled or throws leaves the memory copy serving the
// page.

const VISITOR_KEY = 'nudge-rules.visitor';
const SESSION_KEY = 'nudge-rules.session';
const CONFIG_KEY = 'nudge-rules.config';
const PREVIEW_KEY = 'nudge-rules.preview';
/** The visitor's history kept (entries, newest first). */
export const MAX_HISTORY = 200;
const MAX_SESSIONS = 20;
const MAX_PAGES = 100;
const MAX_MS_AGO = 31_536_000_000;
const VISITOR_ID = /^vis_[A-Za-z0-9_-]{1,64}$/;

/**
 * A Web Storage area (`localStorage` or `sessionStorage`) with Storage's three methods, none of
 * which throws: without the area (a sandboxed frame, disabled storage) reads give null and
 * writes do nothing.
 * @param {'localStorage' | 'sessionStorage'} name
 */
function area(name) {
  let storage = null;
  try {
    const s = globalThis[name];
    if (s && typeof s.getItem === 'function') storage = s;
  } catch {
    // a sandboxed frame or disabled storage throws on access
  }
  // Full, disabled or throwing: null, and the memory copy serves this page.
  const use = (method) => (...args) => {
    try {
      return storage ? storage[method](...args) : null;
    } catch {
      return null;
    }
  };
  return { getItem: use('getItem'), setItem: use('setItem'), removeItem: use('removeItem') };
}

/** A text under `key` of `storage`: read, written (a string as it is, anything else as JSON), removed. */
const slot = (storage, key) => ({
  read: () => storage.getItem(key),
  write: (value) => storage.setItem(key, typeof value === 'string' ? value : JSON.stringify(value)),
  remove: () => storage.removeItem(key),
});

/**
 * The draft config previewed with site key `siteKey` (the tag's data-preview="fragment",
 * docs/STOREFRONT.md "Preview a draft"), kept for the tab in sessionStorage.
 */
export const previewDraft = (siteKey) => slot(area('sessionStorage'), `${PREVIEW_KEY}.${siteKey}`);

/** The JSON value of `text`, or null when there is none or it is not JSON. */
export function parsed(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * The stored visitor when it is one (a `vis_` id and a history), its history's malformed entries
 * dropped; else a new visitor with the id `newId()`.
 */
export function visitorFrom(stored, newId) {
  const v = stored && typeof stored === 'object' && VISITOR_ID.test(stored.id) && Array.isArray(stored.history)
    ? stored
    : { id: newId(), history: [], sessions: [] };
  return {
    ...v,
    history: v.history.filter((h) => h && typeof h.rule_id === 'string' && Number.isFinite(h.at)).slice(0, MAX_HISTORY),
    sessions: Array.isArray(v.sessions) ? v.sessions : [],
  };
}

/** The visitor with `entry` first in its history. */
export const withEntry = (visitor, entry) => ({ ...visitor, history: [entry, ...visitor.history].slice(0, MAX_HISTORY) });

/** The visitor with `outcome` on the history entry `entry` (the object `withEntry` was given). */
export const withOutcome = (visitor, entry, outcome) => ({
  ...visitor,
  history: visitor.history.map((h) => (h === entry ? { ...h, outcome } : h)),
});

/** The visitor with relay session `sid` first in its sessions; the same visitor when known. */
export const withSession = (visitor, sid) => (!sid || visitor.sessions.includes(sid)
  ? visitor
  : { ...visitor, sessions: [sid, ...visitor.sessions].slice(0, MAX_SESSIONS) });

/**
 * The history as the engine reads it (docs/contract/caps.md) at time `t` (ms since the epoch) in
 * relay session `sid`: `{ rule_id, ms_ago, this_session, outcome?, held_out? }` each.
 */
export const engineHistory = (history, sid, t) => history.slice(0, MAX_HISTORY).map((h) => {
  const entry = { rule_id: h.rule_id, ms_ago: Math.min(MAX_MS_AGO, Math.max(0, t - h.at)), this_session: h.sid === sid };
  if (h.outcome) entry.outcome = h.outcome;
  if (h.held_out) entry.held_out = true;
  return entry;
});

/** The stored visit when it is relay session `sid`'s, else a new one. */
export const visitFrom = (stored, sid) => (stored && stored.sid === sid && Array.isArray(stored.pages)
  ? stored
  : { sid, pages: [], cart: false });

/** The visit with `path` among its pages (the last 100 distinct ones). */
export const withPage = (visit, path) => (visit.pages.includes(path)
  ? visit
  : { ...visit, pages: [...visit.pages, path].slice(-MAX_PAGES) });

/**
 * The visit after a page view of `path` recorded in relay session `sid`: the same visit, or,
 * when the view started a new session (30 minutes without an event), that session's, whose pages
 * start with this one (it keeps the cart of a visit that had no session yet).
 */
export const visitAfterView = (visit, sid, path) => (visit.sid === sid
  ? visit
  : { sid, pages: [path], cart: visit.sid === null ? visit.cart : false });

/**
 * Opens the store: the visitor read back (or a new one, `vis_` + `newId()`'s letters) and written
 * at once; the visit read when first asked for.
 * @param {() => string} newId
 */
export function openStore(newId) {
  const local = area('localStorage');
  const session = area('sessionStorage');
  let visitor = null;
  let visit = null;
  const keepVisitor = (next) => {
    visitor = next;
    local.setItem(VISITOR_KEY, JSON.stringify(visitor));
  };
  keepVisitor(visitorFrom(parsed(local.getItem(VISITOR_KEY)), () => `vis_${newId()}`));
  return {
    /** The visitor `{ id, history, sessions }`. */
    get visitor() {
      return visitor;
    },
    /** The visit of relay session `sid` (the stored one if it is that session's). */
    visit(sid) {
      if (!visit || visit.sid !== sid) visit = visitFrom(parsed(session.getItem(SESSION_KEY)), sid);
      return visit;
    },
    /** Keeps `next` as the visit. */
    keepVisit(next) {
      visit = next;
      session.setItem(SESSION_KEY, JSON.stringify(visit));
    },
    /** Puts `entry` first in the visitor's history; returns it (for `setOutcome`). */
    remember(entry) {
      keepVisitor(withEntry(visitor, entry));
      return entry;
    },
    /** Sets the outcome of the history entry `entry`. */
    setOutcome(entry, outcome) {
      keepVisitor(withOutcome(visitor, entry, outcome));
    },
    /** Adds relay session `sid` to the visitor's sessions. */
    noteSession(sid) {
      const next = withSession(visitor, sid);
      if (next !== visitor) keepVisitor(next);
    },
    /** The cached config of `siteKey`. */
    config: (siteKey) => slot(session, `${CONFIG_KEY}.${siteKey}`),
    /** The relay's storage (its `storage` option): this store's sessionStorage. */
    relayStorage: session,
  };
}
