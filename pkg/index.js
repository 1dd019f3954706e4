// The entry of the nudge-rules npm package: the wasm-bindgen glue (generated into ./wasm/ by
// scripts/build-wasm.sh), re-exported under the names of docs/JS-API.md.
//
// Browser: `await init()` fetches wasm/nudge_rules_bg.wasm next to the glue.
// Node:    `initSync({ module: fs.readFileSync(new URL('wasm/nudge_rules_bg.wasm', import.meta.resolve('nudge-rules'))) })`.
export {
  default,
  initSync,
  NudgeEngine,
  normalizePageUrl,
  validateConfig,
} from './wasm/nudge_rules.js';
