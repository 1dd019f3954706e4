//! The compiled engine and evaluation (docs/contract/preview.md): quiet zones first, then the first enabled rule, in
//! config order, whose conditions all hold.
//!
//! Compilation puts every quiet zone into one pattern set and every rule's `pages` and
//! `exclude_pages` patterns into another, so that evaluation costs two set lookups and a walk over
//! the rules the page can reach, whatever the number of rules. Evaluation allocates nothing on the
//! canonical-path fast path (scratch buffers are per thread). The result with its reason is
//! [`Preview`](crate::Preview) (`preview.rs`); the wire format is `wire.rs`.
//!
//! ## The seam
//!
//! The layers above the engine, analysis (`src/analysis/`: `Analysis`) and config as code
//! (scenarios, coverage, replay, diff), are types that hold an `&Engine` and read it only through
//! these methods, never its compiled patterns:
//!
//! - [`Engine::config`] and [`Engine::normalize`] (public), and `source` (the config text, to
//!   place lint warnings);
//! - `decide_with_page` (what fires on a normalized path for a visit: docs/contract/caps.md's exit intent,
//!   visitor and history), `preview_path` (the same with its reason);
//! - `quiet_zone_of`, `quiet_zones_of` and `with_page_matches` (which quiet zones and which
//!   `pages`/`exclude_pages` patterns match a normalized path).

use std::borrow::Cow;

use crate::code::DiagnosticCode;
use crate::config::{self, Config};
use crate::error::{Error, ErrorKind};
use crate::json::{Findings, Path};
use crate::matches::{List, Owner, PageMatches, with_scratch};
use crate::normalize::{UrlError, normalize_page_url};
use crate::pattern::PatternSet;
use crate::visit::Visit;

/// The compiled form of a site config: immutable, `Send + Sync`, shared by reference across
/// threads (docs/contract/analysis.md). Build it once per config with [`Engine::compile`], then call
/// [`Engine::preview`] (or [`Engine::preview_body`] for the wire format) per request.
#[derive(Clone, Debug)]
pub struct Engine {
    config: Config,
    /// The config text, kept to place lint warnings at their line and column.
    source: Option<String>,
    /// Every quiet zone and every rule's `pages` and `exclude_pages` pattern, in one set: a path
    /// is looked up once for all of them.
    patterns: PatternSet<Owner>,
    /// Enabled rules without a `pages` list (they can fire on any page), in config order.
    pageless: Vec<u32>,
}

/// What evaluation decided, without the reason text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The page is in this quiet zone (index into `quiet_zones`, the first in config order).
    Quiet(usize),
    /// This rule (index into `rules`) fired.
    Fired(usize),
    /// This rule (index into `rules`) would fire, but the visitor is in its control group
    /// (docs/contract/caps.md holdout): no nudge is shown, and no later rule is tried.
    HeldOut(usize),
    /// No rule's conditions all hold.
    NoMatch,
}

impl Engine {
    /// Compiles config text (docs/contract/config.md, docs/contract/patterns.md) into an engine.
    ///
    /// ```
    /// let engine = nudge_rules::Engine::compile(r#"{
    ///   "version": 1,
    ///   "quiet_zones": ["/checkout/**"],
    ///   "rules": [{ "id": "help", "nudge": { "type": "toast", "message": "Need help?", "cta": "Chat" },
    ///               "when": { "min_idle_ms": 5000 } }]
    /// }"#).unwrap();
    /// assert_eq!(engine.config().rules.len(), 1);
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidConfig` with every problem found, each a [`Diagnostic`](crate::Diagnostic) with its
    /// JSON path, 1-based line and column and a [`DiagnosticCode`](crate::DiagnosticCode); the
    /// limits are the constants of [`limits`](crate::limits):
    ///
    /// - text over 1 MiB;
    /// - a JSON syntax error or duplicate key;
    /// - unknown fields (with the closest expected name), missing or mistyped fields;
    /// - `version` other than 1;
    /// - values out of range: intent scores 0 to 100 with min <= max, `min_idle_ms` 0 to
    ///   86,400,000, ids of 1 to 64 `A-Za-z0-9_-` characters and unique, `message` 1 to 500 and
    ///   `cta` 1 to 80 characters, `type` one of the four nudge types;
    /// - more than 1,000 rules, 1,000 quiet zones or 100 patterns in one list;
    /// - a pattern over 512 bytes, not starting with `/` or `**`, ending in `/`, or not a valid
    ///   glob (globset is the parser of record).
    pub fn compile(config_text: &str) -> Result<Engine, Error> {
        let config =
            config::parse(config_text).map_err(|d| Error::new(ErrorKind::InvalidConfig, d))?;
        Engine::from_config(config, Some(config_text))
    }

    /// Compiles a config already parsed as JSON (for callers holding a `serde_json::Value`,
    /// such as the WASM package given a JS object). Same rules as [`Engine::compile`]; the size
    /// limit applies to the value's compact JSON text; diagnostics have no line and column.
    ///
    /// # Errors
    ///
    /// - As [`Engine::compile`], except JSON syntax errors, which cannot occur.
    pub fn compile_value(config: &serde_json::Value) -> Result<Engine, Error> {
        Engine::compile_tree(config, config.to_string().len())
    }

    /// [`Engine::compile_value`] for a tree whose compact JSON text is `text_len` bytes long,
    /// which the size limit counts (the slim WASM module measures `JSON.stringify`'s text and so
    /// carries no serializer).
    ///
    /// # Errors
    ///
    /// - As [`Engine::compile_value`].
    pub(crate) fn compile_tree(
        config: &serde_json::Value,
        text_len: usize,
    ) -> Result<Engine, Error> {
        let config = config::parse_value(config, text_len)
            .map_err(|d| Error::new(ErrorKind::InvalidConfig, d))?;
        Engine::from_config(config, None)
    }

    /// The config text the engine was compiled from, if it came from text.
    pub(crate) fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// Compiles an already validated config; `text` is used to place errors.
    fn from_config(config: Config, text: Option<&str>) -> Result<Engine, Error> {
        let mut patterns: Vec<(Owner, &str)> = Vec::new();
        let mut paths: Vec<Path> = Vec::new();
        for (i, p) in config.quiet_zones.iter().enumerate() {
            patterns.push((Owner::quiet_zone(i), p.normalized()));
            paths.push(Path::root().key("quiet_zones").index(i));
        }
        for (r, rule) in config.rules.iter().enumerate() {
            let when = Path::root().key("rules").index(r).key("when");
            let lists = [
                (List::Pages, rule.when.pages.as_deref().unwrap_or(&[])),
                (List::ExcludePages, rule.when.exclude_pages.as_slice()),
            ];
            for (list, list_patterns) in lists {
                for (i, p) in list_patterns.iter().enumerate() {
                    patterns.push((Owner::new(r, list, i), p.normalized()));
                    paths.push(when.key(list.key()).index(i));
                }
            }
        }
        let mut problems = Vec::new();
        let patterns = PatternSet::build(&patterns).unwrap_or_else(|bad| {
            problems.extend(
                bad.into_iter()
                    .map(|i| paths.get(i).cloned().unwrap_or_default()),
            );
            PatternSet::default()
        });
        if !problems.is_empty() {
            let mut findings = Findings::default();
            // `pattern::check` accepted these, so this is a bug of ours, reported, never a panic.
            for path in problems {
                findings.push(
                    DiagnosticCode::PatternSyntax,
                    &path,
                    "pattern could not be compiled (an internal error of nudge-rules: please report it with this pattern)".to_owned(),
                );
            }
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                findings.into_diagnostics(text),
            ));
        }
        let pageless = config
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.enabled && r.when.pages.is_none())
            .map(|(i, _)| i as u32)
            .collect();
        Ok(Engine {
            config,
            source: text.map(str::to_owned),
            patterns,
            pageless,
        })
    }

    /// The validated config, with defaults filled in.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Normalizes a page URL with this config's case sensitivity (docs/contract/urls.md).
    ///
    /// # Errors
    ///
    /// - As [`normalize_page_url`].
    pub fn normalize<'u>(&self, page_url: &'u str) -> Result<Cow<'u, str>, UrlError> {
        normalize_page_url(page_url, self.config.case_sensitive)
    }

    /// The decision for a normalized path and a visit (exit intent, visitor, history: docs/contract/caps.md),
    /// with the index of the fired (or held-out) rule's first `pages` pattern that matches
    /// (`None` when no rule fires or the rule has no `pages`), which its reason names.
    pub(crate) fn decide_with_page(
        &self,
        path: &str,
        intent_score: u8,
        idle_ms: u32,
        visit: &Visit<'_>,
    ) -> (Outcome, Option<usize>) {
        with_scratch(|scratch| {
            self.patterns.matching_owners(path, &mut scratch.owners);
            // Quiet zones sort first: the first owner is the first matching quiet zone, if any.
            if let Some(zone) = scratch.owners.first().and_then(|o| o.quiet_zone_index()) {
                return (Outcome::Quiet(zone), None);
            }
            let matches = PageMatches::new(&scratch.owners);
            self.first_firing(&matches, intent_score, idle_ms, visit)
        })
    }

    /// Walks, in config order, the rules the page can reach (those with a matching `pages`
    /// pattern and those without `pages`), and returns the first whose conditions all hold and
    /// that is not capped (docs/contract/caps.md), with its first matching `pages` pattern; held out when the
    /// visitor is in that rule's control group.
    fn first_firing(
        &self,
        matches: &PageMatches<'_>,
        intent_score: u8,
        idle_ms: u32,
        visit: &Visit<'_>,
    ) -> (Outcome, Option<usize>) {
        let rules = &self.config.rules;
        // The page conditions of a reached rule: `pages` holds (that is how it was reached). A
        // capped rule is skipped as if its conditions failed (asked last: it reads the history).
        let fires = |r: usize| {
            rules.get(r).is_some_and(|rule| {
                let w = &rule.when;
                rule.enabled
                    && w.min_intent_holds(intent_score)
                    && w.max_intent_holds(intent_score)
                    && w.min_idle_holds(idle_ms)
                    && w.exit_intent_holds(visit.exit_intent)
                    && w.exclude_pages_hold(|| matches.any(r, List::ExcludePages))
                    && visit.capped(&self.config, rule).is_none()
            })
        };
        let decided = |r: usize| {
            let held_out = rules
                .get(r)
                .is_some_and(|rule| visit.held_out(rule).is_some());
            if held_out {
                Outcome::HeldOut(r)
            } else {
                Outcome::Fired(r)
            }
        };
        let mut page_hits = matches.pages_matches().peekable();
        let mut pageless = self.pageless.iter().map(|&r| (r as usize, None)).peekable();
        loop {
            let next = match (page_hits.peek(), pageless.peek()) {
                (Some(&(a, _)), Some(&(b, _))) if a <= b => {
                    page_hits.next().map(|(r, p)| (r, Some(p)))
                }
                (Some(_), Some(_)) | (None, Some(_)) => pageless.next(),
                (Some(_), None) => page_hits.next().map(|(r, p)| (r, Some(p))),
                (None, None) => return (Outcome::NoMatch, None),
            };
            if let Some((r, page)) = next
                && fires(r)
            {
                return (decided(r), page);
            }
        }
    }

    /// Runs `f` with the page matches of a normalized path (not on the hot path: for reasons,
    /// explain and analysis).
    pub(crate) fn with_page_matches<T>(
        &self,
        path: &str,
        f: impl FnOnce(&PageMatches<'_>) -> T,
    ) -> T {
        with_scratch(|scratch| {
            self.patterns.matching_owners(path, &mut scratch.owners);
            f(&PageMatches::new(&scratch.owners))
        })
    }

    /// The first quiet zone (config order) containing a normalized path.
    pub(crate) fn quiet_zone_of(&self, path: &str) -> Option<usize> {
        self.quiet_zones_of(path).first().copied()
    }

    /// Every quiet zone containing a normalized path, in config order.
    pub(crate) fn quiet_zones_of(&self, path: &str) -> Vec<usize> {
        let mut owners = Vec::new();
        self.patterns.matching_owners(path, &mut owners);
        owners.iter().map_while(|o| o.quiet_zone_index()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOREFRONT: &str = include_str!("../examples/storefront.json");

    fn fire(engine: &Engine, intent: u8, url: &str, idle: u32) -> Option<String> {
        engine
            .preview_fields(intent, url, idle)
            .unwrap()
            .rule()
            .map(|r| r.id.clone())
    }

    #[test]
    fn engine_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Engine>();
    }

    #[test]
    fn storefront_decisions() {
        let e = Engine::compile(STOREFRONT).unwrap();
        let cases: &[(u8, &str, u32, Option<&str>)] = &[
            (82, "/products/linen-shirt", 9000, Some("sizing-help")),
            (90, "/products/linen-shirt", 25000, Some("high-intent-exit")),
            (82, "/products/gift-card", 9000, None),
            (40, "/products/gift-card", 0, Some("free-shipping-bar")),
            (45, "/collections/sale", 2500, Some("sale-toast")),
            (45, "/collections/sale", 0, Some("free-shipping-bar")),
            (35, "/search", 6000, Some("search-assist")),
            (10, "/blog/post", 15000, Some("blog-newsletter")),
            (10, "/blog/tags/x", 15000, None),
            (10, "/", 3000, Some("welcome-bar")),
            (95, "/about", 45000, Some("last-chance-exit")),
            (95, "/checkout/pay", 99999, None),
            (95, "/collections/gifts/x", 0, None),
        ];
        for &(intent, url, idle, want) in cases {
            assert_eq!(
                fire(&e, intent, url, idle).as_deref(),
                want,
                "{intent} {url} {idle}"
            );
        }
    }

    #[test]
    fn quiet_zone_reason_names_the_first_zone() {
        let e = Engine::compile(STOREFRONT).unwrap();
        let p = e.preview_fields(95, "/CHECKOUT/Pay", 60000).unwrap();
        assert_eq!(p.quiet_zone().unwrap().as_written(), "/checkout/**");
        assert!(p.reason().contains("\"/checkout/**\""), "{}", p.reason());
    }
}
