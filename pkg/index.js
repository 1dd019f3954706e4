// The entry of the nudge-rules npm package: the wasm-bindgen glue (generated into ./wasm/ by
// scripts/build-wasm.sh), re-exported under the names of docs/JS-API.md.
//
// Browser: `await init()` fetches wasm/nudge_rules_bg.wasm next to the glue.
// Node:    `initSync({ module: fs.readFileSync(new URL('wasm/nudge_rules_bg.wasm', import.meta.resolve('nudge-rules'))) })`.
import { NudgeEngine as GeneratedEngine } from './wasm/nudge_rules.js';
import * as asCode from './wasm/config-as-code/nudge_rules.js';

// The engine judges the hosts of absolute page URLs with the platform's WHATWG URL parser
// (`URL.canParse`, or `new URL` where a browser or Node predates it; src/host.rs), read from the
// platform, never written to it: importing the package changes none of the page's globals.

export {
  default,
  initSync,
  normalizePageUrl,
  previewResponse,
  validateConfig,
} from './wasm/nudge_rules.js';

// Config as code (docs/contract/as-code.md; docs/JS-API.md "Config as code"): a second module with the whole engine,
// loaded only when asked for, so that the first stays small. `initConfigAsCode()` fetches
// wasm/config-as-code/nudge_rules_bg.wasm next to its glue; Node: `initConfigAsCodeSync({ module })`.
let asCodeReady = false;

export async function initConfigAsCode(moduleOrPath) {
  const out = await asCode.default(moduleOrPath);
  asCodeReady = true;
  return out;
}

export function initConfigAsCodeSync(module) {
  const out = asCode.initSync(module);
  asCodeReady = true;
  return out;
}

function configAsCode() {
  if (!asCodeReady) {
    throw new Error('config as code is not loaded: call `await initConfigAsCode()` (or initConfigAsCodeSync) first');
  }
  return asCode;
}

/** The config-as-code module's handle behind each `RecordedSessions`. */
const recordedHandles = new WeakMap();

/** Recorded sessions read once, to replay against many configs. */
export class RecordedSessions {
  constructor(sessions) {
    recordedHandles.set(this, new (configAsCode().RecordedSessions)(sessions));
  }

  get length() {
    return recordedHandles.get(this).length;
  }

  free() {
    recordedHandles.get(this)?.free();
    recordedHandles.delete(this);
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * session_state's fields as the module gives them (`_sessionStateShape`, from
 * `SessionState::FIELDS`): `[name, typeof, required]` each, in the order `_previewState*` takes
 * their values (intent score, page URL, idle time). Read by the first engine's constructor, once
 * the module runs.
 */
let stateShape = null;
/** The values of the state `readPlainState` read last, in `stateShape`'s order. */
const stateValues = [];

/**
 * True when `state` is a plain object whose own enumerable keys are session_state fields, each
 * value of its field's type (or absent, if not required), with its values read into
 * `stateValues`: then its JSON form is these values, and they can cross into the module as
 * primitives. The one piece of the object API left in JS,
 * because reading a JS object from inside the module takes a call out of it per property (this
 * check, made there, cost 370 ns per preview, a third of the whole; passing the values untyped
 * and testing them there, 200 ns). Everything else (unknown keys, wrong types, a class instance
 * with `toJSON`) goes through `JSON.stringify` in the module for the exact error, and every rule
 * of docs/contract/preview.md (whole numbers, ranges, the default idle time, the URL, a lone surrogate) is the
 * module's.
 */
function readPlainState(state) {
  if (state === null || typeof state !== 'object') return false;
  const proto = Object.getPrototypeOf(state);
  if (proto !== Object.prototype && proto !== null) return false;
  let keys = 0;
  for (const key in state) {
    if (!hasOwn.call(state, key)) return false;
    keys++;
  }
  let known = 0;
  for (let i = 0; i < stateShape.length; i++) {
    const field = stateShape[i];
    const value = state[field[0]];
    stateValues[i] = value;
    if (value === undefined) {
      if (field[2]) return false;
      if (hasOwn.call(state, field[0])) known++;
    } else {
      if (typeof value !== field[1]) return false;
      known++;
    }
  }
  return known === keys;
}

/**
 * A compiled site config: the generated class, whose previews name a page URL the module has kept
 * by its index instead of copying it across the boundary again. The module keeps the URLs and
 * decides which (src/wasm/page_urls.rs); this wrapper only looks a URL up in the module's index.
 * The result objects are the module's too (src/wasm/result.rs).
 */
export class NudgeEngine extends GeneratedEngine {
  /** The module's index of the page URLs it keeps, a `Map` from URL to index (read only here: a
   * URL found is passed by its index, another one as text to be kept). */
  #pageUrls = this._pageUrlIndex();

  previewFields(intentScore, pageUrl, idleMs) {
    if (typeof pageUrl !== 'string') return super.previewFields(intentScore, pageUrl, idleMs);
    const at = this.#pageUrls.get(pageUrl);
    return at === undefined
      ? this._previewFieldsKeep(intentScore, pageUrl, pageUrl, idleMs)
      : this._previewFieldsAt(intentScore, at, idleMs);
  }

  preview(sessionState) {
    if (readPlainState(sessionState)) {
      const intent = stateValues[0];
      const url = stateValues[1];
      const idle = stateValues[2];
      const at = this.#pageUrls.get(url);
      const result = at === undefined ? this._previewStateKeep(intent, url, url, idle) : this._previewStateAt(intent, at, idle);
      if (result !== undefined) return result;
    }
    return super.preview(sessionState);
  }

  /** The config source, for the config-as-code module's engine (compiled on first use). */
  #source;
  #asCodeEngine = null;

  constructor(config) {
    super(config);
    stateShape ??= GeneratedEngine._sessionStateShape();
    this.#source = typeof config === 'string' ? config : JSON.stringify(config);
  }

  #full() {
    this.#asCodeEngine ??= new (configAsCode().NudgeEngine)(this.#source);
    return this.#asCodeEngine;
  }

  test(scenarios) {
    return this.#full().test(scenarios);
  }

  coverage(scenarios) {
    return this.#full().coverage(scenarios);
  }

  scenario(name, sessionState) {
    return this.#full().scenario(name, sessionState);
  }

  replay(sessions) {
    const handle = recordedHandles.get(sessions);
    return handle ? this.#full()._replayRecorded(handle, false) : this.#full().replay(sessions);
  }

  replaySummary(sessions) {
    const handle = recordedHandles.get(sessions);
    return handle ? this.#full()._replayRecorded(handle, true) : this.#full().replaySummary(sessions);
  }

  static diff(oldConfig, newConfig, inputs) {
    return configAsCode().NudgeEngine.diff(oldConfig, newConfig, inputs);
  }

  free() {
    this.#asCodeEngine?.free();
    this.#asCodeEngine = null;
    super.free();
  }
}
