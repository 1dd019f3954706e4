// Edits of the config text by JSON path, for the visual rule editor: each returns the smallest
// text edits (jsonc-parser's `modify`, npm), so the rest of the text keeps its formatting and the
// JSON view's undo history gets one step per edit. Nothing here knows the engine's rules: the
// edited text goes back to the engine like typed text.

import { findNodeAtLocation, modify, parseTree } from 'jsonc-parser';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

/**
 * The config as written, for the rule cards: `{ value, syntaxOk }` (value null when the text is
 * not JSON). JSON.parse is native: a 1,000-rule config (400 KB) takes a few milliseconds.
 */
export function readConfig(text) {
  try {
    return { value: JSON.parse(text), syntaxOk: true };
  } catch {
    return { value: null, syntaxOk: false };
  }
}

/** Sets (or, with `undefined`, removes) the value at `path`; missing parents are created. */
export function setAt(text, path, value) {
  return modify(text, path, value, FORMAT);
}

/** Inserts `value` into the array at `path` before `index` (index = length appends). */
export function insertAt(text, path, index, value) {
  const tree = parseTree(text);
  const list = tree && findNodeAtLocation(tree, path);
  if (!list || list.type !== 'array') return modify(text, path, [value], FORMAT);
  return modify(text, [...path, index], value, { ...FORMAT, isArrayInsertion: true });
}

/**
 * Moves item `from` of the array at `path` to position `to` (both 0-based, `to` counted in the
 * array before the move). Each item keeps its own text; separators stay where they were.
 */
export function moveItem(text, path, from, to) {
  const tree = parseTree(text);
  const list = tree && findNodeAtLocation(tree, path);
  const items = list?.children ?? [];
  if (from === to || from < 0 || to < 0 || from >= items.length || to >= items.length) return [];
  const slices = items.map((n) => text.slice(n.offset, n.offset + n.length));
  const [moved] = slices.splice(from, 1);
  slices.splice(to, 0, moved);
  // Rewrite each item in place: the separators between items are kept as they are.
  const edits = [];
  for (let i = Math.min(from, to); i <= Math.max(from, to); i++) {
    const n = items[i];
    edits.push({ offset: n.offset, length: n.length, content: slices[i] });
  }
  return edits;
}

/**
 * The syntax tree (jsonc-parser) of the config text, kept across the edits the rule cards make:
 * after replacing one value, the offsets after it are shifted instead of parsing 400 KB again, so
 * typing in a card of a 1,000-rule config costs microseconds here. Any other text (typed in the
 * JSON view, a Reset) is parsed once.
 */
export class ConfigIndex {
  constructor() {
    this.text = null;
    this.tree = null;
  }

  treeFor(text) {
    if (text !== this.text) {
      this.text = text;
      try {
        this.tree = parseTree(text, [], { disallowComments: true, allowTrailingComma: false }) ?? null;
      } catch {
        this.tree = null; // nesting deeper than the JS stack
      }
    }
    return this.tree;
  }

  /**
   * The edit that sets the scalar at `path` (a string, number or boolean already there) to
   * `value`, with the tree updated to the text after it; null when there is no such value.
   */
  replaceScalar(text, path, value) {
    const tree = this.treeFor(text);
    const node = tree && findNodeAtLocation(tree, path);
    if (!node || node.type === 'object' || node.type === 'array' || value === null || typeof value === 'object') return null;
    const content = JSON.stringify(value);
    const start = node.offset;
    const end = node.offset + node.length;
    const delta = content.length - node.length;
    // Nodes after the value move by `delta`, those around it grow by it; a node that ends
    // before the value is left alone with everything inside it.
    const stack = [tree];
    while (stack.length) {
      const n = stack.pop();
      if (n === node || (n.offset + n.length < start)) continue;
      if (n.offset >= end) n.offset += delta;
      else if (n.offset <= start && n.offset + n.length >= end) n.length += delta;
      if (n.colonOffset !== undefined && n.colonOffset >= end) n.colonOffset += delta;
      if (n.children) for (let i = 0; i < n.children.length; i++) stack.push(n.children[i]);
    }
    node.length = content.length;
    node.value = value;
    node.type = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean';
    this.text = text.slice(0, start) + content + text.slice(end);
    return { offset: start, length: end - start, content };
  }
}

/** A rule id not used yet: `base-copy`, `base-copy-2`, ... (at most 64 characters). */
export function freshId(base, used) {
  const stem = String(base || 'rule').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 54) || 'rule';
  let id = `${stem}-copy`;
  for (let n = 2; used.has(id); n++) id = `${stem}-copy-${n}`;
  return id;
}
