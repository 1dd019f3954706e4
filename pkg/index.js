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
  /** Each rule's nudge, in config order; read from `config()` on the first fast preview. */
  #nudges = null;

  preview(sessionState) {
    if (isPlainState(sessionState)) {
      const outcome = this._previewOutcome(
        sessionState.intent_score,
        sessionState.page_url,
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
