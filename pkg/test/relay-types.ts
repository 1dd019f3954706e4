// A typed usage of nudge-rules/relay, checked (never run) by `tsc --noEmit -p pkg`.
import {
  createRelay,
  backoffDelay,
  parseRetryAfter,
  retryDelay,
  RelayError,
  type FlushResult,
  type Relay,
  type RejectedEvent,
} from '../relay.js';

const relay: Relay = createRelay({
  endpoint: 'https://api.example.com/v1/events',
  siteKey: 'pk_test_nudgeRulesDemoKey0001',
  flushIntervalMs: 5000,
  maxBatch: 100,
  maxQueue: 5000,
  sessionTimeoutMs: 30 * 60_000,
  now: () => Date.now(),
  random: Math.random,
  storage: globalThis.sessionStorage,
  visitorId: 'vis_abc123',
  onError: (e: RelayError) => console.warn(e.code, e.message, e.status),
});
relay.pageView('/products/linen-shirt', { intentScore: 40 });
relay.pageView();
relay.addToCart('/cart');
relay.purchase('/checkout/thank-you', { intentScore: 90 });
relay.nudgeShown({ nudgeId: 'nudg_1', nudgeType: 'toast', ruleId: 'sale-toast', url: '/', intentScore: 70 });
relay.nudgeOutcome({ nudgeId: 'nudg_1', outcome: 'clicked' });
relay.nudgeHeldOut({ ruleId: 'sizing-help', nudgeType: 'chat_bubble', url: '/p', intentScore: 70 });
relay.track('NUDGE_HELD_OUT', { rule_id: 'r', nudge_type: 'toast', url: '/a' });
relay.track('PAGE_VIEW', { url: '/a' });
const visitor: string | null = relay.visitorId;
void visitor;
const id: string | null = relay.sessionId;
void id;
const result: Promise<FlushResult> = relay.flush();
void result.then((r) => {
  const n: number = r.sent + r.accepted + r.duplicates + r.dropped + r.retried + r.pending;
  const first: RejectedEvent | undefined = r.rejected[0];
  return [n, first?.message];
});
void relay.close();
const delay: number = backoffDelay(3, () => 0.5);
const after: number | null = parseRetryAfter('7', Date.now());
const wait: number = retryDelay(after, 2);
void [delay, after, wait];
// @ts-expect-error: an unknown nudge type
relay.nudgeShown({ nudgeId: 'nudg_1', nudgeType: 'popup' });
// @ts-expect-error: an unknown outcome
relay.nudgeOutcome({ nudgeId: 'nudg_1', outcome: 'bought' });
// @ts-expect-error: a held-out event names its rule
relay.nudgeHeldOut({ nudgeType: 'toast' });
