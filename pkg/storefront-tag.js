// The entry of pkg/dist/storefront.js: the runtime for a plain tag, started from its data-
// attributes (docs/STOREFRONT.md):
//
//   <script type="module" src="/nudges/storefront.js"
//           data-endpoint="https://api.example.com" data-site-key="pk_live_..."
//           data-intent-score="myScore" data-on-chat-open="openChat" data-on-error="logNudgeError">
//   </script>
//
// data-intent-score, data-on-chat-open and data-on-error name functions on `window`, looked up
// when called (so they may be defined after the tag). The handle is `window.nudgeRules`, and a
// `nudge-rules:ready` event is dispatched on `window` with it as `detail`. Importing this module
// from a script without data-site-key starts nothing: call `startNudges` yourself.
import { startNudges } from './storefront.js';

export { startNudges, builtInIntentScore, NudgesError, CONFIG_MAX_AGE_MS } from './storefront.js';

function ownTag() {
  try {
    const doc = globalThis.document;
    if (!doc) return null;
    const here = import.meta.url;
    const tags = [...doc.querySelectorAll('script[type="module"][src][data-site-key]')];
    return tags.find((s) => new URL(s.getAttribute('src'), doc.baseURI).href === here) ?? null;
  } catch {
    return null;
  }
}

const tag = ownTag();
if (tag) {
  const d = tag.dataset;
  const named = (name) => (name ? (...args) => {
    const fn = globalThis[name];
    if (typeof fn !== 'function') throw new TypeError(`window.${name} is not a function`);
    return fn(...args);
  } : undefined);
  const onError = d.onError ? (e) => {
    const fn = globalThis[d.onError];
    if (typeof fn === 'function') fn(e);
    else globalThis.console?.warn?.(e);
  } : undefined;
  const handle = startNudges({
    endpoint: d.endpoint,
    siteKey: d.siteKey,
    intentScore: named(d.intentScore),
    onChatOpen: named(d.onChatOpen),
    onError,
  });
  try {
    globalThis.nudgeRules = handle;
    globalThis.dispatchEvent?.(new CustomEvent('nudge-rules:ready', { detail: handle }));
  } catch {
    // a frozen window: the handle is still returned by startNudges for module users
  }
}
