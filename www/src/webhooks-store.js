// The Webhooks view's state (issue 33, docs/contract/webhooks.md), a slice of the page's one store (store.js): the
// server connected to, its webhook endpoints, the attempts of the endpoint opened, the signing
// secret shown once, the action under way and what the last one did. `reduceWebhooks` is the
// slice's reducer, called by store.js's `reduce` for the `webhooks…` actions: pure, the slice
// before and the action in, the slice after out. webhooks-panel.js asks the server, dispatches
// what it found, and draws the slice it is given (views.js).

/**
 * A webhook endpoint as the server answers it (docs/openapi.yaml `WebhookEndpoint`), without its
 * secret.
 * @typedef {{ id: string, url: string, event_types: string[], description: string | null,
 *   status: 'enabled' | 'disabled', created_at: string, updated_at: string }} Endpoint
 */

/**
 * One delivery attempt (docs/openapi.yaml `WebhookAttempt`).
 * @typedef {{ id: string, message_id: string, event_type: string, attempt: number,
 *   attempted_at: string, response_status: number | null, error: string | null,
 *   duration_ms: number, response_body: string, next_attempt_at: string | null }} Attempt
 */

/**
 * @typedef {object} Webhooks
 * @property {boolean} connected
 * @property {string} host the server as the status bar names it
 * @property {'test' | 'live' | null} mode the key's: one list of endpoints per site and mode
 * @property {'idle' | 'loading' | 'ready' | 'error'} status the list's
 * @property {Endpoint[]} endpoints newest first
 * @property {string | null} error why there is no list, in words
 * @property {string | null} open the endpoint whose attempts are shown
 * @property {{ status: 'idle' | 'loading' | 'ready' | 'error', items: Attempt[], hasMore: boolean,
 *   cursor: string | null, error: string | null, waitingFor: string | null }} attempts the open
 *   endpoint's recent attempts, newest first (`cursor` the server's, for the older ones);
 *   `waitingFor` a message sent (a test, a resend) whose attempt is not listed yet
 * @property {{ id: string, url: string, secret: string, why: 'created' | 'rotated' } | null} secret
 *   the signing secret the server gave once, until the merchant closes it
 * @property {string | null} busy the action under way, in words
 * @property {{ ok: boolean, text: string } | null} notice what the last action did, in words
 */

/**
 * @typedef {{ type: 'webhooksConnection', connected: boolean, host: string, mode: 'test' | 'live' | null }
 *   | { type: 'webhooksRequested' } | { type: 'webhooksLoaded', endpoints: Endpoint[] }
 *   | { type: 'webhooksFailed', error: string }
 *   | { type: 'webhooksBusy', text: string } | { type: 'webhooksNotice', ok: boolean, text: string }
 *   | { type: 'webhooksSaved', endpoint: Endpoint, text: string }
 *   | { type: 'webhooksDeleted', id: string, text: string }
 *   | { type: 'webhooksSecret', id: string, url: string, secret: string, why: 'created' | 'rotated' }
 *   | { type: 'webhooksSecretClosed' }
 *   | { type: 'webhooksOpen', id: string | null }
 *   | { type: 'webhooksAttemptsRequested', id: string, waitingFor?: string | null }
 *   | { type: 'webhooksAttemptsLoaded', id: string, items: Attempt[], hasMore: boolean, cursor?: string | null, older?: boolean }
 *   | { type: 'webhooksAttemptsFailed', id: string, error: string }} WebhooksAction
 *   `webhooksConnection`: the server connected or gone (its endpoints with it); `webhooksRequested`,
 *   `webhooksLoaded`, `webhooksFailed`: the list asked for, read, refused; `webhooksBusy`: an
 *   action under way; `webhooksNotice`: what it did; `webhooksSaved`: an endpoint created or
 *   changed (put first when new); `webhooksDeleted`: one gone; `webhooksSecret`: a secret to show
 *   once, `webhooksSecretClosed` its box closed (the secret forgotten); `webhooksOpen`: the
 *   endpoint whose attempts are shown (null: none); `webhooksAttempts…`: its attempts asked for
 *   (`waitingFor` a message just sent), read (`older`: the page after those shown, added to
 *   them), refused
 */

const NO_ATTEMPTS = Object.freeze({ status: 'idle', items: [], hasMore: false, cursor: null, error: null, waitingFor: null });

/** @type {Webhooks} */
export const initialWebhooks = Object.freeze({
  connected: false,
  host: '',
  mode: null,
  status: 'idle',
  endpoints: [],
  error: null,
  open: null,
  attempts: /** @type {Webhooks['attempts']} */ (NO_ATTEMPTS),
  secret: null,
  busy: null,
  notice: null,
});

/**
 * The slice after `action`.
 * @param {Webhooks} w
 * @param {WebhooksAction} action
 * @returns {Webhooks}
 */
export function reduceWebhooks(w, action) {
  switch (action.type) {
    case 'webhooksConnection':
      return { ...initialWebhooks, connected: action.connected, host: action.host, mode: action.mode };
    case 'webhooksRequested':
      return { ...w, status: 'loading', error: null };
    case 'webhooksLoaded': {
      const open = action.endpoints.some((e) => e.id === w.open) ? w.open : null;
      return { ...w, status: 'ready', endpoints: action.endpoints, error: null, open, attempts: open ? w.attempts : NO_ATTEMPTS };
    }
    case 'webhooksFailed':
      return { ...w, status: 'error', endpoints: [], error: action.error, open: null, attempts: NO_ATTEMPTS, busy: null };
    case 'webhooksBusy':
      return { ...w, busy: action.text, notice: null };
    case 'webhooksNotice':
      return { ...w, busy: null, notice: { ok: action.ok, text: action.text } };
    case 'webhooksSaved': {
      const known = w.endpoints.some((e) => e.id === action.endpoint.id);
      const endpoints = known
        ? w.endpoints.map((e) => (e.id === action.endpoint.id ? action.endpoint : e))
        : [action.endpoint, ...w.endpoints];
      return { ...w, endpoints, busy: null, notice: { ok: true, text: action.text } };
    }
    case 'webhooksDeleted': {
      const open = w.open === action.id ? null : w.open;
      const secret = w.secret?.id === action.id ? null : w.secret;
      return {
        ...w, endpoints: w.endpoints.filter((e) => e.id !== action.id), open, secret,
        attempts: open ? w.attempts : NO_ATTEMPTS, busy: null, notice: { ok: true, text: action.text },
      };
    }
    case 'webhooksSecret':
      return { ...w, secret: { id: action.id, url: action.url, secret: action.secret, why: action.why } };
    case 'webhooksSecretClosed':
      return w.secret === null ? w : { ...w, secret: null };
    case 'webhooksOpen':
      return action.id === w.open ? w : { ...w, open: action.id, attempts: NO_ATTEMPTS };
    case 'webhooksAttemptsRequested': {
      const same = w.open === action.id;
      const waitingFor = action.waitingFor === undefined ? (same ? w.attempts.waitingFor : null) : action.waitingFor;
      return { ...w, open: action.id, attempts: { ...(same ? w.attempts : NO_ATTEMPTS), status: 'loading', error: null, waitingFor } };
    }
    case 'webhooksAttemptsLoaded': {
      if (w.open !== action.id) return w;
      const items = action.older ? [...w.attempts.items, ...action.items] : action.items;
      const waitingFor = items.some((a) => a.message_id === w.attempts.waitingFor) ? null : w.attempts.waitingFor;
      return { ...w, attempts: { status: 'ready', items, hasMore: action.hasMore, cursor: action.cursor ?? null, error: null, waitingFor } };
    }
    case 'webhooksAttemptsFailed':
      if (w.open !== action.id) return w;
      return { ...w, attempts: { ...NO_ATTEMPTS, status: 'error', error: action.error } };
    default: {
      /** @type {never} */
      const unknown = action;
      return unknown;
    }
  }
}
