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
//
// data-preview="fragment" (a preview shop only, never a live one: it lets a link choose the
// nudges) takes a draft config from the page's `#nudge-preview=BASE64URL` fragment (the editor's
// "Open the test shop with this draft"), keeps it for the tab's later pages and removes the
// fragment; `#nudge-preview=off` ends it. docs/STOREFRONT.md, "Preview a draft".
//
// Besides `window.nudgeRules` (the handle, documented), it writes nothing on the page's globals.
import { startNudges } from '../storefront.js';
import { previewDraft } from './store.js';

export { startNudges, builtInIntentScore, NudgesError, CONFIG_MAX_AGE_MS } from '../storefront.js';

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

/**
 * The draft config of `#nudge-preview=...` (or the tab's kept one): the parsed config, or its text
 * when it is not JSON (the engine then refuses it through onError); undefined without a preview.
 */
function previewConfig(siteKey) {
  const kept = previewDraft(siteKey);
  const m = /(?:^#|&)nudge-preview=([^&]*)/.exec(globalThis.location?.hash ?? '');
  let text = null;
  if (m) {
    try {
      globalThis.history.replaceState(globalThis.history.state, '', `${location.pathname}${location.search}`);
    } catch {
      // the fragment stays
    }
    if (m[1] === 'off') {
      kept.remove();
      return undefined;
    }
    try {
      const b64 = m[1].replace(/-/g, '+').replace(/_/g, '/');
      text = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    } catch {
      text = m[1];
    }
    kept.write(text);
  } else {
    text = kept.read();
  }
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
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
    previewConfig: d.preview === 'fragment' ? previewConfig(d.siteKey) : undefined,
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
