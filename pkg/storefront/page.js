// The page observer of the storefront runtime (docs/contract/storefront.md, "What it observes"):
// `location.pathname`, and in single-page shops `history.pushState`, `replaceState` and
// `popstate`; each new path is a page view.
import { listeners } from './browser.js';

/**
 * @param {{
 *   win: Window,
 *   fail: (code: string, message: string, cause?: unknown) => void,
 *   guard: <F extends (...args: any[]) => any>(name: string, fn: F) => F,
 *   onView: (path: string) => void,   called with each new path
 * }} options
 * @returns {{ install(): void, uninstall(): void, check(): void, readonly path: string | null }}
 *   `check()` looks at the location now (the first page view); `path` is the path of the last
 *   page view (null before the first).
 */
export function pageObserver({ win, fail, guard, onView }) {
  let path = null;
  let on = false;
  const view = () => {
    if (!on) return;
    const next = win.location.pathname || '/';
    if (next === path) return;
    path = next;
    onView(path);
  };
  const events = listeners([[win, 'popstate', guard('popstate', view)]]);
  // history.pushState and replaceState, wrapped: the wrappers stay once uninstalled (other
  // scripts may have wrapped them since), passing through.
  const wrap = (name) => {
    const original = win.history[name];
    if (typeof original !== 'function') return;
    const seen = guard(name, view);
    try {
      win.history[name] = function (...args) {
        const out = original.apply(this, args);
        if (on) seen();
        return out;
      };
    } catch (e) {
      fail('internal', `history.${name} could not be observed`, e);
    }
  };
  return {
    install() {
      on = true;
      events.install();
      wrap('pushState');
      wrap('replaceState');
    },
    uninstall() {
      on = false;
      events.uninstall();
    },
    check: guard('page view', view),
    get path() {
      return path;
    },
  };
}
