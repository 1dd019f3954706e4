//! What a config editor and a server need beyond the preview (docs/contract/analysis.md), as [`Analysis`] of a
//! compiled [`Engine`]: explain ([`Analysis::explain`]), the decision map
//! ([`Analysis::decision_map`]), lint ([`Analysis::lint`]), a plain-language summary
//! ([`Analysis::summary`]), a page's matching patterns ([`Analysis::page_report`]); and
//! validation that never fails ([`validate_config`]).
//!
//! ```
//! use nudge_rules::{analysis::Analysis, Engine, SessionState};
//!
//! let engine = Engine::compile(&std::fs::read_to_string("examples/storefront.json")?)?;
//! let analysis = Analysis::new(&engine);
//! let state = SessionState { intent_score: 82, page_url: "/products/linen-shirt".into(), idle_ms: 2000, ..Default::default() };
//! assert_eq!(analysis.explain(&state)?.earliest_idle_ms, Some(8000));
//! assert!(analysis.lint().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This layer reads the engine only through its crate-internal seam (`src/engine.rs`, "The
//! seam"), as the config-as-code modules do: it never reaches into the compiled patterns.

mod cover;
mod explain;
mod lint;
mod map;
mod sentences;
mod summary;

use serde::Serialize;

pub use crate::reason::ConditionCheck;
pub use explain::{Explanation, RuleExplanation, Verdict};
pub use lint::{Validation, validate_config, validate_config_value};
pub use map::{DecisionMap, Region};
pub use sentences::Sentences;
pub use summary::RuleSummary;

use crate::code::DiagnosticCode;
use crate::engine::Engine;
use crate::matches::List;
use crate::normalize::UrlError;

/// The analysis of one compiled config (docs/contract/analysis.md). Cheap to make (one reference): make one where
/// it is needed, `Analysis::new(&engine).lint()`.
#[derive(Clone, Copy, Debug)]
pub struct Analysis<'e> {
    engine: &'e Engine,
}

impl<'e> Analysis<'e> {
    /// The analysis of `engine`'s config.
    pub fn new(engine: &'e Engine) -> Self {
        Analysis { engine }
    }

    /// The engine analysed.
    pub fn engine(&self) -> &'e Engine {
        self.engine
    }
}

/// A quiet zone named by its index in `quiet_zones` and its pattern as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct QuietZoneRef {
    /// Index in the config's `quiet_zones`.
    pub index: usize,
    /// The pattern as written.
    pub pattern: String,
}

impl QuietZoneRef {
    pub(crate) fn new(engine: &Engine, index: usize) -> Option<Self> {
        engine
            .config()
            .quiet_zones
            .get(index)
            .map(|p| QuietZoneRef {
                index,
                pattern: p.as_written().to_owned(),
            })
    }
}

/// Why a page URL was rejected: [`UrlError::code`] and its message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UrlRejection {
    /// Stable code, as [`UrlError::code`].
    pub code: DiagnosticCode,
    /// The reason, as [`UrlError`]'s `Display`.
    pub message: String,
}

impl From<&UrlError> for UrlRejection {
    fn from(e: &UrlError) -> Self {
        UrlRejection {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// One pattern of the config that matches a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PatternMatch {
    /// Where the pattern is: `quiet_zones[0]`, `rules[2].when.pages[1]`,
    /// `rules[2].when.exclude_pages[0]`.
    pub json_path: String,
    /// The pattern as written.
    pub pattern: String,
}

/// A page URL tested against the config (the editor's URL test bench): its normalized path or
/// why it is rejected, and every pattern that matches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageReport {
    /// The URL as given.
    pub page_url: String,
    /// The normalized path (docs/contract/urls.md); `None` when rejected.
    pub path: Option<String>,
    /// Why the URL was rejected, when it was.
    pub url_error: Option<UrlRejection>,
    /// Every quiet zone, `pages` and `exclude_pages` pattern that matches, in config order.
    pub matches: Vec<PatternMatch>,
}

impl Analysis<'_> {
    /// Tests a page URL against every pattern of the config (docs/contract/analysis.md normalize, for a URL test
    /// bench). Never fails: a rejected URL is reported in the result.
    pub fn page_report(&self, page_url: &str) -> PageReport {
        let path = match self.engine.normalize(page_url) {
            Ok(path) => path.into_owned(),
            Err(e) => {
                return PageReport {
                    page_url: page_url.to_owned(),
                    path: None,
                    url_error: Some(UrlRejection::from(&e)),
                    matches: Vec::new(),
                };
            }
        };
        let config = self.engine.config();
        let mut matches: Vec<PatternMatch> = self
            .engine
            .quiet_zones_of(&path)
            .into_iter()
            .filter_map(|z| {
                config.quiet_zones.get(z).map(|p| PatternMatch {
                    json_path: format!("quiet_zones[{z}]"),
                    pattern: p.as_written().to_owned(),
                })
            })
            .collect();
        self.engine.with_page_matches(&path, |m| {
            for owner in m.all() {
                let (r, i) = (owner.rule(), owner.pattern());
                let Some(rule) = config.rules.get(r) else {
                    continue;
                };
                let patterns = match owner.list() {
                    List::Pages => rule.when.pages.as_deref().unwrap_or(&[]),
                    List::ExcludePages => rule.when.exclude_pages.as_slice(),
                };
                if let Some(p) = patterns.get(i) {
                    matches.push(PatternMatch {
                        json_path: format!("rules[{r}].when.{}[{i}]", owner.list().key()),
                        pattern: p.as_written().to_owned(),
                    });
                }
            }
        });
        PageReport {
            page_url: page_url.to_owned(),
            path: Some(path),
            url_error: None,
            matches,
        }
    }
}
