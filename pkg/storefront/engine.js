// The engine of the storefront runtime: the slim WASM module (decide only, src/wasm_slim.rs, not
// the editor's), loaded once per page, warmed up, and the compiled config it decides with
// (docs/contract/storefront.md's 50 ms budget: each compile and decision in a task of its own).
import initEngine, { NudgeEngine } from '../wasm/slim/nudge_rules.js';
import { mark, yieldToPage } from './browser.js';
import { messageOf } from './errors.js';

/** What `install` throws when the module is not loaded (said once, by `load`, not per config). */
export const ENGINE_DOWN = new Error('engine down');

// The engine's module (its glue finds the .wasm beside itself), compiled once per page: with
// `WebAssembly.instantiateStreaming` (the glue's path for a URL), which compiles while the bytes
// arrive and off the main thread.
let moduleReady = null;
function loadModule(wasmUrl) {
  moduleReady ??= initEngine(wasmUrl ? { module_or_path: wasmUrl } : undefined).catch((e) => {
    moduleReady = null;
    throw e;
  });
  return moduleReady;
}

// V8 compiles a WebAssembly function when it is first called (lazy compilation), on the main
// thread: the page's first config compile and first decision would pay for most of the module's
// code in one task each. A few small calls, each in a task of its own, compile it bit by bit
// first (docs/contract/storefront.md's 50 ms budget); their results are thrown away.
const WARM_RULE = { id: 'w', nudge: { type: 'toast', message: 'm', cta: 'c' } };
const WARM_STEPS = [
  { version: 1 },
  { version: 1, rules: [{ ...WARM_RULE, when: {} }] },
  {
    version: 1,
    max_nudges_per_session: 3,
    quiet_zones: ['/q/**', '/c'],
    rules: [{ ...WARM_RULE, when: { pages: ['/p/*', '/w/**'], min_intent_score: 1, min_idle_ms: 1 }, cap: { per_session: 2, cooldown_ms: 1000 }, holdout_percent: 1 }],
  },
];
let warmed = null;
function warmModule() {
  warmed ??= (async () => {
    let last = null;
    for (const cfg of WARM_STEPS) {
      await yieldToPage();
      mark('warm');
      try {
        const next = new NudgeEngine(cfg);
        last?.free?.();
        last = next;
      } catch {
        // a warm-up only
      }
    }
    await yieldToPage();
    mark('warm');
    try {
      last?.decide({ intent_score: 50, page_url: '/p/x', idle_ms: 0, visitor_id: 'vis_w', history: [{ rule_id: 'w', ms_ago: 1, this_session: true }] });
    } catch {
      // a warm-up only
    }
    last?.free?.();
  })();
  return warmed;
}

/**
 * The engine of one runtime.
 * @param {{ wasmUrl?: string | URL, fail: (code: string, message: string, cause?: unknown) => void }} options
 */
export function createEngine({ wasmUrl, fail }) {
  let engine = null;
  let config = null; // the config compiled, for a held-out rule's nudge type
  let loaded = Promise.resolve(false);
  return {
    /** Starts loading the module (streaming, off the main thread); a failure goes to `fail`. */
    load() {
      loaded = loadModule(wasmUrl).then(() => {
        mark('engine');
        return true;
      }, (e) => {
        fail('engine', `the engine could not be loaded (${messageOf(e)}); no nudges`, e);
        return false;
      });
    },
    /**
     * Compiles `cfg` and decides with it from then on. Throws what the engine throws for a config
     * it refuses, or ENGINE_DOWN when the module did not load.
     */
    async install(cfg) {
      if (!(await loaded)) throw ENGINE_DOWN;
      await warmModule();
      // The config's compile gets a main-thread task of its own: apart from the module's
      // instantiation before it and the first decision after it.
      await yieldToPage();
      mark('compile');
      const next = new NudgeEngine(cfg);
      mark('compiled');
      engine?.free?.();
      engine = next;
      config = cfg;
    },
    /** Whether a config is compiled. */
    get compiled() {
      return engine !== null;
    },
    /** The engine's decision on a session state (docs/JS-API.md, `decide`); throws what it throws. */
    decide: (state) => engine.decide(state),
    /** The nudge type of rule `ruleId` of the config compiled. */
    nudgeType: (ruleId) => (Array.isArray(config?.rules) ? config.rules.find((r) => r && r.id === ruleId) : null)?.nudge?.type,
  };
}
