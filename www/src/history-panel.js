// History (issue 22, docs/contract/versions.md): the published versions of the site and mode, newest first, each
// with when, who (the first 8 hex digits of the publishing key's hash) and the message; the line
// diff between any two; "Open in the editor"; and "Restore", which publishes an earlier version's
// config again as a new version naming the one it restores.

import { plainError, when } from './connect.js';
import { configDiff, versionLine } from './publish-panel.js';
import { h } from './util.js';

const PAGE = 20;

export class HistoryDialog {
  /**
   * @param {import('./connect.js').Connection} connection
   * @param {{ notify: (text, action?) => void }} host
   */
  constructor(connection, host) {
    this.connection = connection;
    this.host = host;
    this.versions = []; // newest first, without configs
    this.cursor = null;
    this.configs = new Map(); // version -> its data with `text`, read once
    this.dialog = h('dialog', { class: 'dialog dialog-wide hs-dialog', 'aria-labelledby': 'hs-title' });
    document.body.append(this.dialog);
    connection.actions.history = () => this.open();
    connection.onChange(() => {
      if (!connection.connected) this.configs.clear();
    });
  }

  async open() {
    if (!this.connection.connected) return;
    this.build();
    if (!this.dialog.open) this.dialog.showModal();
    await this.reload();
    this.closeBtn.focus();
  }

  build() {
    const c = this.connection;
    this.rows = h('tbody');
    this.more = h('button', { type: 'button', class: 'btn btn-quiet', hidden: true, onclick: () => this.load() }, 'Show older versions');
    this.status = h('div', { class: 'hs-status', role: 'status' });
    this.from = h('select', { id: 'hs-from', 'aria-label': 'Compare from version' });
    this.to = h('select', { id: 'hs-to', 'aria-label': 'Compare to version' });
    this.diff = h('div', { class: 'hs-diff' });
    const compare = h('div', { class: 'hs-compare' },
      h('span', {}, 'Compare'), this.from, h('span', {}, 'with'), this.to,
      h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'compare', onclick: () => this.compare(Number(this.from.value), Number(this.to.value)) }, 'Show the changes'));
    this.closeBtn = h('button', { type: 'button', class: 'btn', onclick: () => this.dialog.close() }, 'Close');
    this.dialog.replaceChildren(
      h('h2', { id: 'hs-title' }, `History of ${c.hostName} (${c.modeWords})`),
      h('p', { class: 'hint' }, 'Newest first. “Who” is the first 8 hex digits of the publishing key’s hash (the key itself is never stored). Restore publishes an earlier version again, as a new version.'),
      this.status,
      h('div', { class: 'table-scroll hs-scroll', tabindex: '0', role: 'region', 'aria-label': 'Published versions' },
        h('table', { class: 'hs-table' },
          h('thead', {}, h('tr', {}, ...['Version', 'When', 'Who', 'Message', ''].map((t) => h('th', { scope: 'col' }, t)))),
          this.rows)),
      this.more,
      compare,
      this.diff,
      h('div', { class: 'dialog-actions' }, this.closeBtn));
  }

  async reload() {
    this.versions = [];
    this.cursor = null;
    this.rows.replaceChildren();
    this.diff.replaceChildren();
    await this.load();
  }

  /** Reads the next page of versions (the first when none is read). */
  async load() {
    const c = this.connection;
    this.status.textContent = 'Reading the history…';
    let page;
    try {
      page = await c.client.versions({ limit: PAGE, cursor: this.cursor });
    } catch (err) {
      this.status.textContent = plainError(err, { base: c.client?.base, what: 'Reading the history' });
      return;
    }
    this.versions.push(...page.data);
    this.cursor = page.next_cursor;
    this.more.hidden = !page.has_more;
    if (this.versions.length && !c.fileManaged) c.sawVersion(this.versions[0].version);
    this.status.textContent = this.versions.length ? '' : 'Nothing is published yet: Publish makes version 1.';
    this.draw();
  }

  draw() {
    const latest = this.versions[0]?.version;
    this.rows.replaceChildren(...this.versions.map((v) => this.row(v, v.version === latest)));
    const options = (selected) => this.versions.map((v) => h('option', { value: String(v.version), selected: v.version === selected }, `version ${v.version}`));
    this.from.replaceChildren(...options(this.versions[1]?.version ?? latest));
    this.to.replaceChildren(...options(latest));
  }

  row(v, isLatest) {
    const c = this.connection;
    const actions = [];
    if (v.version > 1) {
      actions.push(h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'changes', title: `What version ${v.version} changed from version ${v.version - 1}`,
        onclick: () => this.compare(v.version - 1, v.version) }, 'Changes'));
    }
    actions.push(h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'open', title: `Open version ${v.version} in the editor`,
      onclick: () => this.openInEditor(v.version) }, 'Open'));
    if (!isLatest) {
      actions.push(h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'restore', title: `Publish version ${v.version} again`,
        onclick: () => this.confirmRestore(v) }, 'Restore'));
    }
    const message = [v.message ?? h('span', { class: 'muted' }, 'no message')];
    if (v.restores && !(v.message ?? '').includes(`version ${v.restores}`)) {
      message.push(h('span', { class: 'muted' }, ` (restores version ${v.restores})`));
    }
    return h('tr', { 'data-version': String(v.version), class: isLatest ? 'live' : '' },
      h('th', { scope: 'row' }, `v${v.version}`, isLatest ? h('span', { class: 'pill pill-ok' }, 'live') : null),
      h('td', {}, h('time', { datetime: v.published_at }, when(v.published_at))),
      h('td', {}, h('code', {}, c.who(v.published_by))),
      h('td', { class: 'hs-message' }, ...message),
      h('td', { class: 'hs-actions' }, ...actions));
  }

  /** One version with its config, read once. */
  async config(n) {
    if (!this.configs.has(n)) this.configs.set(n, this.connection.client.version(n));
    try {
      return await this.configs.get(n);
    } catch (err) {
      this.configs.delete(n);
      throw err;
    }
  }

  /** The line diff from version `a` to version `b`, under the table. */
  async compare(a, b) {
    if (!a || !b) return;
    this.diff.replaceChildren(h('p', { class: 'hint' }, `Reading versions ${a} and ${b}…`));
    let va;
    let vb;
    try {
      [va, vb] = await Promise.all([this.config(a), this.config(b)]);
    } catch (err) {
      this.diff.replaceChildren(h('p', {}, plainError(err, { base: this.connection.client?.base, what: 'Reading the versions' })));
      return;
    }
    const d = configDiff(va.text, vb.text, { from: `version ${a}`, to: `version ${b}` });
    this.diff.replaceChildren(h('h3', {}, `Version ${a} → version ${b}`), h('p', { class: 'hint' }, d.sentence), d.pre);
    this.diff.scrollIntoView({ block: 'nearest' });
  }

  /** Opens version `n` in the editor (the editor asks before replacing edits). */
  async openInEditor(n) {
    let v;
    try {
      v = await this.config(n);
    } catch (err) {
      this.status.textContent = plainError(err, { base: this.connection.client?.base, what: 'Reading the version' });
      return;
    }
    this.dialog.close();
    await this.connection.openVersion(v);
  }

  /** Asks before a restore, in the dialog. */
  confirmRestore(v) {
    const latest = this.versions[0]?.version ?? 0;
    const yes = h('button', { type: 'button', class: 'btn btn-danger', 'data-act': 'confirm-restore', onclick: () => this.restore(v.version, latest) }, `Restore version ${v.version}`);
    const no = h('button', { type: 'button', class: 'btn', onclick: () => this.status.replaceChildren() }, `Keep version ${latest}`);
    this.status.replaceChildren(h('div', { class: 'hs-confirm' },
      h('p', {}, `Publish ${versionLine(this.connection, v)} again, as version ${latest + 1}? Visitors get it within 2 seconds. ` +
        'Scenarios are not checked for a restore: it puts back a version that was live before.'),
      h('div', { class: 'dialog-actions' }, no, yes)));
    yes.focus();
  }

  async restore(n, latest) {
    const c = this.connection;
    this.status.textContent = `Restoring version ${n}…`;
    let v;
    try {
      const old = await this.config(n);
      v = await c.client.publish({ config: old.text, restores: n, message: `Restore version ${n}` }, latest);
    } catch (err) {
      if (err.kind === 'conflict') {
        await this.reload();
        this.status.textContent = `Not restored: someone published version ${this.versions[0]?.version} meanwhile. The list is up to date now; restore again if you still want version ${n}.`;
        return;
      }
      this.status.textContent = `Not restored. ${plainError(err, { base: c.client?.base, what: 'Restoring' })}`;
      return;
    }
    this.configs.set(v.version, Promise.resolve(v));
    c.setLive(c.liveOf(v));
    await this.reload();
    this.status.textContent = `Version ${n} is live again, as version ${v.version}.`;
    this.host.notify(`Restored version ${n} as version ${v.version} on ${c.hostName}.`, {
      label: 'Open it in the editor', run: () => c.openVersion(v),
    });
  }
}
