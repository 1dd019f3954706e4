// The JSON Schema of the site config (schema/config.schema.json) against the engine: every config
// of the conformance vectors (tests/vectors/config.json) and of examples/*.json is given to the
// engine (the WASM package) and to ajv (draft 2020-12). Every config the engine accepts must
// validate; every config the engine rejects for a structural reason (an unknown field, a wrong
// type, a missing field, a number out of range, a length, an id's characters, a list too long, a
// pattern's first or last character) must be rejected by the schema too. What a JSON Schema cannot
// say (unique ids, glob syntax, min <= max, bytes rather than characters, the 1 MiB text limit,
// duplicate keys, how a number is spelled) is listed in NOT_EXPRESSIBLE and checked to be only that.
//
//   node --test www/test/schema.test.mjs     (needs pkg/wasm/: make wasm)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import Ajv2020 from 'ajv/dist/2020.js';

import { NudgeEngine, initSync, validateConfig } from '../../pkg/index.js';
import { REPO_ROOT } from './server.mjs';

initSync({ module: readFileSync(path.join(REPO_ROOT, 'pkg/wasm/nudge_rules_bg.wasm')) });

const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, 'schema/config.schema.json'), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: true, unicodeRegExp: true });
const validate = ajv.compile(schema);

/** Engine codes for what the schema states. */
const STRUCTURAL = new Set([
  'missing_field', 'unsupported_version', 'wrong_type', 'unknown_field', 'invalid_rule_id',
  'unknown_nudge_type', 'invalid_length', 'out_of_range', 'too_many_patterns', 'too_many_rules',
  'pattern_not_absolute', 'pattern_trailing_slash', 'pattern_too_long', 'invalid_cta_url',
]);
/** Engine codes for rules a JSON Schema cannot state. */
const NOT_EXPRESSIBLE = new Set([
  'json_syntax', // not a value at all
  'duplicate_rule_id', // uniqueItems compares whole items, not one field
  'empty_intent_range', // min_intent_score <= max_intent_score compares two values
  'pattern_syntax', // glob validity ({a,b} closed, classes well formed)
  'config_too_large', // a limit on the text, not the value
]);

function cases() {
  const vectors = JSON.parse(readFileSync(path.join(REPO_ROOT, 'tests/vectors/config.json'), 'utf8')).cases;
  const out = vectors.map((c) => ({ name: `vector "${c.name}"`, input: c.config_text ?? c.config }));
  const dir = path.join(REPO_ROOT, 'examples');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    out.push({ name: `examples/${file}`, input: readFileSync(path.join(dir, file), 'utf8') });
  }
  return out;
}

/**
 * The parsed value of a config, or undefined when JSON.parse cannot read it. Also says whether the
 * text holds what parsing hides from a schema: a number spelled with a fraction or exponent that
 * is whole (`50.0`, `1e2`: JSON.parse gives 50 and 100), a duplicate key, a non-ASCII pattern
 * (the 512-byte limit counts bytes, a schema counts characters).
 */
function parsed(input) {
  if (typeof input !== 'string') return { value: input, hidden: false };
  try {
    const value = JSON.parse(input);
    const hidden = /[\d](?:\.\d+)?[eE][+-]?\d|\d\.\d/.test(input) || /[^\x00-\x7f]/.test(input);
    return { value, hidden };
  } catch {
    return { value: undefined, hidden: true };
  }
}

test('the schema is valid draft 2020-12 and ajv compiles it in strict mode', () => {
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(typeof validate, 'function');
});

test('every config the engine accepts validates; every structural rejection is rejected', () => {
  const all = cases();
  assert.ok(all.length >= 120, `${all.length} configs`);
  let accepted = 0;
  let rejectedBoth = 0;
  let notExpressible = 0;
  for (const { name, input } of all) {
    const engine = validateConfig(input);
    const { value, hidden } = parsed(input);
    if (engine.valid) {
      assert.notEqual(value, undefined, `${name}: the engine accepts text JSON.parse rejects`);
      assert.ok(validate(value), `${name}: the engine accepts it, the schema rejects it: ${ajv.errorsText(validate.errors)}`);
      accepted += 1;
      continue;
    }
    const codes = new Set(engine.errors.map((e) => e.code));
    for (const code of codes) {
      assert.ok(STRUCTURAL.has(code) || NOT_EXPRESSIBLE.has(code), `${name}: engine code ${code} is in neither list`);
    }
    const structural = [...codes].filter((c) => STRUCTURAL.has(c));
    if (structural.length && value !== undefined && !hidden) {
      assert.equal(validate(value), false, `${name}: the engine rejects it (${structural.join(', ')}), the schema accepts it`);
      rejectedBoth += 1;
    } else {
      notExpressible += 1;
    }
  }
  // Figures of this run, for the report: how many configs each outcome covered.
  console.log(`schema vs engine: ${accepted} accepted by both, ${rejectedBoth} structural rejections by both, ${notExpressible} rejected by the engine only (not expressible or not JSON)`);
  assert.ok(accepted >= 20 && rejectedBoth >= 60, `${accepted} accepted, ${rejectedBoth} rejected`);
});

test('the schema names every field of the Rust types, with a description', () => {
  const fields = (node) => Object.keys(node.properties).sort();
  assert.deepEqual(fields(schema), ['$schema', 'case_sensitive', 'max_nudges_per_session', 'quiet_zones', 'rules', 'version']);
  assert.deepEqual(fields(schema.$defs.rule), ['cap', 'enabled', 'holdout_percent', 'id', 'nudge', 'when']);
  assert.deepEqual(fields(schema.$defs.nudge), ['cta', 'cta_url', 'message', 'type']);
  assert.deepEqual(fields(schema.$defs.when), ['exclude_pages', 'exit_intent', 'max_intent_score', 'min_idle_ms', 'min_intent_score', 'pages']);
  assert.deepEqual(fields(schema.$defs.cap), ['cooldown_ms', 'per_session']);
  for (const node of [schema, schema.$defs.rule, schema.$defs.nudge, schema.$defs.when, schema.$defs.cap]) {
    assert.equal(node.additionalProperties, false);
    for (const [key, prop] of Object.entries(node.properties)) {
      const target = prop.$ref ? schema.$defs[prop.$ref.split('/').pop()] : prop;
      assert.ok(target.description, `${key} has no description`);
    }
  }
  // The defaults are the engine's: compare with engine.config() of a config that sets nothing.
  const engine = new NudgeEngine('{"version": 1, "rules": [{"id": "r", "nudge": {"type": "toast", "message": "m", "cta": "c"}}]}');
  const filled = engine.config();
  engine.free();
  assert.equal(filled.case_sensitive, schema.properties.case_sensitive.default);
  assert.deepEqual(filled.quiet_zones, schema.properties.quiet_zones.default);
  const when = schema.$defs.when.properties;
  assert.equal(filled.rules[0].enabled, schema.$defs.rule.properties.enabled.default);
  assert.equal(filled.rules[0].when.min_intent_score, when.min_intent_score.default);
  assert.equal(filled.rules[0].when.max_intent_score, when.max_intent_score.default);
  assert.equal(filled.rules[0].when.min_idle_ms, when.min_idle_ms.default);
  assert.deepEqual(filled.rules[0].when.exclude_pages, when.exclude_pages.default);
});

/** A config of one rule with docs/contract/caps.md's fields merged in (`top`: site settings, `rule`: the rule's). */
function spec15(rule = {}, top = {}) {
  const base = { id: 'r', nudge: { type: 'exit_modal', message: 'm', cta: 'c' } };
  const merged = { ...base, ...rule, nudge: { ...base.nudge, ...(rule.nudge ?? {}) } };
  return { version: 1, ...top, rules: [merged] };
}

test('docs/contract/caps.md fields: the schema accepts what the engine accepts and rejects what it rejects', () => {
  const accepted = [
    spec15({}, { max_nudges_per_session: 1 }),
    spec15({}, { max_nudges_per_session: 100 }),
    spec15({ nudge: { cta_url: '/collections/sale' } }),
    spec15({ nudge: { cta_url: '/' } }),
    spec15({ nudge: { cta_url: 'https://shop.example/pages/size-guide?x=1#top' } }),
    spec15({ nudge: { cta_url: 'HTTPS://shop.example' } }),
    spec15({ cap: {} }),
    spec15({ cap: { per_session: 1 } }),
    spec15({ cap: { per_session: 100, cooldown_ms: 0 } }),
    spec15({ cap: { cooldown_ms: 31_536_000_000 } }),
    spec15({ when: { exit_intent: true } }),
    spec15({ when: { exit_intent: false } }),
    spec15({ holdout_percent: 0 }),
    spec15({ holdout_percent: 50 }),
  ];
  const rejected = [
    spec15({}, { max_nudges_per_session: 0 }),
    spec15({}, { max_nudges_per_session: 101 }),
    spec15({}, { max_nudges_per_session: '3' }),
    spec15({ nudge: { cta_url: 'javascript:alert(1)' } }),
    spec15({ nudge: { cta_url: 'data:text/html,x' } }),
    spec15({ nudge: { cta_url: 'http://shop.example' } }),
    spec15({ nudge: { cta_url: '//evil.example' } }),
    spec15({ nudge: { cta_url: 'sale' } }),
    spec15({ nudge: { cta_url: '' } }),
    spec15({ nudge: { cta_url: '/a b' } }),
    spec15({ nudge: { cta_url: '/a\\b' } }),
    spec15({ nudge: { cta_url: '/a\u0007' } }),
    spec15({ nudge: { cta_url: 'https://' } }),
    spec15({ nudge: { cta_url: 'https:///x' } }),
    spec15({ nudge: { cta_url: `/${'a'.repeat(2048)}` } }),
    spec15({ nudge: { cta_url: 7 } }),
    spec15({ cap: { per_session: 0 } }),
    spec15({ cap: { per_session: 101 } }),
    spec15({ cap: { cooldown_ms: -1 } }),
    spec15({ cap: { cooldown_ms: 31_536_000_001 } }),
    spec15({ cap: { per_sesion: 2 } }),
    spec15({ cap: 1 }),
    spec15({ when: { exit_intent: 'yes' } }),
    spec15({ holdout_percent: -1 }),
    spec15({ holdout_percent: 51 }),
    spec15({ holdout_percent: 10.5 }),
  ];
  for (const config of accepted) {
    const text = JSON.stringify(config);
    const engine = validateConfig(text);
    assert.ok(engine.valid, `the engine rejects ${text}: ${JSON.stringify(engine.errors)}`);
    assert.ok(validate(config), `the schema rejects ${text}: ${ajv.errorsText(validate.errors)}`);
  }
  for (const config of rejected) {
    const text = JSON.stringify(config);
    const engine = validateConfig(text);
    assert.equal(engine.valid, false, `the engine accepts ${text}`);
    for (const e of engine.errors) assert.ok(STRUCTURAL.has(e.code), `${text}: ${e.code} is not structural`);
    assert.equal(validate(config), false, `the schema accepts ${text}, the engine rejects it (${engine.errors.map((e) => e.code).join(', ')})`);
  }
});
