// Idle time and exit intent, as the storefront runtime observes them (docs/contract/storefront.md,
// "What it observes"): idle time is the milliseconds since the last pointermove, pointerdown,
// keydown, scroll, wheel or touchstart, paused while the tab is hidden; exit intent is the
// pointer leaving the viewport through its top edge on a device with a fine pointer.
import { listeners } from './browser.js';

/** The longest idle time the engine takes (docs/contract/preview.md). */
export const MAX_IDLE_MS = 86_400_000;
const ACTIVITY = ['pointermove', 'pointerdown', 'keydown', 'scroll', 'wheel', 'touchstart'];

/**
 * The idle clock.
 * @param {{
 *   win: Window, doc: Document, now: () => number,
 *   guard: <F extends (...args: any[]) => any>(name: string, fn: F) => F,
 *   onHidden: () => void, onVisible: () => void,   the tab hidden, and shown again
 * }} options
 * @returns {{ install(): void, uninstall(): void, ms(): number, readonly visible: boolean, restart(): void }}
 *   `ms()` is the idle time now (0 to MAX_IDLE_MS); `restart()` counts it from 0 again (a page view).
 */
export function idleClock({ win, doc, now, guard, onHidden, onVisible }) {
  let before = 0; // idle time counted before the tab was last hidden
  let visibleSince = doc.visibilityState === 'hidden' ? null : now();
  const restart = () => {
    before = 0;
    if (visibleSince !== null) visibleSince = now();
  };
  const onVisibility = guard('visibilitychange', () => {
    if (doc.visibilityState === 'hidden') {
      if (visibleSince !== null) before += now() - visibleSince;
      visibleSince = null;
      onHidden();
    } else if (visibleSince === null) {
      visibleSince = now();
      onVisible();
    }
  });
  const events = listeners([
    ...ACTIVITY.map((type) => [win, type, restart, { capture: true, passive: true }]),
    [doc, 'visibilitychange', onVisibility],
  ]);
  return {
    ...events,
    ms: () => Math.min(MAX_IDLE_MS, Math.max(0, Math.floor(before + (visibleSince === null ? 0 : now() - visibleSince)))),
    get visible() {
      return visibleSince !== null;
    },
    restart,
  };
}

/**
 * The exit-intent observer: `onExit()` when the pointer leaves through the top edge.
 * @param {{ win: Window, doc: Document, guard: <F extends (...args: any[]) => any>(name: string, fn: F) => F, onExit: () => void }} options
 * @returns {{ install(): void, uninstall(): void }}
 */
export function exitIntent({ win, doc, guard, onExit }) {
  const finePointer = () => {
    try {
      return win.matchMedia?.('(pointer: fine)').matches === true;
    } catch {
      return false;
    }
  };
  return listeners([[doc, 'mouseout', guard('exit intent', (event) => {
    if (event.relatedTarget || event.clientY > 0 || !finePointer()) return;
    onExit();
  })]]);
}
