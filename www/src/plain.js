// Plain language for merchants: each condition of a rule as a sentence ("Waits 9 s of the 20 s
// this rule needs"), and what each verdict means. The engine's own texts (the `detail` of each
// condition, the reasons) stay one click away in the engineer details.

import { formatMs } from './util.js';

/**
 * "9 s", "8.5 s", "1 min 30 s": idle times as a merchant reads them, cut and never rounded up
 * (7,999 ms is "7.9 s": not "8 s", which a rule waiting for 8 s would contradict).
 */
export function seconds(ms) {
  if (ms === 0) return '0 s';
  if (ms < 1000) return `${Math.floor(ms)} ms`;
  if (ms < 60_000) return `${Math.floor(ms / 100) / 10} s`;
  return formatMs(ms);
}

/** To the millisecond: "7.999 s", "8 s", "90.5 s". */
function exactSeconds(ms) {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/**
 * An idle time and a rule's threshold, worded so that the verdict between them reads true: when
 * they differ by less than what `seconds` shows (a tenth of a second under a minute, a second
 * above), or read the same, both are written to the millisecond: "Waits 7.999 s of the 8 s", not
 * "Waits 8 s of the 8 s" (nor "7.9 s", which reads as 7,900 ms).
 */
export function secondsPair(a, b) {
  const sa = seconds(a);
  const sb = seconds(b);
  const close = Math.abs(a - b) < (Math.max(a, b) < 60_000 ? 100 : 1000);
  return a !== b && (close || sa === sb) ? [exactSeconds(a), exactSeconds(b)] : [sa, sb];
}

function list(patterns, max = 3) {
  const shown = patterns.slice(0, max).join(', ');
  return patterns.length > max ? `${shown} and ${patterns.length - max} more` : shown;
}

/**
 * One condition check of a rule as a sentence.
 * @param {{condition: string, holds: boolean, detail?: string}} c  a condition of engine.explain()
 * @param {{when?: import('../../pkg/index.js').Conditions} | undefined} rule  the rule from
 *   engine.config() (defaults filled in)
 * @param {{intent_score: number, idle_ms: number, path: string|null, page_url?: string}} ex  the explanation
 * @param {string[]} matched  the patterns of this condition's list that match the page
 */
export function conditionSentence(c, rule, ex, matched) {
  const when = rule?.when ?? /** @type {Partial<import('../../pkg/index.js').Conditions>} */ ({});
  const i = ex.intent_score;
  const page = ex.path ?? ex.page_url;
  switch (c.condition) {
    case 'min_intent_score':
      return c.holds
        ? `Intent ${i} is at least the ${when.min_intent_score} this rule needs`
        : `Intent ${i} is below the ${when.min_intent_score} this rule needs`;
    case 'max_intent_score':
      return c.holds
        ? `Intent ${i} is at most this rule's limit of ${when.max_intent_score}`
        : `Intent ${i} is above this rule's limit of ${when.max_intent_score}`;
    case 'min_idle_ms': {
      const [idle, needed] = secondsPair(ex.idle_ms, when.min_idle_ms);
      return c.holds
        ? `Idle ${idle}, past the ${needed} this rule waits for`
        : `Waits ${idle} of the ${needed} this rule needs`;
    }
    case 'pages':
      if (c.holds) return `Page ${page} is one of this rule's pages (${list(matched)})`;
      return when.pages?.length
        ? `Page ${page} is not one of this rule's pages (${list(when.pages)})`
        : `This rule lists no pages, so it shows on none`;
    case 'exclude_pages':
      return c.holds
        ? `Page ${page} is not excluded (${list(when.exclude_pages ?? [])})`
        : `Page ${page} is excluded by ${list(matched)}`;
    default:
      return c.detail;
  }
}

/**
 * What a verdict means, for the card's explanation line.
 * @param {string} verdict
 * @param {{firedId?: string | null, quietZone?: string | null}} [context]
 */
export function verdictSentence(verdict, { firedId, quietZone } = {}) {
  switch (verdict) {
    case 'fired':
      return 'All its conditions hold, and no rule above it fires: this is the nudge the visitor sees.';
    case 'shadowed':
      return `All its conditions hold, but ${firedId ?? 'an earlier rule'} comes first and fires instead. Move this rule above it to show this nudge here.`;
    case 'disabled':
      return 'This rule is switched off: it never fires.';
    case 'quiet':
      return `This page is in the quiet zone ${quietZone ?? ''}: no nudge shows here, whatever the rules say.`;
    default:
      return null;
  }
}

/**
 * Why a failing scenario's visitor does not get the rule it expects, in the Why panel's words:
 * the rule's failing conditions as sentences ("Waits 9 s of the 12 s this rule needs"), or the
 * rule that comes first, the rule switched off, the quiet zone. `why` is as-code.js
 * `whyFailing`'s entry, `rule` the rule from engine.config(). Empty when there is nothing to add.
 */
export function whyNot(why, rule, id) {
  if (!why) return '';
  if (why.missing) return `The config has no rule named “${id}”.`;
  switch (why.verdict) {
    case 'shadowed':
      return `Its conditions hold, but ${why.fired_rule_id} comes first and fires instead.`;
    case 'disabled':
      return 'The rule is switched off.';
    case 'quiet':
      return `The page is in the quiet zone ${why.quiet_zone}.`;
    case 'failed':
      return why.conditions.filter((c) => !c.holds).map((c) => `${conditionSentence(c, rule, why, [])}.`).join(' ');
    default:
      return '';
  }
}
