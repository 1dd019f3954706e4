// The JSON view of the config: CodeMirror 6 with JSON highlighting, folding, bracket matching,
// search (Ctrl+F), grouped undo, completion and hover docs from the config's JSON Schema, and the
// engine's diagnostics as lint markers with their message written under the line they concern.

import { autocompletion, closeBrackets, closeBracketsKeymap, closeCompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab, isolateHistory, redo, undo } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import {
  bracketMatching, codeFolding, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting, HighlightStyle,
} from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { Compartment, EditorState, StateEffect, StateField, Transaction } from '@codemirror/state';
import {
  Decoration, EditorView, WidgetType, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

import { schemaCompletion, schemaHover } from './schema-assist.js';

const highlight = HighlightStyle.define([
  { tag: t.propertyName, color: '#3f3fa8' },
  { tag: t.string, color: '#0f6b45' },
  { tag: t.number, color: '#a3470b' },
  { tag: [t.bool, t.null], color: '#8a2f8a', fontWeight: '600' },
  { tag: [t.brace, t.squareBracket, t.separator, t.punctuation], color: '#5b6275' },
  { tag: t.invalid, color: '#c0262d' },
]);

/** One note per marked line, under it: the first message, and how many more. */
class NoteWidget extends WidgetType {
  constructor(severity, text) {
    super();
    this.severity = severity;
    this.text = text;
  }

  eq(other) {
    return other.severity === this.severity && other.text === this.text;
  }

  toDOM() {
    const el = document.createElement('div');
    el.className = `cm-diag-note ${this.severity}`;
    el.textContent = this.text;
    return el;
  }

  ignoreEvent() {
    return false;
  }
}

const setNotes = StateEffect.define();
const notesField = StateField.define({
  create: () => Decoration.none,
  update(notes, tr) {
    let next = notes.map(tr.changes);
    for (const e of tr.effects) if (e.is(setNotes)) next = e.value;
    return next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** UTF-16 offset of a 1-based line and a 1-based column counted in characters. */
function offsetOf(doc, line, column = 1) {
  const l = doc.line(Math.max(1, Math.min(doc.lines, line)));
  const chars = Array.from(l.text).slice(0, Math.max(0, (column || 1) - 1)).join('');
  return l.from + Math.min(chars.length, l.length);
}

/**
 * UTF-16 offsets of diagnostics' 1-based lines and character columns (null without a line). Each
 * line is walked once, from one column to the next: the cost is the text up to the last column,
 * not (as with one walk per diagnostic) the line's length times the number of diagnostics, which
 * froze the page for seconds on a one-line config with thousands of errors.
 */
function offsetsOf(doc, diagnostics) {
  const out = diagnostics.map(() => null);
  const order = diagnostics.map((_, i) => i).filter((i) => diagnostics[i].line);
  order.sort((a, b) => diagnostics[a].line - diagnostics[b].line || (diagnostics[a].column || 1) - (diagnostics[b].column || 1));
  let line = null;
  let pos = 0; // UTF-16 offset in the line after `chars` characters
  let chars = 0;
  for (const i of order) {
    const n = Math.max(1, Math.min(doc.lines, diagnostics[i].line));
    if (line?.number !== n) {
      line = doc.line(n);
      pos = 0;
      chars = 0;
    }
    const want = Math.max(0, (diagnostics[i].column || 1) - 1);
    for (; chars < want && pos < line.length; chars++) pos += line.text.codePointAt(pos) > 0xffff ? 2 : 1;
    out[i] = line.from + pos;
  }
  return out;
}

/** End of the token that starts at `from` (a string, a number or word, or one character). */
function tokenEnd(doc, from) {
  const line = doc.lineAt(from);
  // At most 500 characters ahead: not the rest of a 400 KB line.
  const rest = doc.sliceString(from, Math.min(line.to, from + 500));
  const m = /^("(?:[^"\\]|\\.)*"?|[\w.+-]+)/.exec(rest);
  return Math.min(line.to, from + (m ? m[0].length : 1));
}

export class CodeEditor {
  /**
   * @param {HTMLElement} root
   * @param {{label: string, onChange: (text: string, tr) => void, onSave: () => void}} options
   */
  constructor(root, { label, onChange, onSave }) {
    this.onChange = onChange;
    this.language = new Compartment();
    const extensions = [
      lineNumbers(),
      highlightActiveLineGutter(),
      foldGutter({ markerDOM: (open) => {
        const el = document.createElement('span');
        el.className = `cm-fold-marker ${open ? 'open' : 'closed'}`;
        el.textContent = open ? '▾' : '▸';
        el.title = open ? 'Fold' : 'Unfold';
        return el;
      } }),
      codeFolding(),
      lintGutter(),
      history(),
      drawSelection(),
      indentOnInput(),
      syntaxHighlighting(highlight),
      bracketMatching(),
      closeBrackets(),
      autocompletion({ override: [schemaCompletion], icons: false }),
      highlightActiveLine(),
      EditorView.lineWrapping,
      highlightSelectionMatches(),
      this.language.of(json()),
      schemaHover,
      notesField,
      EditorState.tabSize.of(2),
      keymap.of([
        { key: 'Mod-s', preventDefault: true, run: () => (onSave(), true) },
        ...closeBracketsKeymap,
        ...defaultKeymap,
        ...searchKeymap,
        ...historyKeymap,
        ...foldKeymap,
        ...completionKeymap,
        indentWithTab,
      ]),
      // tabindex 0: the text is in the tab order already (contenteditable); said explicitly, so
      // that axe-core sees that the scroller around it has focusable content.
      EditorView.contentAttributes.of({ 'aria-label': label, 'aria-describedby': 'editor-help', tabindex: '0' }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) this.onChange(u.state.doc.toString(), u.transactions);
      }),
    ];
    this.extensions = extensions;
    this.root = root;
    this.view = new EditorView({ parent: root, state: EditorState.create({ doc: '', extensions }) });
    root.classList.add('code-editor');
  }

  /**
   * While the JSON view is hidden (the rule cards are shown), changes go to a detached
   * EditorState, not to the view: the document, its undo history, the lint markers and notes all
   * live in the state, and drawing a hidden 1,000-rule document on every card edit cost about
   * 100 ms of measuring. Showing the view again hands it the state (`attach(true)`).
   */
  attach(on) {
    if (!on && !this.detached) {
      // Without the JSON language while detached: its parser would re-parse part of a large
      // document on every change, with nobody to see the tree (it is parsed again on attach).
      this.detached = this.view.state.update({ effects: this.language.reconfigure([]) }).state;
    } else if (on && this.detached) {
      const state = this.detached.update({ effects: this.language.reconfigure(json()) }).state;
      this.detached = null;
      this.view.setState(state);
      // Text typed in a card is `input.type` (one undo step per word): no completion from it.
      closeCompletion(this.view);
    }
  }

  /** The current state (the detached one while the view is hidden). */
  get state() {
    return this.detached ?? this.view.state;
  }

  /** Applies a transaction (or specs) to the view, or to the detached state while hidden. */
  dispatch(...specs) {
    if (!this.detached) {
      this.view.dispatch(...specs);
      return;
    }
    const tr = specs[0] instanceof Transaction ? specs[0] : this.detached.update(...specs);
    this.detached = tr.state;
    if (tr.docChanged) this.onChange(tr.state.doc.toString(), [tr]);
  }

  get value() {
    return this.state.doc.toString();
  }

  /**
   * Replaces the whole text. `undoable` (a Reset, an Open, a restored draft) keeps it in the undo
   * history, so Ctrl+Z brings the previous text back; otherwise (the first load) it starts fresh.
   */
  setValue(text, { undoable = true } = {}) {
    if (!undoable) {
      const state = EditorState.create({ doc: text, extensions: this.extensions });
      if (this.detached) this.detached = state.update({ effects: this.language.reconfigure([]) }).state;
      else this.view.setState(state);
      this.onChange(text, []);
      return;
    }
    this.dispatch({
      changes: { from: 0, to: this.state.doc.length, insert: text },
      selection: { anchor: 0 },
      scrollIntoView: true,
      userEvent: 'input.replace.all',
    });
  }

  /** Replaces a range (a visual edit): one undo step, the rest of the text untouched. */
  replace(from, to, insert, userEvent = 'input.visual') {
    this.dispatch({ changes: { from, to, insert }, userEvent });
  }

  /**
   * Applies jsonc-parser edits ({offset, length, content}) as one transaction. `typing` (text
   * typed into a card, a slider moved) joins the previous typing step as typing in the JSON view
   * does, so a word is one undo step; any other edit (a delete, a move) is a step of its own.
   */
  applyEdits(edits, { typing = false } = {}) {
    if (!edits.length) return;
    this.dispatch({
      changes: edits.map((e) => ({ from: e.offset, to: e.offset + e.length, insert: e.content })),
      userEvent: typing ? 'input.type.card' : 'input.visual',
      annotations: typing ? [] : [isolateHistory.of('full')],
    });
  }

  /** Takes one step of the document's history back (in either view); false when there is none. */
  undo() {
    return undo(this.historyTarget());
  }

  /** Takes one undone step forward again; false when there is none. */
  redo() {
    return redo(this.historyTarget());
  }

  historyTarget() {
    return { state: this.state, dispatch: (tr) => this.dispatch(tr) };
  }

  focus() {
    this.view.focus();
  }

  /** Puts the caret at a 1-based line and column (characters) and scrolls it into view. */
  jumpTo(line, column = 1) {
    this.attach(true);
    const pos = offsetOf(this.state.doc, line, column);
    this.view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
    this.view.focus();
  }

  /**
   * Shows diagnostics (`{severity, line, column, message}`, 1-based line and character column):
   * lint markers (underline, gutter, tooltip) and a wrapped note under each marked line.
   */
  setDiagnostics(diagnostics) {
    const { state } = this;
    const doc = state.doc;
    const marks = [];
    const byLine = new Map();
    const offsets = offsetsOf(doc, diagnostics);
    diagnostics.forEach((d, i) => {
      if (!d.line) return;
      const from = offsets[i];
      marks.push({ from, to: tokenEnd(doc, from), severity: d.severity === 'error' ? 'error' : 'warning', message: d.message, source: d.code });
      const line = doc.lineAt(from).number;
      if (!byLine.has(line)) byLine.set(line, []);
      byLine.get(line).push(d);
    });
    const notes = [];
    for (const [line, list] of [...byLine].sort((a, b) => a[0] - b[0])) {
      list.sort((a, b) => (a.severity === 'error' ? 0 : 1) - (b.severity === 'error' ? 0 : 1));
      const more = list.length > 1 ? `  (+${list.length - 1} more)` : '';
      const widget = new NoteWidget(list[0].severity, list[0].message + more);
      notes.push(Decoration.widget({ widget, block: true, side: 1 }).range(doc.line(line).to));
    }
    this.dispatch(
      setDiagnostics(state, marks),
      { effects: setNotes.of(Decoration.set(notes, true)) },
    );
  }
}
