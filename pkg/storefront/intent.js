// The intent score of the storefront runtime (docs/contract/storefront.md, "What it observes"):
// the page's own `intentScore()` when it gives an integer 0 to 100, else the built-in score.
import { messageOf } from './errors.js';

/**
 * The built-in intent score (docs/contract/storefront.md): 10 per distinct page viewed in the
 * session (at most 50), plus 30 once the session has an ADD_TO_CART, plus 20 when the visitor had
 * an earlier session, at most 100.
 * @param {{ pages: number, addedToCart: boolean, returning: boolean }} visit
 */
export function builtInIntentScore({ pages, addedToCart, returning }) {
  const score = Math.min(10 * Math.max(0, Math.floor(pages) || 0), 50) + (addedToCart ? 30 : 0) + (returning ? 20 : 0);
  return Math.min(score, 100);
}

/**
 * The intent score of a decision or an event: `callback()`'s value when it is an integer from 0
 * to 100; else (it threw, or gave anything else: reported as `intent_score`), or without a
 * callback, the built-in score of `visit`.
 * @param {{ pages: number, addedToCart: boolean, returning: boolean }} visit
 * @param {unknown} callback
 * @param {(code: string, message: string, cause?: unknown) => void} fail
 */
export function intentScore(visit, callback, fail) {
  const builtIn = builtInIntentScore(visit);
  if (typeof callback !== 'function') return builtIn;
  let value;
  try {
    value = callback();
  } catch (e) {
    fail('intent_score', `intentScore() threw (${messageOf(e)}); the built-in score ${builtIn} is used`, e);
    return builtIn;
  }
  if (Number.isInteger(value) && value >= 0 && value <= 100) return value;
  fail('intent_score', `intentScore() must return an integer from 0 to 100, got ${JSON.stringify(value) ?? String(value)}; the built-in score ${builtIn} is used`);
  return builtIn;
}
