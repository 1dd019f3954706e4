// Loads the built package (pkg/index.js over pkg/wasm/) synchronously, as Node users do.
// Not a test file itself: imported by the *.test.mjs files.
import { existsSync, readFileSync } from 'node:fs';

export const pkgDir = new URL('../', import.meta.url);
export const repoRoot = new URL('../../', import.meta.url);
export const wasmUrl = new URL('wasm/nudge_rules_bg.wasm', pkgDir);
/** The config-as-code module (docs/contract/as-code.md), loaded on demand by users; the tests load it up front. */
export const asCodeWasmUrl = new URL('wasm/config-as-code/nudge_rules_bg.wasm', pkgDir);

for (const file of [wasmUrl, new URL('wasm/nudge_rules.js', pkgDir), asCodeWasmUrl]) {
  if (!existsSync(file)) {
    throw new Error(`${file.pathname} is missing: build it with \`make wasm\` (scripts/build-wasm.sh)`);
  }
}
const pkg = await import('../index.js');
pkg.initSync({ module: readFileSync(wasmUrl) });
pkg.initConfigAsCodeSync({ module: readFileSync(asCodeWasmUrl) });

export const { NudgeEngine, RecordedSessions, normalizePageUrl, previewResponse, validateConfig } = pkg;
export { pkg };

/** Reads a repository file (vectors, examples) as text. */
export function readRepoFile(path) {
  return readFileSync(new URL(path, repoRoot), 'utf8');
}

export const STOREFRONT = readRepoFile('examples/storefront.json');

/** A small deterministic generator (mulberry32): `rng(seed)()` is a number in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
