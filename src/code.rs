//! The stable, machine-readable codes of [`Diagnostic`](crate::Diagnostic)s: one list for config
//! errors, request errors, page URL rejections and lint warnings. docs/CODES.md lists them with an
//! example each (a test keeps the two in step).

use std::fmt;

use serde::Serialize;

/// Declares [`DiagnosticCode`] from one list: each variant with its snake_case name and its doc
/// line, so that the enum, [`DiagnosticCode::ALL`] and [`DiagnosticCode::as_str`] cannot drift.
/// The codes in brackets are the page URL rejections: each names the
/// [`UrlError`](crate::UrlError) variant of the same name, and the macro also declares
/// `impl_url_error_code!`, which src/normalize/error.rs invokes to write `UrlError::code` from
/// this same list.
macro_rules! diagnostic_codes {
    (
        $($variant:ident = $name:literal: $doc:literal,)*
        [$($url_variant:ident = $url_name:literal: $url_doc:literal,)*]
        $($after:ident = $after_name:literal: $after_doc:literal,)*
    ) => {
        /// What a [`Diagnostic`](crate::Diagnostic) is about. Serialized (JSON, the WASM package,
        /// `check --json`) as the snake_case name shown for each variant, which is stable: new
        /// codes may be added, existing ones keep their name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[non_exhaustive]
        pub enum DiagnosticCode {
            $(
                #[doc = concat!("`", $name, "`: ", $doc)]
                #[serde(rename = $name)]
                $variant,
            )*
            $(
                #[doc = concat!("`", $url_name, "`: ", $url_doc, " (`UrlError::", stringify!($url_variant), "`)")]
                #[serde(rename = $url_name)]
                $url_variant,
            )*
            $(
                #[doc = concat!("`", $after_name, "`: ", $after_doc)]
                #[serde(rename = $after_name)]
                $after,
            )*
        }

        impl DiagnosticCode {
            /// Every code, in the order of docs/CODES.md.
            pub const ALL: &'static [DiagnosticCode] = &[
                $(DiagnosticCode::$variant,)*
                $(DiagnosticCode::$url_variant,)*
                $(DiagnosticCode::$after,)*
            ];

            /// The code's stable snake_case name, as serialized: `unknown_field`,
            /// `shadowed_rule`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(DiagnosticCode::$variant => $name,)*
                    $(DiagnosticCode::$url_variant => $url_name,)*
                    $(DiagnosticCode::$after => $after_name,)*
                }
            }
        }

        /// Writes `impl UrlError { pub fn code(&self) -> DiagnosticCode }` from the bracketed
        /// codes of `diagnostic_codes!`: each `UrlError` variant maps to the code of the same
        /// name. Invoked once, by src/normalize/error.rs, where `UrlError` and `DiagnosticCode`
        /// are in scope.
        macro_rules! impl_url_error_code {
            () => {
                impl UrlError {
                    #[doc = concat!(
                        "A stable machine-readable name of the rejection, from the one list of ",
                        "diagnostic codes (src/code.rs): ",
                        $("`", $url_name, "`, ",)*
                        "one per variant, of the same name."
                    )]
                    pub fn code(&self) -> DiagnosticCode {
                        match self {
                            $(UrlError::$url_variant { .. } => DiagnosticCode::$url_variant,)*
                        }
                    }
                }
            };
        }
        pub(crate) use impl_url_error_code;
    };
}

diagnostic_codes! {
    // --- The JSON document (config or request) -------------------------------------------
    JsonSyntax = "json_syntax": "the text is not JSON, not UTF-8, or has a duplicate key.",
    NotJson = "not_json": "a JS value given to the WASM package has no JSON form (a BigInt, a cycle).",
    UnknownField = "unknown_field": "a field the object does not have (with the closest expected name).",
    MissingField = "missing_field": "a required field is absent.",
    WrongType = "wrong_type": "a value of the wrong JSON type (`\"50\"` for an integer, `null`).",
    OutOfRange = "out_of_range": "an integer outside its range (intent scores 0 to 100, idle times 0 to 86,400,000).",
    // --- The config (docs/contract/config.md, docs/contract/patterns.md) ----------------------------------------------------------
    ConfigTooLarge = "config_too_large": "the config text is over 1 MiB.",
    UnsupportedVersion = "unsupported_version": "`version` is not 1.",
    InvalidRuleId = "invalid_rule_id": "a rule id is empty, over 64 characters, or has a character other than `A-Za-z0-9_-`.",
    DuplicateRuleId = "duplicate_rule_id": "a rule id is already used by an earlier rule.",
    UnknownNudgeType = "unknown_nudge_type": "`nudge.type` is not one of the four nudge types.",
    InvalidLength = "invalid_length": "`message` (1 to 500) or `cta` (1 to 80 characters) has the wrong length.",
    EmptyIntentRange = "empty_intent_range": "`min_intent_score` is greater than `max_intent_score`.",
    TooManyRules = "too_many_rules": "more than 1,000 rules.",
    TooManyPatterns = "too_many_patterns": "more than 1,000 quiet zones, or more than 100 patterns in one list.",
    PatternTooLong = "pattern_too_long": "a pattern over 512 bytes.",
    PatternNotAbsolute = "pattern_not_absolute": "a pattern that starts with neither `/` nor `**`.",
    PatternTrailingSlash = "pattern_trailing_slash": "a pattern ending in `/`, which no normalized path does.",
    PatternSyntax = "pattern_syntax": "a pattern that is not a valid glob (unclosed class or alternate group).",
    InvalidCtaUrl = "invalid_cta_url": "a `cta_url` that is neither a path starting with one `/` nor an absolute `https:` URL, or is over 2,048 bytes (docs/contract/caps.md).",
    // --- The request (docs/contract/preview.md) ------------------------------------------------------------
    RequestTooLarge = "request_too_large": "the request body is over 64 KiB.",
    InvalidVisitorId = "invalid_visitor_id": "a `visitor_id` that is not `vis_` then 1 to 64 of `A-Za-z0-9_-` (docs/contract/caps.md).",
    TooManyHistoryEntries = "too_many_history_entries": "a session state's `history` of more than 200 entries (docs/contract/caps.md).",
    // --- page_url rejections (docs/contract/urls.md): `UrlError::code`, one per variant of that name ------
    [
    Empty = "empty": "`page_url` is the empty string.",
    TooLong = "too_long": "`page_url`, or the path it normalizes to, is over 8,192 bytes.",
    ControlCharacter = "control_character": "a raw control character (U+0000 to U+001F, U+007F to U+009F).",
    Space = "space": "a raw space.",
    Backslash = "backslash": "a raw `\\`, which some servers read as `/`.",
    DoubleSlash = "double_slash": "a path starting with `//`, which reads as a host.",
    UnsupportedScheme = "unsupported_scheme": "a scheme other than http and https (`javascript:`).",
    Relative = "relative": "neither a path starting with `/` nor an absolute URL.",
    MalformedUrl = "malformed_url": "an absolute URL without `//` and a host, or one the WHATWG URL parser rejects (a bad host or port).",
    MalformedEscape = "malformed_escape": "`%` not followed by two hex digits.",
    ForbiddenEscape = "forbidden_escape": "an escape decoding to `/`, `\\`, `%` or a control character.",
    InvalidUtf8 = "invalid_utf8": "percent-decoded bytes that are not UTF-8.",
    AmbiguousUnicode = "ambiguous_unicode": "Unicode normalization (NFKC) would change the path's structure.",
    AmbiguousDotSegment = "ambiguous_dot_segment": "a dot segment that a browser and docs/contract/urls.md's steps resolve differently.",
    ParameterOnlySegment = "parameter_only_segment": "a segment that is empty only because its `;` parameters are cut (`/orders/;a/invoice`), which servers read two ways.",
    ]
    // --- Lint warnings (docs/contract/analysis.md) ----------------------------------------------------------
    ShadowedRule = "shadowed_rule": "earlier rules fire in every state in which this rule could fire.",
    CatchAllRule = "catch_all_rule": "a rule without conditions, so every later rule can never fire.",
    RuleInQuietZone = "rule_in_quiet_zone": "every page the rule targets is inside a quiet zone.",
    RuleExcludesAllPages = "rule_excludes_all_pages": "the rule excludes every page it includes.",
    EmptyPages = "empty_pages": "`pages: []` matches no page, so the rule never fires.",
    QuietZoneCoversEveryPage = "quiet_zone_covers_every_page": "a quiet zone such as `/**`, so no nudge can fire.",
    DuplicatePattern = "duplicate_pattern": "a pattern repeated in the same list.",
    RedundantPattern = "redundant_pattern": "a pattern already covered by another of the same list.",
    PatternQueryString = "pattern_query_string": "a pattern that looks like it has a query string.",
    PatternHasScheme = "pattern_has_scheme": "a pattern with `http://` or similar.",
    PatternUppercase = "pattern_uppercase": "upper-case letters in a case-insensitive config.",
    PatternNeverMatches = "pattern_never_matches": "a pattern with `%`, `;`, `//` or a dot segment, which a normalized path never has.",
    PatternByteWildcard = "pattern_byte_wildcard": "a `?` or a class next to non-ASCII text, or listing it: globs match bytes, so it never matches such a character.",
    CostlyHoldout = "costly_holdout": "a `holdout_percent` over 20: that share of the rule's visitors never sees the nudge (docs/contract/caps.md).",
    CappedBySession = "capped_by_session": "a rule that earlier rules, firing in every state in which it could, keep from firing by using up `max_nudges_per_session` (docs/contract/caps.md).",
    // --- Scenario files and recorded sessions (docs/contract/as-code.md) ----------------------------------
    InputTooLarge = "input_too_large": "a scenario file over 16 MiB, or sessions over 64 MiB of text.",
    TooManyScenarios = "too_many_scenarios": "more than 10,000 scenarios in one file.",
    InvalidScenarioName = "invalid_scenario_name": "a scenario name that is empty or over 200 characters.",
    DuplicateScenarioName = "duplicate_scenario_name": "a scenario name already used by an earlier scenario of the file.",
    InvalidExpectation = "invalid_expectation": "`expect` is not exactly one of `rule`, `quiet_zone: true`, `no_nudge: true`, `error: \"InvalidRequest\"`, `held_out` (docs/contract/caps.md).",
    TooManySessions = "too_many_sessions": "more than 100,000 sessions in one input.",
    DuplicateSessionId = "duplicate_session_id": "a session id already used by an earlier session of the input.",
    TooManyEvents = "too_many_events": "more than 10,000 events in one session.",
    TooManyRecordedNudges = "too_many_recorded_nudges": "more than 1,000 recorded nudges in one session.",
    InvalidTimestamp = "invalid_timestamp": "a timestamp that is not RFC 3339 in UTC (`2026-03-01T12:00:05Z`).",
    TimestampOrder = "timestamp_order": "an event after the session's `ended_at`, or `started_at` after `ended_at`.",
    UnknownOutcome = "unknown_outcome": "a recorded nudge's `outcome` other than shown, clicked, dismissed, chat_opened.",
    // --- Other ---------------------------------------------------------------------------
    Unknown = "unknown": "an error without a more precise code; the engine does not produce it.",
}

impl fmt::Display for DiagnosticCode {
    /// The snake_case name, as [`DiagnosticCode::as_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialized_form_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for code in DiagnosticCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert!(seen.insert(code.as_str()), "{code} twice");
        }
    }

    /// docs/CODES.md lists every code, in this order, each with an example.
    #[test]
    fn every_code_is_documented() {
        let doc = include_str!("../docs/CODES.md");
        let mut at = 0;
        for code in DiagnosticCode::ALL {
            let heading = format!("### `{code}`");
            let found = doc
                .get(at..)
                .and_then(|rest| rest.find(&heading))
                .unwrap_or_else(|| panic!("{heading} missing from docs/CODES.md, or out of order"));
            at += found + heading.len();
        }
    }
}
