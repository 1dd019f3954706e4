// "Send this visitor to a server" (issue 21, docs/contract/relay.md): the storefront mock's simulated visitor
// sent to a running nudge-rules server's relay, POST /v1/events, through the package's own
// client (pkg/relay.js, `createRelay`), so that a merchant sees the session appear through
// GET /v1/sessions.
//
// The address and the publishable key (pk_test_/pk_live_) are typed in and kept in this tab's
// memory only: in the two fields and the relay's closure, never in local or session storage, the
// draft or the share link (the relay is made without `storage`, so its session id stays in memory
// too). While sending:
//   - a page view for each page the visitor opens (a typed URL once typing pauses),
//   - NUDGE_SHOWN when the preview shows a rule's nudge on that page (once per rule and page view),
//   - ADD_TO_CART, PURCHASE, and the nudge's outcome (clicked, dismissed) from the panel's buttons,
// each page event and shown nudge with the visitor's intent score at that moment. The panel says
// in plain words what was sent and accepted, the session id, the relay's errors (key refused,
// server unreachable, rate limited, events refused), and how to read the session back; when the
// editor is connected (connect.js) to the same server in the same mode, it reads it back here.

import { createRelay } from '../../pkg/relay.js';
import { waitWords, when } from './connect.js';
import { normalizeAddress } from './server-client.js';
import { NUDGE_LABELS, formatInt, h } from './util.js';

const DEFAULT_ADDRESS = 'http://127.0.0.1:8080';
/** A page the visitor types becomes a page view once the URL has not changed for this long. */
export const PAGE_VIEW_MS = 600;
/** Events are sent this long after the last one (a few events of one moment go in one request). */
const FLUSH_MS = 250;
/** How often the panel reads the relay's totals (a retry happens on the relay's own timer). */
const POLL_MS = 1000;
/** The events listed in the panel, newest first. */
const LOG_LENGTH = 8;

/** The panel's pill for a problem's kind. */
const PROBLEM_WORDS = { refused: 'refused', retrying: 'retrying', unsent: 'stopped' };

const EVENT_WORDS = {
  PAGE_VIEW: 'Page view',
  ADD_TO_CART: 'Add to cart',
  PURCHASE: 'Purchase',
  NUDGE_SHOWN: 'Nudge shown',
  NUDGE_OUTCOME: 'Nudge',
};

/** "chat bubble (sizing-help)". */
function nudgeWords(type, ruleId) {
  return `${(NUDGE_LABELS[type] ?? type).toLowerCase()} (${ruleId})`;
}

/** What a typed key is: `{ ok, mode, message }`; only publishable keys send events. */
export function checkPublishableKey(text) {
  const key = String(text ?? '').trim();
  if (!key) return { ok: false, message: 'Paste the site’s publishable key (it starts with pk_test_ or pk_live_).' };
  if (/^sk_/.test(key)) {
    return {
      ok: false,
      message: 'This is a secret key (sk_…): a secret key must never be put in a page. Use the site’s publishable key (pk_test_… or pk_live_…); the secret key is for reading the session back.',
    };
  }
  const m = /^pk_(test|live)_[A-Za-z0-9]{16,}$/.exec(key);
  if (!m) return { ok: false, message: 'A publishable key is pk_test_ or pk_live_ followed by at least 16 letters or digits, with no spaces.' };
  return { ok: true, mode: m[1] };
}

/** "1 event", "3 events". */
function events(n) {
  return `${formatInt(n)} event${n === 1 ? '' : 's'}`;
}

/** The wait of a retry in words ("about 3 seconds"). */
function retryWords(ms) {
  return `about ${waitWords(Math.max(1, Math.ceil((Number(ms) || 0) / 1000)))}`;
}

/**
 * A RelayError (pkg/relay.js) in words a merchant can act on; `base` names the server.
 * `{ text, kind }`: kind `refused` (the key or the batch was refused: nothing is retried) or
 * `retrying` (the relay sends the same events again by itself); a Stop while events wait makes
 * the kind `unsent`.
 */
export function relayErrorWords(err, base) {
  const said = (m) => (m ? ` The server said: “${m}”.` : '');
  const serverMessage = err?.body?.message;
  switch (err?.code) {
    case 'network':
      return {
        kind: 'retrying',
        text: `No answer from ${base}: the server may not be running, or the address may be wrong. ` +
          `The ${events(err.events ?? 0)} wait here and are sent again in ${retryWords(err.retryInMs)}.`,
      };
    case 'http':
      if (err.status === 401) {
        return {
          kind: 'refused',
          text: `The server at ${base} refused this key: it is not a publishable key of a site there (check pk_test_ against pk_live_, ` +
            `and the site’s site_keys in the server’s sites file). ${events(err.dropped ?? 0)} not stored.${said(serverMessage)}`,
        };
      }
      if (err.status === 429) {
        return {
          kind: 'retrying',
          text: `Rate limited: this key sent more events in the last minute than the server takes. ` +
            `The ${events(err.events ?? 0)} are sent again in ${retryWords(err.retryInMs)}, when the server said they fit.`,
        };
      }
      if (err.status === 503) {
        return { kind: 'retrying', text: `The server at ${base} cannot reach its store right now. The ${events(err.events ?? 0)} are sent again in ${retryWords(err.retryInMs)}.` };
      }
      if (err.retryInMs !== undefined) {
        return { kind: 'retrying', text: `The server answered ${err.status}. The ${events(err.events ?? 0)} are sent again in ${retryWords(err.retryInMs)}.` };
      }
      return { kind: 'refused', text: `The server refused the request (${err.status}): ${events(err.dropped ?? 0)} not stored.${said(serverMessage)}` };
    case 'rejected': {
      const list = (err.rejected ?? []).map((r) => `${EVENT_WORDS[r.type] ?? r.type ?? 'event'}: ${r.message}`);
      return { kind: 'refused', text: `The server refused ${events(list.length)}, the others were stored. ${list.slice(0, 3).join(' ')}` };
    }
    case 'queue_full':
      return { kind: 'refused', text: 'More events waited than the relay keeps: the oldest were dropped.' };
    default:
      return { kind: 'refused', text: String(err?.message ?? err) };
  }
}

export class StorefrontRelay {
  /**
   * @param {HTMLElement} root  index.html `#visitor-relay`
   * @param {{ intent: () => number, connection: import('./connect.js').Connection }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.relay = null;
    this.base = null; // the server's address while sending (and of the last session after Stop)
    this.mode = null; // test or live, from the key
    this.sessionId = null;
    this.latest = { url: null, nudgeType: null, ruleId: null }; // what the preview shows now
    this.viewUrl = null; // the page of the last page view sent
    this.pendingUrl = null; // a page waiting for PAGE_VIEW_MS before its page view
    this.viewTimer = null;
    this.flushTimer = null;
    this.pollTimer = null;
    this.shownRules = new Set(); // rules whose nudge was shown on the current page view
    this.nudge = null; // { nudgeId, type, ruleId, outcome } the nudge last shown on this page view
    this.problem = null; // { text, kind, accepted }: the relay's last error, until a later send works
    this.log = [];
    this.statsKey = '';
    this.actionsKey = '';
    this.build();
    host.connection?.onChange(() => this.renderReadBack());
    this.render();
  }

  get sending() {
    return this.relay !== null;
  }

  // ------------------------------------------------------------ the panel

  build() {
    this.address = h('input', { id: 'vr-address', type: 'text', value: DEFAULT_ADDRESS, spellcheck: 'false', autocomplete: 'off', inputmode: 'url' });
    this.key = h('input', { id: 'vr-key', type: 'password', spellcheck: 'false', autocomplete: 'off', placeholder: 'pk_test_… or pk_live_…' });
    this.startBtn = h('button', { type: 'submit', class: 'btn btn-small btn-primary vr-start' }, 'Start sending');
    this.form = h('form', { class: 'vr-form' },
      h('label', { for: 'vr-address' }, 'Server address'), this.address,
      h('label', { for: 'vr-key' }, 'Publishable key'), this.key,
      this.startBtn);
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.start();
    });
    this.formError = h('p', { class: 'vr-error', role: 'alert', hidden: true });
    this.intro = h('p', { class: 'hint vr-intro' },
      'Sends the visitor above to a server’s relay (POST /v1/events) as a storefront page would: each page view with the intent score, ' +
      'the nudges the preview shows, and what you make the visitor do. The key stays in this tab’s memory only: never saved, never in a share link.');
    this.state = h('span', { class: 'pill vr-pill' });
    this.status = h('p', { class: 'vr-status', role: 'status', 'aria-live': 'polite' });
    this.error = h('p', { class: 'vr-error vr-problem', role: 'alert', hidden: true });
    const act = (name, label, title, run) => h('button', { type: 'button', class: `btn btn-small vr-${name}`, title, onclick: run }, label);
    this.actions = {
      cart: act('cart', 'Add to cart', 'The visitor adds to cart on this page (ADD_TO_CART)', () => this.pageEvent('ADD_TO_CART')),
      purchase: act('purchase', 'Purchase', 'The visitor buys on this page (PURCHASE)', () => this.pageEvent('PURCHASE')),
      click: act('click', 'Click the nudge', 'The visitor clicks the nudge’s button (NUDGE_OUTCOME clicked)', () => this.outcome('clicked')),
      dismiss: act('dismiss', 'Dismiss the nudge', 'The visitor closes the nudge (NUDGE_OUTCOME dismissed)', () => this.outcome('dismissed')),
    };
    this.newBtn = h('button', { type: 'button', class: 'btn btn-small btn-quiet vr-new', title: 'Stop this visitor and start another: a new session', onclick: () => this.newVisitor() }, 'New visitor');
    this.stopBtn = h('button', { type: 'button', class: 'btn btn-small btn-quiet vr-stop', onclick: () => this.stop() }, 'Stop');
    this.toolbar = h('div', { class: 'vr-actions', role: 'group', 'aria-label': 'What the visitor does' },
      ...Object.values(this.actions), h('span', { class: 'vr-session-btns' }, this.newBtn, this.stopBtn));
    this.list = h('ol', { class: 'vr-log', 'aria-label': 'Events sent, newest first' });
    this.readBack = h('div', { class: 'vr-readback' });
    this.readResult = h('div', { class: 'vr-stored', role: 'status', 'aria-live': 'polite' });
    this.readBackKey = null;
    this.details = h('details', { class: 'vr' },
      h('summary', {}, h('span', { class: 'vr-title' }, 'Send this visitor to a server'), this.state),
      h('div', { class: 'vr-body' }, this.intro, this.form, this.formError, this.status, this.error, this.toolbar, this.list, this.readBack));
    this.root.replaceChildren(this.details);
  }

  render() {
    const on = this.sending;
    this.address.disabled = on;
    this.key.disabled = on;
    this.startBtn.hidden = on;
    this.toolbar.hidden = !on;
    const problem = this.problem;
    const refused = problem?.kind === 'refused';
    this.state.className = `pill vr-pill ${problem ? (refused ? 'pill-error' : 'pill-warning') : on ? 'pill-ok' : ''}`;
    this.state.textContent = problem ? PROBLEM_WORDS[problem.kind] : on ? 'sending' : this.sessionId ? 'stopped' : 'off';
    this.error.hidden = !problem;
    this.error.textContent = problem?.text ?? '';
    this.renderStatus();
    this.renderActions();
    this.renderLog();
    this.renderReadBack();
  }

  /** Sent, accepted, waiting: the relay's totals in words. */
  renderStatus() {
    if (!this.relay && !this.sessionId) {
      this.status.hidden = true;
      return;
    }
    this.status.hidden = false;
    const s = this.totals;
    const host = this.base.replace(/^https?:\/\//, '');
    const head = this.relay ? `Sending to ${host} as a ${this.mode} visitor.` : `Stopped sending to ${host}.`;
    const parts = [`${events(s.sent)} sent, ${formatInt(s.accepted)} accepted`];
    if (s.duplicates) parts.push(`${formatInt(s.duplicates)} already there`);
    if (s.rejected) parts.push(`${formatInt(s.rejected)} refused`);
    if (s.dropped) parts.push(`${formatInt(s.dropped)} not stored`);
    if (s.queued) parts.push(`${formatInt(s.queued)} waiting`);
    this.status.replaceChildren(head, ' ', h('b', { class: 'vr-counts' }, `${parts.join(', ')}.`),
      ...(this.sessionId ? [' Session ', h('code', { class: 'vr-session' }, this.sessionId)] : []));
  }

  /** The visitor's buttons: the nudge's only while a nudge shown on this page view is on screen. */
  renderActions() {
    const n = this.nudge;
    const nudgeOn = Boolean(this.relay && n && !n.outcome && this.latest.ruleId === n.ruleId && this.latest.url === this.viewUrl);
    const key = `${Boolean(this.relay)}:${nudgeOn}:${n?.type}`;
    if (key === this.actionsKey) return;
    this.actionsKey = key;
    this.actions.click.disabled = !nudgeOn;
    this.actions.dismiss.disabled = !nudgeOn;
    const what = nudgeOn ? `the ${NUDGE_LABELS[n.type]?.toLowerCase() ?? 'nudge'}` : 'the nudge';
    this.actions.click.textContent = `Click ${what}`;
    this.actions.dismiss.textContent = `Dismiss ${what}`;
  }

  renderLog() {
    this.list.hidden = this.log.length === 0;
    this.list.replaceChildren(...this.log.map((e) => h('li', {},
      h('span', { class: 'vr-type' }, e.words), ' ',
      e.url !== undefined ? h('code', {}, e.url) : null,
      e.intent !== undefined ? h('span', { class: 'muted' }, ` · intent ${e.intent}`) : null)));
  }

  /**
   * How to read the session back: the request, and a button when the editor is connected to the
   * same server with a secret key of the same mode (its site is the one the server says).
   */
  renderReadBack() {
    const client = this.host.connection?.client;
    const stored = Boolean(this.sessionId) && this.totals.accepted > 0;
    const here = Boolean(client && stored && client.base === this.base && client.mode === this.mode);
    const key = stored ? `${this.sessionId} ${this.base} ${this.mode} ${here}` : '';
    if (key === this.readBackKey) return;
    this.readBackKey = key;
    this.readResult.replaceChildren();
    if (!stored) {
      this.readBack.replaceChildren();
      return;
    }
    const secret = `sk_${this.mode}_…`;
    const route = `/v1/sessions/${this.sessionId}`;
    const host = this.base.replace(/^https?:\/\//, '');
    this.readBack.replaceChildren(
      h('p', { class: 'hint' }, 'Read it back with the site’s secret key (', h('code', {}, secret), '): ',
        h('code', {}, `GET ${route}`), ' shows its pages and intent scores, and ', h('code', {}, 'GET /v1/sessions'), ' lists it first:'),
      h('pre', { class: 'code-block small vr-curl', tabindex: '0', 'aria-label': 'The request that reads the session back' },
        `curl -s -H 'Authorization: Bearer ${secret}' \\\n${this.base}${route}`),
      here
        ? h('p', {}, h('button', { type: 'button', class: 'btn btn-small vr-read', onclick: () => this.readSession() }, 'Read it back here'),
          h('span', { class: 'hint' }, ' with the key the editor is connected with'))
        : h('p', { class: 'hint' }, `Or connect the editor to ${host} with that key (“Connect to a server” in the top bar) to read it back here.`),
      this.readResult);
  }

  // ------------------------------------------------------------ start, stop

  /** Starts sending with the typed address and key; false (and the reason shown) if they are not right. */
  start() {
    this.showFormError(null);
    let base;
    try {
      base = normalizeAddress(this.address.value);
    } catch (err) {
      this.showFormError(err.message);
      return false;
    }
    const checked = checkPublishableKey(this.key.value);
    if (!checked.ok) {
      this.showFormError(checked.message);
      return false;
    }
    this.base = base;
    this.mode = checked.mode;
    this.problem = null;
    this.log = [];
    this.sessionId = null;
    this.lastRelay = null;
    const relay = createRelay({
      endpoint: `${base}/v1/events`,
      siteKey: this.key.value.trim(),
      flushIntervalMs: 0, // sent by this panel, FLUSH_MS after an event, so it can say what happened
      onError: (err) => this.onError(err),
    });
    this.relay = relay;
    this.viewUrl = null;
    this.pendingUrl = null;
    this.nudge = null;
    this.shownRules = new Set();
    this.pollTimer = setInterval(() => this.poll(), POLL_MS);
    if (this.latest.url !== null) this.pageView(); // the page the visitor is on now
    this.render();
    return true;
  }

  showFormError(text) {
    this.formError.hidden = !text;
    this.formError.textContent = text ?? '';
  }

  /** Sends what waits and stops; the session stays shown with how to read it back. */
  async stop() {
    const relay = this.relay;
    if (!relay) return;
    if (this.viewTimer !== null) this.pageView();
    clearTimeout(this.flushTimer);
    clearInterval(this.pollTimer);
    this.flushTimer = null;
    this.pollTimer = null;
    this.relay = null;
    this.closing = relay;
    this.render();
    await relay.close();
    if (this.closing === relay) this.closing = null;
    this.afterSend(relay);
    const unsent = relay.stats().queued;
    if (unsent > 0) {
      this.problem = { kind: 'unsent', text: `Stopped before the server took them: ${events(unsent)} not sent.`, accepted: Infinity };
    }
    this.render();
  }

  /** A new session: this visitor stops, another starts on the same page. */
  async newVisitor() {
    await this.stop();
    this.start();
  }

  // ------------------------------------------------------------ what the visitor does

  /**
   * What the preview shows now (app.js, on each evaluation): the visitor's page and the nudge that
   * fires there, if any. Cheap when nothing changed (idle time running calls it every frame).
   */
  observe({ url, nudgeType, ruleId }) {
    this.latest = { url, nudgeType: nudgeType ?? null, ruleId: ruleId ?? null };
    if (!this.relay) return;
    if (url !== this.viewUrl) {
      if (url !== this.pendingUrl) {
        clearTimeout(this.viewTimer);
        this.pendingUrl = url;
        this.viewTimer = setTimeout(() => this.pageView(), PAGE_VIEW_MS);
      }
    } else {
      if (this.pendingUrl !== null) {
        clearTimeout(this.viewTimer); // typed away and back: still the same page view
        this.viewTimer = null;
        this.pendingUrl = null;
      }
      this.nudgeShown();
    }
    this.renderActions();
  }

  /** The page view of the visitor's page now, then its nudge if one shows. */
  pageView() {
    clearTimeout(this.viewTimer);
    this.viewTimer = null;
    this.pendingUrl = null;
    const url = this.latest.url;
    const intent = this.host.intent();
    this.relay.pageView(url, { intentScore: intent });
    this.viewUrl = url;
    this.shownRules = new Set();
    this.nudge = null;
    this.record({ words: EVENT_WORDS.PAGE_VIEW, url, intent });
    this.nudgeShown();
    this.renderActions();
  }

  /** NUDGE_SHOWN for the nudge on screen, once per rule and page view. */
  nudgeShown() {
    const { url, nudgeType, ruleId } = this.latest;
    if (!nudgeType || !ruleId || url !== this.viewUrl || this.shownRules.has(ruleId)) return;
    this.shownRules.add(ruleId);
    const intent = this.host.intent();
    const nudgeId = `nudg_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    this.relay.nudgeShown({ nudgeId, nudgeType, ruleId, url, intentScore: intent });
    this.nudge = { nudgeId, type: nudgeType, ruleId, outcome: null };
    this.record({ words: `${EVENT_WORDS.NUDGE_SHOWN}: ${nudgeWords(nudgeType, ruleId)}`, url, intent });
  }

  /** ADD_TO_CART or PURCHASE on the visitor's page (its page view first, if it still waits). */
  pageEvent(type) {
    if (!this.relay) return;
    if (this.viewTimer !== null || this.viewUrl !== this.latest.url) this.pageView();
    const url = this.latest.url;
    const intent = this.host.intent();
    if (type === 'ADD_TO_CART') this.relay.addToCart(url, { intentScore: intent });
    else this.relay.purchase(url, { intentScore: intent });
    this.record({ words: EVENT_WORDS[type], url, intent });
  }

  /** The visitor clicks or dismisses the nudge shown on this page view. */
  outcome(outcome) {
    const n = this.nudge;
    if (!this.relay || !n || n.outcome) return;
    this.relay.nudgeOutcome({ nudgeId: n.nudgeId, outcome });
    n.outcome = outcome;
    this.record({ words: `${EVENT_WORDS.NUDGE_OUTCOME} ${outcome}: ${nudgeWords(n.type, n.ruleId)}` });
    this.renderActions();
  }

  /** Lists an event and sends it (with the others of this moment) FLUSH_MS later. */
  record(entry) {
    this.sessionId = this.relay.sessionId ?? this.sessionId;
    this.log = [entry, ...this.log].slice(0, LOG_LENGTH);
    this.renderLog();
    this.renderStatus();
    this.renderReadBack();
    clearTimeout(this.flushTimer);
    this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Sends what waits; resolves when the server has answered (for the tests). */
  async flush() {
    clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const relay = this.relay;
    if (!relay) return;
    await relay.flush();
    this.afterSend(relay);
  }

  // ------------------------------------------------------------ what happened

  get totals() {
    const relay = this.relay ?? this.closing ?? this.lastRelay;
    return relay ? relay.stats() : { queued: 0, sent: 0, accepted: 0, duplicates: 0, rejected: 0, dropped: 0, retried: 0 };
  }

  onError(err) {
    const words = relayErrorWords(err, this.base);
    this.problem = { ...words, accepted: this.totals.accepted };
    // A refused key stays refused: sending stops, and the key can be corrected.
    if (err?.code === 'http' && err.status === 401 && this.relay) {
      this.problem.text += ' Sending stopped: correct the key and start again.';
      setTimeout(() => this.stop(), 0);
    }
    this.render();
  }

  /** After a request: a problem goes once a later request is accepted and nothing waits. */
  afterSend(relay) {
    this.lastRelay = relay;
    const s = relay.stats();
    if (this.problem && s.accepted > this.problem.accepted && s.queued === 0) this.problem = null;
    this.statsKey = JSON.stringify(s);
    this.render();
  }

  /** A retry the relay made on its own timer: the totals and the problem follow. */
  poll() {
    if (!this.relay) return;
    if (JSON.stringify(this.relay.stats()) !== this.statsKey) this.afterSend(this.relay);
  }

  /** GET /v1/sessions/{id} through the connected editor's client (server-client.js). */
  async readSession() {
    const client = this.host.connection?.client;
    const out = this.readResult;
    if (!client || !this.sessionId) return;
    if (this.relay) await this.flush();
    out.textContent = 'Reading…';
    try {
      const s = await client.session(this.sessionId);
      out.replaceChildren(storedSession(s));
    } catch (err) {
      out.replaceChildren(h('p', { class: 'vr-error' }, err.kind === 'not_found'
        ? `The server has no session ${this.sessionId} for the connected key: its events may all have been refused, or the connected secret key belongs to another site than the publishable key.`
        : err.kind === 'unreachable' ? `No answer from ${client.base}.` : `Reading the session failed: ${err.message}`));
    }
  }
}

/** A stored session (GET /v1/sessions/{id}) in a few lines: its pages, intent scores and nudges. */
export function storedSession(s) {
  const views = s.events.filter((e) => e.type === 'PAGE_VIEW');
  const summary = `Stored: ${formatInt(views.length)} page view${views.length === 1 ? '' : 's'} of ${formatInt(s.page_count)} page${s.page_count === 1 ? '' : 's'}, ` +
    `intent ${s.intent_score} at the end, ${formatInt(s.nudge_count)} nudge${s.nudge_count === 1 ? '' : 's'} shown, ${s.converted ? 'converted' : 'no purchase'}; ` +
    `${when(s.started_at)} to ${when(s.ended_at)}.`;
  return h('div', {},
    h('p', {}, summary),
    h('ol', { class: 'vr-log' }, ...s.events.map((e) => h('li', {},
      h('span', { class: 'vr-type' }, EVENT_WORDS[e.type] ?? e.type), ' ', h('code', {}, e.url),
      e.intent_score !== undefined && e.intent_score !== null ? h('span', { class: 'muted' }, ` · intent ${e.intent_score}`) : null)),
    ...s.nudges.map((n) => h('li', {}, h('span', { class: 'vr-type' }, `${NUDGE_LABELS[n.type] ?? n.type}`), ` ${n.outcome}${n.influenced_conversion ? ', influenced the purchase' : ''}`))));
}
