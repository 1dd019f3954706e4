// Completion and hover docs in the JSON editor, from the config's JSON Schema
// (schema/config.schema.json, the same file VS Code reads). The place in the document comes from
// CodeMirror's JSON syntax tree (@codemirror/lang-json); the schema node from walking the schema
// along that JSON path.

import { snippetCompletion } from '@codemirror/autocomplete';
import { syntaxTree } from '@codemirror/language';
import { hoverTooltip } from '@codemirror/view';

import schema from '../../schema/config.schema.json';

const VALUE_NODES = new Set(['Object', 'Array', 'String', 'Number', 'True', 'False', 'Null']);

function resolveRef(node) {
  let n = node;
  for (let i = 0; n && n.$ref && i < 8; i++) n = schema.$defs[n.$ref.split('/').pop()];
  return n;
}

/** The schema node at a JSON path (keys and indices), or null where the schema has none. */
export function schemaAt(path) {
  let node = resolveRef(schema);
  for (const seg of path) {
    if (!node) return null;
    node = resolveRef(typeof seg === 'number' ? node.items : node.properties?.[seg]);
  }
  return node || null;
}

function unquote(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text.replace(/^"|"$/g, '');
  }
}

/** The JSON path of a syntax node (the keys and indices of its ancestors). */
export function pathOf(state, node) {
  const path = [];
  let child = node;
  for (let n = node.parent; n; child = n, n = n.parent) {
    if (n.name === 'Property') {
      const name = n.getChild('PropertyName');
      if (name && name !== child) path.unshift(unquote(state.sliceDoc(name.from, name.to)));
    } else if (n.name === 'Array') {
      let index = 0;
      for (let c = n.firstChild; c && c.from < child.from; c = c.nextSibling) if (VALUE_NODES.has(c.name)) index += 1;
      path.unshift(index);
    }
  }
  return path;
}

/** "integer 0 to 100 · default 0", "text, 1 to 500 characters", "one of chat_bubble, toast, …". */
export function describeType(node) {
  const n = resolveRef(node);
  if (!n) return '';
  const parts = [];
  if (n.enum) parts.push(`one of ${n.enum.join(', ')}`);
  else if (n.const !== undefined) parts.push(`always ${JSON.stringify(n.const)}`);
  else if (n.type === 'integer') parts.push(`whole number ${n.minimum.toLocaleString('en-US')} to ${n.maximum.toLocaleString('en-US')}`);
  else if (n.type === 'string') parts.push(n.pattern && n.maxLength === 64 ? `text, 1 to 64 of A-Z a-z 0-9 _ -` : `text, ${n.minLength ?? 0} to ${n.maxLength} characters`);
  else if (n.type === 'array') parts.push(`list, at most ${n.maxItems.toLocaleString('en-US')}`);
  else if (n.type) parts.push(n.type === 'boolean' ? 'true or false' : n.type);
  if (n.default !== undefined) parts.push(`default ${JSON.stringify(n.default)}`);
  return parts.join(' · ');
}

function template(node) {
  const n = resolveRef(node);
  if (!n) return '${}';
  if (n.enum) return `"\${${n.enum[0]}}"`;
  if (n.const !== undefined) return JSON.stringify(n.const);
  switch (n.type) {
    case 'string': return '"${}"';
    case 'array': return '[${}]';
    case 'object': return '{${}}';
    case 'boolean': return `\${${n.default ?? true}}`;
    case 'integer': return `\${${n.default ?? 0}}`;
    default: return '${}';
  }
}

function infoFor(name, node) {
  const n = resolveRef(node);
  return () => {
    const el = document.createElement('div');
    el.className = 'cm-schema-info';
    const head = document.createElement('div');
    head.className = 'cm-schema-type';
    head.textContent = describeType(n);
    const body = document.createElement('p');
    body.textContent = n?.description || '';
    el.append(head, body);
    return el;
  };
}

/** The Object node that holds the cursor as a key position, or null. */
function objectForKey(state, pos) {
  const node = syntaxTree(state).resolveInner(pos, -1);
  if (node.name === 'PropertyName') return { object: node.parent?.parent, from: node.from, to: node.to, quoted: true };
  if (node.name === 'Object') return { object: node, from: pos, to: pos, quoted: false };
  if (node.name === '⚠' && node.parent?.name === 'Object') return { object: node.parent, from: node.from, to: pos, quoted: false };
  if (node.name === 'String' && node.parent?.name === 'Object') return { object: node.parent, from: node.from, to: node.to, quoted: true };
  return null;
}

function keyCompletion(context) {
  const { state, pos } = context;
  const place = objectForKey(state, pos);
  if (!place?.object) return null;
  const target = schemaAt(pathOf(state, place.object));
  if (!target?.properties) return null;
  const present = new Set();
  for (let c = place.object.firstChild; c; c = c.nextSibling) {
    const name = c.name === 'Property' ? c.getChild('PropertyName') : null;
    if (name && !(name.from === place.from)) present.add(unquote(state.sliceDoc(name.from, name.to)));
  }
  const options = Object.entries(target.properties)
    .filter(([key]) => !present.has(key))
    .map(([key, node]) => snippetCompletion(`"${key}": ${template(node)}`, {
      label: key,
      type: 'property',
      detail: describeType(node),
      info: infoFor(key, node),
    }));
  if (!options.length) return null;
  return { from: place.from, to: place.quoted ? place.to : undefined, options, validFor: /^"?[\w$]*"?$/ };
}

function valueCompletion(context) {
  const { state, pos } = context;
  const node = syntaxTree(state).resolveInner(pos, -1);
  let valueNode = null;
  let property = null;
  if (['String', 'Number', 'True', 'False', 'Null'].includes(node.name) && node.parent?.name === 'Property') {
    valueNode = node;
    property = node.parent;
  } else if (node.name === 'Property' || (node.name === '⚠' && node.parent?.name === 'Property')) {
    property = node.name === 'Property' ? node : node.parent;
  }
  if (!property) return null;
  const name = property.getChild('PropertyName');
  if (!name || pos <= name.to) return null;
  const path = [...pathOf(state, property), unquote(state.sliceDoc(name.from, name.to))];
  const target = schemaAt(path);
  if (!target) return null;
  let values = [];
  if (target.enum) values = target.enum;
  else if (target.type === 'boolean') values = [true, false];
  else if (target.const !== undefined) values = [target.const];
  else if (target.default !== undefined && target.type === 'integer') values = [target.default];
  if (!values.length) return null;
  return {
    from: valueNode ? valueNode.from : pos,
    to: valueNode ? valueNode.to : undefined,
    options: values.map((v) => ({ label: JSON.stringify(v), type: 'enum', detail: v === target.default ? 'default' : undefined, info: target.description })),
  };
}

/** A CodeMirror completion source for the site config. */
export function schemaCompletion(context) {
  const word = context.matchBefore(/"?[\w$]*"?/);
  if (!context.explicit && (!word || word.from === word.to)) {
    // Offer keys right after `{` or `,` and a newline only when asked (Ctrl+Space) or typing.
    return null;
  }
  return keyCompletion(context) || valueCompletion(context);
}

/** Hover docs: a field name or value shows its type, range, default and description. */
export const schemaHover = hoverTooltip((view, pos, side) => {
  const { state } = view;
  let node = syntaxTree(state).resolveInner(pos, side);
  let path;
  if (node.name === 'PropertyName') {
    const property = node.parent;
    path = [...pathOf(state, property), unquote(state.sliceDoc(node.from, node.to))];
  } else if (VALUE_NODES.has(node.name) && node.name !== 'Object' && node.name !== 'Array') {
    path = pathOf(state, node);
  } else {
    return null;
  }
  const target = schemaAt(path);
  if (!target?.description) return null;
  const label = path.filter((p) => typeof p === 'string').pop() || 'config';
  return {
    pos: node.from,
    end: node.to,
    above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = 'cm-schema-hover';
      const title = document.createElement('div');
      title.className = 'cm-schema-title';
      title.textContent = label;
      const type = document.createElement('div');
      type.className = 'cm-schema-type';
      type.textContent = describeType(target);
      const body = document.createElement('p');
      body.textContent = target.description;
      dom.append(title, type, body);
      return { dom };
    },
  };
});
