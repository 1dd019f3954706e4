//! Scenarios (docs/contract/as-code.md): named session states with the outcome they must have, checked against a
//! config as tests are checked against code.
//!
//! The file format:
//!
//! ```json
//! {"scenarios": [
//!   {"name": "stylist on product pages",
//!    "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000},
//!    "expect": {"rule": "sizing-help"}},
//!   {"name": "checkout stays quiet",
//!    "session_state": {"intent_score": 95, "page_url": "/checkout/pay", "idle_ms": 60000},
//!    "expect": {"quiet_zone": true}}
//! ]}
//! ```
//!
//! `expect` is one of `{"rule": ID}` (that rule fires), `{"quiet_zone": true}` (the page is in a
//! quiet zone), `{"no_nudge": true}` (nothing fires, not because of a quiet zone) and
//! `{"error": "InvalidRequest"}` (the state is rejected, docs/contract/preview.md or docs/contract/urls.md). [`ScenarioFile`] reads a
//! file with every error reported (JSON path, line, column), [`ConfigAsCode::test`] checks it, and
//! [`ConfigAsCode::coverage`] says what the scenarios exercise.

mod read;

use crate::as_code::ConfigAsCode;
use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::preview::Preview;
use crate::request::SessionState;
use crate::text::Quoted;

/// What a scenario must give, and what it gave (docs/contract/as-code.md `expect`). Serializes as the file writes
/// it: `{"rule": "sizing-help"}`, `{"quiet_zone": true}`, `{"no_nudge": true}`,
/// `{"error": "InvalidRequest"}`, `{"held_out": "exit-offer"}` (docs/contract/caps.md), so that what a scenario
/// got can be saved as its expectation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Expectation {
    /// The rule with this id fires.
    Rule(String),
    /// The page is in a quiet zone: nothing fires.
    QuietZone,
    /// Nothing fires, and the page is in no quiet zone.
    NoNudge,
    /// The state is rejected with `InvalidRequest` (docs/contract/preview.md, or a `page_url` docs/contract/urls.md rejects).
    InvalidRequest,
    /// The visitor is held out from the rule with this id (docs/contract/caps.md: its control group), so no
    /// nudge is shown.
    HeldOut(String),
}

impl Serialize for Expectation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        match self {
            Expectation::Rule(id) => map.serialize_entry("rule", id)?,
            Expectation::QuietZone => map.serialize_entry("quiet_zone", &true)?,
            Expectation::NoNudge => map.serialize_entry("no_nudge", &true)?,
            Expectation::InvalidRequest => map.serialize_entry("error", "InvalidRequest")?,
            Expectation::HeldOut(id) => map.serialize_entry("held_out", id)?,
        }
        map.end()
    }
}

impl fmt::Display for Expectation {
    /// `rule "sizing-help" fires`, `quiet zone`, `no nudge`, `InvalidRequest`, `held out from rule
    /// "exit-offer"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Rule(id) => write!(f, "rule {} fires", Quoted(id)),
            Expectation::QuietZone => f.write_str("quiet zone"),
            Expectation::NoNudge => f.write_str("no nudge"),
            Expectation::InvalidRequest => f.write_str("InvalidRequest"),
            Expectation::HeldOut(id) => write!(f, "held out from rule {}", Quoted(id)),
        }
    }
}

/// One scenario: a name, a session state (docs/contract/preview.md's `session_state`, kept as given) and the
/// expected outcome. Serializes as the file writes it: `{"name", "session_state", "expect"}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    name: String,
    session_state: Value,
    expect: Expectation,
    /// The state as the engine reads it, or why it is rejected.
    #[serde(skip)]
    state: Result<SessionState, Error>,
}

impl Scenario {
    /// A scenario from its three fields; `session_state` is read as
    /// [`SessionState::from_json_value`] reads it when the scenario is checked.
    pub fn new(name: impl Into<String>, session_state: Value, expect: Expectation) -> Self {
        let state = SessionState::from_json_value(&session_state);
        Scenario {
            name: name.into(),
            session_state,
            expect,
            state,
        }
    }

    /// The name, unique within its file; 1 to 200 characters when read from a file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The session state as given.
    pub fn session_state(&self) -> &Value {
        &self.session_state
    }

    /// The expected outcome.
    pub fn expect(&self) -> &Expectation {
        &self.expect
    }

    /// The state as the engine reads it, when docs/contract/preview.md accepts it.
    pub(crate) fn state(&self) -> Option<&SessionState> {
        self.state.as_ref().ok()
    }
}

/// A scenario file (docs/contract/as-code.md): `{"scenarios": [...]}`, read with every error reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScenarioFile {
    scenarios: Vec<Scenario>,
}

impl ScenarioFile {
    /// Reads scenario file text.
    ///
    /// ```
    /// use nudge_rules::scenarios::{Expectation, ScenarioFile};
    /// let file = ScenarioFile::from_text(r#"{"scenarios": [{"name": "home",
    ///   "session_state": {"intent_score": 10, "page_url": "/", "idle_ms": 4000},
    ///   "expect": {"rule": "welcome-bar"}}]}"#).unwrap();
    /// assert_eq!(file.scenarios()[0].expect(), &Expectation::Rule("welcome-bar".into()));
    ///
    /// let err = ScenarioFile::from_text("{\"scenarios\": [{\"name\": \"x\",\n \"expected\": {}}]}").unwrap_err();
    /// assert_eq!(err.kind(), nudge_rules::ErrorKind::InvalidScenarios);
    /// let unknown = err.diagnostics().iter().find(|d| d.path == "scenarios[0].expected").unwrap();
    /// assert_eq!((unknown.line, unknown.column), (Some(2), Some(2)));
    /// assert!(unknown.message.contains("did you mean \"expect\"?"));
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidScenarios` with every problem, each with its JSON path and 1-based line and column;
    /// the limits are those of [`limits`](crate::limits):
    ///
    /// - text over 16 MiB;
    /// - JSON syntax errors and duplicate keys;
    /// - unknown fields (at the top, in a scenario, in `expect`);
    /// - a missing `scenarios`, `name`, `session_state` or `expect`;
    /// - more than 10,000 scenarios;
    /// - a name empty, over 200 characters or used twice;
    /// - an `expect` that is not exactly one of the four forms;
    /// - a `session_state` that docs/contract/preview.md rejects (wrong types, out of range, unknown fields),
    ///   unless the scenario expects `{"error": "InvalidRequest"}`.
    ///
    /// A `page_url` that docs/contract/urls.md rejects is the engine's verdict, not a file error.
    pub fn from_text(text: &str) -> Result<ScenarioFile, Error> {
        read::from_text(text)
    }

    /// Reads a scenario file already parsed as JSON (the WASM package given a JS object). Same
    /// rules as [`ScenarioFile::from_text`]; diagnostics have no line and column.
    ///
    /// # Errors
    ///
    /// - As [`ScenarioFile::from_text`], except JSON syntax errors.
    pub fn from_value(value: &Value) -> Result<ScenarioFile, Error> {
        read::from_value(value)
    }

    /// A file of scenarios built in code.
    ///
    /// # Errors
    ///
    /// - `InvalidScenarios` when two scenarios have the same name (path `scenarios[i].name`).
    pub fn new(scenarios: Vec<Scenario>) -> Result<ScenarioFile, Error> {
        read::check_names(&scenarios)
            .map(|()| ScenarioFile { scenarios })
            .map_err(|d| Error::new(ErrorKind::InvalidScenarios, d))
    }

    /// The scenarios, in file order.
    pub fn scenarios(&self) -> &[Scenario] {
        &self.scenarios
    }
}

/// What checking one scenario gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScenarioResult {
    /// The scenario's name.
    pub name: String,
    /// True when `got` equals `expected`.
    pub passed: bool,
    /// The scenario's `expect`.
    pub expected: Expectation,
    /// What the engine gave, in the same shape: saved as `expect`, it makes the scenario pass.
    pub got: Expectation,
    /// The preview's reason text (docs/contract/preview.md), or the InvalidRequest message (informational).
    pub reason: String,
}

impl ScenarioResult {
    /// What a failed scenario gave, one labelled line each, as `nudge-rules test` prints it:
    /// `expected:`, `got:`, `reason:`, and `note:` when it expects a rule id `engine`'s config
    /// does not have (a typo, or a rule renamed since the scenario was saved).
    pub fn failure_text(&self, engine: &crate::engine::Engine) -> String {
        let mut text = format!(
            "expected: {}\ngot:      {}\nreason:   {}",
            self.expected, self.got, self.reason
        );
        if let Expectation::Rule(id) = &self.expected
            && !engine.config().rules.iter().any(|rule| &rule.id == id)
        {
            text.push_str(&format!(
                "\nnote:     the config has no rule with id {id:?}"
            ));
        }
        text
    }
}

/// The results of a scenario file against one config (docs/contract/as-code.md `nudge-rules test`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TestReport {
    /// How many scenarios passed.
    pub passed: usize,
    /// How many failed.
    pub failed: usize,
    /// One result per scenario, in file order.
    pub results: Vec<ScenarioResult>,
}

impl ConfigAsCode<'_> {
    /// Checks every scenario of a file against this config (docs/contract/as-code.md): a scenario passes when what
    /// the engine gives for its state equals its `expect`.
    ///
    /// ```
    /// use nudge_rules::scenarios::{Expectation, ScenarioFile};
    /// let engine = nudge_rules::Engine::compile(&std::fs::read_to_string("examples/storefront.json").unwrap()).unwrap();
    /// let file = ScenarioFile::from_text(r#"{"scenarios": [
    ///   {"name": "stylist", "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000},
    ///    "expect": {"rule": "sizing-help"}},
    ///   {"name": "gift card", "session_state": {"intent_score": 82, "page_url": "/products/gift-card", "idle_ms": 9000},
    ///    "expect": {"rule": "sizing-help"}}]}"#).unwrap();
    /// let report = nudge_rules::as_code::ConfigAsCode::new(&engine).test(&file);
    /// assert_eq!((report.passed, report.failed), (1, 1));
    /// assert_eq!(report.results[1].got, Expectation::NoNudge);
    /// ```
    pub fn test(&self, file: &ScenarioFile) -> TestReport {
        let results: Vec<ScenarioResult> = file
            .scenarios()
            .iter()
            .map(|scenario| {
                let (got, reason) = self.outcome(scenario);
                ScenarioResult {
                    name: scenario.name.clone(),
                    passed: got == scenario.expect,
                    expected: scenario.expect.clone(),
                    got,
                    reason,
                }
            })
            .collect();
        let passed = results.iter().filter(|r| r.passed).count();
        TestReport {
            passed,
            failed: results.len() - passed,
            results,
        }
    }

    /// A scenario whose expectation is what this config gives for `session_state` now (an
    /// editor's "save this visitor as a scenario"): checked against this config, it passes.
    pub fn scenario(&self, name: impl Into<String>, session_state: Value) -> Scenario {
        let mut scenario = Scenario::new(name, session_state, Expectation::NoNudge);
        scenario.expect = self.outcome(&scenario).0;
        scenario
    }

    /// What the engine gives for a scenario's state, with the reason text.
    pub(crate) fn outcome(&self, scenario: &Scenario) -> (Expectation, String) {
        match &scenario.state {
            Err(e) => (Expectation::InvalidRequest, e.to_string()),
            Ok(state) => match self.engine.preview(state) {
                Err(e) => (Expectation::InvalidRequest, e.to_string()),
                Ok(preview) => (Expectation::of(&preview), preview.reason()),
            },
        }
    }
}

impl Expectation {
    /// The outcome of a preview as an expectation.
    pub(crate) fn of(preview: &Preview<'_>) -> Self {
        match (
            preview.rule(),
            preview.quiet_zone(),
            preview.held_out_rule(),
        ) {
            (Some(rule), _, _) => Expectation::Rule(rule.id.clone()),
            (None, Some(_), _) => Expectation::QuietZone,
            (None, None, Some(rule)) => Expectation::HeldOut(rule.id.clone()),
            (None, None, None) => Expectation::NoNudge,
        }
    }
}
