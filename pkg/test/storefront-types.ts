// A typed usage of nudge-rules/storefront, checked (never run) by `tsc --noEmit -p pkg`.
import { startNudges, builtInIntentScore, CONFIG_MAX_AGE_MS, NudgesError, type NudgesHandle } from '../storefront.js';

const nudges: NudgesHandle = startNudges({
  endpoint: 'https://api.example.com',
  siteKey: 'pk_live_nudgeRulesDemoKey0001',
  intentScore: () => 70,
  onChatOpen: ({ ruleId, message }) => console.log(ruleId, message),
  onError: (e) => console.warn(e.code, e.message),
  wasmUrl: new URL('https://cdn.example.com/nudge_rules_bg.wasm'),
});
void nudges.ready.then(() => {
  nudges.addToCart('/cart');
  nudges.purchase();
  nudges.refresh();
  const ids: [string | null, string | null, boolean] = [nudges.visitorId, nudges.sessionId, nudges.running];
  return ids;
});
void nudges.flush();
void nudges.stop();
const score: number = builtInIntentScore({ pages: 3, addedToCart: true, returning: false });
const maxAge: number = CONFIG_MAX_AGE_MS;
const error = new NudgesError('config_fetch', 'down');
void [score, maxAge, error.code];
// @ts-expect-error: the key is required
startNudges({ endpoint: 'https://api.example.com' });
// A draft to preview (a test shop only): a config object or its JSON text.
startNudges({ endpoint: 'https://api.example.com', siteKey: 'pk_test_0123456789abcdef', previewConfig: { version: 1, rules: [] } });
startNudges({ endpoint: 'https://api.example.com', siteKey: 'pk_test_0123456789abcdef', previewConfig: '{"version": 1}' });
// @ts-expect-error: a config, not a number
startNudges({ endpoint: 'https://api.example.com', siteKey: 'pk_test_0123456789abcdef', previewConfig: 1 });
