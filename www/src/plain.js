// Plain language for merchants: idle times for the page's own controls, what each verdict means,
// and why a failing scenario misses its rule. Each condition of a rule as a sentence ("Waits 9 s
// of the 20 s this rule needs") is the engine's (`conditionSentences`, src/words.rs), sent with
// each verdict; the engine's own texts (the `detail` of each condition, the reasons) stay one
// click away in the engineer details.

import { formatMs } from './util.js';

/**
 * "9 s", "8.5 s", "1 min 30 s": idle times as a merchant reads them, cut and never rounded up
 * (7,999 ms is "7.9 s": not "8 s", which a rule waiting for 8 s would contradict). The engine's
 * `words::seconds` for the controls the page draws at once (a slider dragged); www/test/
 * limits.test.mjs compares the two.
 */
export function seconds(ms) {
  if (ms === 0) return '0 s';
  if (ms < 1000) return `${Math.floor(ms)} ms`;
  if (ms < 60_000) return `${Math.floor(ms / 100) / 10} s`;
  return formatMs(ms);
}

/**
 * What a verdict means, for the card's explanation line.
 * @param {string} verdict
 * @param {{firedId?: string | null, quietWords?: string | null, heldOutId?: string | null,
 *          ruleId?: string | null, visitorId?: string | null}} [context]  `quietWords`: the
 *   page's quiet zone in the engine's words; `heldOutId`: the rule whose control group the
 *   visitor is in (docs/contract/caps.md); `ruleId`: the rule the sentence is about
 */
export function verdictSentence(verdict, { firedId, quietWords, heldOutId, ruleId, visitorId } = {}) {
  switch (verdict) {
    case 'fired':
      return 'All its conditions hold, and no rule above it fires: this is the nudge the visitor sees.';
    case 'shadowed':
      if (!firedId && heldOutId) {
        return `All its conditions hold, but ${heldOutId} comes first, and this visitor is in its control group: no nudge is shown, and no later rule is tried.`;
      }
      return `All its conditions hold, but ${firedId ?? 'an earlier rule'} comes first and fires instead. Move this rule above it to show this nudge here.`;
    case 'held_out':
      return `This visitor${visitorId ? ` (${visitorId})` : ''} is in the control group of rule ${ruleId ?? heldOutId ?? 'this rule'}: no nudge is shown. All its conditions hold; the control group is what its nudge is measured against.`;
    case 'disabled':
      return 'This rule is switched off: it never fires.';
    case 'quiet':
      return quietWords ?? null;
    default:
      return null;
  }
}

/**
 * Why a failing scenario's visitor does not get the rule it expects, in the Why panel's words:
 * the rule's failing conditions as the engine's sentences ("Waits 9 s of the 12 s this rule
 * needs"), or the rule that comes first, the rule switched off, the quiet zone. `why` is
 * as-code.js `whyFailing`'s entry. Empty when there is nothing to add.
 */
export function whyNot(why, id) {
  if (!why) return '';
  if (why.missing) return `The config has no rule named “${id}”.`;
  switch (why.verdict) {
    case 'shadowed':
      return `Its conditions hold, but ${why.fired_rule_id} comes first and fires instead.`;
    case 'disabled':
      return 'The rule is switched off.';
    case 'quiet':
      return `The page is in the quiet zone ${why.quiet_zone}.`;
    case 'held_out':
      return 'Its conditions hold, but this visitor is in its control group: no nudge is shown.';
    case 'failed':
      return why.conditions.filter((c) => !c.holds).map((c) => `${c.sentence}.`).join(' ');
    default:
      return '';
  }
}
