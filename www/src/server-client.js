// The connected editor's HTTP calls (issue 22): the backtest and the published configs of a
// nudge-rules server (docs/SERVER.md "The backtest", "Published configs", "CORS";
// docs/openapi.yaml). One client per connection, kept in memory only: the secret key lives in
// this closure, never in a property, storage, a URL, a message or a log (the address is `base`,
// shown in the status bar, and is not stored either). Every call resolves to
// the answer or throws a ServerError whose `kind` says what happened in terms a merchant can act
// on: unreachable, refused (401), rate_limited (with `retryAfter` in seconds), file_managed (409),
// conflict (412), invalid_config (400 with `diagnostics`), scenarios_failed (422 with `failures`),
// not_found, unavailable (503), aborted, or other (`status`, the server's `message`).

export class ServerError extends Error {
  constructor(kind, message, extra = {}) {
    super(message);
    this.name = 'ServerError';
    this.kind = kind;
    Object.assign(this, extra);
  }
}

/**
 * The server's base URL from what a person types: `127.0.0.1:8080`, `http://host:8080/`,
 * `https://api.example.com/nudges`. Throws an Error with a plain message for anything else.
 */
export function normalizeAddress(text) {
  let raw = String(text ?? '').trim();
  if (!raw) throw new Error('Type the server’s address, such as http://127.0.0.1:8080.');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) raw = `http://${raw}`;
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`“${text}” is not an address; type it as http://host:port, such as http://127.0.0.1:8080.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`The address must start with http:// or https://, not ${url.protocol}//.`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error('Type only the server’s address (scheme, host and port), without a user, a query or a #.');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** What a key is: `{ ok, mode, message }`; only secret keys (sk_test_, sk_live_) read configs. */
export function checkKey(text) {
  const key = String(text ?? '').trim();
  if (!key) return { ok: false, message: 'Paste the site’s secret key (it starts with sk_test_ or sk_live_).' };
  if (/^pk_(test|live)_/.test(key)) {
    return { ok: false, message: 'This is a publishable key (pk_…): it can only send events from a storefront. Use the site’s secret key (sk_test_… or sk_live_…).' };
  }
  const m = /^sk_(test|live)_[A-Za-z0-9]+$/.exec(key);
  if (!m) return { ok: false, message: 'A secret key starts with sk_test_ or sk_live_ followed by letters and digits, with no spaces.' };
  return { ok: true, mode: m[1] };
}

/**
 * The config of an answer as the server holds it (its text, with the publisher's formatting):
 * the server embeds the stored text as `data.config`, the answer's last field. Falls back to the
 * parsed object, indented, when the text cannot be told apart.
 */
export function configTextOf(bodyText, config) {
  const start = bodyText.indexOf('"config":');
  if (start >= 0) {
    const raw = bodyText.slice(start + '"config":'.length).replace(/\s*\}\s*\}\s*$/, '');
    try {
      if (JSON.stringify(JSON.parse(raw)) === JSON.stringify(config)) return `${raw.trim()}\n`;
    } catch {
      // not the last field after all: use the object
    }
  }
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** Seconds to wait after a 429: Retry-After, else X-RateLimit-Reset, else a minute. */
function retryAfter(headers) {
  const number = (name) => (headers.get(name) === null ? NaN : Number(headers.get(name)));
  const after = number('Retry-After');
  if (Number.isFinite(after) && after >= 0) return Math.max(1, Math.ceil(after));
  const reset = number('X-RateLimit-Reset');
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

function errorOf(status, body, headers) {
  const code = body?.error ?? '';
  const message = body?.message ?? `HTTP ${status}`;
  if (status === 401) return new ServerError('refused', message, { status });
  if (status === 429) return new ServerError('rate_limited', message, { status, retryAfter: retryAfter(headers) });
  if (status === 409 && code === 'ConfigManagedByFile') return new ServerError('file_managed', message, { status });
  if (status === 412) return new ServerError('conflict', message, { status });
  if (status === 422 && code === 'ScenariosFailed') {
    return new ServerError('scenarios_failed', message, { status, failures: body.failures ?? [] });
  }
  if (status === 400 && (code === 'InvalidConfig' || code === 'InvalidScenarios')) {
    return new ServerError(code === 'InvalidConfig' ? 'invalid_config' : 'invalid_scenarios', message, {
      status, diagnostics: body.diagnostics ?? [],
    });
  }
  if (status === 404) return new ServerError('not_found', message, { status });
  if (status === 503) return new ServerError('unavailable', message, { status });
  return new ServerError('other', message, { status, code });
}

/**
 * A client of the server at `address` with the secret `key`. `{ base, mode, hashPrefix(),
 * getConfig, backtest, publish, versions, version, uplift, session, and the webhook calls }`; the
 * key is not readable from it.
 */
export function createClient(address, key) {
  const base = normalizeAddress(address);
  const checked = checkKey(key);
  if (!checked.ok) throw new Error(checked.message);
  const authorization = `Bearer ${String(key).trim()}`;
  let prefix = null;

  /**
   * @param {string} method
   * @param {string} path
   * @param {{ body?: any, headers?: Record<string, string>, signal?: AbortSignal }} [options]
   */
  async function call(method, path, { body, headers = {}, signal } = {}) {
    let response;
    let text;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: authorization, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
      text = await response.text();
    } catch (err) {
      if (err?.name === 'AbortError') throw new ServerError('aborted', 'The request was cancelled.');
      throw new ServerError('unreachable', `No answer from ${base}.`);
    }
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: an error below, or a proxy's page
    }
    if (!response.ok) throw errorOf(response.status, json, response.headers);
    if (!json || typeof json !== 'object') throw new ServerError('other', `The server at ${base} did not answer JSON.`, { status: response.status });
    return { json, text, headers: response.headers, status: response.status };
  }

  /** A version answer's `data` with `text`, the config as published. */
  function withText({ json, text }) {
    const data = json.data;
    return data?.config === undefined || data.config === null ? data : { ...data, text: configTextOf(text, data.config) };
  }

  return {
    base,
    mode: checked.mode,
    /** The first 8 hex digits of the key's SHA-256: what `published_by` says for this key. */
    async hashPrefix() {
      if (prefix) return prefix;
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(authorization.slice('Bearer '.length)));
      prefix = Array.from(new Uint8Array(digest).slice(0, 4), (b) => b.toString(16).padStart(2, '0')).join('');
      return prefix;
    },
    /** The live config (`managed_by`, `version`, ..., `text`), or null before the first version. */
    async getConfig() {
      try {
        return withText(await call('GET', '/v1/config'));
      } catch (err) {
        if (err.kind === 'not_found') return null;
        throw err;
      }
    },
    /** POST /v1/nudges/backtest: the draft's text against the live config over [from, to). */
    async backtest({ config, from, to }, signal) {
      const body = {};
      if (config !== undefined) body.config = config;
      if (from) body.from = from;
      if (to) body.to = to;
      return (await call('POST', '/v1/nudges/backtest', { body, signal })).json.data;
    },
    /**
     * Publishes `config` (text) as the version after `after` (a number; 0 or null: the first).
     * Resolves to the new version's data with its `text`.
     */
    async publish({ config, message, scenarios, restores }, after) {
      const body = { config };
      if (message) body.message = message;
      if (scenarios) body.scenarios = scenarios;
      if (restores) body.restores = restores;
      const headers = after ? { 'If-Match': `"v${after}"` } : { 'If-None-Match': '*' };
      return withText(await call('POST', '/v1/config/versions', { body, headers }));
    },
    /** One page of the history, newest first: `{ data, next_cursor, has_more }`. */
    async versions({ limit = 50, cursor = null } = {}) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (cursor) query.set('cursor', cursor);
      return (await call('GET', `/v1/config/versions?${query}`)).json;
    },
    /** One version with its config and `text`. */
    async version(n) {
      return withText(await call('GET', `/v1/config/versions/${Number(n)}`));
    },
    /**
     * The measured uplift per rule over [from, to) (GET /v1/reports/uplift, docs/contract/caps.md): `{ from,
     * to, rules }`, each rule with its treated and control arms, rates, uplift and interval.
     * @param {{ from?: string, to?: string }} [range]
     * @param {AbortSignal} [signal]
     */
    async uplift({ from, to } = {}, signal) {
      const query = new URLSearchParams();
      if (from) query.set('from', from);
      if (to) query.set('to', to);
      const q = query.toString();
      return (await call('GET', `/v1/reports/uplift${q ? `?${q}` : ''}`, { signal })).json.data;
    },
    /** One stored session with its events and nudges (GET /v1/sessions/{id}, docs/contract/read-api.md). */
    async session(id, signal) {
      return (await call('GET', `/v1/sessions/${encodeURIComponent(id)}`, { signal })).json.data;
    },
    /** The webhook endpoints (docs/contract/webhooks.md), newest first: `{ data, next_cursor, has_more }`. */
    async webhookEndpoints({ limit = 100, cursor = null } = {}, signal) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (cursor) query.set('cursor', cursor);
      return (await call('GET', `/v1/webhook_endpoints?${query}`, { signal })).json;
    },
    /** A new endpoint: its data with `secret`, shown only now. */
    async createWebhookEndpoint({ url, event_types, description }) {
      const body = { url, event_types };
      if (description) body.description = description;
      return (await call('POST', '/v1/webhook_endpoints', { body })).json.data;
    },
    /** PATCH an endpoint (`url`, `event_types`, `description`, `status`): its data. */
    async updateWebhookEndpoint(id, change) {
      return (await call('PATCH', `/v1/webhook_endpoints/${encodeURIComponent(id)}`, { body: change })).json.data;
    },
    /** DELETE an endpoint. */
    async deleteWebhookEndpoint(id) {
      return (await call('DELETE', `/v1/webhook_endpoints/${encodeURIComponent(id)}`)).json.data;
    },
    /** A new signing secret: the endpoint's data with `secret`, shown only now. */
    async rotateWebhookSecret(id) {
      return (await call('POST', `/v1/webhook_endpoints/${encodeURIComponent(id)}/rotate_secret`)).json.data;
    },
    /** A `webhook.test` message sent now: `{ id, type, created_at, data }`. */
    async testWebhookEndpoint(id) {
      return (await call('POST', `/v1/webhook_endpoints/${encodeURIComponent(id)}/test`)).json.data;
    },
    /** The endpoint's delivery attempts, newest first: `{ data, next_cursor, has_more }`. */
    async webhookAttempts(id, { limit = 20, cursor = null } = {}, signal) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (cursor) query.set('cursor', cursor);
      return (await call('GET', `/v1/webhook_endpoints/${encodeURIComponent(id)}/attempts?${query}`, { signal })).json;
    },
    /** A message sent again to every endpoint it was for: `{ message_id, deliveries }`. */
    async resendWebhookMessage(messageId) {
      return (await call('POST', `/v1/webhook_messages/${encodeURIComponent(messageId)}/resend`)).json.data;
    },
    /** Every message that failed to reach the endpoint since `since` sent again: `{ messages, since }`. */
    async recoverWebhookEndpoint(id, since) {
      return (await call('POST', `/v1/webhook_endpoints/${encodeURIComponent(id)}/recover`, { body: { since } })).json.data;
    },
  };
}
