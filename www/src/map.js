// The decision map: which rule wins over the intent score x idle time plane for one page, drawn
// from the engine's exact rectangles on a canvas. Idle time runs along x on the shared idle
// scale (linear to 1 min, logarithmic to 24 h); intent score runs up the y axis.

import { ruleColor } from './colors.js';
import { LIMITS } from './limits.js';
import { NO_NUDGE_COLOR, clamp, formatMs, idleScale } from './util.js';

const MARGIN = { top: 12, right: 16, bottom: 46, left: 46 };

export class DecisionMapView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{onPick: (intent: number, idleMs: number) => void, tooltip: HTMLElement,
   *          describe: (region: object) => string}} options
   */
  constructor(canvas, { onPick, tooltip, describe }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.onPick = onPick;
    this.tooltip = tooltip;
    this.describe = describe;
    this.regions = [];
    this.message = null; // text drawn over an empty map (rejected URL, loading)
    this.quietZone = null;
    this.state = { intent: 0, idle: 0 };
    this.width = 0;
    this.height = 0;
    this.dragging = false;

    new ResizeObserver(() => this.resize()).observe(canvas);
    canvas.addEventListener('pointerdown', (e) => {
      if (!this.regions.length) return;
      this.dragging = true;
      canvas.setPointerCapture(e.pointerId);
      this.pick(e);
    });
    canvas.addEventListener('pointermove', (e) => {
      if (this.dragging) this.pick(e);
      this.hover(e);
    });
    const stop = () => {
      this.dragging = false;
    };
    canvas.addEventListener('pointerup', stop);
    canvas.addEventListener('pointercancel', stop);
    canvas.addEventListener('pointerleave', () => {
      this.tooltip.hidden = true;
    });
    canvas.addEventListener('keydown', (e) => this.onKey(e));
  }

  resize() {
    const rect = this.canvas.getBoundingClientRect();
    if (!rect.width) return;
    const dpr = window.devicePixelRatio || 1;
    this.width = rect.width;
    this.height = rect.height;
    this.canvas.width = Math.round(rect.width * dpr);
    this.canvas.height = Math.round(rect.height * dpr);
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.draw();
  }

  /** New regions (a new config or page). */
  setMap({ regions, quietZone = null, message = null }) {
    this.regions = regions || [];
    this.quietZone = quietZone;
    this.message = message;
    this.canvas.dataset.regions = String(this.regions.length);
    this.tooltip.hidden = true; // it described the old regions
    this.draw();
  }

  setState(intent, idle) {
    if (this.state.intent === intent && this.state.idle === idle) return;
    this.state = { intent, idle };
    this.draw();
  }

  plot() {
    return {
      x: MARGIN.left,
      y: MARGIN.top,
      w: Math.max(10, this.width - MARGIN.left - MARGIN.right),
      h: Math.max(10, this.height - MARGIN.top - MARGIN.bottom),
    };
  }

  xOf(ms, p) {
    return p.x + idleScale.toUnit(ms) * p.w;
  }

  /** Top edge of intent band `score` (bands are one score tall; 100 at the top). */
  yOf(score, p) {
    return p.y + p.h - (score / 101) * p.h;
  }

  regionAt(intent, idle) {
    return this.regions.find(
      (r) => intent >= r.min_intent_score && intent <= r.max_intent_score && idle >= r.min_idle_ms && idle <= r.max_idle_ms,
    );
  }

  draw() {
    const { ctx } = this;
    if (!this.width) return;
    const p = this.plot();
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';

    // Regions.
    ctx.fillStyle = NO_NUDGE_COLOR;
    ctx.fillRect(p.x, p.y, p.w, p.h);
    const labels = [];
    for (const r of this.regions) {
      const x0 = this.xOf(r.min_idle_ms, p);
      const x1 = r.max_idle_ms >= LIMITS.idle_ms ? p.x + p.w : this.xOf(r.max_idle_ms + 1, p);
      const y0 = this.yOf(r.max_intent_score + 1, p);
      const y1 = this.yOf(r.min_intent_score, p);
      if (r.rule_index === null || r.rule_index === undefined) {
        ctx.fillStyle = NO_NUDGE_COLOR;
      } else {
        ctx.fillStyle = ruleColor(r.rule_id);
      }
      ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
      if (r.rule_id && x1 - x0 > 64 && y1 - y0 > 18) labels.push({ text: r.rule_id, x0, x1, y0, y1 });
    }
    // Thin white seams between rectangles, so each one reads as a region.
    ctx.strokeStyle = 'rgba(255,255,255,0.9)';
    ctx.lineWidth = 1;
    for (const r of this.regions) {
      const x0 = this.xOf(r.min_idle_ms, p);
      const x1 = r.max_idle_ms >= LIMITS.idle_ms ? p.x + p.w : this.xOf(r.max_idle_ms + 1, p);
      const y0 = this.yOf(r.max_intent_score + 1, p);
      const y1 = this.yOf(r.min_intent_score, p);
      ctx.strokeRect(Math.round(x0) + 0.5, Math.round(y0) + 0.5, Math.round(x1 - x0), Math.round(y1 - y0));
    }
    // Region labels.
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", sans-serif';
    for (const l of labels) {
      const maxWidth = l.x1 - l.x0 - 8;
      let text = l.text;
      while (text.length > 3 && ctx.measureText(text).width > maxWidth) text = text.slice(0, -2) + '…';
      if (ctx.measureText(text).width > maxWidth) continue;
      ctx.fillStyle = 'rgba(255,255,255,0.95)';
      ctx.fillText(text, (l.x0 + l.x1) / 2, (l.y0 + l.y1) / 2);
    }

    // The knee of the idle axis: where the scale turns logarithmic.
    const knee = this.xOf(idleScale.LINEAR_MAX, p);
    ctx.save();
    ctx.setLineDash([3, 3]);
    ctx.strokeStyle = 'rgba(30,35,50,0.35)';
    ctx.beginPath();
    ctx.moveTo(Math.round(knee) + 0.5, p.y);
    ctx.lineTo(Math.round(knee) + 0.5, p.y + p.h);
    ctx.stroke();
    ctx.restore();

    this.drawAxes(p);

    if (this.message) {
      this.drawBanner(p, this.message);
    } else if (this.quietZone) {
      this.drawBanner(p, `Quiet zone ${this.quietZone.pattern}: no nudge ever fires on this page`);
    }

    if (this.regions.length) this.drawMarker(p);
  }

  drawAxes(p) {
    const { ctx } = this;
    ctx.fillStyle = '#5b6275';
    ctx.strokeStyle = '#c3c8d4';
    ctx.lineWidth = 1;
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
    // Intent axis.
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let s = 0; s <= 100; s += 20) {
      const y = this.yOf(s + 0.5, p);
      ctx.fillText(String(s), p.x - 8, y);
      ctx.beginPath();
      ctx.moveTo(p.x - 4, Math.round(y) + 0.5);
      ctx.lineTo(p.x, Math.round(y) + 0.5);
      ctx.stroke();
    }
    ctx.save();
    ctx.translate(12, p.y + p.h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText('Intent score', 0, 0);
    ctx.restore();
    // Idle axis: tick labels that would touch a label already drawn are left out (0 and 24 h
    // first, then left to right), so narrow maps (a phone) never print labels over each other.
    ctx.textBaseline = 'top';
    const ticks = idleScale.ticks.map(([ms, label]) => {
      const x = this.xOf(ms, p);
      const w = ctx.measureText(label).width;
      const x0 = ms === 0 ? x - 2 : ms === LIMITS.idle_ms ? x - w : x - w / 2;
      return { ms, label, x, x0, x1: x0 + w };
    });
    const order = [ticks[0], ticks[ticks.length - 1], ...ticks.slice(1, -1)];
    const drawn = [];
    for (const t of order) {
      if (drawn.some((d) => t.x0 < d.x1 + 6 && d.x0 < t.x1 + 6)) continue;
      drawn.push(t);
    }
    drawn.sort((a, b) => a.x - b.x);
    for (const t of ticks) {
      ctx.beginPath();
      ctx.moveTo(Math.round(t.x) + 0.5, p.y + p.h);
      ctx.lineTo(Math.round(t.x) + 0.5, p.y + p.h + 4);
      ctx.stroke();
    }
    ctx.textAlign = 'left';
    for (const t of drawn) ctx.fillText(t.label, t.x0, p.y + p.h + 7);
    this.drawnTicks = drawn.map(({ label, x0, x1 }) => ({ label, x0, x1 }));
    const title = p.w > 420 ? 'Idle time  (linear to 1 min, then log scale to 24 h)' : 'Idle time (log scale after 1 min)';
    ctx.fillText(title, p.x, p.y + p.h + 26);
  }

  drawBanner(p, text) {
    const { ctx } = this;
    ctx.font = '600 12px system-ui, -apple-system, "Segoe UI", sans-serif';
    const w = Math.min(p.w - 24, ctx.measureText(text).width + 28);
    const x = p.x + (p.w - w) / 2;
    const y = p.y + p.h / 2 - 16;
    ctx.fillStyle = 'rgba(255,255,255,0.94)';
    roundRect(ctx, x, y, w, 32, 8);
    ctx.fill();
    ctx.fillStyle = '#2b3040';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    let t = text;
    while (t.length > 8 && ctx.measureText(t).width > w - 20) t = t.slice(0, -2) + '…';
    ctx.fillText(t, x + w / 2, y + 16);
  }

  drawMarker(p) {
    const { ctx } = this;
    const x = this.xOf(this.state.idle, p);
    const y = (this.yOf(this.state.intent, p) + this.yOf(this.state.intent + 1, p)) / 2;
    ctx.save();
    ctx.strokeStyle = 'rgba(20,24,36,0.55)';
    ctx.setLineDash([2, 3]);
    ctx.beginPath();
    ctx.moveTo(p.x, Math.round(y) + 0.5);
    ctx.lineTo(p.x + p.w, Math.round(y) + 0.5);
    ctx.moveTo(Math.round(x) + 0.5, p.y);
    ctx.lineTo(Math.round(x) + 0.5, p.y + p.h);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.arc(x, y, 7, 0, Math.PI * 2);
    ctx.fillStyle = '#fff';
    ctx.fill();
    ctx.lineWidth = 3;
    ctx.strokeStyle = '#141824';
    ctx.stroke();
    ctx.restore();
  }

  /** Intent and idle time under a pointer event, or null outside the plot. */
  at(e) {
    const rect = this.canvas.getBoundingClientRect();
    const p = this.plot();
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top;
    const u = (px - p.x) / p.w;
    const v = (p.y + p.h - py) / p.h;
    if (u < -0.02 || u > 1.02 || v < -0.02 || v > 1.02) return null;
    const intent = clamp(Math.floor(v * 101), 0, 100);
    const idle = clamp(idleScale.snap(idleScale.fromUnit(u)), 0, LIMITS.idle_ms);
    return { intent, idle, px, py };
  }

  pick(e) {
    const hit = this.at(e);
    if (hit) this.onPick(hit.intent, hit.idle);
  }

  hover(e) {
    const hit = this.at(e);
    if (!hit || !this.regions.length) {
      this.tooltip.hidden = true;
      return;
    }
    const region = this.regionAt(hit.intent, hit.idle);
    this.tooltip.hidden = false;
    this.tooltip.innerHTML = `<b>intent ${hit.intent}</b> · idle ${formatMs(hit.idle)}<br>${region ? this.describe(region) : ''}`;
    const tipW = this.tooltip.offsetWidth;
    const left = hit.px + 14 + tipW > this.width ? hit.px - 14 - tipW : hit.px + 14;
    this.tooltip.style.left = `${left}px`;
    this.tooltip.style.top = `${Math.max(0, hit.py - 10)}px`;
  }

  onKey(e) {
    const big = e.shiftKey;
    let { intent, idle } = this.state;
    switch (e.key) {
      case 'ArrowUp':
        intent = clamp(intent + (big ? 10 : 1), 0, 100);
        break;
      case 'ArrowDown':
        intent = clamp(intent - (big ? 10 : 1), 0, 100);
        break;
      case 'ArrowRight':
        idle = idleScale.snap(idleScale.fromUnit(idleScale.toUnit(idle) + (big ? 0.05 : 0.005)));
        break;
      case 'ArrowLeft':
        idle = idleScale.snap(idleScale.fromUnit(idleScale.toUnit(idle) - (big ? 0.05 : 0.005)));
        break;
      default:
        return;
    }
    e.preventDefault();
    this.onPick(intent, clamp(idle, 0, LIMITS.idle_ms));
  }
}

function roundRect(ctx, x, y, w, hgt, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + hgt, r);
  ctx.arcTo(x + w, y + hgt, x, y + hgt, r);
  ctx.arcTo(x, y + hgt, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}
