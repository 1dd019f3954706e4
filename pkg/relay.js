// nudge-rules/relay: the browser/Node client of the SDK relay, POST /v1/events (docs/contract/relay.md).
//
// Plain ES module, no WebAssembly. It batches events, mints `message_id`s and `sess_` ids,
// flushes every few seconds, when a batch is full, and with navigator.sendBeacon when the page is
// hidden; it retries 429, 503 and network errors with the SAME batch (same message ids, so the
// server counts a resend as duplicates) with exponential backoff and full jitter, never sooner
// than the answer's Retry-After; it bounds its queue (oldest dropped and counted) and never throws into the page.
// docs/contract/caps.md: `visitorId` puts `visitor_id` on every event; `nudgeHeldOut` sends NUDGE_HELD_OUT.
// See docs/JS-API.md, "The relay client".

/** Backoff (API document section 7): base 1 s, cap 60 s, delay = random() * min(cap, base * 2^attempt). */
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_CAP_MS = 60_000;
/** The server's limits (docs/contract/relay.md). */
export const MAX_BATCH = 500;
const MAX_BODY_BYTES = 500_000; // under the server's 512 KiB
const MAX_BEACON_BYTES = 60_000; // browsers refuse beacons past 64 KiB in flight
const MAX_RETRY_AFTER_MS = 3_600_000;
const MAX_SESSION_AGE_MS = 23 * 3_600_000; // the server refuses events 24 h after a session's start
const STORAGE_KEY = 'nudge-rules.relay.session';
const PUBLISHABLE_KEY = /^pk_(live|test)_[A-Za-z0-9]{16,}$/;
const VISITOR_ID = /^vis_[A-Za-z0-9_-]{1,64}$/;
const RETRIED_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/**
 * The backoff delay before retry number `attempt` (0 for the first retry), in milliseconds.
 * @param {number} attempt
 * @param {() => number} [random]
 */
export function backoffDelay(attempt, random = Math.random) {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(Math.max(attempt, 0), 30));
  const r = Number(random());
  return Math.floor((Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0) * ceiling);
}

/**
 * The wait before retry number `attempt` (0 for the first retry) of a batch: the backoff with
 * full jitter, never less than the server's Retry-After (`retryAfterMs`, null when the answer had
 * none). API document section 7: repeated 429s back off exponentially with random jitter, and
 * never wait less than Retry-After. The count starts again with each batch, so a success resets it.
 * @param {number | null} retryAfterMs
 * @param {number} attempt
 * @param {() => number} [random]
 */
export function retryDelay(retryAfterMs, attempt, random = Math.random) {
  const jittered = backoffDelay(attempt, random);
  return retryAfterMs == null ? jittered : Math.max(retryAfterMs, jittered);
}

/**
 * A Retry-After header's delay in milliseconds (delta-seconds or an HTTP date), or null.
 * @param {string | null | undefined} value
 * @param {number} nowMs
 */
export function parseRetryAfter(value, nowMs) {
  if (value == null) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(at - nowMs, 0), MAX_RETRY_AFTER_MS);
}

/** An error reported through onError; never thrown. */
export class RelayError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {Record<string, unknown>} [details]
   */
  constructor(code, message, details = {}) {
    super(message);
    this.name = 'RelayError';
    this.code = code;
    Object.assign(this, details);
  }
}

function toBase36(n, width) {
  return Math.floor(n).toString(36).padStart(width, '0').slice(-width);
}

/**
 * @param {import('./relay.d.ts').RelayOptions} options
 * @returns {import('./relay.d.ts').Relay}
 */
export function createRelay(options) {
  const o = options && typeof options === 'object' ? options : /** @type {any} */ ({});
  const userOnError = typeof o.onError === 'function' ? o.onError : defaultOnError;
  const report = (error) => {
    try {
      userOnError(error);
    } catch {
      // errors of onError itself are swallowed
    }
  };
  try {
    return openRelay(o, checked(o, report), report);
  } catch (e) {
    report(new RelayError('config', `nudge-rules/relay: ${e instanceof Error ? e.message : String(e)}; the relay is disabled`));
    return disabledRelay(report);
  }
}

function defaultOnError(error) {
  if (typeof console !== 'undefined' && console.warn) console.warn(error);
}

function emptyResult(pending = 0, dropped = 0) {
  return { sent: 0, accepted: 0, duplicates: 0, rejected: [], dropped, retried: 0, pending };
}

function disabledRelay(report) {
  const ignore = () => {
    report(new RelayError('disabled', 'nudge-rules/relay: the relay is disabled (bad options); event ignored'));
  };
  return {
    track: ignore,
    pageView: ignore,
    addToCart: ignore,
    purchase: ignore,
    nudgeShown: ignore,
    nudgeOutcome: ignore,
    nudgeHeldOut: ignore,
    flush: () => Promise.resolve(emptyResult()),
    close: () => Promise.resolve(emptyResult()),
    get sessionId() {
      return null;
    },
    get visitorId() {
      return null;
    },
    stats: () => ({ queued: 0, sent: 0, accepted: 0, duplicates: 0, rejected: 0, dropped: 0, retried: 0 }),
  };
}

/**
 * Checks createRelay's options: throws for a bad endpoint or key (the relay is then disabled);
 * returns the visitor id, undefined when there is none or it is malformed (reported: the events
 * still count, only the visitor link is lost, docs/contract/caps.md).
 */
function checked(o, report) {
  if (typeof o.endpoint !== 'string' || o.endpoint === '') {
    throw new TypeError('endpoint must be the URL of POST /v1/events');
  }
  if (typeof o.siteKey !== 'string' || !PUBLISHABLE_KEY.test(o.siteKey)) {
    if (typeof o.siteKey === 'string' && o.siteKey.startsWith('sk_')) {
      throw new TypeError('siteKey is a secret key (sk_): a secret key must never be put in a page; use the site\'s publishable pk_live_ or pk_test_ key');
    }
    throw new TypeError('siteKey must be a publishable key: pk_live_ or pk_test_ and at least 16 letters or digits');
  }
  if (o.visitorId === undefined || o.visitorId === null) return undefined;
  if (typeof o.visitorId === 'string' && VISITOR_ID.test(o.visitorId)) return o.visitorId;
  report(new RelayError('config', `nudge-rules/relay: visitorId must be vis_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got ${JSON.stringify(String(o.visitorId)).slice(0, 80)}; events are sent without visitor_id`));
  return undefined;
}

/**
 * The relay for options already checked as createRelay checks them (a non-empty endpoint, a
 * publishable key) and the visitor id `visitorId` (valid, or undefined), the other options as
 * createRelay takes them (`o.visitorId` and `o.onError` are not read); what it has to say goes to
 * `report`, which must not throw. For callers that check their own options
 * (the storefront runtime, pkg/storefront.js): its bundle then leaves createRelay's checks out.
 * Not part of the documented API (relay.d.ts).
 * @param {import('./relay.d.ts').RelayOptions} o
 * @param {string | undefined} visitorId
 * @param {(error: RelayError) => void} report
 * @returns {import('./relay.d.ts').Relay}
 */
export function openRelay(o, visitorId, report) {
  const endpoint = o.endpoint;
  const siteKey = o.siteKey;
  const int = (value, fallback, min, max) => {
    const n = value === undefined ? fallback : Number(value);
    if (!Number.isFinite(n)) return fallback;
    return Math.min(Math.max(Math.floor(n), min), max);
  };
  const flushIntervalMs = int(o.flushIntervalMs, 5000, 0, 3_600_000);
  const maxBatch = int(o.maxBatch, 100, 1, MAX_BATCH);
  const maxQueue = int(o.maxQueue, 5000, 1, 1_000_000);
  const sessionTimeoutMs = int(o.sessionTimeoutMs, 30 * 60_000, 1, MAX_SESSION_AGE_MS);
  // The environment's functions and page, unless the options give others (tests, Node).
  const given = (name, fallback) => (typeof o[name] === 'function' ? o[name] : fallback());
  const fetchFn = given('fetch', () => globalThis.fetch?.bind(globalThis));
  const now = given('now', () => () => Date.now());
  const random = given('random', () => Math.random);
  const storage = o.storage && typeof o.storage.getItem === 'function' ? o.storage : null;
  const setTimer = given('setTimeout', () => globalThis.setTimeout.bind(globalThis));
  const clearTimer = given('clearTimeout', () => globalThis.clearTimeout.bind(globalThis));
  const page = (name) => (o[name] !== undefined ? o[name] : globalThis[name]);
  const nav = page('navigator');
  const doc = page('document');
  const win = page('window');

  /** @type {object[]} */
  let queue = [];
  /** @type {{events: object[], attempt: number, retryAt: number} | null} */
  let waiting = null;
  let inflight = 0;
  let droppedUnreported = 0;
  let counter = 0;
  let closed = false;
  let chain = Promise.resolve();
  let intervalTimer = null;
  let retryTimer = null;
  let memorySession = null; // {id, started, last}
  const totals = { sent: 0, accepted: 0, duplicates: 0, rejected: 0, dropped: 0, retried: 0 };

  const clock = () => {
    const t = Number(now());
    return Number.isFinite(t) ? t : Date.now();
  };
  const randomChars = (n) => {
    let s = '';
    while (s.length < n) {
      const r = Number(random());
      s += toBase36((Number.isFinite(r) ? Math.abs(r) % 1 : 0) * 36 ** 6, 6);
    }
    return s.slice(0, n);
  };
  const mintMessageId = (t) => {
    counter += 1;
    return `m_${toBase36(t, 9)}_${randomChars(12)}_${counter.toString(36)}`;
  };
  const mintSessionId = (t) => `sess_${toBase36(t, 9)}${randomChars(16)}`;

  // The session: kept in `storage` when given (sessionStorage survives reloads in one tab).
  const readSession = () => {
    if (storage) {
      try {
        const text = storage.getItem(STORAGE_KEY);
        if (text) {
          const s = JSON.parse(text);
          if (s && typeof s.id === 'string' && /^sess_[A-Za-z0-9_-]{1,64}$/.test(s.id)
            && Number.isFinite(s.started) && Number.isFinite(s.last)) return s;
        }
      } catch {
        // storage unavailable (private mode) or damaged: the memory copy serves
      }
    }
    return memorySession;
  };
  const writeSession = (s) => {
    memorySession = s;
    if (storage) {
      try {
        storage.setItem(STORAGE_KEY, JSON.stringify(s));
      } catch {
        // ignored: memory copy kept
      }
    }
  };
  const sessionFor = (t) => {
    let s = readSession();
    if (!s || t - s.last > sessionTimeoutMs || t < s.started - 60_000 || t - s.started > MAX_SESSION_AGE_MS) {
      s = { id: mintSessionId(t), started: t, last: t };
    } else {
      s = { id: s.id, started: s.started, last: Math.max(s.last, t) };
    }
    writeSession(s);
    return s.id;
  };

  const held = () => queue.length + (waiting ? waiting.events.length : 0);
  const enforceBound = () => {
    let over = held() - maxQueue;
    if (over <= 0) return;
    let dropped = 0;
    if (waiting && over > 0) {
      const n = Math.min(over, waiting.events.length);
      waiting.events.splice(0, n);
      dropped += n;
      over -= n;
      if (waiting.events.length === 0) {
        waiting = null;
        if (retryTimer !== null) clearTimer(retryTimer);
        retryTimer = null;
      }
    }
    if (over > 0) {
      queue.splice(0, over);
      dropped += over;
    }
    const first = droppedUnreported === 0;
    droppedUnreported += dropped;
    totals.dropped += dropped;
    if (first) {
      report(new RelayError('queue_full', `nudge-rules/relay: more than ${maxQueue} events waiting; the oldest are dropped`, { dropped }));
    }
  };

  const track = (type, fields) => {
    try {
      if (closed) {
        report(new RelayError('closed', `nudge-rules/relay: ${type} after close() is ignored`));
        return;
      }
      const t = clock();
      const event = {
        message_id: mintMessageId(t),
        session_id: sessionFor(t),
        type: String(type),
        occurred_at: new Date(t).toISOString(),
      };
      if (visitorId !== undefined) event.visitor_id = visitorId;
      if (fields && typeof fields === 'object') {
        for (const [k, v] of Object.entries(fields)) {
          if (v !== undefined && !(k in event)) event[k] = v;
        }
      }
      queue.push(event);
      enforceBound();
      if (queue.length >= maxBatch && !waiting) void flush();
    } catch (e) {
      report(new RelayError('internal', `nudge-rules/relay: ${e instanceof Error ? e.message : String(e)}`));
    }
  };

  const pageUrl = (url) => {
    if (url !== undefined && url !== null) return String(url);
    try {
      return globalThis.location ? String(globalThis.location.href) : undefined;
    } catch {
      return undefined;
    }
  };
  const pageEvent = (type) => (url, opts) => {
    try {
      track(type, { url: pageUrl(url), intent_score: opts?.intentScore });
    } catch (e) {
      report(new RelayError('internal', String(e)));
    }
  };

  // One POST. Returns {kind: 'ok', data} | {kind: 'retry', delayMs, error} | {kind: 'drop', error}.
  const send = async (events, attempt) => {
    const body = JSON.stringify({ sent_at: new Date(clock()).toISOString(), events });
    let response;
    try {
      if (!fetchFn) throw new Error('no fetch in this environment');
      response = await fetchFn(endpoint, {
        method: 'POST',
        headers: { Authorization: `Bearer ${siteKey}`, 'Content-Type': 'application/json' },
        body,
        keepalive: byteLength(body) < MAX_BEACON_BYTES,
      });
    } catch (e) {
      const delayMs = backoffDelay(attempt, random);
      return {
        kind: 'retry',
        delayMs,
        error: new RelayError('network', `nudge-rules/relay: network error (${e instanceof Error ? e.message : String(e)}); retrying in ${delayMs} ms`, { retryInMs: delayMs, events: events.length }),
      };
    }
    const status = Number(response?.status);
    let payload = null;
    try {
      payload = await response.json();
    } catch {
      payload = null;
    }
    if (status >= 200 && status < 300) {
      return { kind: 'ok', data: payload && typeof payload === 'object' && payload.data ? payload.data : {} };
    }
    const message = payload && typeof payload === 'object' && typeof payload.message === 'string' ? payload.message : '';
    if (RETRIED_STATUSES.has(status)) {
      const header = typeof response.headers?.get === 'function' ? response.headers.get('retry-after') : null;
      const fromHeader = parseRetryAfter(header, clock());
      const delayMs = retryDelay(fromHeader, attempt, random);
      return {
        kind: 'retry',
        delayMs,
        error: new RelayError('http', `nudge-rules/relay: ${status}${message ? ` (${message})` : ''}; retrying in ${delayMs} ms`, { status, retryInMs: delayMs, events: events.length }),
      };
    }
    return {
      kind: 'drop',
      error: new RelayError('http', `nudge-rules/relay: ${status}${message ? ` (${message})` : ''}; ${events.length} event(s) dropped`, { status, dropped: events.length, body: payload }),
    };
  };

  const scheduleRetry = (delayMs) => {
    if (retryTimer !== null) clearTimer(retryTimer);
    if (closed) return;
    retryTimer = setTimer(() => {
      retryTimer = null;
      void flush();
    }, delayMs);
    unref(retryTimer);
  };

  // Takes the next batch from the queue: at most maxBatch events and MAX_BODY_BYTES.
  const takeBatch = () => {
    let n = Math.min(maxBatch, queue.length);
    while (n > 1 && byteLength(JSON.stringify(queue.slice(0, n))) > MAX_BODY_BYTES) n = Math.ceil(n / 2);
    return queue.splice(0, n);
  };

  const pump = async () => {
    const result = emptyResult();
    for (;;) {
      let events;
      let attempt = 0;
      if (waiting) {
        if (clock() < waiting.retryAt) break;
        ({ events, attempt } = waiting);
        waiting = null;
      } else if (queue.length > 0) {
        events = takeBatch();
      } else {
        break;
      }
      inflight = events.length;
      let outcome;
      try {
        outcome = await send(events, attempt);
      } finally {
        inflight = 0;
      }
      if (outcome.kind === 'ok') {
        const d = outcome.data;
        const accepted = Number(d.accepted) || 0;
        const duplicates = Number(d.duplicates) || 0;
        result.sent += events.length;
        result.accepted += accepted;
        result.duplicates += duplicates;
        totals.sent += events.length;
        totals.accepted += accepted;
        totals.duplicates += duplicates;
        const rejected = Array.isArray(d.rejected) ? d.rejected : [];
        if (rejected.length > 0) {
          const list = rejected.map((r) => ({
            index: r.index,
            error: r.error,
            message: r.message,
            message_id: events[r.index]?.message_id,
            type: events[r.index]?.type,
          }));
          result.rejected.push(...list);
          totals.rejected += list.length;
          report(new RelayError('rejected', `nudge-rules/relay: ${list.length} event(s) rejected: ${list.map((r) => r.message).join('; ')}`, { rejected: list }));
        }
      } else if (outcome.kind === 'retry') {
        waiting = { events, attempt: attempt + 1, retryAt: clock() + outcome.delayMs };
        result.retried += events.length;
        totals.retried += events.length;
        enforceBound();
        scheduleRetry(outcome.delayMs);
        report(outcome.error);
        break;
      } else {
        result.dropped += events.length;
        totals.dropped += events.length;
        report(outcome.error);
      }
    }
    result.dropped += droppedUnreported;
    droppedUnreported = 0;
    result.pending = held();
    return result;
  };

  const flush = () => {
    try {
      const run = chain.then(pump, pump);
      chain = run.then(() => undefined, () => undefined);
      return run.catch((e) => {
        report(new RelayError('internal', `nudge-rules/relay: ${e instanceof Error ? e.message : String(e)}`));
        return emptyResult(held());
      });
    } catch (e) {
      report(new RelayError('internal', String(e)));
      return Promise.resolve(emptyResult());
    }
  };

  // The page is going away: everything waiting goes by beacon (key in the body: no headers).
  const beaconFlush = () => {
    try {
      if (!nav || typeof nav.sendBeacon !== 'function' || typeof Blob === 'undefined') {
        void flush();
        return;
      }
      const all = [...(waiting ? waiting.events : []), ...queue];
      if (all.length === 0) return;
      waiting = null;
      if (retryTimer !== null) clearTimer(retryTimer);
      retryTimer = null;
      queue = [];
      const left = [];
      let i = 0;
      while (i < all.length) {
        let n = Math.min(maxBatch, all.length - i);
        let body = beaconBody(all.slice(i, i + n));
        while (n > 1 && byteLength(body) > MAX_BEACON_BYTES) {
          n = Math.ceil(n / 2);
          body = beaconBody(all.slice(i, i + n));
        }
        let ok = false;
        try {
          ok = nav.sendBeacon(endpoint, new Blob([body], { type: 'text/plain' })) === true;
        } catch {
          ok = false;
        }
        if (!ok) left.push(...all.slice(i, i + n));
        i += n;
      }
      if (left.length > 0) {
        queue = left; // the browser refused: kept for the next flush if the page comes back
        report(new RelayError('beacon', `nudge-rules/relay: sendBeacon refused ${left.length} event(s); kept`, { events: left.length }));
      }
    } catch (e) {
      report(new RelayError('internal', String(e)));
    }
  };
  const beaconBody = (events) => JSON.stringify({ site_key: siteKey, sent_at: new Date(clock()).toISOString(), events });

  const onVisibility = () => {
    try {
      if (doc && doc.visibilityState === 'hidden') beaconFlush();
    } catch (e) {
      report(new RelayError('internal', String(e)));
    }
  };
  const onPageHide = () => beaconFlush();
  if (doc && typeof doc.addEventListener === 'function') doc.addEventListener('visibilitychange', onVisibility);
  if (win && typeof win.addEventListener === 'function') win.addEventListener('pagehide', onPageHide);

  if (flushIntervalMs > 0) {
    const tick = () => {
      intervalTimer = setTimer(tick, flushIntervalMs);
      unref(intervalTimer);
      if (queue.length > 0 && !waiting && inflight === 0) void flush();
    };
    intervalTimer = setTimer(tick, flushIntervalMs);
    unref(intervalTimer);
  }

  const close = () => {
    try {
      if (closed) return flush();
      closed = true;
      if (intervalTimer !== null) clearTimer(intervalTimer);
      if (retryTimer !== null) clearTimer(retryTimer);
      intervalTimer = null;
      retryTimer = null;
      if (doc && typeof doc.removeEventListener === 'function') doc.removeEventListener('visibilitychange', onVisibility);
      if (win && typeof win.removeEventListener === 'function') win.removeEventListener('pagehide', onPageHide);
      return flush();
    } catch (e) {
      report(new RelayError('internal', String(e)));
      return Promise.resolve(emptyResult());
    }
  };

  const safe = (fn) => (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      report(new RelayError('internal', String(e)));
      return undefined;
    }
  };

  return {
    track: safe((type, fields) => track(type, fields)),
    pageView: safe(pageEvent('PAGE_VIEW')),
    addToCart: safe(pageEvent('ADD_TO_CART')),
    purchase: safe(pageEvent('PURCHASE')),
    nudgeShown: safe((f) => track('NUDGE_SHOWN', {
      nudge_id: f?.nudgeId,
      nudge_type: f?.nudgeType,
      rule_id: f?.ruleId,
      url: f?.url === undefined ? pageUrl(undefined) : f.url,
      intent_score: f?.intentScore,
    })),
    nudgeOutcome: safe((f) => track('NUDGE_OUTCOME', { nudge_id: f?.nudgeId, outcome: f?.outcome })),
    nudgeHeldOut: safe((f) => track('NUDGE_HELD_OUT', {
      rule_id: f?.ruleId,
      nudge_type: f?.nudgeType,
      url: f?.url === undefined ? pageUrl(undefined) : f.url,
      intent_score: f?.intentScore,
    })),
    flush,
    close,
    get sessionId() {
      try {
        const s = readSession();
        return s ? s.id : null;
      } catch {
        return null;
      }
    },
    get visitorId() {
      return visitorId ?? null;
    },
    stats: () => ({ queued: held(), ...totals }),
  };
}

function byteLength(text) {
  return typeof TextEncoder !== 'undefined' ? new TextEncoder().encode(text).length : text.length * 3;
}

function unref(timer) {
  if (timer && typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
}
