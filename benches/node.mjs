// The WASM package in Node, against JS peers and against the native crate, on the same state mix
// (benches/states.json) and the storefront config (examples/storefront.json).
//
//   node benches/node.mjs [--json FILE]          (make bench-node; build pkg/wasm first)
//
// Measured: the package's (a) object API `preview`, (b) `previewBody` (JSON text in and out),
// (c) `previewFields` (three primitives in, a code out; the mix's URLs are kept in the module
// after their first call, src/wasm/page_urls.rs, and again with the URL copied on every call),
// `new NudgeEngine` and module instantiation; two peers doing the same decision: `json-logic-engine` in compiled mode
// (`engine.build`) and a hand-written JS function using `picomatch`; and the native figures of
// (a), (b), (c) from `tools/src/bin/bench_native.rs`. Each loop runs once to warm up, then 9 times,
// in three rounds that interleave native, WASM and peers; the best run is reported, per call.
//
// Peers: both get the page as a path normalized the way hand-written JS would do it
// (`new URL(url, base).pathname`, lower-cased, trailing slash removed): cheaper and less strict
// than docs/contract/urls.md, which flatters the peers. Every storefront pattern is a literal path or a literal
// `X/**` prefix, so `starts_with`/`==` (JSON Logic) and picomatch express the rules exactly.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { LogicEngine } from 'json-logic-engine';
import picomatch from 'picomatch';

const root = new URL('../', import.meta.url);
const wasmDir = new URL('pkg/wasm/', root);
const wasmBytes = readFileSync(new URL('nudge_rules_bg.wasm', wasmDir));
const glue = await import(new URL('pkg/index.js', root));
const storefront = readFileSync(new URL('examples/storefront.json', root), 'utf8');
const { states } = JSON.parse(readFileSync(new URL('benches/states.json', root), 'utf8'));
const objects = states.map(({ intent_score, page_url, idle_ms }) => ({ intent_score, page_url, idle_ms }));
const bodies = objects.map((s) => JSON.stringify({ session_state: s }));
const N = states.length;

let t = performance.now();
glue.initSync({ module: new WebAssembly.Module(wasmBytes) });
const initMs = performance.now() - t;
const engine = new glue.NudgeEngine(storefront);
const copyingPreviewFields = Object.getPrototypeOf(glue.NudgeEngine.prototype).previewFields;

/** Median ns per call of `body(calls)` over 5 runs after a warm-up. */
function nsPerCall(calls, body) {
  body(calls);
  const runs = [];
  for (let r = 0; r < 9; r++) {
    const start = performance.now();
    body(calls);
    runs.push(((performance.now() - start) * 1e6) / calls);
  }
  // The best run: on a shared machine other work only ever adds time, so the fastest of nine is
  // the steadiest estimate of the code's own cost (the median moved by a third between runs).
  return Math.min(...runs);
}

// --- the peers -------------------------------------------------------------------------------
function jsPath(url) {
  let p = new URL(url, 'https://shop.example').pathname.toLowerCase();
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

const logic = new LogicEngine();
logic.addMethod('starts_with', ([s, prefix]) => typeof s === 'string' && s.startsWith(prefix), {
  deterministic: true,
  sync: true,
});
const under = (p) => ({ or: [{ '==': [{ var: 'path' }, p] }, { starts_with: [{ var: 'path' }, `${p}/`] }] });
const is = (p) => ({ '==': [{ var: 'path' }, p] });
const ge = (v, n) => ({ '>=': [{ var: v }, n] });
const le = (v, n) => ({ '<=': [{ var: v }, n] });
const storefrontLogic = logic.build({
  if: [
    { or: [under('/checkout'), under('/cart'), under('/account'), under('/orders')] }, -2,
    { and: [ge('intent', 85), ge('idle', 20000), { or: [under('/products'), under('/collections')] }] }, 0,
    { and: [ge('intent', 60), ge('idle', 8000), under('/products'), { '!': is('/products/gift-card') }] }, 1,
    { and: [ge('intent', 30), ge('idle', 2000), { or: [under('/collections/sale'), under('/collections/clearance')] }] }, 2,
    { and: [ge('intent', 30), le('intent', 59), { or: [under('/collections'), under('/products')] }] }, 3,
    { and: [ge('intent', 20), ge('idle', 6000), is('/search')] }, 4,
    { and: [ge('idle', 15000), under('/blog'), { '!': under('/blog/tags') }] }, 5,
    { and: [le('intent', 40), ge('idle', 3000), is('/')] }, 6,
    { and: [ge('intent', 90), ge('idle', 45000), { '!': under('/blog') }, { '!': is('/search') }] }, 8,
    -1,
  ],
});
const jsonLogic = (s) => storefrontLogic({ path: jsPath(s.page_url), intent: s.intent_score, idle: s.idle_ms });

const m = (glob) => picomatch(glob);
const quiet = [m('/checkout/**'), m('/cart/**'), m('/account/**'), m('/orders/**')];
const products = m('/products/**');
const collections = m('/collections/**');
const sale = m('/collections/{sale,clearance}/**');
const blog = m('/blog/**');
const blogTags = m('/blog/tags/**');
function handWritten(s) {
  const p = jsPath(s.page_url);
  const i = s.intent_score;
  const idle = s.idle_ms;
  if (quiet.some((q) => q(p))) return -2;
  if (i >= 85 && idle >= 20000 && (products(p) || collections(p))) return 0;
  if (i >= 60 && idle >= 8000 && products(p) && p !== '/products/gift-card') return 1;
  if (i >= 30 && idle >= 2000 && sale(p)) return 2;
  if (i >= 30 && i <= 59 && (collections(p) || products(p))) return 3;
  if (i >= 20 && idle >= 6000 && p === '/search') return 4;
  if (idle >= 15000 && blog(p) && !blogTags(p)) return 5;
  if (i <= 40 && idle >= 3000 && p === '/') return 6;
  if (i >= 90 && idle >= 45000 && !blog(p) && p !== '/search') return 8;
  return -1;
}

// Everyone must agree with the expected codes before their speed means anything.
for (const s of states) {
  const got = [engine.previewFields(s.intent_score, s.page_url, s.idle_ms), jsonLogic(s), handWritten(s)];
  if (got.some((g) => g !== s.fires)) throw new Error(`disagreement on ${JSON.stringify(s)}: ${got}`);
}

// --- measurements ----------------------------------------------------------------------------
let sink = 0;
const measureWasm = () => ({
  preview_fields_ns: nsPerCall(400_000, (n) => {
    for (let i = 0; i < n; i++) {
      const s = states[i % N];
      sink += engine.previewFields(s.intent_score, s.page_url, s.idle_ms);
    }
  }),
  // The same calls through the generated method, which copies the URL into the module on every
  // call: what a URL not seen before costs, less keeping it (pkg/index.js names a kept URL by
  // its index).
  preview_fields_copied_ns: nsPerCall(400_000, (n) => {
    for (let i = 0; i < n; i++) {
      const s = states[i % N];
      sink += copyingPreviewFields.call(engine, s.intent_score, s.page_url, s.idle_ms);
    }
  }),
  preview_object_ns: nsPerCall(50_000, (n) => {
    for (let i = 0; i < n; i++) sink += engine.preview(objects[i % N]).would_fire ? 1 : 0;
  }),
  preview_body_ns: nsPerCall(50_000, (n) => {
    for (let i = 0; i < n; i++) sink += engine.previewBody(bodies[i % N]).length;
  }),
  compile_us:
    nsPerCall(300, (n) => {
      for (let i = 0; i < n; i++) new glue.NudgeEngine(storefront).free();
    }) / 1000,
});
const measurePeers = () => ({
  json_logic_engine_ns: nsPerCall(400_000, (n) => {
    for (let i = 0; i < n; i++) sink += jsonLogic(states[i % N]);
  }),
  picomatch_js_ns: nsPerCall(400_000, (n) => {
    for (let i = 0; i < n; i++) sink += handWritten(states[i % N]);
  }),
});
execFileSync('cargo', ['build', '-q', '--release', '-p', 'nudge-rules-tools', '--bin', 'bench_native'], {
  cwd: fileURLToPath(root),
  stdio: 'inherit',
});
const nativeBin = fileURLToPath(new URL('target/release/bench_native', root));
const measureNative = () => {
  const native = JSON.parse(execFileSync(nativeBin, { encoding: 'utf8' }));
  delete native.sink;
  return native;
};
// Three rounds of native, WASM and peers, each figure the best of its rounds: this machine's
// speed drifts by up to 1.7x over minutes, and interleaving lets every side see the same
// conditions, so that the ratios compare like with like.
const best = (rounds) =>
  Object.fromEntries(Object.keys(rounds[0]).map((k) => [k, Math.min(...rounds.map((x) => x[k]))]));
const rounds = { native: [], wasm: [], peers: [] };
for (let round = 0; round < 3; round++) {
  rounds.native.push(measureNative());
  rounds.wasm.push(measureWasm());
  rounds.peers.push(measurePeers());
}
const native = best(rounds.native);
const wasm = { ...best(rounds.wasm), init_ms: initMs };
const peers = best(rounds.peers);

const wasmBytesGzip = execFileSync('bash', ['-c', `gzip -9 -c '${fileURLToPath(new URL('nudge_rules_bg.wasm', wasmDir))}' | wc -c`], {
  encoding: 'utf8',
});
const result = {
  wasm,
  peers,
  native,
  wasm_size: { raw_bytes: wasmBytes.length, gzip_bytes: Number(wasmBytesGzip.trim()) },
  node: process.version,
};

const r = (x) => (x >= 100 ? Math.round(x) : Math.round(x * 10) / 10);
console.log(`WASM package in Node ${process.version}, storefront config, ${N}-state mix (per call, best of 3 interleaved rounds of 9 runs)`);
console.log(`  previewFields      ${r(wasm.preview_fields_ns)} ns   native ${native.preview_fields_ns} ns   WASM/native ${(wasm.preview_fields_ns / native.preview_fields_ns).toFixed(2)}x`);
console.log(`  previewFields, URL copied each call ${r(wasm.preview_fields_copied_ns)} ns   WASM/native ${(wasm.preview_fields_copied_ns / native.preview_fields_ns).toFixed(2)}x`);
console.log(`  preview (objects)  ${r(wasm.preview_object_ns)} ns   native ${native.preview_object_ns} ns   WASM/native ${(wasm.preview_object_ns / native.preview_object_ns).toFixed(2)}x`);
console.log(`  previewBody (text) ${r(wasm.preview_body_ns)} ns   native ${native.preview_body_ns} ns   WASM/native ${(wasm.preview_body_ns / native.preview_body_ns).toFixed(2)}x`);
console.log(`  json-logic-engine compiled ${r(peers.json_logic_engine_ns)} ns: previewFields is ${(peers.json_logic_engine_ns / wasm.preview_fields_ns).toFixed(2)}x faster`);
console.log(`  picomatch hand-written JS  ${r(peers.picomatch_js_ns)} ns: previewFields is ${(peers.picomatch_js_ns / wasm.preview_fields_ns).toFixed(2)}x faster`);
console.log(`  new NudgeEngine ${r(wasm.compile_us)} us; module init ${r(wasm.init_ms)} ms; .wasm ${result.wasm_size.raw_bytes} bytes, ${result.wasm_size.gzip_bytes} gzip -9`);
const out = process.argv.indexOf('--json');
if (out > 0) writeFileSync(process.argv[out + 1], `${JSON.stringify(result, null, 2)}\n`);
if (sink === 0.5) console.log(sink);
