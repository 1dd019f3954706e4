#!/usr/bin/env node
// The `prepack` check of the nudge-rules package (pkg/package.json): `npm pack` and `npm publish`
// refuse to pack a package whose entries cannot load. index.js imports the wasm-bindgen glue and
// modules in wasm/, and `nudge-rules/dist/storefront.js` (the storefront runtime for a plain tag)
// loads the slim module's .wasm beside it in dist/; all are generated (`make wasm`,
// scripts/build-wasm.sh, which ends with scripts/build-storefront.mjs) and not in git: without
// them the packed package would fail at its first import.
//
//   node scripts/check-wasm.mjs [WASM_DIR [DIST_DIR]]   default: this package's wasm/ and dist/
//
// Exit 0 when every wasm/ and dist/ file of package.json's "files" is there and not empty, and
// dist/'s .wasm is the one of wasm/slim/ (a runtime bundled from an older build would load a
// module its glue does not match); otherwise 1, naming the files and `make wasm`.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dirs = {
  wasm: resolve(process.argv[2] ?? join(pkg, 'wasm')),
  dist: resolve(process.argv[3] ?? (process.argv[2] ? join(process.argv[2], '..', 'dist') : join(pkg, 'dist'))),
};
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
const wanted = (manifest.files ?? [])
  .map((f) => /^(wasm|dist)\/(.+)$/.exec(f))
  .filter(Boolean)
  .map(([name, folder, file]) => ({ name, path: join(dirs[folder], file) }));

const present = (path) => {
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.size > 0;
  } catch {
    return false;
  }
};
const problems = wanted.filter((f) => !present(f.path)).map((f) => `  ${f.name} (missing or empty)`);
if (!wanted.some((f) => f.name.startsWith('wasm/'))) problems.push('  (package.json "files" lists no wasm/ file)');
if (!wanted.some((f) => f.name === 'dist/storefront.js')) problems.push('  (package.json "files" lists no dist/storefront.js)');
const slim = join(dirs.wasm, 'slim', 'nudge_rules_bg.wasm');
const shipped = join(dirs.dist, 'nudge_rules_bg.wasm');
if (problems.length === 0 && present(slim) && present(shipped) && !readFileSync(slim).equals(readFileSync(shipped))) {
  problems.push('  dist/nudge_rules_bg.wasm (not the same file as wasm/slim/nudge_rules_bg.wasm: dist/ is from an older build)');
}

if (problems.length > 0) {
  process.stderr.write(
    `nudge-rules: the WebAssembly build is missing or stale in ${dirs.wasm} and ${dirs.dist}:\n${problems.join('\n')}\n`
    + 'The package\'s main entry (index.js) imports wasm/, and dist/storefront.js (the storefront runtime) loads the .wasm beside it, so a package without them cannot load.\n'
    + 'Build them first with `make wasm` (scripts/build-wasm.sh) from the repository root, then pack again; nothing was packed.\n',
  );
  process.exit(1);
}
