// The page's views as a draw table (draw-table.js): for each part of the page, the slices of the
// store's state it reads and how it is drawn. A keystroke's compile that leaves the errors and
// lint warnings as they were redraws neither the Problems list nor the marks nor the cards'
// findings; a new evaluation redraws the preview, the Why panel and the API panel; a new map the
// map. app.js builds the parts and runs the table after each action.

import { renderApi } from './api-panel.js';
import { renderBench } from './bench.js';
import { ruleColors } from './colors.js';
import { setLimits } from './limits.js';
import { markLegend, renderMap } from './map-panel.js';
import { SHOWN, renderProblems } from './problems.js';
import { isCurrent, isReady, isStale, needsMarks, ruleCount, summaryById, warningsByRule, writtenConfig } from './store.js';
import { NUDGE_LABELS, esc, formatMs, nudgeIcon } from './util.js';
import { waitingFor } from './why.js';

/** @typedef {import('./store.js').State} State */

/**
 * The views of the page, in the order they are drawn.
 * @param {object} p the page's parts (app.js): `els`, `session`, `storefront`, `visitorRelay`,
 *   `why`, `map`, `editor`, `rulesEditor`, `scenarios`, `replay`, `results`, `webhooks`, `notes`, `metrics`,
 *   `patternWaiters` (the callers waiting for a pattern's check, by pattern), `getState`,
 *   `dispatch`, `jumpTo(line, column)`
 * @returns {{ views: import('./draw-table.js').View<State>[], redrawWhy: () => void }}
 */
export function pageViews(p) {
  const { els, session, storefront, visitorRelay, why, map, editor, rulesEditor, scenarios, replay, notes, metrics } = p;
  let whyFrame = null; // the frame of the Why panel's next redraw
  /**
   * Redraws the Why panel after the next paint: the storefront shows the new preview first, and
   * the verdicts of a 1,000-rule config (about 5 ms to build) follow a frame later.
   */
  function redrawWhy() {
    if (whyFrame) return;
    whyFrame = requestAnimationFrame(() => setTimeout(() => {
      whyFrame = null;
      const s = p.getState();
      const e = s.evaluation;
      if (e?.explanation) {
        why.render(e.explanation, {
          config: s.config, summary: summaryById(s), warningsByRule: warningsByRule(s), notes, visitorId: e.state?.visitor_id ?? null,
        });
      }
    }));
  }

  /** The preview's badge and reason for a nudge that fires. */
  function showFired(nudge) {
    els.previewBadge.className = 'pill pill-fire';
    els.previewBadge.innerHTML = `${nudgeIcon(nudge.type, 12)} ${esc(NUDGE_LABELS[nudge.type])}`;
    els.previewReason.textContent = nudge.reason;
  }

  /**
   * The verdict bar (one column, a phone): the preview's badge, the rule that fires and the
   * visitor, kept at the bottom of the screen while the rules are edited (style.css), with a
   * button to the storefront. `ruleId`: the rule that fires (or waits), when known.
   */
  function renderVerdictBar(ruleId = null) {
    const badge = els.previewBadge;
    const s = session.state;
    els.vbVerdict.className = badge.className;
    els.vbVerdict.innerHTML = badge.innerHTML || 'No nudge';
    if (ruleId && badge.classList.contains('pill-fire')) els.vbVerdict.append(` · ${ruleId}`);
    els.vbVisitor.textContent = `${s.url} · intent ${s.intent} · idle ${formatMs(s.idle)}${s.exitIntent ? ' · about to leave' : ''}`;
  }

  /** The visitor's evaluation (its verdicts put together): badge, storefront, API. */
  function renderEval(e) {
    const ex = e.explanation;
    const badge = els.previewBadge;
    // A visitor id the engine refuses: said at the field too (the reason says why).
    if (e.requestError?.code === 'invalid_visitor_id') els.visitorId.setAttribute('aria-invalid', 'true');
    else els.visitorId.removeAttribute('aria-invalid');
    if (!ex) {
      badge.className = 'pill pill-error';
      badge.textContent = 'Rejected';
      els.previewReason.textContent = e.requestError?.message ?? '';
    } else {
      const result = ex.result;
      storefront.render(e.state.page_url, ex.path, result?.would_fire ? result.nudge : null);
      if (!result) {
        badge.className = 'pill pill-error';
        badge.textContent = 'URL rejected';
        els.previewReason.textContent = ex.url_error?.message ?? '';
      } else if (result.would_fire) {
        showFired(result.nudge);
      } else if (ex.held_out_rule_id) {
        // docs/contract/caps.md: the visitor is in the control group of the rule that would fire.
        badge.className = 'pill pill-held';
        badge.textContent = `Control group of ${ex.held_out_rule_id}`;
        els.previewReason.textContent = result.reason || '';
      } else {
        const waiting = waitingFor(ex);
        badge.className = waiting ? 'pill pill-wait' : 'pill';
        badge.textContent = waiting ? `${waiting.rule} ${waiting.text}` : 'No nudge';
        els.previewReason.textContent = result.reason || '';
      }
      markLegend(els.legend, ex.fired_rule_id);
    }
    const fired = ex?.result?.would_fire ? ex : null;
    visitorRelay.observe({ url: e.state.page_url, nudgeType: fired?.result.nudge.type, ruleId: fired?.fired_rule_id });
    map.setState(session.state.intent, session.state.idle);
    renderApi(els.api, e);
    renderVerdictBar(ex?.fired_rule_id ?? null);
  }

  /** No config has compiled yet: the page says so everywhere a preview would be. */
  function renderNoEngine(url) {
    const msg = 'Fix the config errors to see the preview.';
    storefront.render(url, url, null);
    visitorRelay.observe({ url });
    els.previewReason.textContent = msg;
    els.previewBadge.className = 'pill';
    els.previewBadge.textContent = '';
    els.vbVerdict.className = 'pill pill-error';
    els.vbVerdict.textContent = 'No preview until the config has no errors';
    why.clear(msg);
    map.setMap({ regions: [], message: msg });
    els.legend.replaceChildren();
    els.benchRows.replaceChildren();
  }

  /** The errors and warnings of the compiled text, and the failing scenarios. */
  function renderDiagnostics(s) {
    const all = [...s.errors, ...s.warnings];
    renderProblems({ list: els.diagnostics, count: els.problemCount, pill: els.configStatus }, {
      errors: s.errors,
      warnings: s.warnings,
      failures: s.failures,
      valid: s.valid,
      ruleCount: ruleCount(s),
      // The values the words quote: the cards' parse of that text when they have it (no second
      // parse of a 1,000-rule config per keystroke), else the store's.
      config: all.length ? rulesEditor.configOf(s.compiledText, () => writtenConfig(s)) : null,
      onJump: (line, column) => p.jumpTo(line, column),
      onShowScenario: (index) => scenarios.reveal(index),
    });
  }

  /** @type {import('./draw-table.js').View<State>[]} */
  const views = [
    { name: 'limits', reads: (s) => [s.limits], draw: (s) => s.limits && setLimits(s.limits) },
    {
      name: 'engine failure',
      reads: (s) => [s.failure],
      draw: ({ failure }) => {
        els.status.className = 'engine-status bad';
        els.status.textContent = failure.fatal
          ? 'The engine did not load. Build it with make wasm (or run make demo), then reload.'
          : 'The engine failed; see the console.';
        console.warn('nudge-rules:', failure.message);
        if (failure.fatal) document.body.dataset.ready = 'error';
      },
    },
    {
      name: 'stale preview',
      // isReady: the first compile is drawn even when it leaves `valid` and `hasEngine` false.
      reads: (s) => [s.valid, s.hasEngine, isReady(s)],
      draw: (s) => {
        els.staleBanner.hidden = !isStale(s);
        document.body.classList.toggle('config-invalid', !s.valid);
        document.body.classList.toggle('config-stale', isStale(s));
      },
    },
    {
      name: 'rule ids',
      reads: (s) => [s.config],
      draw: (s) => {
        const ids = s.config.rules.map((r) => r.id);
        ruleColors.follow(ids);
        session.setRuleIds(ids);
        // Notes follow the text forward only (notes.js): an answer for an older text is left out.
        if (isCurrent(s)) notes.follow(ids);
      },
    },
    {
      name: 'problems',
      // The words quote the compiled text's values: it is read only while there are findings.
      reads: (s) => [s.errors, s.warnings, s.failures, s.valid, ruleCount(s), s.errors.length || s.warnings.length ? s.compiledText : null],
      draw: renderDiagnostics,
    },
    {
      name: 'marks in the JSON view',
      // Positions belong to the compiled text: marked only if no keystroke came since, and only
      // when they changed (store.js `needsMarks`).
      reads: (s) => [s.errors, s.warnings, s.compiledText],
      draw: (s) => {
        if (needsMarks(s)) {
          p.dispatch({ type: 'marked', text: s.text });
          editor.setDiagnostics([...s.errors, ...s.warnings].slice(0, SHOWN)); // the ones the Problems list shows
        }
      },
    },
    { name: 'cards: findings', reads: (s) => [s.errors, s.warnings], draw: (s) => rulesEditor.update({ diagnostics: [...s.errors, ...s.warnings] }) },
    { name: 'cards: failing scenarios', reads: (s) => [s.failures], draw: (s) => rulesEditor.update({ failures: s.failures }) },
    {
      name: 'pattern checks',
      reads: (s) => [s.patterns],
      draw: (s) => {
        for (const checked of s.patterns) {
          const waiting = p.patternWaiters.get(checked.text) ?? [];
          p.patternWaiters.delete(checked.text);
          for (const callback of waiting) callback(checked);
        }
      },
    },
    { name: 'no engine', reads: (s) => [s.noEngine], draw: (s) => renderNoEngine(s.noEngine.url) },
    {
      name: 'decision map',
      reads: (s) => [s.map],
      draw: (s) => renderMap({ map, legend: els.legend, path: els.mapPath, canvas: els.map }, s.map, s.map.url),
    },
    {
      // The storefront's preview of a new compile (worker.js `quickPreview`), a few milliseconds
      // ahead of the explanation: the nudge, and the badge and reason when it fires; a silent
      // preview's badge (which may name a rule that fires later) waits for the explanation.
      name: 'quick preview',
      reads: (s) => [s.preview],
      draw: ({ preview }) => {
        if (!preview) return;
        const nudge = preview.result.would_fire ? preview.result.nudge : null;
        storefront.render(preview.state.page_url, preview.path, nudge);
        if (nudge) showFired(nudge);
      },
    },
    { name: 'preview and API', reads: (s) => [s.evaluation], draw: (s) => renderEval(s.evaluation) },
    { name: 'why', reads: (s) => [s.evaluation, s.config], draw: (s) => s.evaluation?.explanation && redrawWhy() },
    {
      name: 'URL bench',
      reads: (s) => [s.bench],
      draw: (s) => renderBench(els.benchRows, s.bench, { rules: s.config?.rules ?? [], onPick: (url) => session.set({ url }) }),
    },
    { name: 'cards: sample pages', reads: (s) => [s.pages], draw: (s) => rulesEditor.update({ pageReports: s.pages }) },
    { name: 'scenario saved', reads: (s) => [s.savedScenario], draw: (s) => scenarios.saved(s.savedScenario) },
    { name: 'scenarios', reads: (s) => [s.scenarios], draw: (s) => scenarios.render(s.scenarios) },
    { name: 'replay', reads: (s) => [s.replay], draw: (s) => replay.render(s.replay) },
    { name: 'replay changes', reads: (s) => [s.diff], draw: (s) => replay.renderDiff(s.diff) },
    { name: 'results', reads: (s) => [s.results], draw: (s) => p.results.draw(s.results) },
    // The rows' control groups follow the draft (set on a card, or undone).
    { name: 'resultsHoldouts', reads: (s) => [s.results, s.config], draw: (s) => p.results.syncHoldouts(s.config) },
    { name: 'webhooks', reads: (s) => [s.webhooks], draw: (s) => p.webhooks.draw(s.webhooks) },
    {
      name: 'engine ready',
      reads: (s) => [isReady(s)],
      draw: () => {
        // Scenarios saved in an earlier visit are checked from the start (their module loads now).
        if (scenarios.file.scenarios.length) setTimeout(() => scenarios.activate(), 0);
        const ms = Math.round(performance.now() - metrics.bootStart);
        els.status.className = 'engine-status ok';
        els.status.textContent = 'Engine ready';
        els.status.title = `Loaded and compiled in ${ms} ms`;
        metrics.readyMs = ms;
        document.body.dataset.ready = '1';
      },
    },
  ];
  return { views, redrawWhy };
}
