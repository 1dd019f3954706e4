// The config cache of the storefront runtime (docs/contract/storefront.md; docs/STOREFRONT.md,
// "The config endpoint"): the site config from GET /v1/runtime/config, kept in the store (the
// tab's sessionStorage) for its cache time and revalidated with its ETag after it, or a draft to
// preview instead; each config that arrives is handed to the engine to compile.
import { ENGINE_DOWN } from './engine.js';
import { messageOf } from './errors.js';
import { parsed } from './store.js';

/** The config's cache time (the endpoint's `max-age`). */
export const CONFIG_MAX_AGE_MS = 60_000;

/**
 * The config source of one site.
 * @param {{
 *   base: string,            the server's base URL, no trailing slash
 *   siteKey: string,         the publishable key
 *   preview: unknown,        a draft config to use instead (undefined: the published one)
 *   cache: { read(): string | null, write(value: object): void, remove(): void },
 *   engine: { readonly compiled: boolean, install(config: object): Promise<void> },
 *   fail: (code: string, message: string, cause?: unknown) => void,
 *   now: () => number,
 * }} options
 * @returns {{ refresh(): Promise<void>, readonly stale: boolean }} `refresh()` fetches (or
 *   revalidates) the config unless the one compiled is fresh, never rejects, and runs once at a
 *   time; `stale` is whether a compiled config is past its cache time.
 */
export function configSource({ base, siteKey, preview, cache, engine, fail, now }) {
  let at = 0; // when the config was last fetched or revalidated
  let etag = null;
  let refreshing = null;

  const install = async (text, source) => {
    const body = JSON.parse(text);
    const cfg = body?.data?.config;
    if (!cfg || typeof cfg !== 'object') throw new TypeError(`the ${source} config answer has no data.config`);
    await engine.install(cfg);
  };
  const serving = () => (engine.compiled ? '; the cached config keeps serving' : '; no nudges');

  const fetchConfig = async () => {
    if (preview !== undefined) {
      // A draft config to preview (docs/STOREFRONT.md, "Preview a draft"): neither fetched nor
      // cached, compiled once.
      if (engine.compiled) return;
      try {
        await engine.install(preview);
        at = Number.POSITIVE_INFINITY;
      } catch (e) {
        if (e !== ENGINE_DOWN) fail('config_invalid', `the preview config is unusable (${messageOf(e)}); no nudges`, e);
      }
      return;
    }
    const raw = cache.read();
    let cached = parsed(raw);
    if (raw && !(cached && typeof cached.body === 'string' && Number.isFinite(cached.at))) {
      fail('config_cache', 'the cached config is damaged; fetching it again');
      cached = null;
    }
    if (cached && !engine.compiled) {
      try {
        await install(cached.body, 'cached');
        etag = typeof cached.etag === 'string' ? cached.etag : null;
        at = cached.at;
      } catch (e) {
        if (e === ENGINE_DOWN) return;
        fail('config_cache', `the cached config is unusable (${messageOf(e)}); fetching it again`, e);
        cache.remove();
        etag = null;
      }
    }
    if (engine.compiled && now() - at < CONFIG_MAX_AGE_MS) return;
    const url = `${base}/v1/runtime/config?key=${encodeURIComponent(siteKey)}`;
    const headers = engine.compiled && etag ? { 'If-None-Match': etag } : undefined;
    let response;
    try {
      response = await fetch(url, { headers, credentials: 'omit', cache: 'no-cache' });
    } catch (e) {
      fail('config_fetch', `the config could not be fetched from ${url.replace(/key=[^&]*/, 'key=...')} (${messageOf(e)})${serving()}`, e);
      return;
    }
    if (response.status === 304 && engine.compiled) {
      at = now();
      cache.write({ etag, at, body: parsed(cache.read())?.body });
      return;
    }
    if (response.status !== 200) {
      let message = '';
      try {
        message = (await response.json())?.message ?? '';
      } catch {
        // not JSON
      }
      fail('config_fetch', `the config endpoint answered ${response.status}${message ? ` (${message})` : ''}${serving()}`);
      return;
    }
    const text = await response.text();
    try {
      await install(text, 'fetched');
    } catch (e) {
      if (e !== ENGINE_DOWN) fail('config_invalid', `the fetched config is unusable (${messageOf(e)})`, e);
      return;
    }
    etag = response.headers.get('etag');
    at = now();
    cache.write({ etag, at, body: text });
  };

  return {
    refresh() {
      refreshing ??= fetchConfig()
        .catch((e) => fail('config_fetch', messageOf(e), e))
        .finally(() => {
          refreshing = null;
        });
      return refreshing;
    },
    get stale() {
      return engine.compiled && now() - at >= CONFIG_MAX_AGE_MS;
    },
  };
}
