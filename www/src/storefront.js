// The mock storefront: a small fake shop page, chosen by the normalized path, with the nudge
// drawn on it by the storefront runtime's own renderer (pkg/storefront/ui.js, in its Shadow DOM),
// so that the preview is what a shopper sees and cannot drift from it.

import { renderNudge } from '../../pkg/storefront/ui.js';
import { esc } from './util.js';

/** The storefront's pages, offered in the page picker. */
export const STORE_PAGES = [
  { url: '/', label: 'Home' },
  { url: '/products/linen-shirt', label: 'Product: linen shirt' },
  { url: '/products/gift-card', label: 'Product: gift card' },
  { url: '/collections/summer', label: 'Collection: summer' },
  { url: '/collections/sale/dresses', label: 'Sale: dresses' },
  { url: '/search?q=linen', label: 'Search results' },
  { url: '/blog/how-to-wash-linen', label: 'Blog post' },
  { url: '/blog/tags/care', label: 'Blog tag page' },
  { url: '/cart', label: 'Cart' },
  { url: '/checkout/payment', label: 'Checkout' },
  { url: '/account/orders', label: 'Account' },
];

const SHOP = 'Linen & Loom';

function title(slug) {
  const words = decodeSafe(slug || '').replace(/[-_]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : '';
}

function decodeSafe(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function img(cls = '', label = '') {
  return `<div class="sf-img ${cls}" aria-hidden="true"><span>${esc(label)}</span></div>`;
}

function lines(n, cls = '') {
  let out = '';
  for (let i = 0; i < n; i++) out += `<div class="sf-line ${cls}" style="width:${92 - ((i * 17) % 35)}%"></div>`;
  return out;
}

function cards(names) {
  return `<div class="sf-grid">${names
    .map(([name, price], i) => `<div class="sf-card">${img(`tone-${i % 4}`)}<div class="sf-card-name">${esc(name)}</div><div class="sf-card-price">${esc(price)}</div></div>`)
    .join('')}</div>`;
}

/** The page body for a normalized path (null when the URL was rejected). */
function pageBody(path) {
  if (path === null) {
    return `<div class="sf-error"><div class="sf-error-code">400</div><p>This address is rejected before any rule sees it.</p></div>`;
  }
  const seg = path.split('/').filter(Boolean);
  const [first, second, third] = seg;
  switch (first) {
    case undefined:
      return `<div class="sf-hero">${img('tone-1 hero', '')}<div class="sf-hero-text"><div class="sf-kicker">New season</div><h3>Summer linen, made to last</h3><div class="sf-btn">Shop the collection</div></div></div>${cards([['Linen shirt', '$68'], ['Wide trousers', '$84'], ['Market tote', '$32']])}`;
    case 'products': {
      const name = second === 'gift-card' ? 'Gift card' : title(second) || 'Product';
      const price = second === 'gift-card' ? 'From $25' : '$68.00';
      return `<div class="sf-product">${img('tone-0 big', '')}<div class="sf-product-info"><div class="sf-crumbs">Home / Shop / ${esc(name)}</div><h3>${esc(name)}</h3><div class="sf-price">${price}</div><div class="sf-sizes">${['XS', 'S', 'M', 'L', 'XL'].map((s) => `<span>${s}</span>`).join('')}</div><div class="sf-btn">Add to cart</div>${lines(3)}</div></div>`;
    }
    case 'collections': {
      const name = third ? `${title(second)}: ${title(third)}` : title(second) || 'All products';
      const sale = second === 'sale' || second === 'clearance';
      return `<div class="sf-collection"><div class="sf-collection-head"><h3>${esc(name)}</h3>${sale ? '<span class="sf-badge">Up to 40% off</span>' : ''}</div>${cards([['Linen shirt', sale ? '$48' : '$68'], ['Wrap dress', sale ? '$79' : '$118'], ['Sun hat', sale ? '$22' : '$36'], ['Espadrilles', sale ? '$45' : '$59']])}</div>`;
    }
    case 'search':
      return `<div class="sf-search"><div class="sf-searchbox">linen</div><div class="sf-muted">24 results</div>${cards([['Linen shirt', '$68'], ['Linen napkins', '$24'], ['Linen trousers', '$84']])}</div>`;
    case 'blog':
      if (second === 'tags') {
        return `<div class="sf-article"><div class="sf-kicker">Journal · tag</div><h3>Stories tagged “${esc(title(third) || 'all')}”</h3>${lines(2)}${cards([['How to wash linen', '5 min read'], ['Packing light', '4 min read'], ['Summer care', '3 min read']])}</div>`;
      }
      return `<div class="sf-article"><div class="sf-kicker">Journal</div><h3>${esc(title(seg[seg.length - 1]) || 'Journal')}</h3><div class="sf-muted">6 min read</div>${img('tone-2 wide', '')}${lines(5)}</div>`;
    case 'cart':
    case 'checkout':
      return `<div class="sf-checkout"><div class="sf-form"><h3>${first === 'cart' ? 'Your cart' : 'Checkout'}</h3>${['Email', 'Card number', 'Name on card'].map((f) => `<div class="sf-field"><span>${f}</span></div>`).join('')}<div class="sf-btn">${first === 'cart' ? 'Check out' : 'Pay $68.00'}</div></div><div class="sf-summary">${img('tone-0 thumb', '')}<div><b>Linen shirt</b><div class="sf-muted">Size M · $68.00</div></div></div></div>`;
    case 'account':
    case 'orders':
      return `<div class="sf-account"><h3>Your account</h3>${['Order #1042 · Delivered', 'Order #1038 · Delivered', 'Order #1021 · Returned'].map((o) => `<div class="sf-row">${esc(o)}</div>`).join('')}</div>`;
    default:
      return `<div class="sf-article"><h3>${esc(title(seg[seg.length - 1]))}</h3>${lines(6)}</div>`;
  }
}

/** What the preview's nudge does when used: nothing (it is a picture, inert). */
const PICTURE = { onCta: () => {}, onDismiss: () => {} };

/** Whether the runtime draws the nudge's CTA as a link (cta_url) rather than a button. */
const kindOf = (nudge) => `${nudge.type}${nudge.type !== 'chat_bubble' && typeof nudge.cta_url === 'string' && nudge.cta_url !== '' ? ':link' : ''}`;

export class StorefrontView {
  constructor(root) {
    this.root = root;
    this.address = root.querySelector('.sf-address');
    this.page = root.querySelector('.sf-page');
    this.overlay = root.querySelector('.sf-overlay');
    this.pageKey = undefined;
    this.nudgeKind = undefined;
    this.drawn = null; // the runtime's nudge: { update(nudge), remove() }
  }

  /**
   * @param {string} pageUrl  what the visitor's browser shows
   * @param {string|null} path  the normalized path (null: rejected)
   * @param {{type, message, cta}|null} nudge
   */
  render(pageUrl, path, nudge) {
    this.address.textContent = displayAddress(pageUrl);
    if (path !== this.pageKey) {
      this.pageKey = path;
      this.page.innerHTML = `<header class="sf-header"><span class="sf-logo">${esc(SHOP)}</span><nav><span>Shop</span><span>Sale</span><span>Journal</span></nav><span class="sf-cart" aria-hidden="true">Cart (1)</span></header><div class="sf-main">${pageBody(path)}</div>`;
    }
    // A new nudge type enters with its animation; a changed message or button text (typing in
    // the editor) is put into the nudge already shown, so it does not replay its entrance.
    const kind = nudge ? kindOf(nudge) : '';
    if (kind !== this.nudgeKind) {
      this.nudgeKind = kind;
      this.drawn?.remove();
      this.drawn = null;
      if (nudge) {
        try {
          this.drawn = renderNudge(document, nudge, PICTURE, { into: this.overlay, picture: true });
        } catch {
          this.drawn = null; // a type the runtime does not draw: no picture
        }
      }
      this.root.dataset.nudge = nudge ? nudge.type : 'none';
    } else if (nudge) {
      this.drawn?.update(nudge);
    }
  }
}

function displayAddress(pageUrl) {
  if (/^https?:\/\//i.test(pageUrl)) return pageUrl.replace(/^https?:\/\//i, '');
  return `shop.example${pageUrl.startsWith('/') ? '' : '/'}${pageUrl}`;
}
