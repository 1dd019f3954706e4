// The engine's errors and lint warnings in the words of the rule cards: each is put under the
// field it concerns ("Button", "Shows after idle", "On pages") and said the way the card says
// things ("8 s", "at once", "24 h"), from the diagnostic's code and JSON path and the value the
// config holds there; the engine's own text stays in the engineer details. A code without card
// words here keeps the engine's message.

import { seconds } from './plain.js';
import { LIMITS, SPEC15_LIMITS } from './limits.js';
import { formatInt } from './util.js';

/** A card's fields, by the JSON path under `rules[i]`. */
const FIELDS = {
  id: 'id',
  enabled: 'rule',
  'nudge.type': 'type',
  'nudge.cta': 'cta',
  'nudge.message': 'message',
  'when.min_intent_score': 'intent',
  'when.max_intent_score': 'intent',
  'when.min_idle_ms': 'idle',
  'when.pages': 'pages',
  'when.exclude_pages': 'exclude_pages',
  // docs/contract/caps.md: how often, the exit moment, the link and the control group.
  'nudge.cta_url': 'cta_url',
  cap: 'per_session',
  'cap.per_session': 'per_session',
  'cap.cooldown_ms': 'cooldown',
  'when.exit_intent': 'exit_intent',
  holdout_percent: 'holdout',
};

/** What the card calls each text field, and its length limit (the engine's, limits.js). */
const TEXTS = {
  'nudge.cta': { name: 'The button text', get max() { return LIMITS.cta_chars; } },
  'nudge.message': { name: 'The message', get max() { return LIMITS.message_chars; } },
  id: { name: 'The name (id)', get max() { return LIMITS.rule_id_chars; } },
};

/** The fields each object of a rule may have, for "did you mean". */
const KNOWN = {
  rule: ['id', 'enabled', 'nudge', 'when', 'cap', 'holdout_percent'],
  nudge: ['type', 'message', 'cta', 'cta_url'],
  when: ['min_intent_score', 'max_intent_score', 'min_idle_ms', 'pages', 'exclude_pages', 'exit_intent'],
  cap: ['per_session', 'cooldown_ms'],
};

/** Idle time as the card says it: "at once", "8 s", "1 min 30 s". */
export function idleWords(ms) {
  return ms === 0 ? 'at once' : seconds(ms);
}

/** "fires at once", "fires after 8 s": when a nudge shows, as the card says it. */
export function firesWhen(ms) {
  return ms === 0 ? 'at once' : `after ${seconds(ms)}`;
}

/**
 * A duration in the largest whole unit it reaches, cut: "7 days", "3 h", "20 min", "9 s" (the
 * engine's `words::duration_words`, which the Why panel's cap sentences use).
 */
export function durationWords(ms) {
  const units = [[86_400_000, ' day', ' days'], [3_600_000, ' h', ' h'], [60_000, ' min', ' min'], [1000, ' s', ' s']];
  for (const [size, one, many] of units) {
    if (ms >= size) {
      const n = Math.floor(ms / size);
      return `${n}${n === 1 ? one : many}`;
    }
  }
  return '0 s';
}

/** "once", "twice", "3 times" (the engine's `times_words`). */
export function timesWords(n) {
  return n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`;
}

const quote = (v) => `“${String(v)}”`;

/**
 * What is wrong with a CTA link (`nudge.cta_url`, code invalid_cta_url), in the card's words; the
 * checks are the engine's (src/config/read.rs `cta_url`), said for a merchant.
 */
export function ctaUrlWords(url) {
  const u = String(url);
  const shown = quote(chars(u) > 60 ? `${Array.from(u).slice(0, 60).join('')}…` : u);
  const bytes = new TextEncoder().encode(u).length;
  if (bytes > SPEC15_LIMITS.cta_url_bytes) return `The link is ${formatInt(bytes)} bytes long; at most ${formatInt(SPEC15_LIMITS.cta_url_bytes)}.`;
  if (/[\s\\\u0000-\u001f\u007f-\u009f]/.test(u)) return `The link ${shown} has a space, a control character or “\\”: percent-encode it (a space is %20).`;
  if (u.startsWith('//')) return `The link ${shown} starts with “//”, which a browser reads as another site: write a path with one “/”, or a full https:// address.`;
  const scheme = /^([A-Za-z0-9+.-]+):/.exec(u)?.[1];
  if (scheme?.toLowerCase() === 'https') return `The link ${shown} has no site name after “https://”.`;
  if (scheme?.toLowerCase() === 'http') return `The link ${shown} is not secure: write “https://”, not “http://”.`;
  if (scheme) return `A “${scheme}:” link is not allowed (it could run a script or leave the web): write a page of the shop such as “/collections/sale”, or an https:// address.`;
  return `The link ${shown} is relative: start it with “/” (a page of this shop) or “https://”.`;
}
const chars = (s) => Array.from(String(s)).length;

/** The value at `path` (`['nudge', 'cta']`) of `obj`, or undefined. */
function valueAt(obj, path) {
  let v = obj;
  for (const k of path) v = v && typeof v === 'object' ? v[k] : undefined;
  return v;
}

/** Edit distance, for "did you mean" among a handful of field names. */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return row[b.length];
}

function closest(name, known) {
  let best = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(name.toLowerCase(), k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
}

/** What a pattern's words say about `pattern`, by code; null for a code without card words. */
export function patternWords(code, pattern) {
  const p = quote(pattern);
  switch (code) {
    case 'pattern_not_absolute':
      return pattern === '' ? 'A pattern cannot be empty: “/**” is every page.' : `${p} must start with “/” (or “**”).`;
    case 'pattern_trailing_slash':
      return `${p} ends with “/”, which no page address does.`;
    case 'pattern_syntax':
      return `${p} is not a valid pattern: look at its { }, [ ] and \\ characters.`;
    case 'pattern_too_long':
      return `${p.slice(0, 40)}… is ${formatInt(new TextEncoder().encode(String(pattern)).length)} bytes long; a pattern holds at most ${LIMITS.pattern_bytes}.`;
    case 'duplicate_pattern':
      return `${p} is in this list twice; one is enough.`;
    case 'redundant_pattern':
      return `${p} is already covered by another pattern of this list; it can go.`;
    case 'pattern_query_string':
      return `${p} has a query (after “?”): pages are matched without their query, and “?” stands for any one character.`;
    case 'pattern_has_scheme':
      return `${p} has an “http://” part: write only the path, such as “/products/**”.`;
    case 'pattern_uppercase':
      return `${p} has capital letters, but letter case does not matter on this site: it is read in lower case.`;
    case 'pattern_never_matches':
      return `${p} can never match a page address (it has “%”, “;”, “//” or a “.” segment, which addresses lose before matching).`;
    case 'pattern_byte_wildcard':
      return `In ${p}, “?” and [ ] match one byte, not a letter such as “é”: use “*” there.`;
    case 'quiet_zone_covers_every_page':
      return `${p} covers every page: no nudge can ever show.`;
    default:
      return null;
  }
}

/**
 * Where a diagnostic of rule `rule` goes on its card and what it says there:
 * `{ field, text, list?, item? }`, field one of `rule`, `id`, `type`, `cta`, `message`,
 * `intent`, `idle`, `pages`, `exclude_pages`; `list` and `item` for a pattern of a list.
 * `sub` is the diagnostic's path after `rules[i]` (`.nudge.cta`).
 */
export function ruleDiagnostic(d, rule, sub) {
  const path = sub.replace(/^\./, '');
  const item = /^when\.(pages|exclude_pages)\[(\d+)\]$/.exec(path);
  if (item) {
    const list = item[1];
    const pattern = valueAt(rule, ['when', list, Number(item[2])]);
    const text = typeof pattern === 'string'
      ? patternWords(d.code, pattern)
      : `Pattern ${Number(item[2]) + 1} is not text (${JSON.stringify(pattern)}): write it in quotes.`;
    return { field: list, list, item: Number(item[2]), text: text ?? d.message };
  }
  const field = FIELDS[path];
  const value = valueAt(rule, path.split('.'));
  const fallback = { field: field ?? 'rule', text: d.message };
  switch (d.code) {
    case 'missing_field': {
      const what = TEXTS[path]?.name ?? null;
      if (what) return { field, text: `${what} is missing: write 1 to ${TEXTS[path].max} characters.` };
      if (path === 'nudge.type') return { field, text: 'Choose what it shows.' };
      if (path === 'nudge') return { field: 'rule', text: 'The rule has no nudge yet: choose what it shows, its button and message.' };
      return fallback;
    }
    case 'invalid_length': {
      const t = TEXTS[path];
      if (!t) return fallback;
      const n = chars(value ?? '');
      return { field, text: n === 0 ? `${t.name} is empty: write 1 to ${t.max} characters.` : `${t.name} is ${formatInt(n)} characters long; at most ${t.max}.` };
    }
    case 'invalid_rule_id': {
      const id = String(value ?? '');
      if (!id.length || chars(id) > LIMITS.rule_id_chars) return { field, text: `The name must be 1 to ${LIMITS.rule_id_chars} characters; this is ${formatInt(chars(id))}.` };
      const bad = Array.from(id).find((c) => !/[A-Za-z0-9_-]/.test(c));
      const what = bad === ' ' ? 'a space' : quote(bad);
      return { field, text: `The name ${quote(id)} has ${what}: use only letters, digits, “-” and “_”.` };
    }
    case 'invalid_cta_url':
      return { field, text: ctaUrlWords(value ?? '') };
    case 'duplicate_rule_id':
      return { field, text: `Another rule is already named ${quote(value)}: each rule needs a name of its own.` };
    case 'unknown_nudge_type':
      return { field, text: `${quote(value)} is not something a rule can show: choose a chat bubble, toast, exit modal or sticky bar.` };
    case 'out_of_range':
    case 'wrong_type':
      if (field === 'intent') return { field, text: `An intent score is a whole number from 0 to ${LIMITS.intent_score}, not ${JSON.stringify(value)}.` };
      if (field === 'idle') {
        if (typeof value === 'number' && value > LIMITS.idle_ms) return { field, text: `The idle time can be at most ${seconds(LIMITS.idle_ms)}; this is ${seconds(value)}.` };
        if (typeof value === 'number' && value < 0) return { field, text: 'The idle time cannot be below 0 (“at once”).' };
        return { field, text: `The idle time is a whole number of milliseconds, not ${JSON.stringify(value)}.` };
      }
      if (path === 'enabled') return { field, text: `On or off is true or false, not ${JSON.stringify(value)}.` };
      if (path === 'cap') return { field, text: `The cap is an object such as {"per_session": 1}, not ${JSON.stringify(value)}.` };
      if (field === 'per_session') return { field, text: `Times per visit is a whole number from 1 to ${SPEC15_LIMITS.cap_per_session}, not ${JSON.stringify(value)}.` };
      if (field === 'cooldown') {
        if (typeof value === 'number' && value > SPEC15_LIMITS.cooldown_ms) return { field, text: `The pause after a visitor closes it can be at most ${durationWords(SPEC15_LIMITS.cooldown_ms)}; this is ${durationWords(value)}.` };
        return { field, text: `The pause after a visitor closes it is a whole number of milliseconds from 0 (none) to ${durationWords(SPEC15_LIMITS.cooldown_ms)}, not ${JSON.stringify(value)}.` };
      }
      if (field === 'holdout') return { field, text: `The control group is a whole percentage from 0 to ${SPEC15_LIMITS.holdout_percent}, not ${JSON.stringify(value)}.` };
      if (field === 'exit_intent') return { field, text: `“About to leave” is true (only then) or false (never then), not ${JSON.stringify(value)}; remove it to show at any time.` };
      if (field === 'cta_url') return { field, text: `The button link must be text, not ${JSON.stringify(value)}.` };
      if (path === 'when.pages' || path === 'when.exclude_pages') return { field, text: `This must be a list of patterns, not ${JSON.stringify(value)}.` };
      if (path === 'nudge.type' || TEXTS[path]) return { field, text: `${TEXTS[path]?.name ?? 'What it shows'} must be text, not ${JSON.stringify(value)}.` };
      return fallback;
    case 'empty_intent_range': {
      const when = rule?.when ?? {};
      return { field: 'intent', text: `The lowest intent score (${when.min_intent_score}) is above the highest (${when.max_intent_score}): no visitor can match.` };
    }
    case 'too_many_patterns':
      return { field, text: `${formatInt(Array.isArray(value) ? value.length : 0)} patterns: one list holds at most ${LIMITS.patterns_per_list}.` };
    case 'unknown_field': {
      const parts = path.split('.');
      const name = parts[parts.length - 1];
      const owner = parts.length === 1 ? 'rule' : parts[0];
      const near = KNOWN[owner] ? closest(name, KNOWN[owner]) : null;
      const where = owner === 'rule' ? 'a rule' : owner === 'when' ? 'a rule’s conditions' : owner === 'cap' ? 'a rule’s cap' : 'a nudge';
      return { field: 'rule', text: `${quote(name)} is not a setting of ${where}${near ? `; did you mean ${quote(near)}?` : ''}. Fix it in the JSON.` };
    }
    // Lint warnings about the whole rule.
    case 'shadowed_rule':
      return { field: 'rule', text: 'It never fires: rules above it fire first wherever it could. Move it up, or narrow those rules.' };
    case 'catch_all_rule':
      return { field: 'rule', text: 'It fires for every visitor outside the quiet zones, so no rule below it ever fires.' };
    case 'rule_in_quiet_zone':
      return { field, text: 'It never fires: every page it targets is in a quiet zone.' };
    case 'rule_excludes_all_pages':
      return { field, text: 'It never fires: these exceptions cover every page it targets.' };
    case 'empty_pages':
      return { field, text: 'No page is listed, so it shows on none: add a page, or remove the list (Edit in JSON) to show it on every page.' };
    default:
      return fallback;
  }
}

/**
 * Any diagnostic of the config in the words of the card it shows on (the Problems list says it
 * so too): a rule's, named by the rule ("Rule “sizing-help”: The button text is empty: ..."), or a
 * site setting's. `config`: the config as written (the values the words quote), or null.
 */
export function diagnosticWords(d, config) {
  const m = /^rules\[(\d+)\]/.exec(d.path || '');
  if (!m) return settingsDiagnostic(d, config).text;
  const rule = config?.rules?.[Number(m[1])];
  const { text } = ruleDiagnostic(d, rule, d.path.slice(m[0].length));
  const name = typeof rule?.id === 'string' && rule.id ? `“${rule.id}”` : `${Number(m[1]) + 1}`;
  return `Rule ${name}: ${text}`;
}

/** A quiet zone's or a site setting's diagnostic in the card's words: `{ text, item? }`. */
export function settingsDiagnostic(d, config) {
  const zone = /^quiet_zones\[(\d+)\]$/.exec(d.path);
  if (zone) {
    const pattern = config?.quiet_zones?.[Number(zone[1])];
    const text = typeof pattern === 'string' ? patternWords(d.code, pattern) : null;
    return { item: Number(zone[1]), text: text ?? d.message };
  }
  if (d.path === 'max_nudges_per_session' && (d.code === 'out_of_range' || d.code === 'wrong_type')) {
    return { text: `Nudges per visit is a whole number from 1 to ${SPEC15_LIMITS.nudges_per_session} (leave it empty for no limit), not ${JSON.stringify(config?.max_nudges_per_session)}.` };
  }
  if (d.path === 'quiet_zones' && d.code === 'too_many_patterns') {
    return { text: `${formatInt(config?.quiet_zones?.length ?? 0)} quiet zones: a site has at most ${formatInt(LIMITS.quiet_zones)}.` };
  }
  return { text: d.message };
}
