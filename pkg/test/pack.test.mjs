// `npm pack` / `npm publish` without a WASM build must refuse: the package's main entry imports
// wasm/ files that only `make wasm` makes. pkg/package.json's `prepack` runs
// pkg/scripts/check-wasm.mjs; these tests run that check against temp folders (no WASM build).
//   node --test pkg/test/pack.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHECK = join(PKG, 'scripts', 'check-wasm.mjs');
const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
/** The wasm/ files the package ships, relative to wasm/. */
const WASM_FILES = manifest.files.filter((f) => f.startsWith('wasm/')).map((f) => f.slice('wasm/'.length));

/** The dist/ files the package ships (the storefront runtime and its .wasm), relative to dist/. */
const DIST_FILES = manifest.files.filter((f) => f.startsWith('dist/')).map((f) => f.slice('dist/'.length));

const check = (wasmDir, distDir = join(wasmDir, '..', 'dist')) => spawnSync(process.execPath, [CHECK, wasmDir, distDir], { encoding: 'utf8' });

/** A temp package root with wasm/ and dist/ folders (empty). */
const tempPackage = () => {
  const root = mkdtempSync(join(tmpdir(), 'nudge-pack-'));
  const wasm = join(root, 'wasm');
  const dist = join(root, 'dist');
  mkdirSync(wasm);
  mkdirSync(dist);
  return { root, wasm, dist };
};
/** Every shipped wasm/ and dist/ file written, dist/'s .wasm the same bytes as wasm/slim/'s. */
const completeBuild = ({ wasm, dist }) => {
  for (const file of WASM_FILES) {
    mkdirSync(dirname(join(wasm, file)), { recursive: true });
    writeFileSync(join(wasm, file), file.endsWith('.wasm') ? `wasm ${file}` : 'export {};\n');
  }
  writeFileSync(join(dist, 'storefront.js'), 'export {};\n');
  writeFileSync(join(dist, 'nudge_rules_bg.wasm'), readFileSync(join(wasm, 'slim', 'nudge_rules_bg.wasm')));
};

test('prepack runs the WASM check', () => {
  assert.equal(manifest.scripts?.prepack, 'node scripts/check-wasm.mjs');
});

test('the check refuses an empty wasm/ folder, naming make wasm and the missing files', () => {
  const { root, wasm: dir } = tempPackage();
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
    rmSync(root, { recursive: true, force: true });
  }
});

test('the check refuses a partial or empty build, and passes a complete one', () => {
  const temp = tempPackage();
  const dir = temp.wasm;
  try {
    completeBuild(temp);
    for (const file of WASM_FILES) rmSync(join(dir, file));
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
    writeFileSync(join(temp.dist, 'nudge_rules_bg.wasm'), readFileSync(join(dir, 'slim', 'nudge_rules_bg.wasm')));
    result = check(dir);
    assert.equal(result.status, 0, result.stderr);
  } finally {
    rmSync(temp.root, { recursive: true, force: true });
  }
});

test('the check refuses a package without the storefront runtime (dist/), or with a stale one', () => {
  assert.deepEqual([...DIST_FILES].sort(), ['nudge_rules_bg.wasm', 'storefront.js']);
  const temp = tempPackage();
  try {
    completeBuild(temp);
    assert.equal(check(temp.wasm, temp.dist).status, 0);
    for (const file of DIST_FILES) {
      const bytes = readFileSync(join(temp.dist, file));
      rmSync(join(temp.dist, file));
      const result = check(temp.wasm, temp.dist);
      assert.equal(result.status, 1, file);
      assert.ok(result.stderr.includes(`dist/${file} (missing or empty)`), result.stderr);
      assert.match(result.stderr, /make wasm/);
      assert.match(result.stderr, /nothing was packed/);
      writeFileSync(join(temp.dist, file), bytes);
    }
    // A runtime copied from an older build: its .wasm is not the slim module's.
    writeFileSync(join(temp.dist, 'nudge_rules_bg.wasm'), 'an older module');
    const stale = check(temp.wasm, temp.dist);
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /dist\/nudge_rules_bg\.wasm \(not the same file as wasm\/slim\/nudge_rules_bg\.wasm/);
  } finally {
    rmSync(temp.root, { recursive: true, force: true });
  }
});

test('npm pack of the built package ships dist/storefront.js and its .wasm beside it', { skip: !existsSync(join(PKG, 'dist', 'storefront.js')) && 'no build (make wasm)' }, () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts=false'], { cwd: PKG, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const [packed] = JSON.parse(result.stdout);
  const files = new Map(packed.files.map((f) => [f.path, f.size]));
  for (const file of ['dist/storefront.js', 'dist/nudge_rules_bg.wasm', 'wasm/slim/nudge_rules_bg.wasm', 'index.js']) {
    assert.ok(files.get(file) > 0, `${file} not packed: ${[...files.keys()].join(', ')}`);
  }
  assert.equal(files.get('dist/nudge_rules_bg.wasm'), files.get('wasm/slim/nudge_rules_bg.wasm'));
});
