//! One evaluation's result (docs/contract/preview.md): [`Preview`], what fires and why, and the engine's preview
//! entry points that make it.

use std::borrow::Cow;

use serde::Serialize;

use crate::config::{Nudge, Pattern, Rule};
use crate::engine::{Engine, Outcome};
use crate::error::Error;
use crate::reason;
use crate::request::SessionState;
use crate::visit::Visit;

impl Engine {
    /// Decides which nudge, if any, fires for a session state (docs/contract/preview.md evaluation). Pure: the same
    /// engine and state give the same result on every platform.
    ///
    /// ```
    /// # let engine = nudge_rules::Engine::compile(r#"{"version": 1, "quiet_zones": ["/checkout/**"],
    /// #   "rules": [{"id": "help", "nudge": {"type": "toast", "message": "Need help?", "cta": "Chat"},
    /// #              "when": {"min_idle_ms": 5000}}]}"#).unwrap();
    /// use nudge_rules::SessionState;
    /// let state = SessionState { intent_score: 40, page_url: "/products/x".into(), idle_ms: 6000, ..Default::default() };
    /// let preview = engine.preview(&state).unwrap();
    /// assert_eq!(preview.rule().map(|r| r.id.as_str()), Some("help"));
    ///
    /// let quiet = SessionState { page_url: "/CHECKOUT/".into(), ..state };
    /// assert!(!engine.preview(&quiet).unwrap().would_fire());
    /// ```
    ///
    /// # Errors
    ///
    /// - `InvalidRequest` when `intent_score` is over 100, `idle_ms` over 86,400,000, or `page_url`
    ///   is rejected by docs/contract/urls.md (path `session_state.page_url`; the message gives the reason, the
    ///   code is the [`UrlError`](crate::UrlError)'s).
    pub fn preview<'a>(&'a self, state: &'a SessionState) -> Result<Preview<'a>, Error> {
        let (intent_score, idle_ms) = (state.intent_score, state.idle_ms);
        let path = self.checked_path(intent_score, &state.page_url, idle_ms)?;
        Ok(self.preview_path(path, intent_score, idle_ms, state.visit()))
    }

    /// [`Engine::preview`] from the three fields, without building a [`SessionState`]:
    /// `intent_score` 0 to 100, `idle_ms` 0 to 86,400,000 ms.
    ///
    /// # Errors
    ///
    /// - As [`Engine::preview`].
    pub fn preview_fields<'a>(
        &'a self,
        intent_score: u8,
        page_url: &'a str,
        idle_ms: u32,
    ) -> Result<Preview<'a>, Error> {
        let path = self.checked_path(intent_score, page_url, idle_ms)?;
        Ok(self.preview_path(path, intent_score, idle_ms, Visit::NONE))
    }

    /// The normalized path of a state's page URL, once its ranges are checked.
    fn checked_path<'a>(
        &self,
        intent_score: u8,
        page_url: &'a str,
        idle_ms: u32,
    ) -> Result<Cow<'a, str>, Error> {
        SessionState::check_ranges(intent_score, idle_ms)?;
        self.normalize(page_url)
            .map_err(|e| Error::rejected_page_url("session_state.page_url", page_url, &e))
    }

    /// The preview of an already normalized path and checked ranges, for a visit (docs/contract/caps.md).
    pub(crate) fn preview_path<'a>(
        &'a self,
        path: Cow<'a, str>,
        intent_score: u8,
        idle_ms: u32,
        visit: Visit<'a>,
    ) -> Preview<'a> {
        let (outcome, fired_page) = self.decide_with_page(&path, intent_score, idle_ms, &visit);
        Preview {
            engine: self,
            path,
            intent_score,
            idle_ms,
            visit,
            outcome,
            fired_page,
        }
    }
}

/// The result of [`Engine::preview`]: whether a nudge fires, which, and why.
///
/// The reason text (API document 2.4: informational) is built only when asked for, by
/// [`Preview::reason`] or the serializers ([`Preview::to_result`],
/// [`Preview::to_response_body`]).
#[derive(Clone, Debug)]
pub struct Preview<'a> {
    engine: &'a Engine,
    path: Cow<'a, str>,
    intent_score: u8,
    idle_ms: u32,
    /// The state's exit intent, visitor and history (docs/contract/caps.md).
    visit: Visit<'a>,
    outcome: Outcome,
    /// The fired rule's first matching `pages` pattern, for the reason.
    fired_page: Option<usize>,
}

impl<'a> Preview<'a> {
    /// True when a nudge would fire.
    pub fn would_fire(&self) -> bool {
        matches!(self.outcome, Outcome::Fired(_))
    }

    /// The rule that fires, if any.
    pub fn rule(&self) -> Option<&'a Rule> {
        self.rule_index()
            .and_then(|r| self.engine.config().rules.get(r))
    }

    /// The index (in config order) of the rule that fires, if any.
    pub fn rule_index(&self) -> Option<usize> {
        match self.outcome {
            Outcome::Fired(r) => Some(r),
            _ => None,
        }
    }

    /// The nudge that fires, if any.
    pub fn nudge(&self) -> Option<&'a Nudge> {
        self.rule().map(|r| &r.nudge)
    }

    /// The rule the visitor is held out from (docs/contract/caps.md): its conditions hold and it is not
    /// capped, but the visitor's bucket is in its control group, so no nudge is shown (and the
    /// storefront records `NUDGE_HELD_OUT` for it). `None` otherwise.
    pub fn held_out_rule(&self) -> Option<&'a Rule> {
        match self.outcome {
            Outcome::HeldOut(r) => self.engine.config().rules.get(r),
            _ => None,
        }
    }

    /// When nothing fires now: the idle time, in ms (at most 86,400,000), at which a rule would
    /// fire (or hold the visitor out) if the visitor keeps idling on this page with nothing else
    /// changing; `None` when a nudge fires, the visitor is held out, the page is quiet, or more
    /// idling would not help. What a storefront sets its timer by (docs/contract/storefront.md).
    pub fn next_idle_ms(&self) -> Option<u32> {
        if self.outcome != Outcome::NoMatch {
            return None;
        }
        let checks = reason::enabled_checks(
            self.engine,
            &self.path,
            self.intent_score,
            self.idle_ms,
            &self.visit,
        );
        reason::earliest_idle(self.engine, &checks).map(|(at, _)| at)
    }

    /// The quiet zone that silenced the page (the first matching one in config order), if any.
    pub fn quiet_zone(&self) -> Option<&'a Pattern> {
        match self.outcome {
            Outcome::Quiet(z) => self.engine.config().quiet_zones.get(z),
            _ => None,
        }
    }

    /// The normalized path the patterns were matched against (docs/contract/urls.md).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The structured decision: what a storefront acts on (docs/contract/storefront.md, docs/contract/caps.md), without the reason text.
    /// Computes [`Preview::next_idle_ms`] when nothing fires.
    pub fn decision(&self) -> Decision<'_> {
        Decision {
            would_fire: self.would_fire(),
            rule_id: self.rule().map(|r| r.id.as_str()),
            rule_index: self.rule_index(),
            nudge: self.nudge(),
            held_out_rule_id: self.held_out_rule().map(|r| r.id.as_str()),
            quiet_zone: self.quiet_zone(),
            path: &self.path,
            next_idle_ms: self.next_idle_ms(),
        }
    }

    /// Why the nudge fires, or why none does (docs/contract/preview.md evaluation steps 1 to 3). Informational: the
    /// wording may change between versions.
    pub fn reason(&self) -> String {
        reason::reason(
            self.engine,
            (&self.path, self.intent_score, self.idle_ms),
            &self.visit,
            self.outcome,
            self.fired_page,
        )
    }
}

/// The structured decision of one preview ([`Preview::decision`]; the WASM package's
/// `engine.decide`): which rule fires with its whole nudge (`cta_url` included), which rule the
/// visitor is held out from, the quiet zone, and when a rule would fire if the visitor keeps
/// idling. Serializes as `{"would_fire", "rule_id", "rule_index", "nudge", "held_out_rule_id",
/// "quiet_zone", "path", "next_idle_ms"}`, absent values as `null`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Decision<'a> {
    /// True when a nudge is shown.
    pub would_fire: bool,
    /// The rule that fires.
    pub rule_id: Option<&'a str>,
    /// Its index in config order.
    pub rule_index: Option<usize>,
    /// Its nudge as configured (type, message, cta, and `cta_url` when set: docs/contract/caps.md).
    pub nudge: Option<&'a Nudge>,
    /// The rule the visitor is held out from (docs/contract/caps.md): no nudge is shown, and a storefront
    /// records `NUDGE_HELD_OUT` for it.
    pub held_out_rule_id: Option<&'a str>,
    /// The quiet zone the page is in, as written.
    pub quiet_zone: Option<&'a Pattern>,
    /// The normalized path (docs/contract/urls.md).
    pub path: &'a str,
    /// When nothing fires: the idle time in ms (at most 86,400,000) at which a rule would fire
    /// or hold the visitor out, all else equal ([`Preview::next_idle_ms`]).
    pub next_idle_ms: Option<u32>,
}
