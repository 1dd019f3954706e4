// The entry of the nudge-rules npm package: the wasm-bindgen glue (generated into ./wasm/ by
// scripts/build-wasm.sh), re-exported under the names of docs/JS-API.md.
//
// Browser: `await init()` fetches wasm/nudge_rules_bg.wasm next to the glue.
// Node:    `initSync({ module: fs.readFileSync(new URL('wasm/nudge_rules_bg.wasm', import.meta.resolve('nudge-rules'))) })`.
import { NudgeEngine as GeneratedEngine } from './wasm/nudge_rules.js';

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

const hasOwn = Object.prototype.hasOwnProperty;

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

const encoder = new TextEncoder();

/** Longest page URL (UTF-16 code units) written into the input buffer; a longer one takes the
 * string path, where the engine rejects it (SPEC 4: at most 8,192 bytes). */
const MAX_INPUT_UNITS = 8192;

/**
 * A compiled site config. The generated class, with two hot paths that pass the page URL through
 * an input buffer in WASM memory (written with `TextEncoder.encodeInto`, so no string is
 * allocated and freed per call):
 *
 * - `previewFields` calls `_previewFieldsInput` (src/wasm.rs), the same code as the generated
 *   `previewFields`;
 * - `preview` takes a fast path for plain session states: one stateless call
 *   (`_previewOutcomeInput`) returns the firing rule's index and the reason text as one string,
 *   `"<code> <reason>"`, and the result object is built here from the rule's nudge, instead of
 *   converting the state to JSON and the result field by field across the boundary.
 *
 * The object built here has exactly the shape of the native `PreviewResult` (src/wire.rs,
 * `PreviewResult::from_preview`: `{ would_fire, nudge: { type, message, cta, reason } | null,
 * reason? }`, with `reason` only when no nudge fires). Results are identical either way
 * (pkg/test/parity.test.mjs compares them with `previewBody` on 100,000 generated cases).
 */
export class NudgeEngine extends GeneratedEngine {
  /** Each rule's nudge, in config order; read from `config()` on the first fast preview. */
  #nudges = null;
  /** The module's memory, and a view of the input buffer in it. */
  #memory = null;
  #input = null;
  #inputAddress = 0;
  #inputCapacity = 0;

  /** Writes `url` into the input buffer and returns its length in bytes. */
  #writeInput(url) {
    const needed = url.length * 3; // UTF-8 bytes of a UTF-16 string, at most
    if (needed > this.#inputCapacity) {
      this.#inputCapacity = Math.max(needed, 256);
      this.#inputAddress = this._inputBuffer(this.#inputCapacity);
      this.#input = null;
    }
    this.#memory ??= this._memory();
    // A growing memory detaches the old ArrayBuffer: view it again.
    if (this.#input === null || this.#input.buffer !== this.#memory.buffer) {
      this.#input = new Uint8Array(this.#memory.buffer, this.#inputAddress, this.#inputCapacity);
    }
    return encoder.encodeInto(url, this.#input).written;
  }

  previewFields(intentScore, pageUrl, idleMs) {
    if (typeof pageUrl === 'string' && pageUrl.length <= MAX_INPUT_UNITS) {
      return this._previewFieldsInput(intentScore, this.#writeInput(pageUrl), idleMs);
    }
    return super.previewFields(intentScore, pageUrl, idleMs);
  }

  preview(sessionState) {
    if (isPlainState(sessionState) && sessionState.page_url.length <= MAX_INPUT_UNITS) {
      const outcome = this._previewOutcomeInput(
        sessionState.intent_score,
        this.#writeInput(sessionState.page_url),
        sessionState.idle_ms ?? 0,
      );
      if (outcome !== undefined) {
        const space = outcome.indexOf(' ');
        const code = Number(outcome.slice(0, space));
        const reason = outcome.slice(space + 1);
        if (code < 0) return { would_fire: false, nudge: null, reason };
        this.#nudges ??= this.config().rules.map((rule) => rule.nudge);
        const { type, message, cta } = this.#nudges[code];
        return { would_fire: true, nudge: { type, message, cta, reason } };
      }
    }
    return super.preview(sessionState);
  }
}
