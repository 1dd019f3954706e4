// "Connect to a server" (issue 22, docs/contract/backtest.md and docs/contract/versions.md): the top bar's server part. A merchant gives
// a nudge-rules server's address and the site's secret key; the editor then backtests drafts on
// the site's real sessions (real-sessions.js, in the Replay panel), publishes them
// (publish-panel.js) and shows the history with restore (history-panel.js).
//
// The key is kept in memory only, inside the HTTP client (server-client.js): never in local or
// session storage, the draft, the share link or a log, and it is gone when the tab is closed or
// reloaded. The address is kept the same way.
//
// What this file keeps: the connection (`client`), the live version the draft starts from
// (`live`: the version a publish names in If-Match), the latest version the server has reported
// (`latest`), and whether the site is managed by a config file on the server (then publish and
// history are off). The status bar shows the address, test or live data, the live version and
// whether the draft differs from it.

import { createClient, checkKey, normalizeAddress } from './server-client.js';
import { formatInt, h } from './util.js';

const DEFAULT_ADDRESS = 'http://127.0.0.1:8080';
/** The pause in typing after which the status bar compares the draft with the live version. */
const STATUS_MS = 150;

/** True when two config texts hold the same JSON (whitespace aside); false if either is not JSON. */
export function sameConfig(a, b) {
  if (a === b) return true;
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

/** "24 Nov 2026, 19:40" in the reader's time zone (the history's "when"). */
export function when(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso ?? '');
  return d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** "1 second", "42 seconds", "2 minutes". */
export function waitWords(seconds) {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * A ServerError (server-client.js) in words a merchant can act on. `what` names the action that
 * failed ("The backtest", "Publishing"); `base` the server.
 * @param {any} err
 * @param {{ base?: string, what?: string }} [options]
 */
export function plainError(err, { base, what = 'The request' } = {}) {
  switch (err?.kind) {
    case 'unreachable':
      return `Could not reach the server at ${base}. Check that it is running and that the address is right. ` +
        `If it is running, its sites file must allow this page: the site’s allowed_origins must list ${location.origin}.`;
    case 'refused':
      return `The server at ${base} refused this key. Use a secret key of this site (sk_test_… reads and publishes test data, ` +
        'sk_live_… live data) that is listed in the server’s sites file.';
    case 'rate_limited':
      return `${what} was turned down: this key made too many requests in the last minute. Try again in ${waitWords(err.retryAfter)}.`;
    case 'file_managed':
      return 'This site’s config is a file on the server, so it cannot be published or restored from here: change that file on ' +
        'the server instead. Backtesting drafts on the site’s real sessions still works.';
    case 'unavailable':
      return `The server at ${base} is not ready (it may have lost its store). Try again in a moment.`;
    case 'conflict':
      return `A newer version was published meanwhile: ${err.message}`;
    case 'invalid_scenarios':
      return `Your scenario file was refused by the server: ${err.message}`;
    default:
      return `${what} failed: the server answered ${err?.status ?? ''} ${err?.message ?? String(err)}`.replace(/\s+/g, ' ');
  }
}

/** A rule index from a diagnostic's path ("rules[2].when.pages[0]" -> 2), or null. */
export function ruleIndexOf(path) {
  const m = /^rules\[(\d+)\]/.exec(path ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * The draft's errors as the server found them, each with a button that shows the rule in the
 * editor (its card in the Rules view, its line in the JSON view). `host.showProblem(d)` moves.
 */
export function problemList(diagnostics, host, config = null) {
  const errors = diagnostics.filter((d) => d.severity !== 'warning');
  const items = errors.slice(0, 10).map((d) => {
    const index = ruleIndexOf(d.path);
    const id = index !== null ? config?.rules?.[index]?.id : null;
    const where = index !== null ? `rule ${index + 1}${id ? ` “${id}”` : ''}` : d.path || 'the config';
    const at = d.line ? ` (line ${d.line})` : '';
    return h('li', { class: 'cx-problem' },
      h('span', {}, `${where}${at}: ${d.message} `),
      h('button', { type: 'button', class: 'link-btn', onclick: () => host.showProblem(d) }, index !== null ? 'Show the rule' : 'Show it'));
  });
  const more = errors.length > 10 ? h('li', { class: 'muted' }, `and ${formatInt(errors.length - 10)} more`) : null;
  return h('ul', { class: 'cx-problems' }, ...items, more);
}

/** The draft parsed, or null (for rule ids in messages). */
export function parsedOrNull(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export class Connection {
  /**
   * @param {HTMLElement} bar  index.html `#server-bar`
   * @param {{ text: () => string, notify: (text, action?) => void, load: (text, label) => Promise<boolean> }} host
   */
  constructor(bar, host) {
    this.bar = bar;
    this.host = host;
    this.client = null;
    this.live = null; // { version, managed_by, published_at, published_by, message, restores, text } the draft starts from
    this.latest = null; // the newest version number the server reported (a backtest's live_version, a 412)
    this.fileManaged = false;
    this.you = null; // the key's hash prefix, to say "you" in the history
    this.listeners = [];
    this.textListeners = [];
    this.statusTimer = null;
    this.differs = false;
    this.buildBar();
    this.buildDialog();
    this.render();
  }

  /** Calls `fn()` whenever the connection or the live version changes. */
  onChange(fn) {
    this.listeners.push(fn);
  }

  changed() {
    this.render();
    for (const fn of this.listeners) fn();
  }

  get connected() {
    return this.client !== null;
  }

  /** The server as the status bar names it: host and port. */
  get hostName() {
    return this.client ? this.client.base.replace(/^https?:\/\//, '') : '';
  }

  /** What the draft is published against: "test data" or "live data". */
  get modeWords() {
    return this.client?.mode === 'live' ? 'live data' : 'test data';
  }

  // ------------------------------------------------------------ the status bar

  buildBar() {
    const plug = '<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true"><path fill="none" stroke="currentColor" stroke-width="1.6" d="M5.5 1.5v4m5-4v4M3.5 5.5h9v2.5a4.5 4.5 0 0 1-9 0zM8 12.5v2.5"/></svg>';
    this.connectBtn = h('button', { type: 'button', class: 'btn sb-connect', title: 'Backtest on real sessions, publish, history: connect to a nudge-rules server',
      onclick: () => this.openDialog(), html: `${plug}<span class="btn-text">Connect to a server</span>` });
    this.status = h('span', { class: 'sb-status', role: 'status', 'aria-live': 'polite' });
    this.publishBtn = h('button', { type: 'button', class: 'btn btn-small btn-primary sb-publish', onclick: () => this.action('publish') }, 'Publish…');
    this.historyBtn = h('button', { type: 'button', class: 'btn btn-small sb-history', onclick: () => this.action('history') }, 'History');
    this.disconnectBtn = h('button', { type: 'button', class: 'btn btn-small btn-quiet sb-disconnect', onclick: () => this.disconnect() }, 'Disconnect');
    this.bar.replaceChildren(this.connectBtn, this.status, this.publishBtn, this.historyBtn, this.disconnectBtn);
    this.actions = {}; // publish, history: set by publish-panel.js and history-panel.js
  }

  /** Publish and History: refused with the reason when the site's config is a file. */
  action(name) {
    if (this.fileManaged) {
      this.host.notify(`${name === 'publish' ? 'Publish' : 'History'} is not available: this site’s config is a file on the server, ` +
        'so it is changed there, not from the editor. Backtesting on real sessions works.');
      return;
    }
    this.actions[name]?.();
  }

  render() {
    const on = this.connected;
    this.bar.classList.toggle('connected', on);
    document.body.classList.toggle('server-connected', on); // the taller top bar (connect.css)
    this.connectBtn.hidden = on;
    this.status.hidden = !on;
    this.publishBtn.hidden = !on;
    this.historyBtn.hidden = !on;
    this.disconnectBtn.hidden = !on;
    if (!on) {
      this.status.replaceChildren();
      return;
    }
    for (const btn of [this.publishBtn, this.historyBtn]) {
      btn.setAttribute('aria-disabled', String(this.fileManaged));
      btn.title = this.fileManaged ? 'Not available: this site’s config is a file on the server' : '';
    }
    this.publishBtn.title ||= 'Review the changes against the live version, then publish';
    this.historyBtn.title ||= 'Every published version: compare any two, restore one';
    const parts = [h('span', { class: 'sb-dot', 'aria-hidden': 'true' }),
      h('span', { class: 'sb-host', title: this.client.base }, this.hostName),
      h('span', { class: `pill sb-mode ${this.client.mode === 'live' ? 'pill-fire' : ''}`, title: `This key reads and publishes the site’s ${this.modeWords}` }, this.client.mode)];
    if (this.fileManaged) {
      parts.push(h('span', { class: 'sb-live' }, 'config file on the server'));
    } else if (!this.live) {
      parts.push(h('span', { class: 'sb-live' }, 'nothing published yet'));
    } else {
      parts.push(h('span', { class: 'sb-live' }, `live v${this.live.version}`),
        h('span', { class: 'sb-when' }, `published ${when(this.live.published_at)} by ${this.who(this.live.published_by)}`));
      if (this.latest && this.latest > this.live.version) {
        parts.push(h('span', { class: 'pill pill-warning sb-newer', title: `Version ${this.latest} was published after the version ${this.live.version} your draft starts from` },
          `v${this.latest} published since`));
      }
    }
    if (this.live || this.fileManaged) {
      parts.push(this.differs
        ? h('span', { class: 'pill pill-warning sb-draft', 'data-differs': 'true' }, 'draft differs')
        : h('span', { class: 'pill pill-ok sb-draft', 'data-differs': 'false' }, 'draft = live'));
    }
    this.status.replaceChildren(...parts);
  }

  /** Calls `fn()` on every change of the editor's text while connected (real-sessions.js). */
  onText(fn) {
    this.textListeners.push(fn);
  }

  /**
   * The editor's text changed (app.js): the status bar's "draft differs" follows once typing
   * pauses, and so does the backtest.
   */
  textChanged() {
    if (!this.connected) return;
    for (const fn of this.textListeners) fn();
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => this.compareDraft(), STATUS_MS);
  }

  compareDraft() {
    const differs = this.live ? !sameConfig(this.host.text(), this.live.text) : this.fileManaged ? !sameConfig(this.host.text(), this.fileText) : true;
    if (differs !== this.differs) {
      this.differs = differs;
      this.render();
    }
  }

  /** A newer version seen (a backtest's live_version, a refused publish): shown in the bar. */
  sawVersion(n) {
    if (!Number.isInteger(n) || this.fileManaged) return;
    if (n !== this.latest) {
      this.latest = n;
      this.render();
    }
  }

  /** The draft now starts from `live` (connected, opened, published, restored, conflict reviewed). */
  setLive(live) {
    this.live = live;
    this.latest = live?.version ?? null;
    this.compareDraft();
    this.changed();
  }

  // ------------------------------------------------------------ the connect dialog

  buildDialog() {
    this.address = h('input', { id: 'cx-address', type: 'text', value: DEFAULT_ADDRESS, spellcheck: 'false', autocomplete: 'off', inputmode: 'url' });
    this.key = h('input', { id: 'cx-key', type: 'password', spellcheck: 'false', autocomplete: 'off', placeholder: 'sk_test_… or sk_live_…' });
    this.error = h('p', { class: 'cx-error', role: 'alert', hidden: true });
    this.submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Connect');
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => this.dialog.close() }, 'Cancel');
    const form = h('form', { class: 'cx-form' },
      h('label', { for: 'cx-address' }, 'Server address'), this.address,
      h('label', { for: 'cx-key' }, 'Secret key of the site'), this.key,
      h('p', { class: 'hint' }, 'The key stays in this tab’s memory only: it is never saved, put in a share link or logged, and it is forgotten when you close or reload the tab. A test key (sk_test_…) works on the site’s test data; a live key (sk_live_…) publishes to real visitors.'),
      this.error,
      h('div', { class: 'dialog-actions' }, cancel, this.submit));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.connect(this.address.value, this.key.value);
    });
    this.dialog = h('dialog', { class: 'dialog cx-dialog', 'aria-labelledby': 'cx-title' },
      h('h2', { id: 'cx-title' }, 'Connect to a server'),
      h('p', {}, 'Backtest your draft on the site’s real sessions, publish it, and see who changed what.'),
      form);
    // Cancelled or connected: the key leaves the field (when connected, it is in the client only).
    this.dialog.addEventListener('close', () => {
      this.key.value = '';
    });
    document.body.append(this.dialog);
  }

  openDialog() {
    this.showError(null);
    this.dialog.showModal();
    (this.address.value ? this.key : this.address).focus();
  }

  showError(text) {
    this.error.hidden = !text;
    this.error.textContent = text ?? '';
  }

  /**
   * Connects: reads the live config with the key (GET /v1/config). Resolves to true when
   * connected; otherwise the dialog says why, in plain words.
   */
  async connect(address, key) {
    this.showError(null);
    let client;
    try {
      normalizeAddress(address);
      const checked = checkKey(key);
      if (!checked.ok) throw new Error(checked.message);
      client = createClient(address, key);
    } catch (err) {
      this.showError(err.message);
      return false;
    }
    this.submit.disabled = true;
    this.submit.textContent = 'Connecting…';
    try {
      const live = await client.getConfig();
      this.client = client;
      this.key.value = ''; // the key lives in the client's closure only
      this.fileManaged = live?.managed_by === 'file';
      this.fileText = this.fileManaged ? live.text : null;
      this.you = await client.hashPrefix().catch(() => null);
      this.dialog.close();
      this.setLive(this.fileManaged ? null : live);
      this.announce(live);
      return true;
    } catch (err) {
      this.showError(plainError(err, { base: client.base, what: 'Connecting' }));
      return false;
    } finally {
      this.submit.disabled = false;
      this.submit.textContent = 'Connect';
    }
  }

  /** Says what the connection found, offering the live config when the draft differs. */
  announce(live) {
    const where = `Connected to ${this.hostName} (${this.modeWords})`;
    if (this.fileManaged) {
      this.host.notify(`${where}. This site’s config is a file on the server: backtest works, publish and history do not.`);
      return;
    }
    if (!live) {
      this.host.notify(`${where}. Nothing is published yet: your first publish becomes version 1.`);
      return;
    }
    const text = `${where}: live version ${live.version}${this.differs ? '; your draft differs from it' : ', the same as your draft'}.`;
    this.host.notify(text, this.differs ? { label: `Open version ${live.version}`, run: () => this.openVersion(live) } : null);
  }

  /** Opens a version's config in the editor (asking first when there are edits). */
  async openVersion(version) {
    const label = `version ${version.version} from ${this.hostName}`;
    if (await this.host.load(version.text, label)) this.setLive(this.live && this.live.version > version.version ? this.live : this.liveOf(version));
  }

  /** The fields of a version kept as `live`. */
  liveOf(v) {
    return { version: v.version, managed_by: 'api', published_at: v.published_at, published_by: v.published_by, message: v.message, restores: v.restores, text: v.text };
  }

  disconnect() {
    this.client = null; // and with it the key
    this.live = null;
    this.latest = null;
    this.fileManaged = false;
    this.fileText = null;
    this.you = null;
    this.differs = false;
    this.changed();
    this.host.notify('Disconnected: the key is forgotten.');
  }

  /**
   * Who published, from the key-hash prefix: "you (key ceb9af28)" for this key, else "key
   * 3f9a0c1e" ("someone with key 3f9a0c1e" to start a sentence).
   */
  who(prefix, sentence = false) {
    if (!prefix) return sentence ? 'someone' : 'unknown';
    if (prefix === this.you) return `you (key ${prefix})`;
    return sentence ? `someone with key ${prefix}` : `key ${prefix}`;
  }
}
