// The URL hash: `#i=82&t=9000&u=%2Fproducts%2Flinen-shirt&c=z…`.
// `c` (the config) is only there when it differs from the example config: `z` + base64url of the
// deflate-raw compressed text, or `b` + base64url of the plain UTF-8 text where the browser has no
// CompressionStream. `n`, encoded the same way, holds the rules' descriptions (notes.js) as a JSON
// object by rule id, when a rule has one. The visit's docs/contract/caps.md fields, when they are not the
// defaults: `x=1` (exit intent), `v` (the visitor id), `h` (the earlier nudges, as JSON).

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

async function pipe(bytes, stream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

export async function encodeConfig(text) {
  const bytes = new TextEncoder().encode(text);
  if (typeof CompressionStream === 'function') {
    return 'z' + toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')));
  }
  return encodePlain(text);
}

export async function decodeConfig(value) {
  const kind = value[0];
  const bytes = fromBase64Url(value.slice(1));
  if (kind === 'z') return new TextDecoder('utf-8', { fatal: true }).decode(await pipe(bytes, new DecompressionStream('deflate-raw')));
  if (kind === 'b') return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  throw new Error(`unknown config encoding "${kind}"`);
}

/** `b` + base64url of the plain UTF-8 text: synchronous, for a page about to go away. */
function encodePlain(text) {
  return 'b' + toBase64Url(new TextEncoder().encode(text));
}

/** The hash of a state, its config and notes already encoded (`c`, `n`: null leaves them out). */
function hashOf({ intent, idle, url, exitIntent = false, visitorId = undefined, history = [] }, c, n) {
  const params = new URLSearchParams();
  params.set('i', String(intent));
  params.set('t', String(idle));
  params.set('u', url);
  if (exitIntent) params.set('x', '1');
  if (visitorId !== undefined) params.set('v', visitorId);
  if (history.length) params.set('h', JSON.stringify(history));
  if (c !== null) params.set('c', c);
  if (n !== null) params.set('n', n);
  return '#' + params.toString();
}

/** Builds the hash for a state; `configText` null leaves the config out (the example config). */
export async function buildHash(fields) {
  const { configText, notes = null } = fields;
  return hashOf(fields,
    configText === null ? null : await encodeConfig(configText),
    notes ? await encodeConfig(JSON.stringify(notes)) : null);
}

/**
 * The same hash at once, uncompressed (`b`): written as the page goes away (pagehide), when a
 * change is still waiting for its compressed link, so that a reload opens what was on screen.
 */
export function buildHashNow(fields) {
  const { configText, notes = null } = fields;
  return hashOf(fields, configText === null ? null : encodePlain(configText), notes ? encodePlain(JSON.stringify(notes)) : null);
}

/** Why a config could not be decoded, in words (the browser's own text is "Failed to fetch"). */
function decodeError(err, value) {
  if (!value || !'zb'.includes(value[0])) return 'its config is not in a known encoding';
  if (err?.name === 'InvalidCharacterError') return 'its config is not valid base64';
  if (err instanceof TypeError && value[0] === 'z') return 'its compressed config is damaged or incomplete';
  if (err instanceof TypeError) return 'its config is not UTF-8 text';
  return String(err?.message || err);
}

/**
 * Reads a hash; every field is optional. Never throws: a config that cannot be decoded gives
 * `configError` (a reason in words) and no `configText`, and the other fields are still read.
 */
export async function parseHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const out = {};
  const intent = Number(params.get('i'));
  if (params.has('i') && Number.isInteger(intent)) out.intent = intent;
  const idle = Number(params.get('t'));
  if (params.has('t') && Number.isInteger(idle)) out.idle = idle;
  if (params.has('u')) out.url = params.get('u');
  if (params.has('x')) out.exitIntent = params.get('x') === '1';
  if (params.has('v')) out.visitorId = params.get('v');
  if (params.has('h')) {
    try {
      const history = JSON.parse(params.get('h'));
      if (Array.isArray(history)) out.history = history;
    } catch {
      // damaged earlier nudges are left out: the visit loads without them
    }
  }
  if (params.has('c')) {
    const value = params.get('c');
    try {
      out.configText = await decodeConfig(value);
    } catch (err) {
      out.configError = decodeError(err, value);
    }
  }
  if (params.has('n')) {
    try {
      const notes = JSON.parse(await decodeConfig(params.get('n')));
      if (notes && typeof notes === 'object' && !Array.isArray(notes)) out.notes = notes;
    } catch {
      // damaged descriptions are left out: they are notes, the config and visitor still load
    }
  }
  return out;
}
