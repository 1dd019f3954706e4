// A light code editor: a <textarea> with a line-number gutter, error and warning markers at
// their line and column, an inline message after the marked line, and jump-to-position.
// No dependencies; the textarea stays the real input (undo, selection, IME and screen readers
// work as usual).

import { h } from './util.js';

const TAB = '  ';

export class ConfigEditor {
  /**
   * @param {HTMLElement} root  an empty element that becomes the editor
   * @param {{label: string, onInput: (text: string) => void, onSave?: () => void}} options
   */
  constructor(root, { label, onInput, onSave }) {
    this.root = root;
    this.onInput = onInput;
    this.onSave = onSave;
    this.diagnostics = [];
    this.lineCount = 0;
    this.escapeArmed = false;

    this.gutterInner = h('div', { class: 'gutter-inner' });
    this.gutterNumbers = h('pre', { class: 'gutter-numbers' });
    this.gutterMarks = h('div', { class: 'gutter-marks' });
    this.gutterInner.append(this.gutterNumbers, this.gutterMarks);
    this.gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' }, this.gutterInner);

    this.marksInner = h('div', { class: 'marks-inner' });
    this.marks = h('div', { class: 'marks', 'aria-hidden': 'true' }, this.marksInner);
    this.textarea = h('textarea', {
      class: 'code-input',
      id: 'config-text',
      wrap: 'off',
      spellcheck: 'false',
      autocapitalize: 'off',
      autocomplete: 'off',
      'aria-label': label,
      'aria-describedby': 'editor-help',
      'aria-multiline': 'true',
    });
    this.code = h('div', { class: 'code' }, this.marks, this.textarea);
    this.measure = h('span', { class: 'measure', 'aria-hidden': 'true' }, 'x'.repeat(100));
    root.classList.add('editor');
    root.append(this.gutter, this.code, this.measure);

    this.textarea.addEventListener('input', () => {
      this.renderGutter();
      this.onInput(this.textarea.value);
    });
    this.textarea.addEventListener('scroll', () => this.syncScroll());
    this.textarea.addEventListener('keydown', (e) => this.onKeyDown(e));
    new ResizeObserver(() => this.renderMarks()).observe(this.textarea);
  }

  get value() {
    return this.textarea.value;
  }

  /** Replaces the whole text (a file load, a reset, a shared link). */
  setValue(text) {
    this.textarea.value = text;
    this.textarea.scrollTop = 0;
    this.textarea.scrollLeft = 0;
    this.renderGutter();
    this.syncScroll();
  }

  metrics() {
    const style = getComputedStyle(this.textarea);
    const lineHeight = parseFloat(style.lineHeight) || 20;
    const charWidth = this.measure.getBoundingClientRect().width / 100 || 8;
    return {
      lineHeight,
      charWidth,
      padTop: parseFloat(style.paddingTop) || 0,
      padLeft: parseFloat(style.paddingLeft) || 0,
    };
  }

  renderGutter() {
    const count = this.textarea.value.split('\n').length;
    if (count !== this.lineCount) {
      this.lineCount = count;
      let text = '';
      for (let i = 1; i <= count; i++) text += i + '\n';
      this.gutterNumbers.textContent = text;
    }
  }

  syncScroll() {
    const { scrollTop, scrollLeft } = this.textarea;
    this.gutterInner.style.transform = `translateY(${-scrollTop}px)`;
    this.marksInner.style.transform = `translate(${-scrollLeft}px, ${-scrollTop}px)`;
  }

  /**
   * Shows diagnostics: each `{severity, line, column, message}` with a line (1-based) gets a
   * gutter marker, a line tint, an underline at its column and its message after the line.
   */
  setDiagnostics(diagnostics) {
    this.diagnostics = diagnostics.filter((d) => d.line);
    this.renderMarks();
  }

  renderMarks() {
    this.gutterMarks.replaceChildren();
    this.marksInner.replaceChildren();
    if (!this.diagnostics.length) return;
    const m = this.metrics();
    const lines = this.textarea.value.split('\n');
    // Errors first so that an error wins over a warning on the same line.
    const byLine = new Map();
    const sorted = [...this.diagnostics].sort((a, b) => (a.severity === 'error' ? 0 : 1) - (b.severity === 'error' ? 0 : 1));
    for (const d of sorted) {
      if (!byLine.has(d.line)) byLine.set(d.line, []);
      byLine.get(d.line).push(d);
    }
    for (const [line, list] of byLine) {
      const top = m.padTop + (line - 1) * m.lineHeight;
      const severity = list[0].severity;
      const lineText = lines[line - 1] ?? '';
      const title = list.map((d) => `${d.severity}: ${d.message}`).join('\n');
      this.gutterMarks.append(
        h('div', { class: `gutter-mark ${severity}`, style: `top:${top}px;height:${m.lineHeight}px`, title }),
      );
      this.marksInner.append(h('div', { class: `line-tint ${severity}`, style: `top:${top}px;height:${m.lineHeight}px` }));
      for (const d of list) {
        const [start, width] = tokenSpan(lineText, d.column || 1);
        this.marksInner.append(
          h('div', {
            class: `squiggle ${d.severity}`,
            style: `top:${top + m.lineHeight - 4}px;left:${m.padLeft + start * m.charWidth}px;width:${Math.max(1, width) * m.charWidth}px`,
          }),
        );
      }
      const lensLeft = m.padLeft + (visualLength(lineText) + 3) * m.charWidth;
      const first = list[0];
      const more = list.length > 1 ? `  (+${list.length - 1} more)` : '';
      this.marksInner.append(
        h('div', { class: `lens ${severity}`, style: `top:${top}px;left:${lensLeft}px;line-height:${m.lineHeight}px` },
          first.message + more),
      );
    }
  }

  /** Puts the caret at a 1-based line and column (in characters) and scrolls it into view. */
  jumpTo(line, column = 1) {
    const text = this.textarea.value;
    const lines = text.split('\n');
    const l = Math.max(1, Math.min(lines.length, line));
    let offset = 0;
    for (let i = 0; i < l - 1; i++) offset += lines[i].length + 1;
    // column counts characters (code points); convert to UTF-16 units.
    const chars = Array.from(lines[l - 1]);
    const units = chars.slice(0, Math.max(0, (column || 1) - 1)).join('').length;
    offset += Math.min(units, lines[l - 1].length);
    this.textarea.focus();
    this.textarea.setSelectionRange(offset, offset);
    const m = this.metrics();
    const top = m.padTop + (l - 1) * m.lineHeight;
    const view = this.textarea.clientHeight;
    if (top < this.textarea.scrollTop || top > this.textarea.scrollTop + view - 2 * m.lineHeight) {
      this.textarea.scrollTop = Math.max(0, top - view / 3);
    }
    const left = m.padLeft + visualLength(lines[l - 1].slice(0, units)) * m.charWidth;
    const width = this.textarea.clientWidth;
    if (left < this.textarea.scrollLeft || left > this.textarea.scrollLeft + width - 40) {
      this.textarea.scrollLeft = Math.max(0, left - width / 2);
    }
    this.syncScroll();
  }

  onKeyDown(e) {
    const ta = this.textarea;
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's' && this.onSave) {
      e.preventDefault();
      this.onSave();
      return;
    }
    if (e.key === 'Escape') {
      // Escape, then Tab, leaves the editor (Tab alone indents): no keyboard trap.
      this.escapeArmed = true;
      return;
    }
    if (e.key === 'Tab' && !this.escapeArmed && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      const { selectionStart: start, selectionEnd: end, value } = ta;
      const lineStart = value.lastIndexOf('\n', start - 1) + 1;
      if (e.shiftKey) {
        const lineEnd = value.indexOf('\n', end);
        const block = value.slice(lineStart, lineEnd === -1 ? value.length : lineEnd);
        const outdented = block.replace(/^ {1,2}/gm, '');
        if (outdented !== block) {
          ta.setSelectionRange(lineStart, lineStart + block.length);
          insertText(ta, outdented);
          ta.setSelectionRange(lineStart, lineStart + outdented.length);
        }
      } else if (start !== end && value.slice(start, end).includes('\n')) {
        const block = value.slice(lineStart, end);
        const indented = block.replace(/^/gm, TAB);
        ta.setSelectionRange(lineStart, end);
        insertText(ta, indented);
        ta.setSelectionRange(lineStart, lineStart + indented.length);
      } else {
        insertText(ta, TAB);
      }
      return;
    }
    this.escapeArmed = false;
    if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) {
      const { selectionStart: start, value } = ta;
      const lineStart = value.lastIndexOf('\n', start - 1) + 1;
      const indent = /^[ \t]*/.exec(value.slice(lineStart, start))[0];
      const before = value.slice(lineStart, start).trimEnd();
      const extra = /[[{]$/.test(before) ? TAB : '';
      e.preventDefault();
      insertText(ta, '\n' + indent + extra);
    }
  }
}

/** Inserts text at the selection, keeping the browser's undo history where possible. */
function insertText(ta, text) {
  ta.focus();
  let ok = false;
  try {
    ok = document.execCommand('insertText', false, text);
  } catch {
    ok = false;
  }
  if (!ok) {
    ta.setRangeText(text, ta.selectionStart, ta.selectionEnd, 'end');
    ta.dispatchEvent(new Event('input', { bubbles: true }));
  }
}

/** Display width of a line prefix, in character cells (tabs expand to 2, like the textarea). */
function visualLength(text) {
  let col = 0;
  for (const ch of text) col = ch === '\t' ? col + 2 - (col % 2) : col + 1;
  return col;
}

/** [start cell, width in cells] of the token at a 1-based character column, for the underline. */
function tokenSpan(lineText, column) {
  const chars = Array.from(lineText);
  const i = Math.max(0, column - 1);
  const start = visualLength(chars.slice(0, i).join(''));
  if (i >= chars.length) return [start, 1];
  let j = i;
  if (chars[i] === '"') {
    j = i + 1;
    while (j < chars.length && chars[j] !== '"') j += chars[j] === '\\' ? 2 : 1;
    j = Math.min(chars.length, j + 1);
  } else if (/[\w.+-]/.test(chars[i])) {
    while (j < chars.length && /[\w.+-]/.test(chars[j])) j++;
  } else {
    j = i + 1;
  }
  return [start, Math.max(1, j - i)];
}
