// The API panel (engineer details): the request body the page would POST to
// /v1/nudges/preview and what a server holding this config answers, status and body, as the
// engine computes them (worker.js: the engine's own error body for an invalid config).

import { esc } from './util.js';

function highlightJson(text) {
  return esc(text).replace(
    /(&quot;(?:[^&\\]|\\.|&(?!quot;))*&quot;)(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
    (m, str, colon, lit, num) => {
      if (str) return colon ? `<span class="j-key">${str}</span>${colon}` : `<span class="j-str">${str}</span>`;
      if (lit) return `<span class="j-lit">${lit}</span>`;
      return `<span class="j-num">${num}</span>`;
    },
  );
}

const STATUS_TEXT = { 200: 'OK', 400: 'InvalidRequest', 500: 'InvalidConfig' };

export function renderApi({ request, response, status }, { requestBody, response: { status: code, body } }) {
  request.innerHTML = highlightJson(requestBody);
  let pretty = body;
  try {
    pretty = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // shown as it is
  }
  status.textContent = `${code} ${STATUS_TEXT[code] ?? ''}`.trim();
  status.className = `pill ${code === 200 ? 'pill-ok' : 'pill-error'}`;
  response.dataset.raw = body;
  response.dataset.status = String(code);
  response.innerHTML = highlightJson(pretty);
}
