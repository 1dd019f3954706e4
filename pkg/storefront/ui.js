// The four nudges of the storefront runtime (docs/contract/storefront.md), each in a Shadow DOM so
// that the shop's CSS and the nudge's never mix: chat_bubble (a card in the corner), toast (a
// card, role="status"), exit_modal (a dialog: focus moved in and trapped, Escape closes it, focus
// returned; a sheet along the bottom edge on screens up to 480 px wide), sticky_bar (a bar over
// the page's bottom edge). Every nudge is position: fixed, so nothing of the shop moves. Colours,
// fonts and corners are CSS custom properties a shop may set (on :root or any ancestor of
// <body>): docs/STOREFRONT.md, "Theming". The editor draws its preview with this same renderer
// (www/src/storefront.js, as a picture: `{ into, picture: true }`), so the two cannot drift.

// The shop's custom properties (docs/STOREFRONT.md, "Theming"), each with its default, read once
// on the host into the sheet's own names (--font, --accent, ...).
const CSS = `
:host {
  all: initial;
  --font: var(--nudge-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  --font-size: var(--nudge-font-size, 15px);
  --bg: var(--nudge-bg, #ffffff);
  --fg: var(--nudge-fg, #1b1b1f);
  --muted: var(--nudge-muted, #4a4a55);
  --accent: var(--nudge-accent, #1f4fd1);
  --accent-fg: var(--nudge-accent-fg, #ffffff);
  --radius: var(--nudge-radius, 12px);
  --shadow: var(--nudge-shadow, 0 8px 28px rgba(0, 0, 0, 0.18));
  --backdrop: var(--nudge-backdrop, rgba(10, 10, 20, 0.55));
  --focus: var(--nudge-focus, #1f4fd1);
  --z: var(--nudge-z, 2147483000);
}
* { box-sizing: border-box; }
.nudge {
  position: fixed; z-index: var(--z);
  font-family: var(--font); font-size: var(--font-size); line-height: 1.45;
  color: var(--fg); background: var(--bg);
  border-radius: var(--radius); box-shadow: var(--shadow);
  display: flex; flex-direction: column; gap: 10px; padding: 16px 16px 14px;
  max-width: calc(100% - 24px);
  animation: nudge-in 180ms ease-out;
}
.msg { margin: 0; padding-right: 36px; overflow-wrap: anywhere; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; }
.cta {
  font: inherit; font-weight: 600; cursor: pointer; text-decoration: none;
  display: inline-flex; align-items: center; justify-content: center;
  min-height: 44px; padding: 8px 18px; border: 0; border-radius: calc(var(--radius) - 4px);
  color: var(--accent-fg); background: var(--accent);
}
.cta:hover { filter: brightness(1.08); }
.close {
  position: absolute; top: 6px; right: 6px; width: 36px; height: 36px;
  display: inline-flex; align-items: center; justify-content: center;
  font: inherit; font-size: 22px; line-height: 1; cursor: pointer;
  color: var(--muted); background: transparent; border: 0; border-radius: 50%;
}
.close:hover { background: rgba(0, 0, 0, 0.06); }
.cta:focus-visible, .close:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
.bubble { right: 12px; bottom: 12px; width: 340px; }
.bubble .badge {
  width: 36px; height: 36px; border-radius: 50%; flex: none;
  background: var(--accent); color: var(--accent-fg);
  display: inline-flex; align-items: center; justify-content: center; font-size: 18px;
}
.bubble .head { display: flex; gap: 10px; align-items: flex-start; padding-right: 36px; }
.bubble .head .msg { padding-right: 0; }
.toast { left: 12px; bottom: 12px; width: 360px; }
.bar {
  left: 0; right: 0; bottom: 0; max-width: none; border-radius: 0;
  flex-direction: row; align-items: center; justify-content: center; flex-wrap: wrap;
  padding: 10px 56px 10px 16px; gap: 8px 16px;
}
.bar .msg { padding-right: 0; }
.bar .close { top: 50%; transform: translateY(-50%); }
.backdrop {
  position: fixed; inset: 0; z-index: var(--z); background: var(--backdrop);
  animation: nudge-fade 180ms ease-out;
}
.modal {
  left: 50%; top: 50%; transform: translate(-50%, -50%); width: 440px;
  padding: 28px 24px 20px; gap: 16px; text-align: center;
}
.modal .msg { padding: 0 28px; font-size: 1.15em; }
.modal .actions { justify-content: center; }
.modal:focus { outline: none; }
@keyframes nudge-in { from { opacity: 0; translate: 0 12px; } to { opacity: 1; translate: 0 0; } }
@keyframes nudge-fade { from { opacity: 0; } to { opacity: 1; } }
@media (prefers-reduced-motion: reduce) {
  .nudge, .backdrop { animation: none; }
}
@media (max-width: 480px) {
  .bubble, .toast { left: 8px; right: 8px; bottom: 8px; width: auto; }
  .modal {
    left: 0; right: 0; top: auto; bottom: 0; transform: none; width: auto; max-width: none;
    border-radius: var(--radius) var(--radius) 0 0; padding: 24px 16px 16px;
  }
}
`;

/**
 * The host's own style, set through CSSOM (allowed by a Content-Security-Policy without
 * 'unsafe-inline', unlike a style attribute) and `!important`: a zero-size fixed box that the
 * shop's CSS cannot hide or move.
 */
const HOST_STYLE = 'display:block;position:fixed;top:0;left:0;width:0;height:0;overflow:visible;visibility:visible;'
  + 'opacity:1;transform:none;z-index:2147483000;pointer-events:auto';

/** One constructed style sheet per document (not subject to CSP style-src); <style> otherwise. */
const sheets = new WeakMap();
function styleInto(doc, root) {
  const win = doc.defaultView;
  if (win && typeof win.CSSStyleSheet === 'function' && 'adoptedStyleSheets' in root) {
    try {
      let sheet = sheets.get(doc);
      if (!sheet) {
        sheet = new win.CSSStyleSheet();
        sheet.replaceSync(CSS);
        sheets.set(doc, sheet);
      }
      root.adoptedStyleSheets = [sheet];
      return;
    } catch {
      // fall back to a <style> element
    }
  }
  const style = doc.createElement('style');
  style.textContent = CSS;
  root.append(style);
}

let counter = 0;

/**
 * Draws `nudge` and returns `{ host, visible(), update(nudge), remove() }`: `update` puts another
 * message, CTA text and link into the nudge drawn (same type and kind of CTA), without replaying
 * its entrance.
 *
 * Options (the editor's preview): `into`, the element the nudge goes in (default: the body); an
 * ancestor of it that is a containing block for fixed boxes (`contain: layout`, a transform)
 * places the nudge in it instead of the viewport. `picture`: a picture of the nudge, not a nudge
 * to use: inert (nothing in it is focusable or clickable), focus neither moved in nor trapped.
 * @param {Document} doc
 * @param {{ type: string, message: string, cta: string, cta_url?: string | null }} nudge
 * @param {{ onCta: () => void, onDismiss: () => void }} actions
 * @param {{ into?: Element, picture?: boolean }} [options]
 */
export function renderNudge(doc, nudge, { onCta, onDismiss }, { into, picture } = {}) {
  const host = doc.createElement('div');
  host.setAttribute('data-nudge-rules', nudge.type);
  if (picture) host.inert = true;
  for (const declaration of HOST_STYLE.split(';')) {
    const [name, value] = declaration.split(':');
    host.style.setProperty(name, value, 'important');
  }
  const root = host.attachShadow({ mode: 'open' });
  styleInto(doc, root);

  const id = `nudge-${++counter}`;
  const card = doc.createElement('div');
  card.className = 'nudge';
  const msg = doc.createElement('p');
  msg.className = 'msg';
  msg.id = `${id}-msg`;
  msg.textContent = nudge.message;

  // The CTA: a link when the rule names where it goes (cta_url, docs/contract/caps.md), else a button. A
  // chat bubble's CTA opens the chat (onChatOpen): always a button.
  const link = nudge.type !== 'chat_bubble' && typeof nudge.cta_url === 'string' && nudge.cta_url !== '';
  const cta = doc.createElement(link ? 'a' : 'button');
  cta.className = 'cta';
  cta.textContent = nudge.cta;
  if (link) cta.setAttribute('href', nudge.cta_url);
  else cta.setAttribute('type', 'button');
  cta.addEventListener('click', () => onCta());
  const actions = doc.createElement('div');
  actions.className = 'actions';
  actions.append(cta);

  const close = doc.createElement('button');
  close.className = 'close';
  close.type = 'button';
  close.setAttribute('aria-label', nudge.type === 'exit_modal' ? 'Close' : 'Dismiss');
  const cross = doc.createElement('span');
  cross.setAttribute('aria-hidden', 'true');
  cross.textContent = '\u00d7';
  close.append(cross);
  close.addEventListener('click', () => onDismiss());

  let cleanup = () => {};
  switch (nudge.type) {
    case 'chat_bubble': {
      card.classList.add('bubble');
      card.setAttribute('role', 'region');
      card.setAttribute('aria-label', 'Chat');
      const head = doc.createElement('div');
      head.className = 'head';
      const badge = doc.createElement('span');
      badge.className = 'badge';
      badge.setAttribute('aria-hidden', 'true');
      // A speech bubble drawn in SVG: no emoji font needed.
      const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('viewBox', '0 0 24 24');
      svg.setAttribute('width', '20');
      svg.setAttribute('height', '20');
      const bubble = doc.createElementNS('http://www.w3.org/2000/svg', 'path');
      bubble.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H10l-5 4v-4H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z');
      bubble.setAttribute('fill', 'currentColor');
      svg.append(bubble);
      badge.append(svg);
      head.append(badge, msg);
      card.append(head, actions, close);
      root.append(card);
      break;
    }
    case 'toast':
      card.classList.add('toast');
      card.setAttribute('role', 'status');
      card.setAttribute('aria-live', 'polite');
      card.append(msg, actions, close);
      root.append(card);
      break;
    case 'sticky_bar':
      card.classList.add('bar');
      card.setAttribute('role', 'region');
      card.setAttribute('aria-label', 'Announcement');
      card.append(msg, actions, close);
      root.append(card);
      break;
    case 'exit_modal': {
      const backdrop = doc.createElement('div');
      backdrop.className = 'backdrop';
      backdrop.addEventListener('click', () => onDismiss());
      card.classList.add('modal');
      card.setAttribute('role', 'dialog');
      card.setAttribute('aria-modal', 'true');
      card.setAttribute('aria-labelledby', msg.id);
      card.tabIndex = -1;
      card.append(msg, actions, close);
      root.append(backdrop, card);
      if (picture) break;
      const previous = doc.activeElement;
      const focusables = [cta, close];
      const onKey = (event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          event.stopPropagation();
          onDismiss();
        } else if (event.key === 'Tab') {
          // Focus stays in the dialog: Tab from the last control goes to the first, and back.
          const active = root.activeElement;
          const at = focusables.indexOf(/** @type {any} */ (active));
          event.preventDefault();
          const next = event.shiftKey ? (at <= 0 ? focusables.length - 1 : at - 1) : (at + 1) % focusables.length;
          focusables[next].focus();
        }
      };
      doc.addEventListener('keydown', onKey, true);
      // Focus that leaves the dialog (a click outside, a screen reader) comes back to it.
      const onFocusIn = (event) => {
        if (event.target !== host) cta.focus();
      };
      doc.addEventListener('focusin', onFocusIn, true);
      cleanup = () => {
        doc.removeEventListener('keydown', onKey, true);
        doc.removeEventListener('focusin', onFocusIn, true);
        if (previous && typeof previous.focus === 'function' && previous !== doc.body) {
          try {
            previous.focus();
          } catch {
            // the element is gone
          }
        }
      };
      break;
    }
    default:
      throw new TypeError(`unknown nudge type ${JSON.stringify(nudge.type)}`);
  }
  (into ?? doc.body ?? doc.documentElement).append(host);
  if (nudge.type === 'exit_modal' && !picture) cta.focus();

  return {
    host,
    /** Whether the nudge is rendered at all (a shop's CSS hiding <body> hides it too). */
    visible: () => {
      const rects = card.getClientRects();
      return rects.length > 0 && rects[0].width > 0 && rects[0].height > 0;
    },
    update: (next) => {
      msg.textContent = next.message;
      cta.textContent = next.cta;
      if (link) cta.setAttribute('href', next.cta_url);
    },
    remove: () => {
      host.remove();
      cleanup();
    },
  };
}
