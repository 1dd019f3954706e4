// Speed of the built WASM package in Node (docs/PERFORMANCE.md, "WASM build profile").
//
//   node scripts/bench-wasm.mjs [--json]
//   NUDGE_WASM_DIR=dir node scripts/bench-wasm.mjs    (another wasm-bindgen --target web output)
//
// Loads pkg/wasm/ (build it first: scripts/build-wasm.sh) and times, on the storefront config
// (examples/storefront.json): 200,000 previewFields calls, 20,000 preview calls, 500 compiles,
// and the WebAssembly compile + instantiation. Each loop runs once to warm up, then 5 times;
// the median is reported.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const root = new URL('../', import.meta.url);
// NUDGE_WASM_DIR: another wasm-bindgen output directory (profile experiments).
const wasmDir = process.env.NUDGE_WASM_DIR
  ? pathToFileURL(`${resolve(process.env.NUDGE_WASM_DIR)}/`)
  : new URL('pkg/wasm/', root);
const wasmBytes = readFileSync(new URL('nudge_rules_bg.wasm', wasmDir));
const glue = await import(new URL('nudge_rules.js', wasmDir));
const storefront = readFileSync(new URL('examples/storefront.json', root), 'utf8');

let t = performance.now();
glue.initSync({ module: new WebAssembly.Module(wasmBytes) });
const initMs = performance.now() - t;

const engine = new glue.NudgeEngine(storefront);

// A mix of states: fires, quiet zones, misses, non-canonical URLs (slow path of normalization).
const states = [
  [82, '/products/linen-shirt', 9000],
  [90, '/products/linen-shirt', 25000],
  [82, '/products/gift-card', 9000],
  [40, '/products/gift-card', 0],
  [45, '/collections/sale', 2500],
  [45, '/collections/sale', 0],
  [35, '/search', 6000],
  [10, '/blog/post', 15000],
  [10, '/blog/tags/x', 15000],
  [10, '/', 3000],
  [95, '/about', 45000],
  [95, '/checkout/pay', 99999],
  [95, '/collections/gifts/x', 0],
  [70, '/Products/Linen-Shirt?color=blue', 12000],
  [70, 'https://shop.example/cart', 1000],
  [20, '/a/../collections/clearance/shoes', 3000],
];
const objects = states.map(([intent_score, page_url, idle_ms]) => ({ intent_score, page_url, idle_ms }));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(n, body) {
  body(n); // warm-up: lets V8 tier the hot functions up from Liftoff to TurboFan
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    body(n);
    runs.push(performance.now() - start);
  }
  return median(runs);
}

let sink = 0;
const fieldsMs = time(200_000, (n) => {
  for (let i = 0; i < n; i++) {
    const s = states[i & 15];
    sink += engine.previewFields(s[0], s[1], s[2]);
  }
});
const previewMs = time(20_000, (n) => {
  for (let i = 0; i < n; i++) {
    sink += engine.preview(objects[i & 15]).would_fire ? 1 : 0;
  }
});
const compileMs = time(500, (n) => {
  for (let i = 0; i < n; i++) {
    const e = new glue.NudgeEngine(storefront);
    sink += e.previewFields(82, '/products/linen-shirt', 9000);
    e.free();
  }
});

const result = {
  init_ms: +initMs.toFixed(1),
  preview_fields_200k_ms: +fieldsMs.toFixed(1),
  preview_fields_ns: Math.round((fieldsMs * 1e6) / 200_000),
  preview_20k_ms: +previewMs.toFixed(1),
  preview_us: +((previewMs * 1e3) / 20_000).toFixed(2),
  compile_500_ms: +compileMs.toFixed(1),
  compile_us: Math.round((compileMs * 1e3) / 500),
  sink,
};
if (process.argv.includes('--json')) {
  console.log(JSON.stringify(result));
} else {
  for (const [k, v] of Object.entries(result)) if (k !== 'sink') console.log(`${k.padEnd(24)} ${v}`);
}
