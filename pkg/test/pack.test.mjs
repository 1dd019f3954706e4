// `npm pack` / `npm publish` without a WASM build must refuse: the package's main entry imports
// wasm/ files that only `make wasm` makes. pkg/package.json's `prepack` runs
// pkg/scripts/check-wasm.mjs; these tests run that check against temp folders (no WASM build).
//   node --test pkg/test/pack.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHECK = join(PKG, 'scripts', 'check-wasm.mjs');
const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
/** The wasm/ files the package ships, relative to wasm/. */
const WASM_FILES = manifest.files.filter((f) => f.startsWith('wasm/')).map((f) => f.slice('wasm/'.length));

const check = (wasmDir) => spawnSync(process.execPath, [CHECK, wasmDir], { encoding: 'utf8' });

test('prepack runs the WASM check', () => {
  assert.equal(manifest.scripts?.prepack, 'node scripts/check-wasm.mjs');
});

test('the check refuses an empty wasm/ folder, naming make wasm and the missing files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nudge-pack-'));
  try {
    const result = check(dir);
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /make wasm/);
    assert.match(result.stderr, /nothing was packed/);
    for (const file of ['nudge_rules.js', 'nudge_rules_bg.wasm', 'config-as-code/nudge_rules.js', 'config-as-code/nudge_rules_bg.wasm']) {
      assert.ok(WASM_FILES.includes(file), file);
      assert.ok(result.stderr.includes(`wasm/${file}`), `${file}: ${result.stderr}`);
    }
    // A folder that does not exist at all is refused the same way.
    const missing = check(join(dir, 'absent'));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /make wasm/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the check refuses a partial or empty build, and passes a complete one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nudge-pack-'));
  try {
    // Every folder of the shipped wasm/ files (config-as-code/, slim/).
    for (const file of WASM_FILES) mkdirSync(dirname(join(dir, file)), { recursive: true });
    const [first, ...rest] = WASM_FILES;
    writeFileSync(join(dir, first), 'export {};\n');
    let result = check(dir);
    assert.equal(result.status, 1);
    assert.ok(!result.stderr.includes(`wasm/${first}\n`), result.stderr);
    for (const file of rest) assert.ok(result.stderr.includes(`wasm/${file}`), file);
    for (const file of rest) writeFileSync(join(dir, file), '');
    result = check(dir);
    assert.equal(result.status, 1, 'empty files are no build');
    for (const file of rest) writeFileSync(join(dir, file), 'x');
    result = check(dir);
    assert.equal(result.status, 0, result.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
