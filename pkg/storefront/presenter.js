// The nudge on screen (docs/contract/storefront.md, "What it shows"): at most one, drawn by
// ui.js's renderNudge, its outcome heard once (the CTA, or the dismiss control, Escape, a click
// outside the exit modal), removed at its outcome or the next page view.
import { mark, yieldToPage } from './browser.js';
import { messageOf } from './errors.js';
import { renderNudge } from './ui.js';

/**
 * @param {{
 *   doc: Document,
 *   fail: (code: string, message: string, cause?: unknown) => void,
 *   guard: <F extends (...args: any[]) => any>(name: string, fn: F) => F,
 * }} options
 * @returns {{
 *   show(nudge: { type: string, message: string, cta: string, cta_url?: string | null }, ruleId: string,
 *        onOutcome: (outcome: 'clicked' | 'dismissed' | 'chat_opened') => void): void,
 *   close(): void,
 *   readonly showing: boolean,
 * }} `show` draws the nudge of rule `ruleId` (a failure goes to `fail`, code `render`), and calls
 *   `onOutcome` once the visitor takes or dismisses it, after removing it; `close` removes it.
 */
export function createPresenter({ doc, fail, guard }) {
  let shown = null; // { ui, type }

  const close = () => {
    const s = shown;
    shown = null;
    if (s) {
      try {
        s.ui.remove();
      } catch (e) {
        fail('render', `the nudge could not be removed (${messageOf(e)})`, e);
      }
    }
  };

  const show = (nudge, ruleId, onOutcome) => {
    let current = null;
    const finish = (outcome) => {
      if (!current || shown !== current) return;
      close();
      onOutcome(outcome);
    };
    try {
      current = {
        ui: renderNudge(doc, nudge, {
          onCta: guard('cta', () => finish(nudge.type === 'chat_bubble' ? 'chat_opened' : 'clicked')),
          onDismiss: guard('dismiss', () => finish('dismissed')),
        }),
      };
    } catch (e) {
      fail('render', `the ${nudge.type} could not be drawn (${messageOf(e)})`, e);
      return;
    }
    shown = current;
    mark('shown');
    // A shop whose CSS hides <body> or <html> hides the nudge too: said, not thrown. Checked in
    // a later task, so that the layout it asks for is not added to the drawing's task.
    void yieldToPage().then(() => {
      try {
        if (shown === current && !current.ui.visible()) fail('hidden', `the ${nudge.type} of rule ${ruleId} is not rendered: the page's CSS hides its container`);
      } catch {
        // layout unavailable
      }
    });
  };

  return {
    show,
    close,
    get showing() {
      return shown !== null;
    },
  };
}
