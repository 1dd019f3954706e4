// "Open the test shop with this draft" (issue 36, docs/contract/storefront.md): the editor's draft config, not the
// published one, shown by the real storefront runtime in the test shop (examples/shop, `make
// shop`), on the page the visitor above is on. The draft goes in the link's `#nudge-preview=`
// fragment (base64url of its JSON; a fragment is never sent to a server), which the shop's tag
// reads because it opts in with `data-preview="fragment"` (docs/STOREFRONT.md, "Preview a
// draft"); the shop keeps it for the tab's later pages.

import { h } from './util.js';

const DEFAULT_SHOP = 'http://127.0.0.1:8090';

/** base64url of the UTF-8 bytes of `text`. */
function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The path (and query) of the visitor's page URL, as the shop serves it. */
function shopPath(pageUrl) {
  const url = String(pageUrl ?? '').trim();
  try {
    if (/^https?:\/\//i.test(url)) {
      const u = new URL(url);
      return `${u.pathname}${u.search}`;
    }
  } catch {
    return '/';
  }
  return url.startsWith('/') && !url.startsWith('//') ? url.replace(/#.*$/, '') : '/';
}

/**
 * The link to the test shop with the draft, or the reason there is none.
 * @param {string} shop  the shop's address
 * @param {string} text  the draft config's text
 * @param {string} pageUrl  the visitor's page
 * @returns {{ href: string } | { problem: string }}
 */
export function shopPreviewLink(shop, text, pageUrl) {
  let base;
  try {
    base = new URL(shop.trim());
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError('not http');
  } catch {
    return { problem: 'The test shop’s address must be an http(s) address, like http://127.0.0.1:8090.' };
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch {
    return { problem: 'The draft is not valid JSON yet: fix it first, then open the shop.' };
  }
  const target = new URL(shopPath(pageUrl), base.origin);
  return { href: `${target.href}#nudge-preview=${base64url(JSON.stringify(config))}` };
}

export class ShopPreview {
  /**
   * @param {HTMLElement} root  index.html `#shop-preview`
   * @param {{ text: () => string, pageUrl: () => string }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.address = h('input', { id: 'sp-address', type: 'text', value: DEFAULT_SHOP, spellcheck: 'false', autocomplete: 'off', inputmode: 'url' });
    this.link = h('a', { class: 'btn btn-small btn-primary sp-open', href: DEFAULT_SHOP, target: '_blank', rel: 'noopener' }, 'Open the test shop with this draft');
    this.problem = h('p', { class: 'vr-error', role: 'alert', hidden: true });
    const update = () => this.update();
    // The link is made when it is used, so it always carries the draft of that moment.
    for (const type of ['pointerdown', 'focus', 'click', 'auxclick']) this.link.addEventListener(type, update, { capture: true });
    this.link.addEventListener('click', (e) => {
      if (!this.update()) e.preventDefault();
    });
    this.address.addEventListener('input', update);
    const details = h('details', { class: 'vr sp' },
      h('summary', {}, h('span', { class: 'vr-title' }, 'See it in the test shop')),
      h('div', { class: 'vr-body' },
        h('p', { class: 'hint' },
          'Opens the test shop (make shop) on the visitor’s page with this draft, not the published config: the real storefront runtime decides and draws the nudges. ' +
          'The draft travels in the link’s #fragment, which no server sees; the shop keeps it for the tab until #nudge-preview=off.'),
        h('div', { class: 'vr-form sp-form' }, h('label', { for: 'sp-address' }, 'Test shop address'), this.address, this.link),
        this.problem));
    root.replaceChildren(details);
  }

  /** Puts the draft of this moment into the link; false (and says why) when there is none. */
  update() {
    const made = shopPreviewLink(this.address.value, this.host.text(), this.host.pageUrl());
    this.problem.hidden = !('problem' in made);
    if ('problem' in made) {
      this.problem.textContent = made.problem;
      return false;
    }
    this.link.href = made.href;
    return true;
  }
}
