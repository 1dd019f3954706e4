//! Loading a config from JSON (docs/contract/config.md, docs/contract/patterns.md): every error found, each with its JSON path and, for
//! text, 1-based line and column.

use rustc_hash::FxHashMap;

use serde_json::Value;

use super::{Cap, Conditions, Config, Nudge, NudgeType, Pattern, Rule};
use crate::code::DiagnosticCode;
use crate::error::Diagnostic;
use crate::json::{self, Findings, ListLimit, Path, Reader};
use crate::limits::{
    MAX_CAP_PER_SESSION, MAX_CONFIG_BYTES, MAX_COOLDOWN_MS, MAX_CTA_CHARS, MAX_CTA_URL_BYTES,
    MAX_HOLDOUT_PERCENT, MAX_IDLE_MS, MAX_INTENT_SCORE, MAX_MESSAGE_CHARS, MAX_NUDGES_PER_SESSION,
    MAX_PATTERNS_PER_LIST, MAX_QUIET_ZONES, MAX_RULE_ID_CHARS, MAX_RULES,
};
use crate::pattern;
use crate::text::{binary_size, group};

/// Parses and validates config text (docs/contract/config.md, docs/contract/patterns.md). Returns every error found, each with its JSON
/// path and 1-based line and column.
pub(crate) fn parse(text: &str) -> Result<Config, Vec<Diagnostic>> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(vec![too_large(text.len())]);
    }
    let value = json::parse(text).map_err(|d| vec![d])?;
    read(&value, Some(text))
}

/// Validates a config already parsed as JSON from a compact text of `text_len` bytes, which the
/// size limit counts.
pub(crate) fn parse_value(value: &Value, text_len: usize) -> Result<Config, Vec<Diagnostic>> {
    if text_len > MAX_CONFIG_BYTES {
        return Err(vec![too_large(text_len)]);
    }
    read(value, None)
}

fn too_large(len: usize) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::ConfigTooLarge,
        String::new(),
        msg!(
            "config text is {} bytes; the limit is {} ({} bytes)",
            group(len as u64),
            binary_size(MAX_CONFIG_BYTES),
            group(MAX_CONFIG_BYTES as u64)
        ),
    )
}

fn read(value: &Value, text: Option<&str>) -> Result<Config, Vec<Diagnostic>> {
    let mut findings = Findings::default();
    let config = read_config(value, &mut findings);
    match config {
        Some(config) if findings.is_empty() => Ok(config),
        _ => Err(findings.into_diagnostics(text)),
    }
}

/// `$schema` names the JSON Schema of the file for editors (VS Code); the engine only checks that
/// it is a string (README, Decisions).
const CONFIG_FIELDS: &[&str] = &[
    "$schema",
    "version",
    "case_sensitive",
    "quiet_zones",
    "rules",
    "max_nudges_per_session",
];
const RULE_FIELDS: &[&str] = &["id", "enabled", "nudge", "when", "cap", "holdout_percent"];
const NUDGE_FIELDS: &[&str] = &["type", "message", "cta", "cta_url"];
const WHEN_FIELDS: &[&str] = &[
    "min_intent_score",
    "max_intent_score",
    "min_idle_ms",
    "pages",
    "exclude_pages",
    "exit_intent",
];
const CAP_FIELDS: &[&str] = &["per_session", "cooldown_ms"];

/// An optional integer field in `1..=max` (or `min..=max`), `default` when absent.
fn small_integer(
    r: &Reader<'_>,
    key: &'static str,
    (min, max): (u8, u8),
    default: u8,
    f: &mut Findings,
) -> Option<u8> {
    match r.get(key) {
        Some((v, p)) => json::integer_in(v, &p, u64::from(min), u64::from(max), f)
            .and_then(|n| u8::try_from(n).ok()),
        None => Some(default),
    }
}

fn read_config(value: &Value, f: &mut Findings) -> Option<Config> {
    let root = Reader::object(value, &Path::root(), "the config", CONFIG_FIELDS, f)?;
    if let Some((v, path)) = root.get("$schema") {
        json::string(v, &path, f);
    }
    let version = root.required("version", f).and_then(|(v, path)| {
        if v.as_u64() == Some(1) {
            Some(1)
        } else {
            f.push(
                DiagnosticCode::UnsupportedVersion,
                &path,
                msg!(
                    "version must be 1, got {}; this engine reads config version 1",
                    json::show(v)
                ),
            );
            None
        }
    });
    let case_sensitive = match root.get("case_sensitive") {
        Some((v, path)) => json::boolean(v, &path, f),
        None => Some(false),
    };
    // Patterns are normalized according to case_sensitive; if it is broken, validate them as
    // case-insensitive so that their own errors are still reported.
    let fold = case_sensitive.unwrap_or(false);
    let quiet_zones = match root.get("quiet_zones") {
        Some((v, path)) => patterns(v, &path, &QUIET_ZONES_LIMIT, fold, f),
        None => Some(Vec::new()),
    };
    let rules = match root.get("rules") {
        Some((v, path)) => read_rules(v, &path, fold, f),
        None => Some(Vec::new()),
    };
    let max_nudges_per_session = match root.get("max_nudges_per_session") {
        Some((v, p)) => json::integer_in(v, &p, 1, u64::from(MAX_NUDGES_PER_SESSION), f)
            .and_then(|n| u8::try_from(n).ok())
            .map(Some),
        None => Some(None),
    };
    Some(Config {
        version: version?,
        case_sensitive: case_sensitive?,
        quiet_zones: quiet_zones?,
        rules: rules?,
        max_nudges_per_session: max_nudges_per_session?,
    })
}

fn read_rules(
    value: &Value,
    path: &Path,
    case_sensitive: bool,
    f: &mut Findings,
) -> Option<Vec<Rule>> {
    let limit = ListLimit {
        max: MAX_RULES,
        code: DiagnosticCode::TooManyRules,
        noun: "rules",
    };
    let items = json::array_at_most(value, path, "rules", &limit, f)?;
    let mut first_use: FxHashMap<&str, usize> = FxHashMap::default();
    let mut rules = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let rule_path = path.index(i);
        match read_rule(item, &rule_path, case_sensitive, f) {
            Some(rule) => rules.push(rule),
            None => ok = false,
        }
        if let Some(Value::String(id)) = item.get("id") {
            if let Some(first) = first_use.get(id.as_str()) {
                f.push(
                    DiagnosticCode::DuplicateRuleId,
                    &rule_path.key("id"),
                    msg!("rule id {id:?} is already used by rules[{first}]; ids must be unique"),
                );
                ok = false;
            } else {
                first_use.insert(id, i);
            }
        }
    }
    ok.then_some(rules)
}

fn read_rule(value: &Value, path: &Path, case_sensitive: bool, f: &mut Findings) -> Option<Rule> {
    let r = Reader::object(value, path, "a rule", RULE_FIELDS, f)?;
    let id = r
        .required("id", f)
        .and_then(|(v, p)| json::string(v, &p, f).map(|s| (s, p)))
        .and_then(|(s, p)| rule_id(s, &p, f));
    let enabled = match r.get("enabled") {
        Some((v, p)) => json::boolean(v, &p, f),
        None => Some(true),
    };
    let nudge = r
        .required("nudge", f)
        .and_then(|(v, p)| read_nudge(v, &p, f));
    let when = match r.get("when") {
        Some((v, p)) => read_when(v, &p, case_sensitive, f),
        None => Some(Conditions::default()),
    };
    let cap = match r.get("cap") {
        Some((v, p)) => read_cap(v, &p, f),
        None => Some(Cap::DEFAULT),
    };
    let holdout_percent = small_integer(&r, "holdout_percent", (0, MAX_HOLDOUT_PERCENT), 0, f);
    Some(Rule {
        id: id?,
        enabled: enabled?,
        nudge: nudge?,
        when: when?,
        cap: cap?,
        holdout_percent: holdout_percent?,
    })
}

/// `rule.cap` (docs/contract/caps.md): `per_session` 1 to 100 (default 1), `cooldown_ms` 0 to 31,536,000,000
/// (default 0).
fn read_cap(value: &Value, path: &Path, f: &mut Findings) -> Option<Cap> {
    let r = Reader::object(value, path, "cap", CAP_FIELDS, f)?;
    let per_session = small_integer(
        &r,
        "per_session",
        (1, MAX_CAP_PER_SESSION),
        Cap::DEFAULT.per_session,
        f,
    );
    let cooldown_ms = match r.get("cooldown_ms") {
        Some((v, p)) => json::integer_in(v, &p, 0, MAX_COOLDOWN_MS, f),
        None => Some(Cap::DEFAULT.cooldown_ms),
    };
    Some(Cap {
        per_session: per_session?,
        cooldown_ms: cooldown_ms?,
    })
}

/// `nudge.cta_url` (docs/contract/caps.md): a path starting with exactly one `/`, or an absolute `https:` URL
/// with a host; at most 2,048 bytes; no control characters, spaces or `\`. Anything else
/// (`javascript:`, `data:`, `http:`, `//host`) is an error naming the value: a link in a nudge
/// must never run script or leave the secure web.
fn cta_url(url: &str, path: &Path, f: &mut Findings) -> Option<String> {
    let shown = || {
        let mut s: String = url.chars().take(80).collect();
        if s.len() < url.len() {
            s.push_str("...");
        }
        s
    };
    let problem = if url.len() > MAX_CTA_URL_BYTES {
        Some(msg!(
            "is {} bytes long; the limit is {} bytes",
            group(url.len() as u64),
            group(MAX_CTA_URL_BYTES as u64)
        ))
    } else if let Some(c) = url
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || *c == '\\')
    {
        Some(msg!(
            "contains {c:?}; control characters, spaces and '\\' are not allowed (percent-encode them)"
        ))
    } else if url.starts_with("//") {
        Some("starts with \"//\", which a browser reads as another host; write a path starting with one '/' or an absolute https: URL".to_owned())
    } else if url.starts_with('/') {
        None
    } else if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        let host = url.get(8..).unwrap_or_default();
        let host_end = host.find(['/', '?', '#']).unwrap_or(host.len());
        (host_end == 0 || host.starts_with('@'))
            .then(|| "has no host after \"https://\"".to_owned())
    } else {
        let scheme = url.split_once(':').map(|(s, _)| s).filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        Some(match scheme {
            Some(s) => msg!(
                "has the scheme \"{s}:\"; only a path starting with '/' or an absolute https: URL is allowed"
            ),
            None => {
                "is relative; write a path starting with '/' or an absolute https: URL".to_owned()
            }
        })
    };
    match problem {
        Some(problem) => {
            f.push(
                DiagnosticCode::InvalidCtaUrl,
                path,
                msg!("cta_url {:?} {problem}", shown()),
            );
            None
        }
        None => Some(url.to_owned()),
    }
}

fn rule_id(id: &str, path: &Path, f: &mut Findings) -> Option<String> {
    let len = id.chars().count();
    if len == 0 || len > MAX_RULE_ID_CHARS {
        f.push(
            DiagnosticCode::InvalidRuleId,
            path,
            msg!("rule id {id:?} is {len} characters long; it must be 1 to {MAX_RULE_ID_CHARS} characters"),
        );
        return None;
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        f.push(
            DiagnosticCode::InvalidRuleId,
            path,
            msg!("rule id {id:?} contains {c:?}; only A-Z, a-z, 0-9, '_' and '-' are allowed"),
        );
        return None;
    }
    Some(id.to_owned())
}

fn read_nudge(value: &Value, path: &Path, f: &mut Findings) -> Option<Nudge> {
    let r = Reader::object(value, path, "nudge", NUDGE_FIELDS, f)?;
    let nudge_type = r.required("type", f).and_then(|(v, p)| {
        let s = json::string(v, &p, f)?;
        let t = NudgeType::from_wire(s);
        if t.is_none() {
            f.push(
                DiagnosticCode::UnknownNudgeType,
                &p,
                msg!(
                    "nudge type {s:?} is not one of \"chat_bubble\", \"toast\", \"exit_modal\", \"sticky_bar\""
                ),
            );
        }
        t
    });
    let text = |key: &'static str, max: usize, f: &mut Findings| {
        r.required(key, f).and_then(|(v, p)| {
            let s = json::string(v, &p, f)?;
            let len = s.chars().count();
            if len == 0 || len > max {
                f.push(
                    DiagnosticCode::InvalidLength,
                    &p,
                    msg!("{key} is {len} characters long; it must be 1 to {max} characters"),
                );
                return None;
            }
            Some(s.to_owned())
        })
    };
    let message = text("message", MAX_MESSAGE_CHARS, f);
    let cta = text("cta", MAX_CTA_CHARS, f);
    let url = match r.get("cta_url") {
        Some((v, p)) => json::string(v, &p, f)
            .and_then(|s| cta_url(s, &p, f))
            .map(Some),
        None => Some(None),
    };
    Some(Nudge {
        nudge_type: nudge_type?,
        message: message?,
        cta: cta?,
        cta_url: url?,
    })
}

fn read_when(
    value: &Value,
    path: &Path,
    case_sensitive: bool,
    f: &mut Findings,
) -> Option<Conditions> {
    let r = Reader::object(value, path, "when", WHEN_FIELDS, f)?;
    let intent = |key: &'static str, default: u8, f: &mut Findings| match r.get(key) {
        Some((v, p)) => json::integer_in(v, &p, 0, u64::from(MAX_INTENT_SCORE), f)
            .and_then(|n| u8::try_from(n).ok()),
        None => Some(default),
    };
    let min_intent_score = intent("min_intent_score", 0, f);
    let max_intent_score = intent("max_intent_score", MAX_INTENT_SCORE, f);
    if let (Some(min), Some(max)) = (min_intent_score, max_intent_score)
        && min > max
    {
        f.push(
                DiagnosticCode::EmptyIntentRange,
                &r.path().key("min_intent_score"),
                msg!("min_intent_score {min} is greater than max_intent_score {max}; no intent score can satisfy both"),
            );
    }
    let min_idle_ms = match r.get("min_idle_ms") {
        Some((v, p)) => json::integer_in(v, &p, 0, u64::from(MAX_IDLE_MS), f)
            .and_then(|n| u32::try_from(n).ok()),
        None => Some(0),
    };
    let list = |key: &'static str, f: &mut Findings| {
        r.get(key)
            .map(|(v, p)| patterns(v, &p, &PAGE_LIST_LIMIT, case_sensitive, f))
    };
    let pages = list("pages", f);
    let exclude_pages = list("exclude_pages", f).unwrap_or(Some(Vec::new()));
    let exit_intent = match r.get("exit_intent") {
        Some((v, p)) => json::boolean(v, &p, f).map(Some),
        None => Some(None),
    };
    let (min, max) = (min_intent_score?, max_intent_score?);
    if min > max {
        return None;
    }
    Some(Conditions {
        min_intent_score: min,
        max_intent_score: max,
        min_idle_ms: min_idle_ms?,
        pages: match pages {
            Some(p) => Some(p?),
            None => None,
        },
        exclude_pages: exclude_pages?,
        exit_intent: exit_intent?,
    })
}

/// Quiet zones: at most 1,000 (docs/contract/config.md).
const QUIET_ZONES_LIMIT: ListLimit = ListLimit {
    max: MAX_QUIET_ZONES,
    code: DiagnosticCode::TooManyPatterns,
    noun: "quiet zones",
};

/// One `pages` or `exclude_pages` list: at most 100 patterns (docs/contract/config.md).
const PAGE_LIST_LIMIT: ListLimit = ListLimit {
    max: MAX_PATTERNS_PER_LIST,
    code: DiagnosticCode::TooManyPatterns,
    noun: "patterns",
};

fn patterns(
    value: &Value,
    path: &Path,
    limit: &ListLimit,
    case_sensitive: bool,
    f: &mut Findings,
) -> Option<Vec<Pattern>> {
    let items = json::array_at_most(value, path, "pattern strings", limit, f)?;
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let p = path.index(i);
        let Some(text) = json::string(item, &p, f) else {
            ok = false;
            continue;
        };
        match pattern::check(text, case_sensitive) {
            Ok(normalized) => out.push(Pattern::new(text.to_owned(), normalized)),
            Err(problem) => {
                f.push(problem.code, &p, problem.message);
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<(String, DiagnosticCode)> {
        parse(text)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|d| (d.path, d.code))
            .collect()
    }

    #[test]
    fn defaults_are_filled_in() {
        let c = parse(r#"{"version":1,"rules":[{"id":"a","nudge":{"type":"toast","message":"m","cta":"c"}}]}"#)
            .unwrap();
        assert!(!c.case_sensitive);
        assert!(c.quiet_zones.is_empty());
        let r = &c.rules[0];
        assert!(r.enabled);
        assert_eq!(r.when, Conditions::default());
    }

    #[test]
    fn every_error_is_reported_with_its_path() {
        let text = r#"{
  "version": 2,
  "quiet_zone": ["/checkout/**"],
  "rules": [
    {"id": "a b", "nudge": {"type": "popup", "message": "", "cta": "c"},
     "when": {"min_intent_score": 80, "max_intent_score": 20, "pages": ["/products/"]}},
    {"id": "ok", "nudge": {"type": "toast", "message": "m"}, "when": {"min_idle": 5}}
  ]
}"#;
        let got = errors(text);
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        for want in [
            "version",
            "quiet_zone",
            "rules[0].id",
            "rules[0].nudge.type",
            "rules[0].nudge.message",
            "rules[0].when.min_intent_score",
            "rules[0].when.pages[0]",
            "rules[1].nudge.cta",
            "rules[1].when.min_idle",
        ] {
            assert!(paths.contains(&want), "{want} missing from {paths:?}");
        }
        let d = parse(text).unwrap_err();
        let unknown = d.iter().find(|d| d.path == "quiet_zone").unwrap();
        assert!(unknown.message.contains("did you mean \"quiet_zones\""));
        assert_eq!((unknown.line, unknown.column), (Some(3), Some(3)));
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let d = parse("{\n  \"version\": 1,\n  \"rules\": [,]\n}").unwrap_err();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, DiagnosticCode::JsonSyntax);
        assert_eq!(d[0].path, "");
        assert_eq!(d[0].line, Some(3));
    }

    #[test]
    fn duplicate_ids() {
        let rule = r#"{"id":"x","nudge":{"type":"toast","message":"m","cta":"c"}}"#;
        let text = format!(r#"{{"version":1,"rules":[{rule},{rule}]}}"#);
        assert_eq!(
            errors(&text),
            vec![("rules[1].id".to_owned(), DiagnosticCode::DuplicateRuleId)]
        );
    }

    #[test]
    fn lengths_count_characters() {
        let rule = |m: &str| {
            format!(
                r#"{{"version":1,"rules":[{{"id":"x","nudge":{{"type":"toast","message":"{m}","cta":"c"}}}}]}}"#
            )
        };
        assert!(parse(&rule(&"é".repeat(500))).is_ok());
        assert_eq!(
            errors(&rule(&"é".repeat(501))),
            vec![(
                "rules[0].nudge.message".to_owned(),
                DiagnosticCode::InvalidLength
            )]
        );
    }
}
