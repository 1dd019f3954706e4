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

/**
 * Sets (or, with `undefined`, removes) the value at `path`; missing parents are created. A new
 * key of an object, and a key removed, touch only that property's text, in the object's own
 * layout (one per line, or all on one line): the rest keeps its formatting, and taking a setting
 * back to its default gives the text it had. A new site setting (a top-level key) goes before
 * `rules`, with the other settings.
 */
export function setAt(text, path, value) {
  const own = propertyEdit(text, path, value);
  if (own) return own;
  try {
    return modify(text, path, value, FORMAT);
  } catch (err) {
    if (value === undefined) return []; // removing what is not there (its parent is missing)
    throw err;
  }
}

/** The indentation of the line `offset` is on. */
function indentAt(text, offset) {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))[0];
}

/**
 * `setAt` for a key added to, or removed from, an existing object: the edit, or null to leave it
 * to jsonc-parser (a value replaced, an array, a text that does not parse).
 */
function propertyEdit(text, path, value) {
  if (!path.length) return null;
  let tree;
  try {
    tree = parseTree(text, [], { disallowComments: true, allowTrailingComma: false });
  } catch {
    return null;
  }
  if (!tree) return null;
  if (value === undefined) {
    const parent = path.length === 1 ? tree : findNodeAtLocation(tree, path.slice(0, -1));
    if (!parent) return []; // its parent is missing: nothing to remove
    const key = path[path.length - 1];
    if (parent.type !== 'object' || typeof key !== 'string') return null;
    const props = parent.children ?? [];
    const at = props.findIndex((p) => p.children?.[0]?.value === key);
    if (at < 0) return [];
    const prop = props[at];
    if (props.length === 1) return [{ offset: parent.offset + 1, length: parent.length - 2, content: '' }];
    if (at > 0) {
      const prev = props[at - 1];
      return [{ offset: prev.offset + prev.length, length: prop.offset + prop.length - (prev.offset + prev.length), content: '' }];
    }
    return [{ offset: prop.offset, length: props[1].offset - prop.offset, content: '' }];
  }
  // The deepest node of the path that exists, and the value to put under it.
  let k = path.length;
  while (k > 0 && !findNodeAtLocation(tree, path.slice(0, k))) k--;
  if (k === path.length) return null; // a value replaced
  const parent = k === 0 ? tree : findNodeAtLocation(tree, path.slice(0, k));
  if (parent?.type !== 'object' || typeof path[k] !== 'string') return null;
  const props = parent.children ?? [];
  const key = path[k];
  let v = value;
  for (let i = path.length - 1; i > k; i--) {
    if (typeof path[i] !== 'string') return null;
    v = { [path[i]]: v };
  }
  if (!props.length) return null;
  const multiline = text.slice(parent.offset, props[0].offset).includes('\n');
  const indent = multiline ? indentAt(text, props[0].offset) : '';
  const json = multiline ? JSON.stringify(v, null, 2).replace(/\n/g, `\n${indent}`) : JSON.stringify(v);
  const prop = `${JSON.stringify(key)}: ${json}`;
  const rules = k === 0 ? props.findIndex((p) => p.children?.[0]?.value === 'rules') : -1;
  const index = rules >= 0 ? rules : props.length;
  if (index === 0) {
    return [{ offset: props[0].offset, length: 0, content: `${prop},${multiline ? `\n${indent}` : ' '}` }];
  }
  const prev = props[index - 1];
  return [{ offset: prev.offset + prev.length, length: 0, content: `,${multiline ? `\n${indent}` : ' '}${prop}` }];
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
 * after replacing one value, the nodes after it move by the change in length. They move lazily:
 * the siblings after each node on the value's path get the shift, and a node hands its pending
 * shift to its children only when a later edit descends into it. Typing in a card of a 1,000-rule
 * config touches about a thousand nodes (the rules after the edited one), not the 30,000 of the
 * whole tree, and never parses 400 KB again. Any other text (typed in the JSON view, a Reset) is
 * parsed once (`treeFor`, also called ahead of the first edit while the page is idle).
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
    const chain = tree ? locate(tree, path) : null;
    const node = chain?.[chain.length - 1];
    if (!node || node.type === 'object' || node.type === 'array' || value === null || typeof value === 'object') return null;
    const content = JSON.stringify(value);
    const start = node.offset;
    const end = node.offset + node.length;
    const delta = content.length - node.length;
    // Each node on the path grows by `delta`; its children after the path move by it.
    for (let i = 0; i < chain.length - 1; i++) {
      const n = chain[i];
      n.length += delta;
      const kids = n.children;
      for (let k = kids.indexOf(chain[i + 1]) + 1; k < kids.length; k++) move(kids[k], delta);
    }
    node.length = content.length;
    node.value = value;
    node.type = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean';
    this.text = text.slice(0, start) + content + text.slice(end);
    return { offset: start, length: end - start, content };
  }
}

/** Moves a node by `delta`; its descendants move when something descends into it (`settle`). */
function move(n, delta) {
  n.offset += delta;
  if (n.colonOffset !== undefined) n.colonOffset += delta;
  if (n.children) n.pending = (n.pending ?? 0) + delta;
}

/** Hands a node's pending move to its children. */
function settle(n) {
  if (!n.pending) return;
  for (const c of n.children) move(c, n.pending);
  n.pending = 0;
}

/**
 * The nodes from the root to the value at `path` (object properties included), each settled;
 * null when there is no such value.
 */
function locate(tree, path) {
  const chain = [tree];
  let n = tree;
  for (const seg of path) {
    settle(n);
    if (n.type === 'object' && typeof seg === 'string') {
      const prop = n.children?.find((p) => p.children?.[0]?.value === seg);
      if (!prop?.children?.[1]) return null;
      settle(prop);
      chain.push(prop);
      n = prop.children[1];
    } else if (n.type === 'array' && typeof seg === 'number') {
      n = n.children?.[seg];
      if (!n) return null;
    } else {
      return null;
    }
    chain.push(n);
  }
  return chain;
}

/** A rule id not used yet: `base-copy`, `base-copy-2`, ... (at most 64 characters). */
export function freshId(base, used) {
  const stem = String(base || 'rule').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 54) || 'rule';
  let id = `${stem}-copy`;
  for (let n = 2; used.has(id); n++) id = `${stem}-copy-${n}`;
  return id;
}
