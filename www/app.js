// The nudge-rules playground: edit a site config, move a visitor around, and see which nudge
// fires and why. Everything is computed by the WASM engine (../pkg/), through its JS API
// (docs/JS-API.md); this file only wires the engine to the page.

import { ConfigEditor } from './editor.js';
import { DecisionMapView } from './map.js';
import { buildHash, parseHash } from './share.js';
import { STORE_PAGES, StorefrontView } from './storefront.js';
import {
  MAX_IDLE_MS, NUDGE_LABELS, $, clamp, esc, formatCountdown, formatMs, h, idleScale,
  nudgeIcon, ruleColor,
} from './util.js';

const DEFAULT_STATE = { intent: 82, idle: 9000, url: '/products/linen-shirt' };
const DEFAULT_BENCH = [
  '/products/Linen-Shirt;jsessionid=42',
  'https://shop.example/collections/sale/dresses?sort=price',
  '/Checkout//Pay',
  '/a/../cart',
  '/blog/tags/care',
  '//checkout',
  '/x%2F..%2Fcheckout',
].join('\n');

const VERDICTS = {
  fired: 'Fires',
  shadowed: 'Shadowed',
  failed: 'No match',
  disabled: 'Disabled',
  quiet: 'Quiet zone',
};

const app = {
  wasm: null,
  defaultConfig: '',
  engine: null, // the last engine that compiled; stays in use while the text has errors
  engineId: 0,
  rules: [],
  summary: new Map(),
  valid: false,
  errors: [],
  warnings: [],
  state: { ...DEFAULT_STATE },
  playing: false,
  mapKey: null,
  regions: [],
  explanation: null,
  lastHash: null,
};


// ---------------------------------------------------------------- elements

const els = {
  status: $('#engine-status'),
  configStatus: $('#config-status'),
  diagnostics: $('#diagnostics'),
  problemCount: $('#problem-count'),
  pageUrl: $('#page-url'),
  pageList: $('#page-list'),
  pageSelect: $('#page-select'),
  intent: $('#intent'),
  intentOut: $('#intent-out'),
  idle: $('#idle'),
  idleOut: $('#idle-out'),
  idleMs: $('#idle-ms'),
  play: $('#play-btn'),
  idleReset: $('#idle-reset'),
  previewBadge: $('#preview-badge'),
  previewReason: $('#preview-reason'),
  countdown: $('#countdown'),
  facts: $('#explain-facts'),
  rules: $('#explain-rules'),
  mapPath: $('#map-path'),
  legend: $('#map-legend'),
  requestBody: $('#request-body'),
  responseBody: $('#response-body'),
  responseStatus: $('#response-status'),
  benchInput: $('#bench-input'),
  benchRows: $('#bench-rows'),
  fileInput: $('#file-input'),
  toast: $('#toast'),
};

const editor = new ConfigEditor($('#editor'), {
  label: 'Site config (JSON)',
  onInput: () => scheduleCompile(),
  onSave: () => saveConfig(),
});
const storefront = new StorefrontView($('#storefront'));
const map = new DecisionMapView($('#map'), {
  tooltip: $('#map-tooltip'),
  onPick: (intent, idle) => setState({ intent, idle }),
  describe: (r) =>
    r.rule_id
      ? `<span class="swatch" style="background:${ruleColor(r.rule_index)}"></span>${esc(r.rule_id)} · ${esc(NUDGE_LABELS[r.nudge_type] || r.nudge_type)}`
      : 'no nudge',
});

// ---------------------------------------------------------------- config

let compileQueued = false;
function scheduleCompile() {
  if (compileQueued) return;
  compileQueued = true;
  requestAnimationFrame(() => {
    compileQueued = false;
    compile(editor.value);
    refreshAll();
    scheduleHash();
  });
}

function asDiagnostics(err) {
  if (Array.isArray(err?.diagnostics) && err.diagnostics.length) return err.diagnostics;
  return [{ severity: 'error', code: 'error', path: '', message: String(err?.message || err), line: null, column: null }];
}

function compile(text) {
  const { wasm } = app;
  let next = null;
  let errors = [];
  try {
    next = new wasm.NudgeEngine(text);
  } catch (err) {
    errors = asDiagnostics(err);
  }
  let warnings = [];
  if (next) {
    try {
      warnings = next.lint();
    } catch (err) {
      console.warn('lint failed', err);
    }
    if (app.engine) app.engine.free();
    app.engine = next;
    app.engineId += 1;
    app.rules = next.config().rules;
    app.summary = new Map();
    for (const s of next.summary()) app.summary.set(s.rule_id, s.text);
  }
  app.valid = Boolean(next);
  app.errors = errors;
  app.warnings = warnings;
  app.invalidMessage = next ? null : errors.map((d) => d.message).join('; ');
  renderDiagnostics();
}

function renderDiagnostics() {
  const all = [...app.errors, ...app.warnings];
  editor.setDiagnostics(all);
  els.problemCount.textContent = String(all.length);
  els.problemCount.dataset.severity = app.errors.length ? 'error' : app.warnings.length ? 'warning' : 'ok';
  els.diagnostics.replaceChildren(
    ...all.map((d) =>
      h('li', { class: `diag ${d.severity}`, dataset: { code: d.code, line: d.line ?? '' } },
        h('button', {
          type: 'button',
          class: 'diag-btn',
          disabled: !d.line,
          onclick: () => d.line && editor.jumpTo(d.line, d.column || 1),
          title: d.line ? 'Go to this place in the config' : null,
        },
          h('span', { class: 'diag-icon', 'aria-label': d.severity }, d.severity === 'error' ? '!' : '▲'),
          h('span', { class: 'diag-body' },
            h('span', { class: 'diag-msg' }, d.message),
            h('span', { class: 'diag-where' },
              [d.line ? `line ${d.line}${d.column ? `, column ${d.column}` : ''}` : null, d.path || null, d.code]
                .filter(Boolean).join(' · ')),
          ),
        ),
      ),
    ),
  );
  if (!all.length) {
    els.diagnostics.append(h('li', { class: 'diag ok' }, h('span', { class: 'diag-icon' }, '✓'), 'No problems: every rule can fire somewhere.'));
  }
  const pill = els.configStatus;
  const ruleCount = app.rules.length;
  if (!app.valid) {
    pill.className = 'pill pill-error';
    pill.textContent = `${app.errors.length} error${app.errors.length === 1 ? '' : 's'}`;
  } else if (app.warnings.length) {
    pill.className = 'pill pill-warning';
    pill.textContent = `Valid · ${ruleCount} rule${ruleCount === 1 ? '' : 's'} · ${app.warnings.length} warning${app.warnings.length === 1 ? '' : 's'}`;
  } else {
    pill.className = 'pill pill-ok';
    pill.textContent = `Valid · ${ruleCount} rule${ruleCount === 1 ? '' : 's'}`;
  }
  document.body.classList.toggle('config-invalid', !app.valid);
}

// ---------------------------------------------------------------- session state

function setState(patch, { fromPlay = false, source = null } = {}) {
  const s = app.state;
  if ('intent' in patch) s.intent = clamp(Math.round(patch.intent), 0, 100);
  if ('idle' in patch) s.idle = clamp(Math.round(patch.idle), 0, MAX_IDLE_MS);
  if ('url' in patch) s.url = patch.url;
  if (!fromPlay && 'idle' in patch) playBase = s.idle;
  renderControls(source);
  refreshAll();
  scheduleHash();
}

/** Puts the state into the controls, except into `source`, the control being edited. */
function renderControls(source = null) {
  const s = app.state;
  if (source !== els.intent) els.intent.value = String(s.intent);
  els.intentOut.textContent = String(s.intent);
  if (source !== els.idle) els.idle.value = String(Math.round(idleScale.toUnit(s.idle) * 1000));
  els.idle.setAttribute('aria-valuetext', formatMs(s.idle));
  els.idleOut.textContent = formatMs(s.idle);
  if (source !== els.idleMs) els.idleMs.value = String(s.idle);
  if (source !== els.pageUrl) els.pageUrl.value = s.url;
  const match = STORE_PAGES.find((p) => p.url === s.url);
  els.pageSelect.value = match ? match.url : '';
}

// ---------------------------------------------------------------- evaluation

function sessionState() {
  const s = app.state;
  return { intent_score: s.intent, page_url: s.url, idle_ms: s.idle };
}

function refreshAll() {
  const engine = app.engine;
  if (!engine) {
    renderNoEngine();
    return;
  }
  refreshMap();
  refreshState();
  refreshBench();
}

function renderNoEngine() {
  const msg = 'Fix the config errors to see the preview.';
  storefront.render(app.state.url, app.state.url, null);
  els.previewReason.textContent = msg;
  els.previewBadge.className = 'pill';
  els.previewBadge.textContent = '';
  els.facts.replaceChildren();
  els.rules.replaceChildren(h('li', { class: 'empty' }, msg));
  map.setMap({ regions: [], message: msg });
  els.legend.replaceChildren();
  renderResponse();
}

function refreshState() {
  const engine = app.engine;
  const state = sessionState();

  let result = null;
  let requestError = null;
  try {
    result = engine.preview(state);
  } catch (err) {
    requestError = err;
  }

  let ex = null;
  try {
    ex = engine.explain(state);
  } catch (err) {
    requestError = requestError || err;
  }
  app.explanation = ex;

  let path = ex ? ex.path : null;
  let urlError = ex ? ex.url_error : null;
  if (!ex) {
    try {
      path = app.wasm.normalizePageUrl(state.page_url, { caseSensitive: Boolean(engine.config?.().case_sensitive) });
    } catch (err) {
      urlError = { code: err.code || 'rejected', message: err.message };
    }
  }

  storefront.render(state.page_url, path, result && result.would_fire ? result.nudge : null);
  renderPreviewText(result, requestError, ex);
  renderExplain(ex, path, urlError);
  map.setState(app.state.intent, app.state.idle);
  renderLegendActive();
  renderResponse();
}

function waitingText(ex) {
  if (!ex || ex.fired_rule_id || ex.earliest_idle_ms === null || ex.earliest_idle_ms === undefined) return null;
  const wait = ex.earliest_idle_ms - ex.idle_ms;
  if (wait <= 0) return null;
  return { rule: ex.earliest_rule_id, text: `fires in ${formatCountdown(wait)}`, wait };
}

function renderPreviewText(result, requestError, ex) {
  const badge = els.previewBadge;
  if (requestError && !result) {
    badge.className = 'pill pill-error';
    badge.textContent = 'Rejected';
    els.previewReason.textContent = requestError.message;
    return;
  }
  if (result.would_fire) {
    const n = result.nudge;
    badge.className = 'pill pill-fire';
    badge.innerHTML = `${nudgeIcon(n.type, 12)} ${esc(NUDGE_LABELS[n.type])}`;
    els.previewReason.textContent = n.reason;
  } else {
    const waiting = waitingText(ex);
    badge.className = waiting ? 'pill pill-wait' : 'pill';
    badge.textContent = waiting ? `${waiting.rule} ${waiting.text}` : 'No nudge';
    els.previewReason.textContent = result.reason || '';
  }
}

function fact(term, ...value) {
  return [h('dt', {}, term), h('dd', {}, ...value)];
}

function renderExplain(ex, path, urlError) {
  const waiting = waitingText(ex);
  els.countdown.hidden = !waiting;
  if (waiting) {
    els.countdown.replaceChildren(
      h('span', { class: 'countdown-text' }, h('b', {}, waiting.rule), ` ${waiting.text}`),
      h('button', { type: 'button', class: 'link-btn', onclick: () => setState({ idle: ex.earliest_idle_ms }) }, 'Skip ahead'),
    );
  }

  const facts = [];
  facts.push(...fact('Path', urlError
    ? h('span', { class: 'bad' }, `rejected: ${urlError.message}`, ' ', h('code', {}, urlError.code))
    : h('code', { class: 'path', id: 'explain-path' }, path ?? '')));
  if (ex) {
    facts.push(...fact('Quiet zone', ex.quiet_zone
      ? h('span', { class: 'quiet' }, h('code', {}, ex.quiet_zone.pattern), ` (quiet_zones[${ex.quiet_zone.index}]): no nudge here`)
      : h('span', { class: 'muted' }, 'none matches')));
    facts.push(...fact('Decision', ex.fired_rule_id
      ? h('span', {}, h('b', {}, ex.fired_rule_id), ' fires')
      : h('span', { class: 'muted' }, waiting ? `nothing yet; ${waiting.rule} ${waiting.text} of idling` : 'nothing fires')));
  }
  els.facts.replaceChildren(...facts);

  if (!ex) {
    els.rules.replaceChildren(h('li', { class: 'empty' }, 'This build of the engine has no explain(); rule verdicts appear once it does.'));
    return;
  }
  els.rules.replaceChildren(
    ...ex.rules.map((r) => {
      const summary = app.summary.get(r.id);
      const isNext = waiting && waiting.rule === r.id;
      return h('li', { class: `rule verdict-${r.verdict}`, dataset: { rule: r.id, verdict: r.verdict } },
        h('div', { class: 'rule-head' },
          h('span', { class: 'swatch', style: `background:${ruleColor(r.index)}`, 'aria-hidden': 'true' }),
          h('span', { class: 'rule-id' }, r.id),
          h('span', { class: 'rule-type', html: `${nudgeIcon(r.nudge_type, 12)}<span>${esc(NUDGE_LABELS[r.nudge_type] || r.nudge_type)}</span>` }),
          h('span', { class: `verdict v-${r.verdict}` }, isNext ? `in ${formatCountdown(waiting.wait)}` : VERDICTS[r.verdict] || r.verdict),
        ),
        summary ? h('p', { class: 'rule-summary' }, summary) : null,
        r.conditions.length
          ? h('ul', { class: 'conds' },
            ...r.conditions.map((c) =>
              h('li', { class: `cond ${c.holds ? 'holds' : 'fails'}`, title: c.condition },
                h('span', { class: 'cond-mark', 'aria-label': c.holds ? 'holds' : 'fails' }, c.holds ? '✓' : '✗'),
                c.detail)))
          : null,
      );
    }),
  );
}

// ---------------------------------------------------------------- decision map

function refreshMap() {
  const engine = app.engine;
  const key = `${app.engineId}\u0000${app.state.url}`;
  if (key === app.mapKey) return;
  app.mapKey = key;
  let regions = [];
  let quietZone = null;
  let message = null;
  let path = '';
  try {
    const dm = engine.decisionMap(app.state.url);
    if (dm.url_error) throw new Error(dm.url_error.message);
    regions = dm.regions;
    quietZone = dm.quiet_zone;
    path = dm.path;
  } catch (err) {
    message = `No map: ${err.message}`;
  }
  app.regions = regions;
  els.mapPath.textContent = path ? `for ${path}` : '';
  map.setMap({ regions, quietZone, message });
  renderLegend(regions, quietZone);
}

function renderLegend(regions, quietZone) {
  const seen = new Map();
  let none = false;
  for (const r of regions) {
    if (r.rule_index === null || r.rule_index === undefined) none = true;
    else if (!seen.has(r.rule_index)) seen.set(r.rule_index, r);
  }
  const items = [...seen.values()]
    .sort((a, b) => a.rule_index - b.rule_index)
    .map((r) =>
      h('li', { dataset: { rule: r.rule_id } },
        h('span', { class: 'swatch', style: `background:${ruleColor(r.rule_index)}`, 'aria-hidden': 'true' }),
        h('span', { class: 'legend-id' }, r.rule_id),
        h('span', { class: 'legend-type', html: `${nudgeIcon(r.nudge_type, 11)}${esc(NUDGE_LABELS[r.nudge_type] || '')}` }),
      ));
  if (none || !regions.length) {
    items.push(h('li', { dataset: { rule: '' } },
      h('span', { class: 'swatch swatch-none', 'aria-hidden': 'true' }),
      h('span', { class: 'legend-id' }, quietZone ? `No nudge (quiet zone ${quietZone.pattern})` : 'No nudge')));
  }
  els.legend.replaceChildren(...items);
  const ids = [...seen.values()].map((r) => r.rule_id);
  $('#map').setAttribute('aria-label',
    `Decision map for ${app.state.url}: ${regions.length} regions; ${ids.length ? `rules ${ids.join(', ')} can fire here` : 'no rule can fire here'}. Arrow keys move the visitor.`);
}

function renderLegendActive() {
  const fired = (app.explanation && app.explanation.fired_rule_id) || '';
  for (const li of els.legend.children) li.classList.toggle('active', li.dataset.rule === fired);
}

// ---------------------------------------------------------------- API response

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

function renderResponse() {
  const request = JSON.stringify({ session_state: sessionState() });
  els.requestBody.innerHTML = highlightJson(request);
  let body;
  let status;
  if (!app.valid) {
    // What a server holding this config answers (SPEC 5: InvalidConfig is a 500).
    body = JSON.stringify({ error: 'InvalidConfig', message: app.invalidMessage || 'invalid config' });
    status = '500 InvalidConfig';
  } else {
    body = app.engine.previewBody(request);
    const parsed = JSON.parse(body);
    status = parsed.error ? `400 ${parsed.error}` : '200 OK';
  }
  els.responseStatus.textContent = status;
  els.responseStatus.className = `pill ${status.startsWith('200') ? 'pill-ok' : 'pill-error'}`;
  els.responseBody.dataset.raw = body;
  els.responseBody.innerHTML = highlightJson(JSON.stringify(JSON.parse(body), null, 2));
}

// ---------------------------------------------------------------- URL test bench

function refreshBench() {
  const engine = app.engine;
  const urls = els.benchInput.value.split('\n').map((s) => s.trim()).filter(Boolean).slice(0, 200);
  const rows = urls.map((url) => {
    const report = engine.pageReport(url);
    const pathCell = report.url_error
      ? h('td', { class: 'bench-rejected' }, h('span', { class: 'tag tag-bad' }, report.url_error.code), ' ', report.url_error.message)
      : h('td', {}, h('code', { class: 'path' }, report.path));
    const matches = report.matches || [];
    const matchCell = h('td', {},
      report.url_error ? h('span', { class: 'muted' }, '—')
        : matches.length
          ? h('ul', { class: 'match-list' }, ...matches.map((m) =>
            h('li', { class: m.json_path.startsWith('quiet_zones') ? 'quiet' : m.json_path.includes('exclude') ? 'exclude' : '' },
              h('code', {}, m.pattern), ' ', h('span', { class: 'muted' }, m.json_path))))
          : h('span', { class: 'muted' }, 'no pattern matches'));
    return h('tr', { dataset: { url, rejected: report.url_error ? report.url_error.code : '' } },
      h('td', {}, h('button', {
        type: 'button', class: 'link-btn url-btn', title: 'Preview this page',
        onclick: () => setState({ url }),
      }, url)),
      pathCell,
      matchCell);
  });
  els.benchRows.replaceChildren(...rows);
}

// ---------------------------------------------------------------- idle time player

let playBase = 0;
let playStart = 0;
let lastFrameUpdate = 0;

function setPlaying(on) {
  app.playing = on;
  els.play.setAttribute('aria-pressed', String(on));
  els.play.setAttribute('aria-label', on ? 'Pause idle time' : 'Play: let idle time run');
  els.play.classList.toggle('playing', on);
  if (on) {
    if (app.state.idle >= MAX_IDLE_MS) setState({ idle: 0 });
    playBase = app.state.idle;
    playStart = performance.now();
    requestAnimationFrame(tick);
  }
}

function tick(now) {
  if (!app.playing) return;
  const idle = Math.min(MAX_IDLE_MS, playBase + (now - playStart));
  if (now - lastFrameUpdate >= 40 || idle >= MAX_IDLE_MS) {
    lastFrameUpdate = now;
    setState({ idle }, { fromPlay: true });
  }
  if (idle >= MAX_IDLE_MS) {
    setPlaying(false);
    return;
  }
  requestAnimationFrame(tick);
}

// When the user moves the idle slider while playing, play on from there.
function rebasePlay() {
  if (app.playing) {
    playBase = app.state.idle;
    playStart = performance.now();
  }
}

// ---------------------------------------------------------------- hash, load, save

let hashTimer = null;
function scheduleHash() {
  if (hashTimer) return;
  hashTimer = setTimeout(() => {
    hashTimer = null;
    writeHash();
  }, 400);
}

async function writeHash() {
  const text = editor.value;
  const hash = await buildHash({ ...app.state, configText: text === app.defaultConfig ? null : text });
  if (hash !== location.hash) {
    app.lastHash = hash;
    history.replaceState(null, '', hash);
  }
  return hash;
}

async function applyHash() {
  let parsed = {};
  try {
    parsed = await parseHash(location.hash);
  } catch (err) {
    notify(`The link's config could not be read: ${err.message}`);
  }
  app.lastHash = location.hash;
  return parsed;
}

function saveConfig() {
  const blob = new Blob([editor.value], { type: 'application/json' });
  const a = $('#save-btn');
  if (a.href.startsWith('blob:')) URL.revokeObjectURL(a.href);
  a.href = URL.createObjectURL(blob);
  return a;
}

function notify(text) {
  els.toast.textContent = text;
  els.toast.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => {
    els.toast.hidden = true;
  }, 2600);
}

function loadText(text, what) {
  editor.setValue(text);
  compile(text);
  app.mapKey = null;
  refreshAll();
  scheduleHash();
  if (what) notify(what);
}

// ---------------------------------------------------------------- wiring

function wire() {
  for (const p of STORE_PAGES) els.pageList.append(h('option', { value: p.url }, p.label));
  els.pageSelect.append(h('option', { value: '' }, 'Storefront pages…'),
    ...STORE_PAGES.map((p) => h('option', { value: p.url }, `${p.label}  ${p.url}`)));

  els.pageUrl.addEventListener('input', () => setState({ url: els.pageUrl.value }, { source: els.pageUrl }));
  els.pageSelect.addEventListener('change', () => {
    if (els.pageSelect.value) setState({ url: els.pageSelect.value });
  });
  els.intent.addEventListener('input', () => setState({ intent: Number(els.intent.value) }, { source: els.intent }));
  els.idle.addEventListener('input', () => {
    setState({ idle: idleScale.snap(idleScale.fromUnit(Number(els.idle.value) / 1000)) }, { source: els.idle });
    rebasePlay();
  });
  els.idleMs.addEventListener('input', () => {
    const v = Number(els.idleMs.value);
    if (Number.isFinite(v) && els.idleMs.value !== '') {
      setState({ idle: v }, { source: els.idleMs });
      rebasePlay();
    }
  });
  els.idleMs.addEventListener('blur', () => renderControls());
  els.play.addEventListener('click', () => setPlaying(!app.playing));
  els.idleReset.addEventListener('click', () => {
    setState({ idle: 0 });
    rebasePlay();
  });

  els.benchInput.value = DEFAULT_BENCH;
  els.benchInput.addEventListener('input', () => app.engine && refreshBench());

  $('#open-btn').addEventListener('click', () => els.fileInput.click());
  els.fileInput.addEventListener('change', async () => {
    const file = els.fileInput.files[0];
    if (!file) return;
    loadText(await file.text(), `Loaded ${file.name}`);
    els.fileInput.value = '';
  });
  $('#save-btn').addEventListener('click', () => saveConfig());
  $('#share-btn').addEventListener('click', async () => {
    await writeHash();
    try {
      await navigator.clipboard.writeText(location.href);
      notify('Link copied: it holds the config and the visitor state.');
    } catch {
      notify('The address bar now holds the share link; copy it from there.');
    }
  });
  $('#reset-btn').addEventListener('click', () => {
    setPlaying(false);
    app.state = { ...DEFAULT_STATE };
    renderControls();
    loadText(app.defaultConfig, 'Back to the example storefront config');
  });
  window.addEventListener('hashchange', async () => {
    if (location.hash === app.lastHash) return;
    const parsed = await applyHash();
    Object.assign(app.state, pick(parsed));
    renderControls();
    loadText(parsed.configText ?? app.defaultConfig);
  });
}

function pick(parsed) {
  const out = {};
  if (parsed.intent !== undefined) out.intent = clamp(parsed.intent, 0, 100);
  if (parsed.idle !== undefined) out.idle = clamp(parsed.idle, 0, MAX_IDLE_MS);
  if (parsed.url !== undefined) out.url = parsed.url;
  return out;
}

async function boot() {
  wire();
  try {
    const mod = await import('../pkg/index.js');
    await mod.default();
    app.wasm = mod;
  } catch (err) {
    els.status.className = 'engine-status bad';
    els.status.textContent = 'The engine did not load. Build it with scripts/build-wasm.sh (or run make demo), then reload.';
    console.warn('nudge-rules: the WASM package could not be loaded:', err);
    document.body.dataset.ready = 'error';
    return;
  }
  try {
    const res = await fetch('../examples/storefront.json');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    app.defaultConfig = await res.text();
  } catch (err) {
    console.warn('nudge-rules: could not fetch the example config:', err);
    app.defaultConfig = '{\n  "version": 1,\n  "rules": []\n}\n';
  }
  const parsed = await applyHash();
  Object.assign(app.state, pick(parsed));
  editor.setValue(parsed.configText ?? app.defaultConfig);
  compile(editor.value);
  renderControls();
  refreshAll();
  els.status.className = 'engine-status ok';
  els.status.textContent = 'Engine ready';
  document.body.dataset.ready = '1';
}

boot();

// For the console: the app's state and engine.
window.nudgePlayground = app;
