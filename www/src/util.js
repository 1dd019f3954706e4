// Small shared helpers: formatting, the rule palette, the idle-time axis scale, DOM helpers.

import { LIMITS } from './limits.js';

/** The rules' palette (colors.js gives each rule id one). Chosen for contrast with white text
 *  in the legend and for telling neighbours apart on the map. */
export const PALETTE = [
  '#4f5bd5', // indigo
  '#e0662e', // orange
  '#14946b', // green
  '#c23b8c', // magenta
  '#c99a06', // amber
  '#1f8fcf', // sky
  '#8457d1', // violet
  '#5f8a1f', // olive
  '#d63f5c', // red
  '#2a8c8c', // teal
  '#a0652a', // brown
  '#5c6578', // slate
];

export const NO_NUDGE_COLOR = '#e7e9ef';

export const NUDGE_LABELS = {
  chat_bubble: 'Chat bubble',
  toast: 'Toast',
  exit_modal: 'Exit modal',
  sticky_bar: 'Sticky bar',
};

/** Small inline SVG icons for the four nudge types (no icon font, no emoji: renders everywhere). */
export function nudgeIcon(type, size = 14) {
  const s = `width="${size}" height="${size}" viewBox="0 0 16 16" aria-hidden="true" focusable="false"`;
  switch (type) {
    case 'chat_bubble':
      return `<svg ${s}><path fill="currentColor" d="M2 3.5A1.5 1.5 0 0 1 3.5 2h9A1.5 1.5 0 0 1 14 3.5v6a1.5 1.5 0 0 1-1.5 1.5H7l-3.2 2.6c-.3.3-.8 0-.8-.4V11h0A1.5 1.5 0 0 1 2 9.5z"/></svg>`;
    case 'toast':
      return `<svg ${s}><rect x="2" y="2.5" width="12" height="5" rx="1.5" fill="currentColor"/><rect x="2" y="9.5" width="8" height="1.6" rx=".8" fill="currentColor" opacity=".45"/><rect x="2" y="12.5" width="6" height="1.6" rx=".8" fill="currentColor" opacity=".45"/></svg>`;
    case 'exit_modal':
      return `<svg ${s}><rect x="1.5" y="1.5" width="13" height="13" rx="2" fill="none" stroke="currentColor" stroke-width="1.4" opacity=".5"/><rect x="4" y="4.5" width="8" height="7" rx="1.2" fill="currentColor"/></svg>`;
    case 'sticky_bar':
      return `<svg ${s}><rect x="1.5" y="1.5" width="13" height="13" rx="2" fill="none" stroke="currentColor" stroke-width="1.4" opacity=".5"/><rect x="1.5" y="10.5" width="13" height="4" rx="1" fill="currentColor"/></svg>`;
    default:
      return '';
  }
}

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** Creates an element: h('div', {class: 'x', onclick: fn}, child, 'text'). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'html') el.innerHTML = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * "950 ms", "9.0 s", "45 s", "5 min", "1 h 30 min", "24 h". Cut, never rounded up: 7,999 ms is
 * "7.9 s", not the "8.0 s" that a rule waiting for 8 s would contradict.
 */
export function formatMs(ms) {
  if (ms < 1000) return `${Math.floor(ms)} ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1).replace(/\.0$/, '')} s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (ms < 3_600_000) {
    const m = Math.floor(totalSeconds / 60);
    const s = totalSeconds % 60;
    return s ? `${m} min ${s} s` : `${m} min`;
  }
  const hours = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  return m ? `${hours} h ${m} min` : `${hours} h`;
}

/** Countdown text for "fires in …": one decimal under a minute. */
export function formatCountdown(ms) {
  if (ms < 60_000) return `${(Math.ceil(ms / 100) / 10).toFixed(1)} s`;
  return formatMs(ms);
}

export function formatInt(n) {
  return Number(n).toLocaleString('en-US');
}

/**
 * The idle-time axis: 0 to 60 s is linear over the first KNEE of the axis (where every real
 * threshold lives), 60 s to 24 h is logarithmic over the rest. Used by the map and the slider so
 * both read the same way.
 */
export const idleScale = {
  KNEE: 0.72,
  LINEAR_MAX: 60_000,
  toUnit(ms) {
    const v = Math.max(0, Math.min(LIMITS.idle_ms, ms));
    if (v <= this.LINEAR_MAX) return (v / this.LINEAR_MAX) * this.KNEE;
    return this.KNEE + (1 - this.KNEE) * (Math.log(v / this.LINEAR_MAX) / Math.log(LIMITS.idle_ms / this.LINEAR_MAX));
  },
  fromUnit(u) {
    const t = Math.max(0, Math.min(1, u));
    if (t <= this.KNEE) return (t / this.KNEE) * this.LINEAR_MAX;
    return this.LINEAR_MAX * Math.exp(((t - this.KNEE) / (1 - this.KNEE)) * Math.log(LIMITS.idle_ms / this.LINEAR_MAX));
  },
  /** A value from the axis rounded to something a person would type: 100 ms under a minute,
   *  whole seconds under an hour, whole minutes above. */
  snap(ms) {
    if (ms <= this.LINEAR_MAX) return Math.round(ms / 100) * 100;
    if (ms < 3_600_000) return Math.round(ms / 1000) * 1000;
    return Math.min(LIMITS.idle_ms, Math.round(ms / 60_000) * 60_000);
  },
  /** The axis's labels, the last at the engine's longest idle time ("24 h"). */
  get ticks() {
    return [
      [0, '0'], [10_000, '10 s'], [20_000, '20 s'], [30_000, '30 s'], [40_000, '40 s'], [50_000, '50 s'],
      [60_000, '1 min'], [300_000, '5 min'], [3_600_000, '1 h'], [LIMITS.idle_ms, formatMs(LIMITS.idle_ms)],
    ];
  },
};

export function clamp(v, lo, hi) {
  return Math.max(lo, Math.min(hi, v));
}

/** Offers `text` as a download named `filename` (JSON). */
export function downloadText(text, filename) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/**
 * The text of a chosen file, or an Error that says, naming the file, why it is not text: a NUL
 * byte (an image, a spreadsheet, an archive) or bytes that are not UTF-8.
 */
export async function readTextFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const notText = () => new Error(`“${file.name}” is not a text file (it looks like an image, an archive or another binary file)`);
  if (bytes.includes(0)) throw notText();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw notText();
  }
}

/**
 * Makes `button` open the hidden file `input`, and calls `onText(text, fileName)` with the text of
 * the file chosen, or `onRefused(message, fileName)` when it is not text (the input is cleared, so
 * choosing the same file again reads it again).
 */
export function onTextFileChosen(button, input, onText, onRefused) {
  button.addEventListener('click', () => input.click());
  input.addEventListener('change', async () => {
    const file = input.files[0];
    input.value = '';
    if (!file) return;
    let text;
    try {
      text = await readTextFile(file);
    } catch (err) {
      onRefused(err.message, file.name);
      return;
    }
    onText(text, file.name);
  });
}

/** The text of one of the repository's example files (`../examples/NAME`, as `make demo` serves it). */
export async function fetchExample(name) {
  const res = await fetch(`../examples/${name}`);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.text();
}
