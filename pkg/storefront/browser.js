// Small browser helpers of the storefront runtime: User Timing marks, yielding to the page between
// main-thread tasks, sets of event listeners that install and uninstall together, random ids.

/** A User Timing mark (`nudge-rules:...`) for benchmarks and the browser's performance panel. */
export function mark(name) {
  try {
    globalThis.performance?.mark?.(`nudge-rules:${name}`);
  } catch {
    // no User Timing here
  }
}

/**
 * Resolves in a new task, so that the work before and after it are two main-thread tasks:
 * `scheduler.yield()` where the browser has it, else a MessageChannel message (not clamped like
 * a nested setTimeout).
 */
export function yieldToPage() {
  try {
    const scheduler = globalThis.scheduler;
    if (typeof scheduler?.yield === 'function') return scheduler.yield();
  } catch {
    // fall through
  }
  return new Promise((resolve) => {
    try {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve(undefined);
      };
      channel.port2.postMessage(null);
    } catch {
      setTimeout(resolve, 0);
    }
  });
}

/**
 * Event listeners that go on and off together: `install()` adds each `[target, type, listener,
 * options]`, `uninstall()` removes them. Every observer of the runtime is such a pair.
 * @param {[EventTarget, string, (event: any) => void, AddEventListenerOptions?][]} list
 */
export function listeners(list) {
  return {
    install: () => list.forEach(([target, type, fn, options]) => target.addEventListener(type, fn, options)),
    uninstall: () => list.forEach(([target, type, fn, options]) => target.removeEventListener(type, fn, options)),
  };
}

/** `n` random letters and digits (crypto.getRandomValues where there is one). */
export function randomChars(n) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = new Uint8Array(n);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < n; i++) bytes[i] = Math.floor(Math.random() * 256);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}
