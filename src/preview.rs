//! One evaluation's result (SPEC 5): [`Preview`], what fires and why, and the engine's preview
//! entry points that make it.

use std::borrow::Cow;

use crate::config::{Nudge, Pattern, Rule};
use crate::engine::{Engine, Outcome};
use crate::error::Error;
use crate::reason;
use crate::request::SessionState;

impl Engine {
    /// Decides which nudge, if any, fires for a session state (SPEC 5 evaluation). Pure: the same
    /// engine and state give the same result on every platform.
    ///
    /// ```
    /// # let engine = nudge_rules::Engine::compile(r#"{"version": 1, "quiet_zones": ["/checkout/**"],
    /// #   "rules": [{"id": "help", "nudge": {"type": "toast", "message": "Need help?", "cta": "Chat"},
    /// #              "when": {"min_idle_ms": 5000}}]}"#).unwrap();
    /// use nudge_rules::SessionState;
    /// let state = SessionState { intent_score: 40, page_url: "/products/x".into(), idle_ms: 6000 };
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
    ///   is rejected by SPEC 4 (path `session_state.page_url`; the message gives the reason, the
    ///   code is the [`UrlError`](crate::UrlError)'s).
    pub fn preview<'a>(&'a self, state: &'a SessionState) -> Result<Preview<'a>, Error> {
        self.preview_fields(state.intent_score, &state.page_url, state.idle_ms)
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
        SessionState::check_ranges(intent_score, idle_ms)?;
        let path = self
            .normalize(page_url)
            .map_err(|e| Error::rejected_page_url("session_state.page_url", page_url, &e))?;
        Ok(self.preview_path(path, intent_score, idle_ms))
    }

    /// The preview of an already normalized path and checked ranges.
    pub(crate) fn preview_path<'a>(
        &'a self,
        path: Cow<'a, str>,
        intent_score: u8,
        idle_ms: u32,
    ) -> Preview<'a> {
        let (outcome, fired_page) = self.decide_with_page(&path, intent_score, idle_ms);
        Preview {
            engine: self,
            path,
            intent_score,
            idle_ms,
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

    /// The quiet zone that silenced the page (the first matching one in config order), if any.
    pub fn quiet_zone(&self) -> Option<&'a Pattern> {
        match self.outcome {
            Outcome::Quiet(z) => self.engine.config().quiet_zones.get(z),
            _ => None,
        }
    }

    /// The normalized path the patterns were matched against (SPEC 4).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Why the nudge fires, or why none does (SPEC 5 evaluation steps 1 to 3). Informational: the
    /// wording may change between versions.
    pub fn reason(&self) -> String {
        reason::reason(
            self.engine,
            &self.path,
            self.intent_score,
            self.idle_ms,
            self.outcome,
            self.fired_page,
        )
    }
}
