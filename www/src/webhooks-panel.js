// "Webhooks" (issue 33, docs/contract/webhooks.md): once the editor is connected to a server with a secret key
// (connect.js), the site's webhook endpoints for the key's mode: each one's status, address and
// events; an endpoint added (its address, the events it gets, a description) with its signing
// secret shown once, to copy; a test message sent; the recent delivery attempts read (status,
// time, duration, error, the response's body), a message resent from one; a disabled endpoint
// enabled again, and the messages it missed since a time sent again; the secret rotated (shown
// once); an endpoint deleted after a confirmation. Every failure is said in words: the server's
// message, or the server named when it did not answer.
//
// The state (not connected, the list, the open endpoint's attempts, the secret on show, the
// action under way and what it did) is the store's (webhooks-store.js); this file asks the
// server, dispatches what it found, and draws the state it is given (views.js). The key stays
// in the connection's client.

import { plainError } from './connect.js';
import { h } from './util.js';

/** docs/contract/webhooks.md's event types, with what each one is sent for. */
export const EVENT_TYPES = [
  ['nudge.shown', 'a nudge was shown to a visitor'],
  ['nudge.outcome', 'a nudge was clicked, dismissed or its chat opened'],
  ['session.converted', 'a session made its first purchase'],
  ['config.published', 'a config version was published'],
  ['webhook_endpoint.disabled', 'another endpoint of this site was disabled'],
  ['webhook.test', 'test messages (Send test reaches the endpoint either way)'],
];
/** How long the view waits for the attempt of a message it sent (a test, a resend), in ms. */
const WATCH_MS = 20_000;
const WATCH_EVERY_MS = 400;
/** The attempts read at a time (the newest first, then older ones on demand). */
const ATTEMPTS_PAGE = 20;
/** docs/contract/webhooks.md: recover goes at most 14 days back. */
const RECOVER_DAYS = 14;
const HOUR_MS = 3_600_000;

/** "27 Nov 2026, 06:41:07" in the reader's time zone. */
export function stamp(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso ?? '');
  return d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A `datetime-local` input's value for a time (the reader's time zone, to the minute). */
export function localInput(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * What an attempt says: `{ ok, title, detail }`. A 2xx is delivered; any other answer, or none
 * (the error in the server's words), failed, with the next try if one is due.
 * @param {import('./webhooks-store.js').Attempt} a
 */
export function attemptWords(a) {
  const ok = a.response_status !== null && a.response_status >= 200 && a.response_status < 300;
  const title = ok ? `Delivered: ${a.response_status}` : a.response_status !== null ? `Failed: ${a.response_status}` : 'Failed: no answer';
  const parts = [];
  if (a.error) parts.push(a.error);
  if (!ok) parts.push(a.next_attempt_at ? `Next try ${stamp(a.next_attempt_at)}.` : 'No more tries: resend it to try again.');
  return { ok, title, detail: parts.join(' ') };
}

/**
 * A failure in words: the server's reason for a refusal (a 400 names the address or event
 * refused, a 409 the limit of endpoints), the rest as the connected editor says it (connect.js).
 */
export function webhookError(err, base, what) {
  if (err?.kind === 'other' && (err.status === 400 || err.status === 409)) return `${what} was refused by the server: ${err.message}`;
  if (err?.kind === 'not_found') return `${what} failed: ${err.message}. It may have been deleted elsewhere; Refresh shows the list as the server has it.`;
  return plainError(err, { base, what });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class WebhooksPanel {
  /**
   * @param {HTMLElement} root `#webhooks-body`
   * @param {{ connection: import('./connect.js').Connection, dispatch: (action: import('./store.js').Action) => unknown,
   *   getState: () => import('./store.js').State,
   *   confirm: (options: { title: string, body: string, confirm: string, cancel?: string }) => Promise<boolean> }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    /** The parts of the slice last drawn, to redraw only what changed. */
    this.drawn = /** @type {any} */ ({});
    /** The recover inputs' values and the response bodies opened, kept across redraws. */
    this.since = new Map();
    this.alsoRecover = new Set();
    this.recoverOpen = new Set();
    this.bodiesOpen = new Set();
    this.loading = null; // the list's request under way
    this.attemptsSeq = 0;
    this.build();
    this.draw(host.getState().webhooks);
    host.connection.onChange(() => this.connectionChanged());
    root.closest('details')?.addEventListener('toggle', (e) => {
      if (/** @type {HTMLDetailsElement} */ (e.target).open) this.refreshIfStale();
    });
  }

  get state() {
    return this.host.getState().webhooks;
  }

  get client() {
    return this.host.connection.client;
  }

  build() {
    this.refreshBtn = h('button', { type: 'button', class: 'btn btn-quiet', 'data-act': 'refresh', 'data-focus': 'refresh', onclick: () => this.load() }, 'Refresh');
    this.status = h('div', { class: 'wh-status', role: 'status', 'aria-live': 'polite' });
    this.secretBox = h('div', { class: 'wh-secret-slot' });
    this.notice = h('p', { class: 'wh-notice', role: 'status', 'aria-live': 'polite' });
    this.list = h('ul', { class: 'wh-list', 'aria-label': 'Webhook endpoints' });
    this.attempts = h('div', { class: 'wh-attempts-slot' });
    this.form = this.buildForm();
    this.root.replaceChildren(
      h('p', { class: 'hint' }, 'Send what happens on your storefront (nudges shown, their outcomes, purchases, publishes) to your own server as it happens. Each message is signed (Standard Webhooks), retried when your server fails, and listed below with its answer.'),
      this.status, this.secretBox, this.notice,
      h('div', { class: 'wh-tools' }, h('h3', { class: 'wh-heading', id: 'wh-list-title' }, 'Endpoints'), this.refreshBtn),
      this.list, this.attempts, this.form);
  }

  /** The form that adds an endpoint, built once (what is typed in it survives the redraws). */
  buildForm() {
    this.urlInput = h('input', { id: 'wh-url', type: 'text', inputmode: 'url', spellcheck: 'false', autocomplete: 'off', placeholder: 'https://example.com/webhooks/nudges', 'aria-describedby': 'wh-url-hint' });
    this.typeBoxes = EVENT_TYPES.map(([type, words]) => {
      const id = `wh-type-${type.replace(/[^a-z]/g, '-')}`;
      const box = h('input', { type: 'checkbox', id, value: type, checked: type === 'nudge.shown' });
      return h('div', { class: 'wh-type' }, box, h('label', { for: id }, h('code', {}, type), ` ${words}`));
    });
    this.descInput = h('input', { id: 'wh-desc', type: 'text', autocomplete: 'off', placeholder: 'Optional: what it is for' });
    this.formError = h('p', { class: 'wh-form-error', role: 'alert', hidden: true });
    this.addBtn = h('button', { type: 'submit', class: 'btn btn-primary', 'data-act': 'add' }, 'Add endpoint');
    const form = h('form', { class: 'wh-form', 'aria-labelledby': 'wh-form-title' },
      h('h3', { class: 'wh-heading', id: 'wh-form-title' }, 'Add an endpoint'),
      h('label', { for: 'wh-url' }, 'Address of your receiver'), this.urlInput,
      h('p', { class: 'hint', id: 'wh-url-hint' }, 'An https:// address your server answers with 2xx within 15 seconds. The server refuses private and loopback addresses unless its operator allows them.'),
      h('fieldset', { class: 'wh-types' }, h('legend', {}, 'Events to send'), ...this.typeBoxes),
      h('label', { for: 'wh-desc' }, 'Description'), this.descInput,
      this.formError,
      h('div', { class: 'wh-form-actions' }, this.addBtn));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.add();
    });
    return form;
  }

  // ------------------------------------------------------------ talking to the server

  /** The connection changed: another server or key (or none); its endpoints are read when the panel is open. */
  connectionChanged() {
    const c = this.host.connection;
    const now = { connected: c.connected, host: c.connected ? c.hostName : '', mode: c.connected ? c.client.mode : null };
    const w = this.state;
    if (w.connected === now.connected && w.host === now.host && w.mode === now.mode) return;
    this.loading?.abort();
    this.loading = null;
    this.attemptsSeq++;
    this.since.clear();
    this.alsoRecover.clear();
    this.recoverOpen.clear();
    this.bodiesOpen.clear();
    this.host.dispatch({ type: 'webhooksConnection', ...now });
    if (c.connected) this.refreshIfStale();
  }

  get open() {
    return this.root.closest('details')?.open !== false;
  }

  /** Reads the endpoints when the panel is open and nothing (or another connection's) is shown. */
  refreshIfStale() {
    const w = this.state;
    if (this.open && w.connected && w.status === 'idle') this.load();
  }

  /** Reads the endpoints (at most 20 per site and mode: one page), and the open one's attempts. */
  async load() {
    const client = this.client;
    if (!client) return;
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    this.host.dispatch({ type: 'webhooksRequested' });
    try {
      const page = await client.webhookEndpoints({ limit: 100 }, controller.signal);
      if (controller !== this.loading) return;
      this.host.dispatch({ type: 'webhooksLoaded', endpoints: page.data });
      if (this.state.open) this.loadAttempts(this.state.open);
    } catch (err) {
      if (controller !== this.loading || err?.kind === 'aborted') return;
      this.host.dispatch({ type: 'webhooksFailed', error: webhookError(err, client.base, 'Reading the webhook endpoints') });
    } finally {
      if (controller === this.loading) this.loading = null;
    }
  }

  /**
   * Runs an action unless another is under way: `busy` says it meanwhile; a failure is said in
   * words, `what` naming it.
   * @param {string} busy
   * @param {string} what
   * @param {(client: any) => Promise<void>} fn
   */
  async run(busy, what, fn) {
    const client = this.client;
    if (!client || this.state.busy) return;
    this.host.dispatch({ type: 'webhooksBusy', text: busy });
    try {
      await fn(client);
      if (this.state.busy === busy) this.host.dispatch({ type: 'webhooksNotice', ok: true, text: '' });
    } catch (err) {
      if (client !== this.client) return;
      this.host.dispatch({ type: 'webhooksNotice', ok: false, text: webhookError(err, client.base, what) });
    }
  }

  /** Adds the endpoint of the form; its secret is shown once. */
  async add() {
    const url = this.urlInput.value.trim();
    const types = this.typeBoxes.map((d) => /** @type {HTMLInputElement} */ (d.querySelector('input'))).filter((b) => b.checked).map((b) => b.value);
    const problem = !url ? 'Type the address of your receiver, such as https://example.com/webhooks/nudges.'
      : !types.length ? 'Choose at least one event to send.' : null;
    this.showFormError(problem);
    if (problem) {
      (url ? /** @type {HTMLElement} */ (this.typeBoxes[0].querySelector('input')) : this.urlInput).focus();
      return;
    }
    const client = this.client;
    if (!client || this.state.busy) return;
    this.addBtn.disabled = true;
    this.host.dispatch({ type: 'webhooksBusy', text: `Adding ${url}…` });
    try {
      const created = await client.createWebhookEndpoint({ url, event_types: types, description: this.descInput.value.trim() || undefined });
      const { secret, ...endpoint } = created;
      this.host.dispatch({ type: 'webhooksSaved', endpoint, text: `Added ${endpoint.url}. Send a test to see it arrive.` });
      this.host.dispatch({ type: 'webhooksSecret', id: endpoint.id, url: endpoint.url, secret, why: 'created' });
      this.urlInput.value = '';
      this.descInput.value = '';
    } catch (err) {
      if (client !== this.client) return;
      const words = webhookError(err, client.base, 'Adding the endpoint');
      this.host.dispatch({ type: 'webhooksNotice', ok: false, text: words });
      this.showFormError(words);
      this.urlInput.focus();
    } finally {
      this.addBtn.disabled = false;
    }
  }

  showFormError(text) {
    this.formError.hidden = !text;
    this.formError.textContent = text ?? '';
    this.urlInput.setAttribute('aria-invalid', String(Boolean(text) && /url|address/i.test(text)));
  }

  /** @param {import('./webhooks-store.js').Endpoint} e */
  sendTest(e) {
    return this.run(`Sending a test message to ${e.url}…`, 'Sending the test', async (client) => {
      const message = await client.testWebhookEndpoint(e.id);
      this.host.dispatch({ type: 'webhooksNotice', ok: true, text: `Test message ${message.id} sent to ${e.url}; its attempt shows below.` });
      this.watch(e.id, message.id);
    });
  }

  /**
   * Disables or enables an endpoint; enabling it, also sends again what failed since the row's
   * time when its box is ticked.
   * @param {import('./webhooks-store.js').Endpoint} e
   */
  setStatus(e, status) {
    const words = status === 'enabled' ? 'Enabling' : 'Disabling';
    const since = status === 'enabled' && this.alsoRecover.has(e.id) ? this.sinceOf(e) : undefined;
    if (since === null) return undefined;
    return this.run(`${words} ${e.url}…`, `${words} the endpoint`, async (client) => {
      const endpoint = await client.updateWebhookEndpoint(e.id, { status });
      let text = status === 'enabled'
        ? `${e.url} is enabled again: new messages go to it.${since ? '' : ' Messages it missed are not sent unless you recover them.'}`
        : `${e.url} is disabled: nothing is sent to it until you enable it again.`;
      if (since) {
        this.alsoRecover.delete(e.id);
        text += ` ${await this.recoverWords(client, e, since)}`;
      }
      this.host.dispatch({ type: 'webhooksSaved', endpoint, text });
      if (since) this.loadAttempts(e.id);
    });
  }

  /** @param {import('./webhooks-store.js').Endpoint} e */
  rotate(e) {
    return this.run(`Rotating the secret of ${e.url}…`, 'Rotating the secret', async (client) => {
      const { secret, ...endpoint } = await client.rotateWebhookSecret(e.id);
      this.host.dispatch({ type: 'webhooksSaved', endpoint, text: `New secret for ${e.url}.` });
      this.host.dispatch({ type: 'webhooksSecret', id: e.id, url: e.url, secret, why: 'rotated' });
    });
  }

  /** @param {import('./webhooks-store.js').Endpoint} e */
  async remove(e) {
    if (this.state.busy) return;
    const sure = await this.host.confirm({
      title: 'Delete this endpoint?',
      body: `Nothing more is sent to ${e.url}, and its attempts are deleted with it. This cannot be undone.`,
      confirm: 'Delete endpoint',
      cancel: 'Keep it',
    });
    if (!sure) {
      this.focusKey(`${e.id}:delete`);
      return;
    }
    await this.run(`Deleting ${e.url}…`, 'Deleting the endpoint', async (client) => {
      await client.deleteWebhookEndpoint(e.id);
      this.since.delete(e.id);
      this.host.dispatch({ type: 'webhooksDeleted', id: e.id, text: `Deleted ${e.url}.` });
      this.focusKey('refresh');
    });
  }

  /**
   * The row's recover time as RFC 3339, or null (said in words) when it is not a time.
   * @param {import('./webhooks-store.js').Endpoint} e
   */
  sinceOf(e) {
    const value = this.since.get(e.id) ?? '';
    const since = new Date(value);
    if (!value || Number.isNaN(since.getTime())) {
      this.host.dispatch({ type: 'webhooksNotice', ok: false, text: 'Choose the date and time from which to send failed messages again.' });
      return null;
    }
    return since.toISOString();
  }

  /** Sends again what failed to reach `e` since `since`; what it did, in words. */
  async recoverWords(client, e, since) {
    const r = await client.recoverWebhookEndpoint(e.id, since);
    return r.messages
      ? `${r.messages} message${r.messages === 1 ? '' : 's'} that failed to reach it since ${stamp(r.since)} will be sent again.`
      : `No message failed to reach it since ${stamp(r.since)}: nothing to send again.`;
  }

  /** @param {import('./webhooks-store.js').Endpoint} e */
  recover(e) {
    const since = this.sinceOf(e);
    if (!since) return undefined;
    return this.run(`Sending again what failed to reach ${e.url}…`, 'Recovering the failed messages', async (client) => {
      this.host.dispatch({ type: 'webhooksNotice', ok: true, text: `${e.url}: ${await this.recoverWords(client, e, since)}` });
      this.loadAttempts(e.id);
    });
  }

  /** @param {import('./webhooks-store.js').Attempt} a */
  resend(endpointId, a) {
    return this.run(`Resending message ${a.message_id}…`, 'Resending the message', async (client) => {
      const r = await client.resendWebhookMessage(a.message_id);
      this.host.dispatch({ type: 'webhooksNotice', ok: true, text: r.deliveries
        ? `Message ${a.message_id} sent again (to ${r.deliveries} enabled endpoint${r.deliveries === 1 ? '' : 's'}).`
        : `Message ${a.message_id} was not sent again: none of its endpoints is enabled.` });
      if (r.deliveries) this.watch(endpointId, a.message_id, a.id);
    });
  }

  /** Opens (or closes) an endpoint's attempts. */
  toggleAttempts(id) {
    if (this.state.open === id) {
      this.attemptsSeq++;
      this.host.dispatch({ type: 'webhooksOpen', id: null });
      return;
    }
    this.loadAttempts(id);
  }

  /** Reads an endpoint's recent attempts; resolves to true when they were drawn. */
  async loadAttempts(id, waitingFor) {
    const client = this.client;
    if (!client) return false;
    const seq = ++this.attemptsSeq;
    this.host.dispatch({ type: 'webhooksAttemptsRequested', id, ...(waitingFor === undefined ? {} : { waitingFor }) });
    try {
      const page = await client.webhookAttempts(id, { limit: ATTEMPTS_PAGE });
      if (seq !== this.attemptsSeq) return false;
      this.host.dispatch({ type: 'webhooksAttemptsLoaded', id, items: page.data, hasMore: page.has_more, cursor: page.next_cursor ?? null });
      return true;
    } catch (err) {
      if (seq !== this.attemptsSeq) return false;
      this.host.dispatch({ type: 'webhooksAttemptsFailed', id, error: webhookError(err, client.base, 'Reading the attempts') });
      return false;
    }
  }

  /** Reads the page of attempts older than those shown, and adds it to them. */
  async loadOlder(id) {
    const client = this.client;
    const { cursor } = this.state.attempts;
    if (!client || !cursor) return;
    const seq = ++this.attemptsSeq;
    try {
      const page = await client.webhookAttempts(id, { limit: ATTEMPTS_PAGE, cursor });
      if (seq !== this.attemptsSeq) return;
      this.host.dispatch({ type: 'webhooksAttemptsLoaded', id, items: page.data, hasMore: page.has_more, cursor: page.next_cursor ?? null, older: true });
      this.focusKey('older-attempts');
    } catch (err) {
      if (seq !== this.attemptsSeq) return;
      this.host.dispatch({ type: 'webhooksNotice', ok: false, text: webhookError(err, client.base, 'Reading the older attempts') });
    }
  }

  /**
   * Shows the endpoint's attempts until one of message `messageId` (newer than attempt `after`,
   * for a resend) is listed, or WATCH_MS have passed.
   */
  async watch(id, messageId, after = null) {
    const until = Date.now() + WATCH_MS;
    const newer = (a) => a.message_id === messageId && (after === null || Number(a.id.slice(4)) > Number(after.slice(4)));
    let waitingFor = messageId;
    for (;;) {
      const loaded = await this.loadAttempts(id, waitingFor);
      waitingFor = undefined;
      const w = this.state;
      if (w.open !== id || (loaded && w.attempts.items.some(newer))) return;
      if (Date.now() >= until) {
        await this.loadAttempts(id, null);
        this.host.dispatch({ type: 'webhooksNotice', ok: false, text: `No attempt of ${messageId} is listed after ${WATCH_MS / 1000} seconds: the server may be busy. Refresh attempts shows it once it is made.` });
        return;
      }
      await sleep(WATCH_EVERY_MS);
    }
  }

  // ------------------------------------------------------------ drawing

  /**
   * Draws the store's `webhooks`, each part only when what it reads changed.
   * @param {import('./webhooks-store.js').Webhooks} w
   */
  draw(w) {
    const d = this.drawn;
    const panel = this.root.closest('details');
    panel?.setAttribute('data-state', w.connected ? w.status : 'not-connected');
    panel?.setAttribute('aria-busy', String(Boolean(w.busy) || w.status === 'loading'));
    const focus = this.root.contains(document.activeElement) ? /** @type {HTMLElement} */ (document.activeElement).dataset.focus : undefined;
    if (d.connected !== w.connected || d.status !== w.status || d.error !== w.error || d.host !== w.host || d.mode !== w.mode) this.drawStatus(w);
    if (d.secret !== w.secret) this.drawSecret(w);
    if (d.busy !== w.busy || d.notice !== w.notice) this.drawNotice(w);
    if (d.endpoints !== w.endpoints || d.open !== w.open || d.connected !== w.connected) this.drawList(w);
    if (d.attempts !== w.attempts || d.open !== w.open || d.endpoints !== w.endpoints) this.drawAttempts(w);
    this.drawn = { ...w };
    if (focus && !this.root.contains(document.activeElement)) {
      // Disable and Re-enable take each other's place: the focus goes to the one drawn.
      this.focusKey(focus);
      if (!this.root.contains(document.activeElement)) this.focusKey(focus.replace(/:(disable|enable)$/, (_, a) => (a === 'disable' ? ':enable' : ':disable')));
    }
  }

  /** Focuses the element of the view keyed `key` (data-focus), if it is drawn. */
  focusKey(key) {
    const el = /** @type {HTMLElement | null} */ (this.root.querySelector(`[data-focus="${CSS.escape(key)}"]`));
    el?.focus();
  }

  drawStatus(w) {
    this.form.hidden = !w.connected;
    this.refreshBtn.hidden = !w.connected;
    this.status.className = `wh-status ${w.status === 'error' ? 'error' : ''}`;
    if (!w.connected) {
      this.status.replaceChildren(h('p', {}, 'Webhooks are sent by a nudge-rules server. ',
        h('button', { type: 'button', class: 'link-btn', onclick: () => this.host.connection.openDialog() }, 'Connect to a server'),
        ' with the site’s secret key to manage them.'));
      return;
    }
    if (w.status === 'error') {
      this.status.replaceChildren(h('p', {}, w.error));
      return;
    }
    const mode = w.mode === 'live' ? 'live' : 'test';
    this.status.replaceChildren(h('p', { class: 'hint' }, w.status === 'loading'
      ? `Reading the webhook endpoints of ${w.host}…`
      : `The ${mode} endpoints of ${w.host}: a ${mode} key sees and sends only the site’s ${mode} data.`));
  }

  drawSecret(w) {
    const s = w.secret;
    if (!s) {
      this.secretBox.replaceChildren();
      return;
    }
    const input = h('input', { id: 'wh-secret', type: 'text', readonly: true, value: s.secret, spellcheck: 'false', class: 'wh-secret-value', 'aria-describedby': 'wh-secret-words' });
    const copied = h('span', { class: 'wh-copied', role: 'status', 'aria-live': 'polite' });
    const copy = h('button', { type: 'button', class: 'btn btn-primary', 'data-act': 'copy-secret', 'data-focus': 'copy-secret', onclick: async () => {
      try {
        await navigator.clipboard.writeText(s.secret);
        copied.textContent = 'Copied.';
      } catch {
        input.focus();
        input.select();
        copied.textContent = 'The browser did not allow copying: the secret is selected, press Ctrl+C (⌘C on a Mac).';
      }
    } }, 'Copy secret');
    const done = h('button', { type: 'button', class: 'btn', 'data-act': 'close-secret', onclick: () => {
      this.host.dispatch({ type: 'webhooksSecretClosed' });
      this.focusKey(`${s.id}:test`);
    } }, 'I have saved it');
    const words = s.why === 'created'
      ? 'Copy it now: it will not be shown again. Your receiver needs it to check that each message comes from this server (the webhook-signature header, Standard Webhooks).'
      : 'Copy it now: it will not be shown again. For the next 24 hours each message is signed with both the previous secret and this one, so put this one in your receiver before then.';
    this.secretBox.replaceChildren(h('section', { class: 'wh-secret', role: 'region', 'aria-labelledby': 'wh-secret-title', 'data-why': s.why },
      h('h3', { class: 'wh-heading', id: 'wh-secret-title' }, s.why === 'created' ? `Signing secret of ${s.url}` : `New signing secret of ${s.url}`),
      h('p', { id: 'wh-secret-words' }, words),
      h('div', { class: 'wh-secret-row' }, h('label', { for: 'wh-secret', class: 'visually-hidden' }, 'Signing secret'), input, copy),
      copied,
      h('div', { class: 'wh-form-actions' }, done)));
    copy.focus();
  }

  drawNotice(w) {
    const text = w.busy ?? w.notice?.text ?? '';
    this.notice.textContent = text;
    this.notice.className = `wh-notice${w.busy ? ' busy' : w.notice && !w.notice.ok ? ' error' : ''}`;
  }

  drawList(w) {
    if (!w.connected || w.status === 'error') {
      this.list.replaceChildren();
      return;
    }
    if (w.status === 'ready' && !w.endpoints.length) {
      this.list.replaceChildren(h('li', { class: 'wh-empty' }, 'No endpoint yet: add one above, then send it a test.'));
      return;
    }
    this.list.replaceChildren(...w.endpoints.map((e) => this.row(e, w.open === e.id)));
  }

  /**
   * One endpoint: status, address, events, description, and its actions.
   * @param {import('./webhooks-store.js').Endpoint} e
   */
  row(e, open) {
    const on = e.status === 'enabled';
    const title = `wh-ep-${e.id}`;
    const act = (name, label, onclick, extra = {}) => h('button', { type: 'button', class: 'btn btn-small', 'data-act': name, 'data-focus': `${e.id}:${name}`, onclick, ...extra }, label);
    const actions = [
      on ? act('test', 'Send test', () => this.sendTest(e)) : null,
      act('attempts', open ? 'Hide attempts' : 'Attempts', () => this.toggleAttempts(e.id), { 'aria-expanded': String(open), 'aria-controls': 'wh-attempts' }),
      on ? act('disable', 'Disable', () => this.setStatus(e, 'disabled')) : act('enable', 'Re-enable', () => this.setStatus(e, 'enabled'), { class: 'btn btn-small btn-primary' }),
      act('rotate', 'Rotate secret', () => this.rotate(e)),
      act('delete', 'Delete…', () => this.remove(e), { class: 'btn btn-small btn-danger-quiet' }),
    ];
    const id = `wh-since-${e.id}`;
    const now = Date.now();
    if (!this.since.has(e.id)) this.since.set(e.id, localInput(now - 24 * HOUR_MS));
    const input = h('input', { id, type: 'datetime-local', class: 'wh-since', 'data-focus': `${e.id}:since`,
      min: localInput(now - RECOVER_DAYS * 24 * HOUR_MS), max: localInput(now), value: this.since.get(e.id), 'aria-describedby': `${id}-hint` });
    input.addEventListener('input', () => this.since.set(e.id, input.value));
    const hint = h('p', { class: 'hint', id: `${id}-hint` }, `Every message that failed to reach it since then (at most ${RECOVER_DAYS} days back) is sent again.`);
    let recover;
    if (!on) {
      const box = h('input', { type: 'checkbox', id: `${id}-also`, 'data-focus': `${e.id}:also`, checked: this.alsoRecover.has(e.id) });
      box.addEventListener('change', () => (box.checked ? this.alsoRecover.add(e.id) : this.alsoRecover.delete(e.id)));
      recover = h('div', { class: 'wh-recover', role: 'group', 'aria-label': `When ${e.url} is enabled again` },
        h('span', { class: 'wh-also' }, box, h('label', { for: `${id}-also` }, 'On Re-enable, also send again what failed since')),
        h('label', { for: id, class: 'visually-hidden' }, 'Failed since'), input, hint);
    } else {
      const more = h('details', { class: 'wh-recover-more', open: this.recoverOpen.has(e.id) },
        h('summary', { 'data-focus': `${e.id}:recover-open` }, 'Send failed messages again…'),
        h('div', { class: 'wh-recover', role: 'group', 'aria-label': `Recover the messages that failed to reach ${e.url}` },
          h('label', { for: id }, 'Failed since'), input, act('recover', 'Send again', () => this.recover(e)), hint));
      more.addEventListener('toggle', () => (more.open ? this.recoverOpen.add(e.id) : this.recoverOpen.delete(e.id)));
      recover = more;
    }
    return h('li', { class: `wh-row wh-${e.status}`, dataset: { id: e.id, status: e.status }, 'aria-labelledby': title },
      h('div', { class: 'wh-head' },
        h('span', { class: `pill wh-pill-${e.status}` }, on ? 'Enabled' : 'Disabled'),
        h('h4', { class: 'wh-url', id: title }, e.url)),
      e.description ? h('p', { class: 'wh-desc' }, e.description) : null,
      h('p', { class: 'wh-types-line' }, h('span', { class: 'muted' }, 'Sends: '), ...e.event_types.flatMap((t, i) => [i ? ', ' : '', h('code', {}, t)])),
      on ? null : h('p', { class: 'wh-off' }, 'Disabled: nothing is sent to it. The server disables an endpoint that answered 410 Gone or failed every attempt for 5 days.'),
      h('div', { class: 'wh-actions', role: 'group', 'aria-label': `Actions for ${e.url}` }, ...actions),
      recover);
  }

  drawAttempts(w) {
    const e = w.endpoints.find((x) => x.id === w.open);
    if (!w.connected || !e) {
      this.attempts.replaceChildren();
      return;
    }
    const a = w.attempts;
    const refresh = h('button', { type: 'button', class: 'btn btn-small btn-quiet', 'data-act': 'refresh-attempts', 'data-focus': 'refresh-attempts', onclick: () => this.loadAttempts(e.id) }, 'Refresh attempts');
    let body;
    if (a.status === 'error') body = h('p', { class: 'wh-attempts-error' }, a.error);
    else if (a.status !== 'ready' && !a.items.length) body = h('p', { class: 'hint' }, 'Reading the attempts…');
    else if (!a.items.length) body = h('p', { class: 'hint' }, a.waitingFor ? `Waiting for the first attempt of ${a.waitingFor}…` : 'No attempt yet: nothing has been sent to it. Send a test.');
    else body = h('ol', { class: 'wh-attempt-list' }, ...a.items.map((x) => this.attempt(e.id, x)));
    this.attempts.replaceChildren(h('section', { id: 'wh-attempts', class: 'wh-attempts', 'aria-labelledby': 'wh-attempts-title', 'data-state': a.status },
      h('div', { class: 'wh-tools' }, h('h3', { class: 'wh-heading', id: 'wh-attempts-title' }, `Recent attempts to ${e.url}`), h('span', { class: 'hint' }, 'newest first'), refresh),
      a.waitingFor && a.items.length ? h('p', { class: 'hint' }, `Waiting for the attempt of ${a.waitingFor}…`) : null,
      body,
      a.hasMore && a.cursor ? h('div', { class: 'wh-form-actions wh-older' },
        h('span', { class: 'hint' }, `The ${a.items.length} most recent attempts.`),
        h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'older-attempts', 'data-focus': 'older-attempts', onclick: () => this.loadOlder(e.id) }, 'Show older attempts')) : null));
  }

  /**
   * One attempt: its outcome, message, time, duration, error, and the response's body.
   * @param {import('./webhooks-store.js').Attempt} a
   */
  attempt(endpointId, a) {
    const said = attemptWords(a);
    const bytes = new TextEncoder().encode(a.response_body).length;
    const details = h('details', { class: 'wh-body', open: this.bodiesOpen.has(a.id) },
      h('summary', {}, bytes ? `Response body (${bytes.toLocaleString('en-US')} bytes${bytes >= 4096 ? ', the first 4 KiB' : ''})` : 'Response body (empty)'),
      h('pre', { class: 'code-block', tabindex: '0', 'aria-label': `Response body of attempt ${a.attempt} of ${a.message_id}` }, a.response_body));
    details.addEventListener('toggle', () => (details.open ? this.bodiesOpen.add(a.id) : this.bodiesOpen.delete(a.id)));
    return h('li', { class: `wh-attempt ${said.ok ? 'wh-ok' : 'wh-failed'}`, dataset: { id: a.id, message: a.message_id, status: String(a.response_status ?? '') } },
      h('div', { class: 'wh-head' },
        h('span', { class: `pill ${said.ok ? 'pill-ok' : 'pill-error'} wh-outcome` }, said.title),
        h('code', { class: 'wh-type-name' }, a.event_type),
        h('span', { class: 'muted wh-nth' }, `attempt ${a.attempt}`),
        h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'resend', 'data-focus': `${a.id}:resend`, 'aria-label': `Resend message ${a.message_id}`, onclick: () => this.resend(endpointId, a) }, 'Resend')),
      h('p', { class: 'wh-when' }, h('time', { datetime: a.attempted_at }, stamp(a.attempted_at)), ` · ${a.duration_ms.toLocaleString('en-US')} ms · message `, h('code', {}, a.message_id)),
      said.detail ? h('p', { class: `wh-detail${said.ok ? '' : ' wh-error'}` }, said.detail) : null,
      details);
  }
}
