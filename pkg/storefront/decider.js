// The decider of the storefront runtime (docs/contract/storefront.md, "When it decides"): asks
// the engine at each page view, each change of the intent score and on exit intent, and when idle
// time reaches the next threshold at which the engine says a rule would fire: one timer set to
// the engine's `next_idle_ms`, never polling; the timer waits while the tab is hidden.
import { mark } from './browser.js';
import { messageOf } from './errors.js';

/**
 * @typedef {{ t: number, sid: string | null, state: Record<string, unknown> }} Moment
 *   one decision's inputs: its time (ms since the epoch), the relay session, and the session
 *   state the engine is given (`idle_ms` and `exit_intent` added by the decider)
 */

/**
 * @param {{
 *   engine: { readonly compiled: boolean, decide(state: object): any },
 *   idle: { ms(): number, readonly visible: boolean },
 *   inputs: () => Moment | null,   null when there is nothing to decide (no page yet, a nudge shown)
 *   onHeldOut: (ruleId: string, moment: Moment) => void,   the visitor is in the rule's control group
 *   onFire: (decision: any, moment: Moment) => void,       a nudge to show
 *   fail: (code: string, message: string, cause?: unknown) => void,
 *   guard: <F extends (...args: any[]) => any>(name: string, fn: F) => F,
 * }} options
 * @returns {{ decide(exitIntent: boolean): void, pause(): void, resume(): void, stop(): void, readonly lastScore: number | null }}
 */
export function createDecider({ engine, idle, inputs, onHeldOut, onFire, fail, guard }) {
  let timer = null;
  let timerAt = null; // the idle time the timer waits for
  let lastScore = null;
  let stopped = false;

  const clear = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    timerAt = null;
  };
  const arm = (atIdle) => {
    clear();
    if (atIdle === null || atIdle === undefined || !idle.visible || stopped) return;
    timerAt = atIdle;
    timer = setTimeout(onTimer, Math.max(0, atIdle - idle.ms()));
  };
  const onTimer = guard('idle timer', () => {
    timer = null;
    const at = timerAt;
    timerAt = null;
    if (at === null || stopped) return;
    // Activity since the timer was set restarts the count: wait for the rest, without deciding.
    if (idle.ms() < at) arm(at);
    else decide(false);
  });

  const decide = (exitIntent) => {
    if (stopped || !engine.compiled) return;
    const moment = inputs();
    if (!moment) return;
    const state = moment.state;
    lastScore = state.intent_score;
    state.idle_ms = idle.ms();
    state.exit_intent = exitIntent === true;
    let decision;
    try {
      decision = engine.decide(state);
      mark('decided');
    } catch (e) {
      fail('engine', `the engine refused the page ${state.page_url} (${messageOf(e)})`, e);
      clear();
      return;
    }
    if (decision.held_out_rule_id) {
      // Nothing is shown and no later rule is tried now (docs/contract/caps.md); the held-out
      // entry counts for caps like a shown one, so a later decision may fire another rule.
      clear();
      onHeldOut(decision.held_out_rule_id, moment);
    } else if (decision.would_fire && decision.nudge) {
      clear();
      onFire(decision, moment);
    } else {
      arm(decision.next_idle_ms);
    }
  };

  return {
    decide,
    /** The tab is hidden: the timer stops, and its idle time is kept for `resume`. */
    pause() {
      const at = timerAt;
      clear();
      timerAt = at;
    },
    /** The tab is visible again: the timer is set again for the rest of its idle time. */
    resume() {
      const at = timerAt;
      timerAt = null;
      if (at !== null) arm(at);
    },
    stop() {
      stopped = true;
      clear();
    },
    /** The intent score of the last decision. */
    get lastScore() {
      return lastScore;
    },
  };
}
