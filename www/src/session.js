// The visitor-session controls: page URL (with the storefront's pages), intent score, idle time
// (slider on the map's scale, exact milliseconds, and a play button that lets it run).

import { STORE_PAGES } from './storefront.js';
import { LIMITS } from './limits.js';
import { clamp, formatMs, h, idleScale } from './util.js';

export const DEFAULT_STATE = { intent: 82, idle: 9000, url: '/products/linen-shirt' };

export class SessionControls {
  /** @param {{els: object, onChange: (patch: object, source?: HTMLElement) => void}} options */
  constructor(els, onChange) {
    this.els = els;
    this.onChange = onChange;
    this.state = { ...DEFAULT_STATE };
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
  }

  /** Changes the state, puts it into the controls (except `source`, being edited) and reports it. */
  set(patch, source = null, { fromPlay = false } = {}) {
    const s = this.state;
    if ('intent' in patch) s.intent = clamp(Math.round(patch.intent), 0, 100);
    if ('idle' in patch) s.idle = clamp(Math.round(patch.idle), 0, LIMITS.idle_ms);
    if ('url' in patch) s.url = String(patch.url);
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
  }

  /** The session_state of the preview request. */
  sessionState() {
    const s = this.state;
    return { intent_score: s.intent, page_url: s.url, idle_ms: s.idle };
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
