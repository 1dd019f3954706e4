// How the storefront runtime fails (docs/contract/storefront.md, "Never breaks the shop"): every
// failure is a NudgesError given to the page's `onError`, never thrown into the page.

/** An error given to `onError`; never thrown into the page. */
export class NudgesError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {Record<string, unknown>} [details]
   */
  constructor(code, message, details = {}) {
    super(message);
    this.name = 'NudgesError';
    this.code = code;
    Object.assign(this, details);
  }
}

/** The message of a thrown value. */
export const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * The runtime's one way to report, built from the page's `onError` (default `console.warn`):
 * - `report(error)` hands an error on (an error of `onError` itself is swallowed);
 * - `fail(code, message, cause?)` reports a NudgesError, its message prefixed with the module's
 *   name;
 * - `guard(name, fn)` wraps a callback the page or the browser calls, so that what it throws is
 *   reported (code `internal`, the message naming `name`) and it returns undefined instead.
 * @param {unknown} onError
 */
export function reporter(onError) {
  const hear = typeof onError === 'function' ? onError : (e) => globalThis.console?.warn?.(e);
  const report = (error) => {
    try {
      hear(error);
    } catch {
      // an error of onError itself is swallowed
    }
  };
  const fail = (code, message, cause) => report(new NudgesError(code, `nudge-rules/storefront: ${message}`, cause === undefined ? {} : { cause }));
  const guard = (name, fn) => (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      fail('internal', `${name}: ${messageOf(e)}`, e);
      return undefined;
    }
  };
  return { report, fail, guard };
}
