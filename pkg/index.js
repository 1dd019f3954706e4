// The entry of the nudge-rules npm package: the wasm-bindgen glue (generated into ./wasm/ by
// scripts/build-wasm.sh), re-exported under the names of docs/JS-API.md.
//
// Browser: `await init()` fetches wasm/nudge_rules_bg.wasm next to the glue.
// Node:    `initSync({ module: fs.readFileSync(new URL('wasm/nudge_rules_bg.wasm', import.meta.resolve('nudge-rules'))) })`.
import { NudgeEngine as GeneratedEngine } from './wasm/nudge_rules.js';
import * as asCode from './wasm/config-as-code/nudge_rules.js';

// The engine judges the hosts of absolute page URLs with the platform's WHATWG URL parser
// (`URL.canParse`, src/host.rs). Where a browser or Node predates it (Chrome 120, Firefox 115,
// Safari 17, Node 18.17), the same verdict through the `URL` constructor.
if (typeof URL.canParse !== 'function') {
  URL.canParse = (url, base) => {
    try {
      new URL(url, base);
      return true;
    } catch {
      return false;
    }
  };
}

export {
  default,
  initSync,
  normalizePageUrl,
  previewResponse,
  validateConfig,
} from './wasm/nudge_rules.js';

// Config as code (SPEC 8; docs/JS-API.md "Config as code"): a second module with the whole engine,
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

/** How many page URLs one engine keeps in the module (`NudgeEngine`, `#pageUrlIndex`). */
const MAX_KEPT_PAGE_URLS = 1024;
/** The longest page URL kept, in UTF-16 units: 1,024 of them are at most 768 KB of UTF-8. */
const MAX_KEPT_PAGE_URL_LENGTH = 256;

/**
 * True when `state` is a plain object whose own enumerable keys are session_state fields and
 * whose values have the right JS types: then its JSON form is exactly these three values, and the
 * engine can take them as primitives. Anything else (unknown keys, wrong types, a class instance
 * with `toJSON`, a string with lone surrogates) goes through the full path, which reports the
 * exact error. Ranges and whole numbers are checked by the engine itself.
 */
function isPlainState(state) {
  if (state === null || typeof state !== 'object') return false;
  const proto = Object.getPrototypeOf(state);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in state) {
    if (!hasOwn.call(state, key)) return false;
    if (key !== 'intent_score' && key !== 'page_url' && key !== 'idle_ms') return false;
  }
  const url = state.page_url;
  return (
    typeof state.intent_score === 'number' &&
    typeof url === 'string' &&
    url.isWellFormed?.() === true &&
    (state.idle_ms === undefined || typeof state.idle_ms === 'number')
  );
}

/**
 * A compiled site config. The generated class, with `preview` taking a fast path for plain
 * session states: one stateless call (`_previewOutcome`, src/wasm.rs) returns the firing rule's
 * index and the reason text as one string, `"<code> <reason>"`, and the result object is built
 * here from the rule's nudge, instead of converting the state to JSON and the result field by
 * field across the WebAssembly boundary.
 *
 * The object built here has exactly the shape of the native `PreviewResult` (src/wire.rs,
 * `PreviewResult::from_preview`: `{ would_fire, nudge: { type, message, cta, reason } | null,
 * reason? }`, with `reason` only when no nudge fires). Results are identical either way
 * (pkg/test/parity.test.mjs compares them with `previewBody` on 100,000 generated cases).
 */
export class NudgeEngine extends GeneratedEngine {
  /** The nudges of the rules that fired so far, by rule index (`_ruleNudge`, one at a time:
   * reading the whole `config()` took 2 to 4 ms at 1,000 rules on a fresh engine). */
  #nudges = [];

  /**
   * Page URLs already copied into the module, by their index there (`_internPageUrl`): a URL
   * previewed again (the same page as the idle time grows, the rows of a decision map) is named
   * by its index instead of being copied across the boundary again. At most
   * `MAX_KEPT_PAGE_URLS` URLs of at most `MAX_KEPT_PAGE_URL_LENGTH` UTF-16 units; when full, all
   * are forgotten and the next ones kept afresh.
   */
  #pageUrlIndex = new Map();

  /** The module's index of `url`, kept on first sight; `undefined` for a URL too long to keep. */
  #pageUrlAt(url) {
    const known = this.#pageUrlIndex.get(url);
    if (known !== undefined || url.length > MAX_KEPT_PAGE_URL_LENGTH) return known;
    if (this.#pageUrlIndex.size >= MAX_KEPT_PAGE_URLS) {
      this._clearPageUrls();
      this.#pageUrlIndex.clear();
    }
    const index = this._internPageUrl(url);
    this.#pageUrlIndex.set(url, index);
    return index;
  }

  previewFields(intentScore, pageUrl, idleMs) {
    const at = typeof pageUrl === 'string' ? this.#pageUrlAt(pageUrl) : undefined;
    return at === undefined ? super.previewFields(intentScore, pageUrl, idleMs) : this._previewFieldsAt(intentScore, at, idleMs);
  }

  preview(sessionState) {
    if (isPlainState(sessionState)) {
      const url = sessionState.page_url;
      const at = this.#pageUrlAt(url);
      const intent = sessionState.intent_score;
      const idle = sessionState.idle_ms ?? 0;
      const outcome = at === undefined ? this._previewOutcome(intent, url, idle) : this._previewOutcomeAt(intent, at, idle);
      if (outcome !== undefined) {
        const space = outcome.indexOf(' ');
        const code = Number(outcome.slice(0, space));
        const reason = outcome.slice(space + 1);
        if (code < 0) return { would_fire: false, nudge: null, reason };
        const { type, message, cta } = (this.#nudges[code] ??= this._ruleNudge(code));
        return { would_fire: true, nudge: { type, message, cta, reason } };
      }
    }
    return super.preview(sessionState);
  }

  /** The config source, for the config-as-code module's engine (compiled on first use). */
  #source;
  #asCodeEngine = null;

  constructor(config) {
    super(config);
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
