// nudge-rules/storefront: the storefront runtime (docs/contract/storefront.md). See docs/STOREFRONT.md.

/** What `onError` hears; never thrown into the page. */
export declare class NudgesError extends Error {
  /**
   * config (bad options), config_fetch (the endpoint unreachable or refusing), config_cache (a
   * damaged cached config), config_invalid (a fetched config the engine refuses), engine (the
   * WASM module not loaded, or a state it refused), intent_score (a bad intentScore() value),
   * render or hidden (a nudge not drawn, or hidden by the page's CSS), on_chat_open, internal;
   * the relay's own errors (network, http, rejected, ...) come as its RelayError.
   */
  code: string;
  constructor(code: string, message: string, details?: Record<string, unknown>);
}

export interface NudgesOptions {
  /** The server's base URL, e.g. `https://api.example.com` (the runtime adds /v1/...). */
  endpoint: string;
  /** The site's publishable key, `pk_live_` or `pk_test_` (never a secret `sk_` key). */
  siteKey: string;
  /**
   * The page's own intent score, an integer 0 to 100, read at each decision; anything else is
   * reported to onError and the built-in score is used. Absent: the built-in score.
   */
  intentScore?: () => number;
  /** Called when the visitor takes a chat bubble's CTA (the outcome is `chat_opened`). */
  onChatOpen?: (nudge: { ruleId: string; message: string }) => void;
  /** Every failure, none thrown (default console.warn). */
  onError?: (error: Error & { code: string }) => void;
  /** Where the engine's .wasm is (default: beside the module). */
  wasmUrl?: string | URL;
  /** The relay's flush interval in ms (default 5000). */
  flushIntervalMs?: number;
  /**
   * Preview only (a test shop, never a live page): this site config (an object, or its JSON
   * text) instead of the published one; neither fetched nor cached. A config the engine refuses
   * goes to onError and no nudge shows. The tag's `data-preview="fragment"` takes it from the
   * page's `#nudge-preview=` fragment (docs/STOREFRONT.md, "Preview a draft").
   */
  previewConfig?: object | string;
}

export interface NudgesHandle {
  /** Resolves once the runtime has started (config and engine loaded, or failed) after `load`. */
  readonly ready: Promise<void>;
  /** Removes the nudge and every listener, stops the timer, flushes the relay. Never rejects. */
  stop(): Promise<void>;
  /** Records ADD_TO_CART (url defaults to location.href); the built-in score gains 30. */
  addToCart(url?: string): void;
  /** Records PURCHASE (url defaults to location.href). */
  purchase(url?: string): void;
  /** Decides again when the intentScore() callback's value changed since the last decision. */
  refresh(): void;
  /** Sends the events waiting in the relay now. Never rejects. */
  flush(): Promise<void>;
  /** The visitor's `vis_` id (kept in localStorage). */
  readonly visitorId: string | null;
  /** The relay's current `sess_` id. */
  readonly sessionId: string | null;
  readonly running: boolean;
}

/** The config's cache time in ms (the endpoint's max-age, 60 s). */
export declare const CONFIG_MAX_AGE_MS: number;

/**
 * The built-in intent score: 10 per distinct page viewed in the session (at most 50), plus 30
 * once the session has an ADD_TO_CART, plus 20 when the visitor had an earlier session, at most
 * 100.
 */
export declare function builtInIntentScore(visit: { pages: number; addedToCart: boolean; returning: boolean }): number;

/** Starts the runtime after the page's `load` event. Never throws. */
export declare function startNudges(options: NudgesOptions): NudgesHandle;
