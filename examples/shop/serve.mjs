// The test shop: a small storefront (home, collection, products, cart, checkout, account, and a
// single-page guide that navigates with pushState) with the storefront runtime's tag on every
// page, served with the Content-Security-Policy docs/STOREFRONT.md gives. The browser tests, the
// docs and `make demo` use it.
//
//   node examples/shop/serve.mjs --endpoint http://127.0.0.1:8080 --site-key pk_test_... [--port 8090]
//
// The runtime (`/nudges/storefront.js` and its .wasm) is pkg/dist/, built by scripts/build-wasm.sh.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(HERE, '..', '..', 'pkg', 'dist');

const PRODUCTS = [
  ['linen-shirt', 'Linen shirt', '€79'],
  ['oxford-shirt', 'Oxford shirt', '€69'],
  ['flannel-shirt', 'Flannel shirt', '€74'],
  ['gift-card', 'Gift card', 'from €25'],
];

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The pages, by path: [title, main HTML]. */
function pageFor(pathname) {
  const p = pathname.replace(/\/+$/, '') || '/';
  if (p === '/') {
    return ['Linen & Co.', `<h1>Shirts for warm days</h1>
<p class="note">Linen, oxford and flannel, cut in our own workshop.</p>
<p><a class="shop" href="/collections/shirts">Shop the shirts</a></p>
<div class="grid">${PRODUCTS.slice(0, 3).map(([slug, name, price]) => `<a class="card" href="/products/${slug}"><div class="swatch"></div>${esc(name)} <span class="note">${esc(price)}</span></a>`).join('')}</div>`];
  }
  if (p === '/collections/shirts') {
    return ['Shirts', `<h1>Shirts</h1><div class="grid">${PRODUCTS.map(([slug, name, price]) => `<a class="card" href="/products/${slug}"><div class="swatch"></div>${esc(name)}<br><span class="note">${esc(price)}</span></a>`).join('')}</div>`];
  }
  const product = /^\/products\/([a-z-]+)$/.exec(p);
  if (product) {
    const found = PRODUCTS.find(([slug]) => slug === product[1]);
    if (!found) return null;
    const [, name, price] = found;
    return [name, `<div class="grid"><div class="swatch tall"></div><div>
<h1>${esc(name)}</h1><p class="note">${esc(price)}</p>
<p>Cut from washed European linen: light, breathable, softer with every wash.</p>
<label>Size <select id="size"><option>S</option><option selected>M</option><option>L</option></select></label>
<p><button class="shop" id="add-to-cart" type="button">Add to cart</button></p>
<p><a href="/cart">View cart</a></p><div id="status" role="status"></div></div></div>`];
  }
  if (p === '/cart') {
    return ['Cart', `<h1>Your cart</h1><p class="note">Items are kept in this browser.</p><p><a class="shop" href="/checkout">Checkout</a></p>`];
  }
  if (p === '/checkout') {
    return ['Checkout', `<h1>Checkout</h1><form><p><label>Email <input type="email" autocomplete="email"></label></p>
<p><button class="shop" id="place-order" type="submit">Place order</button></p></form><div id="status" role="status"></div>`];
  }
  if (p === '/account') {
    return ['Account', `<h1>Your account</h1><form><p><label>Email <input type="email"></label></p><p><label>Password <input type="password"></label></p><p><button class="shop" type="submit">Sign in</button></p></form>`];
  }
  if (p === '/guide' || p.startsWith('/guide/')) {
    return ['Style guide', `<nav aria-label="Guide"><a data-spa href="/guide">Guide</a><a data-spa href="/guide/fit">Fit</a><a data-spa href="/guide/care">Care</a></nav>
<section id="guide"><h1>Style guide</h1><p></p></section>`];
  }
  return null;
}

function layout(title, main, { endpoint, siteKey, tag }) {
  const attrs = {
    'data-endpoint': endpoint,
    'data-site-key': siteKey,
    'data-on-chat-open': 'openShopChat',
    'data-on-error': 'shopNudgeError',
    // A preview shop: the editor's "Open the test shop with this draft" link (its
    // #nudge-preview= fragment) chooses the config. Never on a live shop (docs/STOREFRONT.md).
    'data-preview': 'fragment',
    ...tag,
  };
  const tagAttrs = Object.entries(attrs).filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => ` ${k}="${esc(v)}"`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} | Linen &amp; Co.</title>
<link rel="stylesheet" href="/shop.css">
<script src="/shop.js" defer></script>
<script type="module" src="/nudges/storefront.js"${tagAttrs}></script>
</head><body>
<header><a class="brand" href="/">Linen &amp; Co.</a><nav aria-label="Shop">
<a href="/collections/shirts">Shirts</a><a href="/guide">Guide</a><a href="/account">Account</a><a href="/cart">Cart</a></nav></header>
<main>${main}</main>
<footer>Linen &amp; Co., a test shop of nudge-rules</footer>
</body></html>`;
}

/** The Content-Security-Policy the shop is served with: the one docs/STOREFRONT.md gives. */
export function csp(endpoint) {
  const api = new URL(endpoint).origin;
  return `default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' ${api}; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

const STATIC = {
  '/shop.css': [path.join(HERE, 'shop.css'), 'text/css; charset=utf-8'],
  '/shop.js': [path.join(HERE, 'shop.js'), 'text/javascript; charset=utf-8'],
  '/nudges/storefront.js': [path.join(DIST, 'storefront.js'), 'text/javascript; charset=utf-8'],
  '/nudges/nudge_rules_bg.wasm': [path.join(DIST, 'nudge_rules_bg.wasm'), 'application/wasm'],
  // The engine's glue alone (it loads the same .wasm), for scripts/bench-storefront.mjs.
  '/nudges/engine.js': [path.resolve(DIST, '..', 'wasm', 'slim', 'nudge_rules.js'), 'text/javascript; charset=utf-8'],
};

/** Compressed static files, made once per run (the files do not change while it serves). */
const gzipped = new Map();

/** `body` gzip-compressed (-9) when the request accepts it, as a shop's CDN would send it. */
function send(req, res, status, type, body, headers = {}, cacheKey = null) {
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] || '')) && body.length > 256;
  let out = body;
  if (gzip) {
    out = cacheKey ? gzipped.get(cacheKey) : undefined;
    if (!out) {
      out = gzipSync(body, { level: 9 });
      if (cacheKey) gzipped.set(cacheKey, out);
    }
  }
  res.writeHead(status, {
    'content-type': type,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    vary: 'Accept-Encoding',
    ...headers,
  });
  res.end(out);
}

/**
 * Starts the shop on 127.0.0.1:`port` (0: any free port). `tag` adds or overrides attributes of
 * the runtime's tag (null removes one). Resolves to `{ url, close() }`.
 */
export function startShop({ endpoint, siteKey, port = 0, tag = {} }) {
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://shop.local');
      const file = STATIC[url.pathname];
      if (file) {
        send(req, res, 200, file[1], await readFile(file[0]), { 'cache-control': 'no-cache' }, file[0]);
        return;
      }
      const page = pageFor(url.pathname);
      if (!page) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
        return;
      }
      send(req, res, 200, 'text/html; charset=utf-8', Buffer.from(layout(page[0], page[1], { endpoint, siteKey, tag })), {
        'content-security-policy': csp(endpoint),
        'cache-control': 'no-cache',
      });
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    }
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address();
      resolve({
        url: `http://127.0.0.1:${bound}`,
        close: () => new Promise((r) => {
          server.closeAllConnections?.();
          server.close(() => r(undefined));
        }),
      });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : fallback;
  };
  const shop = await startShop({
    endpoint: arg('endpoint', 'http://127.0.0.1:8080'),
    siteKey: arg('site-key', 'pk_test_nudgeRulesDemoKey0001'),
    port: Number(arg('port', '8090')),
  });
  console.log(`test shop: ${shop.url}/ (Ctrl-C stops it)`);
}
