// Edits of the config text by JSON path, for the visual rule editor: each returns the smallest
// text edits (jsonc-parser's `modify`, npm), so the rest of the text keeps its formatting and the
// JSON view's undo history gets one step per edit. Nothing here knows the engine's rules: the
// edited text goes back to the engine like typed text.

import { findNodeAtLocation, getNodeValue, modify, parseTree } from 'jsonc-parser';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

/** The parsed text: `{ tree, value, syntaxOk }` (tree and value null when it cannot be read). */
export function readConfig(text) {
  const errors = [];
  let tree;
  try {
    tree = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  } catch {
    return { tree: null, value: null, syntaxOk: false }; // nesting deeper than the JS stack
  }
  if (!tree || errors.length) return { tree: tree ?? null, value: null, syntaxOk: false };
  return { tree, value: getNodeValue(tree), syntaxOk: true };
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

/** A rule id not used yet: `base-copy`, `base-copy-2`, ... (at most 64 characters). */
export function freshId(base, used) {
  const stem = String(base || 'rule').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 54) || 'rule';
  let id = `${stem}-copy`;
  for (let n = 2; used.has(id); n++) id = `${stem}-copy-${n}`;
  return id;
}
