// The visitor-session controls: page URL (with the storefront's pages), intent score, idle time
// (slider on the map's scale, exact milliseconds, and a play button that lets it run), and what
// docs/contract/caps.md adds to a visit: exit intent, the visitor's id (which decides control groups) and the
// nudges of earlier in the visit or of earlier visits (`history`, which caps read).

import { STORE_PAGES } from './storefront.js';
import { LIMITS } from './limits.js';
import { clamp, formatMs, h, idleScale } from './util.js';

export const DEFAULT_VISITOR_ID = 'vis_demo';
/** @type {{intent: number, idle: number, url: string, exitIntent: boolean, visitorId: string, history: HistoryEntry[]}} */
export const DEFAULT_STATE = { intent: 82, idle: 9000, url: '/products/linen-shirt', exitIntent: false, visitorId: DEFAULT_VISITOR_ID, history: [] };

/**
 * One earlier nudge of the visitor (docs/contract/caps.md `session_state.history[]`).
 * @typedef {{rule_id: string, ms_ago: number, this_session: boolean, outcome?: string, held_out?: boolean}} HistoryEntry
 */

const DAY_MS = 86_400_000;
/** "Earlier this visit": a minute ago. */
const THIS_VISIT_MS = 60_000;

/** The kinds of earlier nudge the simulator adds, each as the entry it makes. */
export const HISTORY_KINDS = [
  { value: 'shown', label: 'shown earlier this visit', entry: () => ({ ms_ago: THIS_VISIT_MS, this_session: true, outcome: 'shown' }) },
  { value: 'closed', label: 'closed earlier this visit', entry: () => ({ ms_ago: THIS_VISIT_MS, this_session: true, outcome: 'dismissed' }) },
  { value: 'closed-days', label: 'closed in a visit … days ago', entry: (days) => ({ ms_ago: Math.round(days * DAY_MS), this_session: false, outcome: 'dismissed' }) },
];

const OUTCOME_WORDS = { shown: 'shown', clicked: 'clicked', dismissed: 'closed', chat_opened: 'chat opened' };

/** An earlier nudge in words: "shown earlier this visit", "closed 2 days ago". */
export function historyWords(e) {
  const what = e.held_out ? 'held out (control group)' : OUTCOME_WORDS[e.outcome] ?? 'shown';
  if (e.this_session) return `${what} earlier this visit`;
  const days = e.ms_ago / DAY_MS;
  const ago = days >= 1 ? `${Math.floor(days)} ${Math.floor(days) === 1 ? 'day' : 'days'} ago` : `${formatMs(e.ms_ago)} ago`;
  return `${what} in a visit ${ago}`;
}

/** Entries of a history as given (a share link, a scenario), kept only when they have the fields. */
export function cleanHistory(list) {
  if (!Array.isArray(list)) return [];
  return list.filter((e) => e && typeof e === 'object' && typeof e.rule_id === 'string' && Number.isInteger(e.ms_ago) && typeof e.this_session === 'boolean')
    .map((e) => {
      /** @type {HistoryEntry} */
      const out = { rule_id: e.rule_id, ms_ago: e.ms_ago, this_session: e.this_session };
      if (typeof e.outcome === 'string') out.outcome = e.outcome;
      if (e.held_out === true) out.held_out = true;
      return out;
    });
}

export class SessionControls {
  /** @param {{els: object, onChange: (patch: object, source?: HTMLElement) => void}} options */
  constructor(els, onChange) {
    this.els = els;
    this.onChange = onChange;
    this.state = { ...DEFAULT_STATE, history: [] };
    this.ruleIds = [];
    this.playing = false;
    this.playBase = 0;
    this.playStart = 0;
    this.lastFrame = 0;

    for (const p of STORE_PAGES) els.pageList.append(h('option', { value: p.url }, p.label));
    els.pageSelect.append(h('option', { value: '' }, 'Storefront pages…'),
      ...STORE_PAGES.map((p) => h('option', { value: p.url }, `${p.label}  ${p.url}`)));

    els.pageUrl.addEventListener('input', () => this.set({ url: els.pageUrl.value }, els.pageUrl));
    els.pageSelect.addEventListener('change', () => {
      if (els.pageSelect.value) this.set({ url: els.pageSelect.value });
    });
    els.intent.addEventListener('input', () => this.set({ intent: Number(els.intent.value) }, els.intent));
    els.idle.addEventListener('input', () => {
      this.set({ idle: idleScale.snap(idleScale.fromUnit(Number(els.idle.value) / 1000)) }, els.idle);
      this.rebase();
    });
    els.idleMs.addEventListener('input', () => {
      const v = Number(els.idleMs.value);
      if (Number.isFinite(v) && els.idleMs.value !== '') {
        this.set({ idle: v }, els.idleMs);
        this.rebase();
      }
    });
    els.idleMs.addEventListener('blur', () => this.render());
    els.play.addEventListener('click', () => this.setPlaying(!this.playing));
    els.idleReset.addEventListener('click', () => {
      this.set({ idle: 0 });
      this.rebase();
    });

    // docs/contract/caps.md: exit intent, the visitor id, earlier nudges.
    els.exitIntent.addEventListener('change', () => this.set({ exitIntent: els.exitIntent.checked }, els.exitIntent));
    els.visitorId.addEventListener('input', () => this.set({ visitorId: els.visitorId.value.trim() }, els.visitorId));
    els.visitorId.addEventListener('blur', () => this.render());
    els.historyKind.replaceChildren(...HISTORY_KINDS.map((k) => h('option', { value: k.value }, k.label)));
    const daysShown = () => {
      els.historyDaysBox.hidden = els.historyKind.value !== 'closed-days';
    };
    els.historyKind.addEventListener('change', daysShown);
    daysShown();
    els.historyAdd.addEventListener('click', () => {
      const kind = HISTORY_KINDS.find((k) => k.value === els.historyKind.value) ?? HISTORY_KINDS[0];
      const rule = els.historyRule.value;
      if (!rule) return;
      const days = clamp(Number(els.historyDays.value) || 0, 0, 365);
      this.set({ history: [...this.state.history, { rule_id: rule, ...kind.entry(days) }] });
    });
  }

  /** The config's rule ids, for the "earlier nudge" rule choice. */
  setRuleIds(ids) {
    const list = ids.filter((id) => typeof id === 'string' && id);
    if (list.join('\u0000') === this.ruleIds.join('\u0000')) return;
    this.ruleIds = list;
    const sel = this.els.historyRule;
    const before = sel.value;
    sel.replaceChildren(...list.map((id) => h('option', { value: id }, id)));
    if (list.includes(before)) sel.value = before;
    this.els.historyAdd.disabled = list.length === 0;
  }

  /** Takes one earlier nudge out of the visit. */
  removeHistory(index) {
    const history = this.state.history.filter((_, i) => i !== index);
    this.set({ history });
    // Focus stays in the list: the next entry's Remove, else the Add button.
    const buttons = this.els.historyList.querySelectorAll('button');
    (buttons[Math.min(index, buttons.length - 1)] ?? this.els.historyAdd).focus();
  }

  /** Changes the state, puts it into the controls (except `source`, being edited) and reports it. */
  set(patch, source = null, { fromPlay = false } = {}) {
    const s = this.state;
    if ('intent' in patch) s.intent = clamp(Math.round(patch.intent), 0, 100);
    if ('idle' in patch) s.idle = clamp(Math.round(patch.idle), 0, LIMITS.idle_ms);
    if ('url' in patch) s.url = String(patch.url);
    if ('exitIntent' in patch) s.exitIntent = patch.exitIntent === true;
    if ('visitorId' in patch) s.visitorId = String(patch.visitorId ?? '');
    if ('history' in patch) s.history = cleanHistory(patch.history);
    if (!fromPlay && 'idle' in patch) this.playBase = s.idle;
    this.render(source);
    this.onChange(patch);
  }

  /** Puts the state into the controls, except into `source`, the control being edited. */
  render(source = null) {
    const { els, state: s } = this;
    if (source !== els.intent) els.intent.value = String(s.intent);
    els.intentOut.textContent = String(s.intent);
    if (source !== els.idle) els.idle.value = String(Math.round(idleScale.toUnit(s.idle) * 1000));
    els.idle.setAttribute('aria-valuetext', formatMs(s.idle));
    els.idleOut.textContent = formatMs(s.idle);
    if (source !== els.idleMs) els.idleMs.value = String(s.idle);
    if (source !== els.pageUrl) els.pageUrl.value = s.url;
    const match = STORE_PAGES.find((p) => p.url === s.url);
    els.pageSelect.value = match ? match.url : '';
    els.exitIntent.checked = s.exitIntent;
    if (source !== els.visitorId) els.visitorId.value = s.visitorId;
    const key = JSON.stringify(s.history);
    if (key !== this.historyKey) {
      this.historyKey = key;
      els.historyList.replaceChildren(...s.history.map((e, i) => h('li', { class: 'history-item' },
        h('span', {}, h('b', {}, e.rule_id), ` ${historyWords(e)}`),
        h('button', {
          type: 'button', class: 'icon-btn small', 'aria-label': `Remove the earlier nudge: ${e.rule_id} ${historyWords(e)}`,
          title: 'Remove', onclick: () => this.removeHistory(i),
        }, '×'))));
      els.historyEmpty.hidden = s.history.length > 0;
    }
  }

  /** The session_state of the preview request. */
  sessionState() {
    const s = this.state;
    /** @type {{intent_score: number, page_url: string, idle_ms: number, exit_intent?: boolean, visitor_id?: string, history?: HistoryEntry[]}} */
    const state = { intent_score: s.intent, page_url: s.url, idle_ms: s.idle };
    // docs/contract/caps.md's fields only when they say something: the API document's three-field request
    // stays what it was for a visit without them.
    if (s.exitIntent) state.exit_intent = true;
    if (s.visitorId) state.visitor_id = s.visitorId;
    // Newest first, as docs/contract/caps.md lists them.
    if (s.history.length) state.history = [...s.history].sort((a, b) => Number(b.this_session) - Number(a.this_session) || a.ms_ago - b.ms_ago);
    return state;
  }

  setPlaying(on) {
    const { els } = this;
    this.playing = on;
    els.play.setAttribute('aria-pressed', String(on));
    els.play.setAttribute('aria-label', on ? 'Pause idle time' : 'Play: let idle time run');
    els.play.classList.toggle('playing', on);
    if (on) {
      if (this.state.idle >= LIMITS.idle_ms) this.set({ idle: 0 });
      this.playBase = this.state.idle;
      this.playStart = performance.now();
      requestAnimationFrame((t) => this.tick(t));
    }
  }

  tick(now) {
    if (!this.playing) return;
    const idle = Math.min(LIMITS.idle_ms, this.playBase + (now - this.playStart));
    if (now - this.lastFrame >= 40 || idle >= LIMITS.idle_ms) {
      this.lastFrame = now;
      this.set({ idle }, null, { fromPlay: true });
    }
    if (idle >= LIMITS.idle_ms) {
      this.setPlaying(false);
      return;
    }
    requestAnimationFrame((t) => this.tick(t));
  }

  /** When the person moves idle time while playing, play on from there. */
  rebase() {
    if (this.playing) {
      this.playBase = this.state.idle;
      this.playStart = performance.now();
    }
  }
}
