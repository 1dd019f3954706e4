// nudge-rules/relay: the client of the SDK relay, POST /v1/events (docs/contract/relay.md). See docs/JS-API.md,
// "The relay client".

/** The six event types of the relay (NUDGE_HELD_OUT: docs/contract/caps.md). */
export type RelayEventType = 'PAGE_VIEW' | 'ADD_TO_CART' | 'PURCHASE' | 'NUDGE_SHOWN' | 'NUDGE_OUTCOME' | 'NUDGE_HELD_OUT';
export type RelayNudgeType = 'chat_bubble' | 'toast' | 'exit_modal' | 'sticky_bar';
export type RelayOutcome = 'clicked' | 'dismissed' | 'chat_opened';

/** The part of the Storage interface the relay uses (sessionStorage fits). */
export interface RelayStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface RelayOptions {
  /** The URL of POST /v1/events, e.g. `https://api.example.com/v1/events`. */
  endpoint: string;
  /** The site's publishable key: `pk_live_` or `pk_test_` (never a secret `sk_` key). */
  siteKey: string;
  /**
   * The visitor's id (docs/contract/caps.md), `vis_` then 1 to 64 of `[A-Za-z0-9_-]`: sent as `visitor_id` on
   * every event. A malformed one is reported through onError and left out.
   */
  visitorId?: string;
  /** How often queued events are sent, in ms (default 5000; 0: only when full or flushed). */
  flushIntervalMs?: number;
  /** Events per request, 1 to 500 (default 100); a full batch is sent at once. */
  maxBatch?: number;
  /** The most events kept waiting (default 5000); past it the oldest are dropped and counted. */
  maxQueue?: number;
  /** A new session after this long without an event, in ms (default 30 minutes). */
  sessionTimeoutMs?: number;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** The clock, in ms since the epoch (default Date.now). */
  now?: () => number;
  /** A number in [0, 1): the retries' jitter and the ids' random part (default Math.random). */
  random?: () => number;
  /** Where the session id is kept across page loads (e.g. sessionStorage); memory otherwise. */
  storage?: RelayStorage;
  /** Every problem, none thrown: bad options, HTTP errors, rejected events, dropped events. */
  onError?: (error: RelayError) => void;
  /** Timers (default the global ones); tests pass fakes. */
  setTimeout?: (callback: () => void, ms: number) => unknown;
  clearTimeout?: (timer: any) => void;
  /** Where sendBeacon, visibilitychange and pagehide come from (default the globals). */
  navigator?: { sendBeacon(url: string, data: Blob): boolean } | undefined;
  document?: Pick<EventTarget, 'addEventListener' | 'removeEventListener'> & { visibilityState?: string } | undefined;
  window?: Pick<EventTarget, 'addEventListener' | 'removeEventListener'> | undefined;
}

export interface RejectedEvent {
  /** The event's index in its request. */
  index: number;
  error: string;
  /** The server's message, naming the field and the value. */
  message: string;
  message_id?: string;
  type?: string;
}

/** What a flush did. */
export interface FlushResult {
  /** Events sent in requests the server answered 202. */
  sent: number;
  accepted: number;
  /** Events the server had already (a resent batch). */
  duplicates: number;
  rejected: RejectedEvent[];
  /** Events dropped since the last flush: queue overflow, or a batch refused (400, 401, 413). */
  dropped: number;
  /** Events of a batch kept for a retry (429, 503, network error). */
  retried: number;
  /** Events still waiting after this flush. */
  pending: number;
}

export interface RelayStats {
  queued: number;
  sent: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  dropped: number;
  retried: number;
}

export interface PageEventOptions {
  /** The SDK's intent score at that moment, an integer from 0 to 100. */
  intentScore?: number;
}

export interface NudgeShown {
  /** `nudg_` then 1 to 64 of `[A-Za-z0-9_-]`. */
  nudgeId: string;
  nudgeType: RelayNudgeType;
  ruleId?: string;
  /** Default: location.href in a browser. */
  url?: string;
  intentScore?: number;
}

export interface NudgeOutcome {
  nudgeId: string;
  outcome: RelayOutcome;
}

/** A visitor held out of a rule's nudge: in its control group (docs/contract/caps.md), nothing shown. */
export interface NudgeHeldOut {
  /** The rule whose control group holds the visitor. */
  ruleId: string;
  /** The type of the nudge the rule would have shown. */
  nudgeType: RelayNudgeType;
  /** Default: location.href in a browser. */
  url?: string;
  intentScore?: number;
}

export interface Relay {
  /** Queues one event of any type with its fields as sent (snake_case). */
  track(type: RelayEventType, fields?: Record<string, unknown>): void;
  /** `url` defaults to location.href in a browser. */
  pageView(url?: string, options?: PageEventOptions): void;
  addToCart(url?: string, options?: PageEventOptions): void;
  purchase(url?: string, options?: PageEventOptions): void;
  nudgeShown(nudge: NudgeShown): void;
  nudgeOutcome(outcome: NudgeOutcome): void;
  /** NUDGE_HELD_OUT (docs/contract/caps.md): the visitor is in the rule's control group; nothing was shown. */
  nudgeHeldOut(heldOut: NudgeHeldOut): void;
  /** Sends what is queued (a batch waiting for its retry time stays waiting). Never rejects. */
  flush(): Promise<FlushResult>;
  /** Stops the timers and listeners and flushes once. Never rejects. */
  close(): Promise<FlushResult>;
  /** The current session id (`sess_...`), or null before the first event. */
  readonly sessionId: string | null;
  /** The `visitor_id` put on every event, or null. */
  readonly visitorId: string | null;
  stats(): RelayStats;
}

export declare class RelayError extends Error {
  /** config, disabled, closed, network, http, rejected, queue_full, beacon or internal. */
  code: string;
  status?: number;
  retryInMs?: number;
  dropped?: number;
  rejected?: RejectedEvent[];
  constructor(code: string, message: string, details?: Record<string, unknown>);
}

export declare const BACKOFF_BASE_MS: number;
export declare const BACKOFF_CAP_MS: number;
export declare const MAX_BATCH: number;

/** Never throws: a bad option is reported through onError and gives a relay that does nothing. */
export declare function createRelay(options: RelayOptions): Relay;
/** random() * min(60 s, 1 s * 2^attempt), in ms (attempt 0 is the first retry). */
export declare function backoffDelay(attempt: number, random?: () => number): number;
/**
 * The wait before retry number `attempt` of a batch, in ms: `backoffDelay(attempt)`, never less
 * than the answer's Retry-After (`retryAfterMs`, null without one). Repeated 429s thus back off
 * exponentially with jitter (API document section 7); each batch starts again from attempt 0.
 */
export declare function retryDelay(retryAfterMs: number | null, attempt: number, random?: () => number): number;
/** A Retry-After value (seconds or an HTTP date) in ms, or null. */
export declare function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null;
