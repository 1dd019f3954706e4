// docs/contract/urls.md step 6, "the browser's reading decides", against Node's own WHATWG `URL` (the parser
// browsers implement), on generated URLs built from dot segments (`.`, `..`, `%2e` in every case
// and combination), empty segments, `;` parameters, segments that are only `;` parameters (`;a`,
// `;`, `%3Ba`), case changes and absolute forms around the storefront's quiet-zone pages
// (tests/integration/browser_reading.rs does the same against the `url` crate).
//
// For every variant that the package accepts, its canonical path equals the browser's reading:
// `new URL(url).pathname` decoded once, NFKC, lowercased, `;` parameters cut, empty segments
// dropped. A URL whose pathname has a segment that is empty once cut at `;` is rejected (servers
// read it two ways). A URL that a browser places inside a quiet zone never fires a nudge.
// BROWSER_VARIANTS=N sets the count (default 100,000).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { NudgeEngine, STOREFRONT, normalizePageUrl, rng as makeRng } from './load.mjs';

const PAGES = [
  '/checkout', '/checkout/pay', '/checkout/payment/confirm', '/cart', '/cart/items', '/account',
  '/account/settings', '/orders/abc-123', '/products/linen-shirt', '/pay', '/settings', '/',
];
const PIECES = [
  '/', '//', '/./', '/%2e/', '/%2E/', '/../', '/%2e%2e/', '/.%2E/', '/%2E./', '/x/../', '/x//../',
  '//./../', '//%2e/../', '//%2e%2E/', '/..;/', '/.;a/', '/..;x=1/', '/x;p=1/../', ';jsessionid=1/',
  ';/', '//..//', '/.../', '/..%2f/', '/%2e%2e;/',
  // Segments that are empty only because of their `;` parameters (rejected: servers read them two
  // ways), with `%3B`, which decodes to `;` before the cut.
  '/;a/', '/;jsessionid=1/', '/;/', '/%3Ba/', '/%3b/',
];
const ENDINGS = [
  '', '', '/', '/.', '/..', '//', '/%2e', '/..;', ';v=1', '?next=/x/../y', '#/../z', '/;jsessionid=1',
  '/;', '/%3Bv=1',
];
const HOSTS = ['https://shop.example', 'HTTP://Shop.Example:8080', 'https://u:p@shop.example', 'http://[::1]'];

function variant(page, random) {
  const below = (n) => Math.floor(random() * n);
  const chance = (percent) => random() * 100 < percent;
  const pick = (list) => list[below(list.length)];
  let out = '';
  for (const segment of page.split('/').slice(1).filter((s) => s !== '')) {
    while (chance(30)) out += pick(PIECES);
    if (!out.endsWith('/')) out += '/';
    for (const c of segment) {
      const roll = below(10);
      if (roll === 0) out += c.toUpperCase();
      else if (roll === 1 && /[a-z0-9]/i.test(c)) out += `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
      else out += c;
    }
  }
  while (chance(25)) out += pick(PIECES);
  out += pick(ENDINGS);
  if (!out.startsWith('/')) out = `/${out}`;
  if (chance(30)) out = pick(HOSTS) + out;
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Node's WHATWG pathname of a URL; null when Node's URL rejects it. */
function pathnameOf(url) {
  try {
    return new URL(url, 'http://h.example').pathname;
  } catch {
    return null;
  }
}

/** A segment of a pathname that is empty once cut at its first `;` (`;a`, `;`, `%3Ba`): servers
 * that keep path parameters route it, docs/contract/urls.md's steps drop it (step 6 rejects the URL). */
function hasParameterOnlySegment(pathname) {
  return pathname.split('/').some((s) => s.startsWith(';') || s.slice(0, 3).toLowerCase() === '%3b');
}

/** The browser's reading of a pathname (docs/contract/urls.md step 6); null when there is none or the decoded
 * bytes are not UTF-8. */
function browserReading(pathname) {
  if (pathname === null) return null;
  const bytes = [];
  for (let i = 0; i < pathname.length; i++) {
    const hex = pathname.slice(i + 1, i + 3);
    if (pathname[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...new TextEncoder().encode(pathname[i]));
    }
  }
  let text;
  try {
    text = utf8.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
  text = text.normalize('NFKC').toLowerCase().normalize('NFKC');
  const segments = text.split('/').map((s) => s.split(';')[0]).filter((s) => s !== '');
  return `/${segments.join('/')}`;
}

test('accepted URLs are read as Node\'s URL (a browser) reads them; none in a quiet zone fires', () => {
  const count = Number(process.env.BROWSER_VARIANTS ?? 100_000);
  const engine = new NudgeEngine(STOREFRONT);
  const random = makeRng(0xb205e2);
  let accepted = 0;
  let rejected = 0;
  let browserQuiet = 0;
  let parameterOnly = 0;
  const failures = [];
  for (let k = 0; k < count && failures.length < 20; k++) {
    const url = variant(PAGES[Math.floor(random() * PAGES.length)], random);
    const pathname = pathnameOf(url);
    const read = browserReading(pathname);
    // A `;`-only segment that a browser keeps is read two ways by servers: rejected.
    const twoServerReadings = pathname !== null && hasParameterOnlySegment(pathname);
    if (twoServerReadings) parameterOnly++;
    let ours = null;
    try {
      ours = normalizePageUrl(url);
      accepted++;
    } catch {
      rejected++;
    }
    if (ours !== null && ours !== read) failures.push(`${JSON.stringify(url)}: ours ${ours}, browser ${read}`);
    if (ours !== null && twoServerReadings) {
      failures.push(`${JSON.stringify(url)}: accepted as ${ours}, but the browser's path ${pathname} has a ';'-only segment`);
    }
    if (read !== null && engine.previewFields(0, read, 0) === -2) {
      browserQuiet++;
      const code = engine.previewFields(Math.floor(random() * 101), url, Math.floor(random() * 100_000));
      if (code >= 0) failures.push(`${JSON.stringify(url)}: a browser is on ${read}, which is quiet, yet rule ${code} fired`);
    }
  }
  assert.deepEqual(failures, []);
  console.log(`${count} variants: ${accepted} accepted (each as Node's URL reads it), ${rejected} rejected (${parameterOnly} with a ';'-only segment); ${browserQuiet} inside a quiet zone for a browser, none fired`);
  assert.ok(
    accepted > count / 4 && rejected > count / 10 && parameterOnly > count / 100,
    `${accepted} accepted, ${rejected} rejected, ${parameterOnly} with a ';'-only segment`,
  );
});
