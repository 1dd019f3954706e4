//! The stable, machine-readable codes of [`Diagnostic`](crate::Diagnostic)s: one list for config
//! errors, request errors, page URL rejections and lint warnings. docs/CODES.md lists them with an
//! example each (a test keeps the two in step).

use std::fmt;

use serde::Serialize;

/// What a [`Diagnostic`](crate::Diagnostic) is about. Serialized (JSON, the WASM package, `check
/// --json`) as the snake_case name shown for each variant, which is stable: new codes may be
/// added, existing ones keep their name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticCode {
    // --- The JSON document (config or request) -------------------------------------------
    /// `json_syntax`: the text is not JSON, not UTF-8, or has a duplicate key.
    JsonSyntax,
    /// `not_json`: a JS value given to the WASM package has no JSON form (a BigInt, a cycle).
    NotJson,
    /// `unknown_field`: a field the object does not have (with the closest expected name).
    UnknownField,
    /// `missing_field`: a required field is absent.
    MissingField,
    /// `wrong_type`: a value of the wrong JSON type (`"50"` for an integer, `null`).
    WrongType,
    /// `out_of_range`: an integer outside its range (intent scores 0 to 100, idle times 0 to
    /// 86,400,000).
    OutOfRange,

    // --- The config (SPEC 2, 3) ----------------------------------------------------------
    /// `config_too_large`: the config text is over 1 MiB.
    ConfigTooLarge,
    /// `unsupported_version`: `version` is not 1.
    UnsupportedVersion,
    /// `invalid_rule_id`: a rule id is empty, over 64 characters, or has a character other than
    /// `A-Za-z0-9_-`.
    InvalidRuleId,
    /// `duplicate_rule_id`: a rule id is already used by an earlier rule.
    DuplicateRuleId,
    /// `unknown_nudge_type`: `nudge.type` is not one of the four nudge types.
    UnknownNudgeType,
    /// `invalid_length`: `message` (1 to 500) or `cta` (1 to 80 characters) has the wrong length.
    InvalidLength,
    /// `empty_intent_range`: `min_intent_score` is greater than `max_intent_score`.
    EmptyIntentRange,
    /// `too_many_rules`: more than 1,000 rules.
    TooManyRules,
    /// `too_many_patterns`: more than 1,000 quiet zones, or more than 100 patterns in one list.
    TooManyPatterns,
    /// `pattern_too_long`: a pattern over 512 bytes.
    PatternTooLong,
    /// `pattern_not_absolute`: a pattern that starts with neither `/` nor `**`.
    PatternNotAbsolute,
    /// `pattern_trailing_slash`: a pattern ending in `/`, which no normalized path does.
    PatternTrailingSlash,
    /// `pattern_syntax`: a pattern that is not a valid glob (unclosed class or alternate group).
    PatternSyntax,
    /// `pattern_too_complex`: a pattern beyond the matcher's size limits.
    PatternTooComplex,

    // --- The request (SPEC 5) ------------------------------------------------------------
    /// `request_too_large`: the request body is over 64 KiB.
    RequestTooLarge,

    // --- page_url rejections (SPEC 4); also `UrlError::code` -----------------------------
    /// `empty`: `page_url` is the empty string.
    Empty,
    /// `too_long`: `page_url`, or the path it normalizes to, is over 8,192 bytes.
    TooLong,
    /// `control_character`: a raw control character (U+0000 to U+001F, U+007F to U+009F).
    ControlCharacter,
    /// `space`: a raw space.
    Space,
    /// `backslash`: a raw `\`, which some servers read as `/`.
    Backslash,
    /// `double_slash`: a path starting with `//`, which reads as a host.
    DoubleSlash,
    /// `unsupported_scheme`: a scheme other than http and https (`javascript:`).
    UnsupportedScheme,
    /// `relative`: neither a path starting with `/` nor an absolute URL.
    Relative,
    /// `malformed_url`: an absolute URL without `//` and a host, or one the WHATWG URL parser
    /// rejects (a bad host or port).
    MalformedUrl,
    /// `malformed_escape`: `%` not followed by two hex digits.
    MalformedEscape,
    /// `forbidden_escape`: an escape decoding to `/`, `\`, `%` or a control character.
    ForbiddenEscape,
    /// `invalid_utf8`: percent-decoded bytes that are not UTF-8.
    InvalidUtf8,
    /// `ambiguous_unicode`: Unicode normalization (NFKC) would change the path's structure.
    AmbiguousUnicode,
    /// `ambiguous_dot_segment`: a dot segment that a browser and SPEC 4's steps resolve
    /// differently.
    AmbiguousDotSegment,

    // --- Lint warnings (SPEC 6) ----------------------------------------------------------
    /// `shadowed_rule`: earlier rules fire in every state in which this rule could fire.
    ShadowedRule,
    /// `catch_all_rule`: a rule without conditions, so every later rule can never fire.
    CatchAllRule,
    /// `rule_in_quiet_zone`: every page the rule targets is inside a quiet zone.
    RuleInQuietZone,
    /// `rule_excludes_all_pages`: the rule excludes every page it includes.
    RuleExcludesAllPages,
    /// `empty_pages`: `pages: []` matches no page, so the rule never fires.
    EmptyPages,
    /// `quiet_zone_covers_every_page`: a quiet zone such as `/**`, so no nudge can fire.
    QuietZoneCoversEveryPage,
    /// `duplicate_pattern`: a pattern repeated in the same list.
    DuplicatePattern,
    /// `redundant_pattern`: a pattern already covered by another of the same list.
    RedundantPattern,
    /// `pattern_query_string`: a pattern that looks like it has a query string.
    PatternQueryString,
    /// `pattern_has_scheme`: a pattern with `http://` or similar.
    PatternHasScheme,
    /// `pattern_uppercase`: upper-case letters in a case-insensitive config.
    PatternUppercase,
    /// `pattern_never_matches`: a pattern with `%`, `;`, `//` or a dot segment, which a normalized
    /// path never has.
    PatternNeverMatches,

    // --- Other ---------------------------------------------------------------------------
    /// `unknown`: an error without a more precise code; the engine does not produce it.
    Unknown,
}

impl DiagnosticCode {
    /// Every code, in the order of docs/CODES.md.
    pub const ALL: [DiagnosticCode; 48] = {
        use DiagnosticCode::*;
        [
            JsonSyntax,
            NotJson,
            UnknownField,
            MissingField,
            WrongType,
            OutOfRange,
            ConfigTooLarge,
            UnsupportedVersion,
            InvalidRuleId,
            DuplicateRuleId,
            UnknownNudgeType,
            InvalidLength,
            EmptyIntentRange,
            TooManyRules,
            TooManyPatterns,
            PatternTooLong,
            PatternNotAbsolute,
            PatternTrailingSlash,
            PatternSyntax,
            PatternTooComplex,
            RequestTooLarge,
            Empty,
            TooLong,
            ControlCharacter,
            Space,
            Backslash,
            DoubleSlash,
            UnsupportedScheme,
            Relative,
            MalformedUrl,
            MalformedEscape,
            ForbiddenEscape,
            InvalidUtf8,
            AmbiguousUnicode,
            AmbiguousDotSegment,
            ShadowedRule,
            CatchAllRule,
            RuleInQuietZone,
            RuleExcludesAllPages,
            EmptyPages,
            QuietZoneCoversEveryPage,
            DuplicatePattern,
            RedundantPattern,
            PatternQueryString,
            PatternHasScheme,
            PatternUppercase,
            PatternNeverMatches,
            Unknown,
        ]
    };

    /// The code's stable snake_case name, as serialized: `unknown_field`, `shadowed_rule`.
    pub fn as_str(self) -> &'static str {
        use DiagnosticCode::*;
        match self {
            JsonSyntax => "json_syntax",
            NotJson => "not_json",
            UnknownField => "unknown_field",
            MissingField => "missing_field",
            WrongType => "wrong_type",
            OutOfRange => "out_of_range",
            ConfigTooLarge => "config_too_large",
            UnsupportedVersion => "unsupported_version",
            InvalidRuleId => "invalid_rule_id",
            DuplicateRuleId => "duplicate_rule_id",
            UnknownNudgeType => "unknown_nudge_type",
            InvalidLength => "invalid_length",
            EmptyIntentRange => "empty_intent_range",
            TooManyRules => "too_many_rules",
            TooManyPatterns => "too_many_patterns",
            PatternTooLong => "pattern_too_long",
            PatternNotAbsolute => "pattern_not_absolute",
            PatternTrailingSlash => "pattern_trailing_slash",
            PatternSyntax => "pattern_syntax",
            PatternTooComplex => "pattern_too_complex",
            RequestTooLarge => "request_too_large",
            Empty => "empty",
            TooLong => "too_long",
            ControlCharacter => "control_character",
            Space => "space",
            Backslash => "backslash",
            DoubleSlash => "double_slash",
            UnsupportedScheme => "unsupported_scheme",
            Relative => "relative",
            MalformedUrl => "malformed_url",
            MalformedEscape => "malformed_escape",
            ForbiddenEscape => "forbidden_escape",
            InvalidUtf8 => "invalid_utf8",
            AmbiguousUnicode => "ambiguous_unicode",
            AmbiguousDotSegment => "ambiguous_dot_segment",
            ShadowedRule => "shadowed_rule",
            CatchAllRule => "catch_all_rule",
            RuleInQuietZone => "rule_in_quiet_zone",
            RuleExcludesAllPages => "rule_excludes_all_pages",
            EmptyPages => "empty_pages",
            QuietZoneCoversEveryPage => "quiet_zone_covers_every_page",
            DuplicatePattern => "duplicate_pattern",
            RedundantPattern => "redundant_pattern",
            PatternQueryString => "pattern_query_string",
            PatternHasScheme => "pattern_has_scheme",
            PatternUppercase => "pattern_uppercase",
            PatternNeverMatches => "pattern_never_matches",
            Unknown => "unknown",
        }
    }
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
