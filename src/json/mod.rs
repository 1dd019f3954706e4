//! Strict JSON reading shared by the config and the request: duplicate keys are errors, every
//! problem is collected with its JSON path, and paths are mapped back to 1-based line and column.
//!
//! Why not `#[serde(deny_unknown_fields)]` structs: serde stops at the first error, and docs/contract/config.md
//! wants every error reported at once, each with its path. So the text is parsed with serde_json
//! into a tree (syntax errors keep serde_json's line and column; duplicate keys are rejected,
//! since a second `quiet_zones` would silently replace the first), and the tree is read field by
//! field by [`Reader`], which knows each object's allowed fields and reports the unknown ones with
//! the closest expected name.

mod document;
mod findings;
mod locate;
#[cfg(any(test, all(feature = "slim", target_arch = "wasm32")))]
mod strict_text;

pub use locate::line_column;
mod path;

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

pub(crate) use document::Document;
pub(crate) use findings::{Finding, Findings};
pub(crate) use path::Path;

use crate::code::DiagnosticCode;
use crate::error::Diagnostic;
use crate::text::group;

/// A JSON tree parsed with duplicate keys rejected. serde_json's recursion limit (128 levels)
/// still applies, so deep nesting is a clear error, not a stack overflow.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        // Keys through this visitor, not `String`'s: `String`'s visitor brings serde's
        // `invalid_type` message and with it core's float formatting, 19 KB of the WASM module
        // (docs/PERFORMANCE.md, "WASM size"). JSON keys are strings.
        while let Some(StrictValue(key)) = map.next_key::<StrictValue>()? {
            let Value::String(key) = key else {
                return Err(de::Error::custom("an object key that is not a string"));
            };
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {key:?}; each field may appear once"
                )));
            }
            let StrictValue(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses JSON text strictly (duplicate keys are errors). The error diagnostic has an empty path,
/// code `json_syntax`, and serde_json's 1-based line and column.
///
/// The number `-0` is read as the integer 0 (JSON's grammar makes it an integer; docs/contract/preview.md: "`-0`
/// is 0"), while `-0.0` stays a float: serde_json gives both as the float `-0.0`, so the text's
/// `-0` tokens are read as ` 0` (the same length: positions in messages are unchanged).
///
/// The slim WASM module for storefront pages reads with `strict_text` instead: the same trees
/// and the same refusals, without serde_json's deserializer in its `.wasm` (docs/contract/storefront.md's 90 KB).
pub(crate) fn parse(text: &str) -> Result<Value, Diagnostic> {
    #[cfg(all(feature = "slim", target_arch = "wasm32"))]
    return strict_text::parse(text);
    #[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
    parse_with_serde_json(text)
}

/// [`parse`] with serde_json, the parser of record (every build but the slim WASM module's,
/// and the reference of `strict_text`'s tests).
#[cfg_attr(all(feature = "slim", target_arch = "wasm32"), allow(dead_code))]
fn parse_with_serde_json(text: &str) -> Result<Value, Diagnostic> {
    let text_with_zeros = integer_negative_zeros_as_zero(text);
    serde_json::from_str::<StrictValue>(&text_with_zeros)
        .map(|v| v.0)
        .map_err(|e| syntax_diagnostic(text, &e))
}

/// `text` with every `-0` number token (not `-0.0`, `-0e1`, `-01`, nor the exponent of `1e-0`)
/// outside strings replaced by ` 0`; borrowed, without a scan, when the text has no `-0` at all.
fn integer_negative_zeros_as_zero(text: &str) -> Cow<'_, str> {
    if memchr::memmem::find(text.as_bytes(), b"-0").is_none() {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            // Not an exponent's sign: `1e-0` is the float 1.
            b'-' if !in_string
                && !matches!(
                    i.checked_sub(1).and_then(|j| bytes.get(j)),
                    Some(b'e' | b'E')
                )
                && bytes.get(i + 1) == Some(&b'0')
                && !matches!(bytes.get(i + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E')) =>
            {
                if let Some(minus) = bytes.get_mut(i) {
                    *minus = b' ';
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Only an ASCII byte outside strings changed, so the text is still UTF-8.
    String::from_utf8(bytes).map_or(Cow::Borrowed(text), Cow::Owned)
}

fn syntax_diagnostic(text: &str, e: &serde_json::Error) -> Diagnostic {
    // serde_json's message ends in " at line L column C"; the position goes in its own fields.
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(cut) if e.line() > 0 => full.get(..cut).unwrap_or(&full).to_owned(),
        _ => full,
    };
    let mut d = Diagnostic::error(
        DiagnosticCode::JsonSyntax,
        String::new(),
        msg!("invalid JSON: {message}"),
    );
    if e.line() > 0 {
        d.line = u32::try_from(e.line()).ok();
        d.column = u32::try_from(char_column(text, e.line(), e.column())).ok();
    }
    d
}

/// serde_json counts columns in bytes; the editor counts characters.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(line_text) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column;
    };
    let mut end = byte_column.min(line_text.len());
    while !line_text.is_char_boundary(end) {
        end -= 1;
    }
    line_text
        .get(..end)
        .map_or(byte_column, |s| s.chars().count().max(1))
}

/// A short, safe rendering of a JSON value for messages: strings quoted, long values cut.
pub(crate) fn show(value: &Value) -> String {
    let mut s = value.to_string();
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// The JSON type name of a value, for "must be an object, got Y" messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value described for "must be X, got Y" messages: `50.5`, `null`, `the string "50"`,
/// `an array`.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::String(_) => msg!("the string {}", show(value)),
        Value::Array(_) | Value::Object(_) => type_name(value).to_owned(),
        _ => show(value),
    }
}

/// Reads one JSON object's fields, reporting wrong types and unknown fields.
pub(crate) struct Reader<'a> {
    map: &'a Map<String, Value>,
    path: Path,
}

impl<'a> Reader<'a> {
    /// `value` must be an object whose keys are all in `known`; unknown keys are reported (with
    /// the closest known name as a hint). Returns `None`, with a finding, when `value` is not an
    /// object.
    pub(crate) fn object(
        value: &'a Value,
        path: &Path,
        what: &str,
        known: &[&'static str],
        findings: &mut Findings,
    ) -> Option<Self> {
        let Value::Object(map) = value else {
            findings.push(
                DiagnosticCode::WrongType,
                path,
                msg!("{what} must be an object, got {}", type_name(value)),
            );
            return None;
        };
        for key in map.keys() {
            if !known.iter().any(|k| k == key) {
                // A key far longer than any field name is no typo: no edit distance for it (that
                // would cost its length times each name's), and only its start in the message.
                let plausible = key.len() <= 64;
                let hint = plausible
                    .then(|| closest(key, known))
                    .flatten()
                    .map(|k| msg!("; did you mean \"{k}\"?"))
                    .unwrap_or_else(|| {
                        let mut list = String::new();
                        for (i, k) in known.iter().enumerate() {
                            let _ = write!(list, "{}\"{k}\"", if i > 0 { ", " } else { "" });
                        }
                        msg!("; expected one of {list}")
                    });
                let shown: String = if plausible {
                    key.clone()
                } else {
                    format!("{}...", key.chars().take(40).collect::<String>())
                };
                findings.0.push(Finding {
                    code: DiagnosticCode::UnknownField,
                    path: path.unknown(&shown),
                    at_key: true,
                    message: msg!("unknown field \"{shown}\"{hint}"),
                });
            }
        }
        Some(Reader {
            map,
            path: path.clone(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The field's value and path, if present.
    pub(crate) fn get(&self, key: &'static str) -> Option<(&'a Value, Path)> {
        self.map.get(key).map(|v| (v, self.path.key(key)))
    }

    /// A required field: reports `missing_field` when absent.
    pub(crate) fn required(
        &self,
        key: &'static str,
        findings: &mut Findings,
    ) -> Option<(&'a Value, Path)> {
        let found = self.get(key);
        if found.is_none() {
            findings.push(
                DiagnosticCode::MissingField,
                &self.path.key(key),
                msg!("missing required field \"{key}\""),
            );
        }
        found
    }
}

/// Reads an integer in `min..=max`; `what` is the field's name for the message. Floats (`50.5`,
/// `50.0`), strings (`"50"`), booleans and null are wrong types, never coerced.
pub(crate) fn integer_in(
    value: &Value,
    path: &Path,
    min: u64,
    max: u64,
    findings: &mut Findings,
) -> Option<u64> {
    // Formatted only for a finding: this runs for every threshold of every rule.
    let range = || msg!("an integer from {} to {}", group(min), group(max));
    match value {
        Value::Number(n) if n.is_u64() => {
            let v = n.as_u64().unwrap_or(u64::MAX);
            if (min..=max).contains(&v) {
                return Some(v);
            }
            findings.push(
                DiagnosticCode::OutOfRange,
                path,
                msg!("must be {}, got {}", range(), show(value)),
            );
        }
        Value::Number(n) if n.is_i64() => findings.push(
            DiagnosticCode::OutOfRange,
            path,
            msg!("must be {}, got {}", range(), show(value)),
        ),
        _ => findings.push(
            DiagnosticCode::WrongType,
            path,
            msg!("must be {}, got {}", range(), describe(value)),
        ),
    }
    None
}

/// Reads a boolean.
pub(crate) fn boolean(value: &Value, path: &Path, findings: &mut Findings) -> Option<bool> {
    if let Value::Bool(b) = value {
        return Some(*b);
    }
    findings.push(
        DiagnosticCode::WrongType,
        path,
        msg!("must be true or false, got {}", describe(value)),
    );
    None
}

/// Reads a string.
pub(crate) fn string<'a>(
    value: &'a Value,
    path: &Path,
    findings: &mut Findings,
) -> Option<&'a str> {
    if let Value::String(s) = value {
        return Some(s);
    }
    findings.push(
        DiagnosticCode::WrongType,
        path,
        msg!("must be a string, got {}", describe(value)),
    );
    None
}

/// Reads an array.
pub(crate) fn array<'a>(
    value: &'a Value,
    path: &Path,
    what: &str,
    findings: &mut Findings,
) -> Option<&'a [Value]> {
    if let Value::Array(items) = value {
        return Some(items);
    }
    findings.push(
        DiagnosticCode::WrongType,
        path,
        msg!("must be an array of {what}, got {}", describe(value)),
    );
    None
}

/// A list's size limit, for [`array_at_most`]: at most `max` items, reported with `code` as
/// "`{count} {noun}; the limit is {max}`".
pub(crate) struct ListLimit {
    pub(crate) max: usize,
    pub(crate) code: DiagnosticCode,
    pub(crate) noun: &'static str,
}

/// Reads an array (as [`array`]) whose length is held to `limit`. An array over the limit is
/// reported and still returned, so that its items' own errors are found too.
pub(crate) fn array_at_most<'a>(
    value: &'a Value,
    path: &Path,
    what: &str,
    limit: &ListLimit,
    findings: &mut Findings,
) -> Option<&'a [Value]> {
    let items = array(value, path, what, findings)?;
    if items.len() > limit.max {
        findings.push(
            limit.code,
            path,
            msg!(
                "{} {}; the limit is {}",
                group(items.len() as u64),
                limit.noun,
                group(limit.max as u64)
            ),
        );
    }
    Some(items)
}

/// Reads an array held to `limit` (as [`array_at_most`]) and each of its items with `item`, at
/// the item's path. Every item is read, so that every finding is reported; an item read as
/// `None` had findings.
pub(crate) fn items_at_most<'a, T>(
    value: &'a Value,
    path: &Path,
    what: &str,
    limit: &ListLimit,
    findings: &mut Findings,
    mut item: impl FnMut(&'a Value, &Path, &mut Findings) -> Option<T>,
) -> Option<Vec<Option<T>>> {
    let items = array_at_most(value, path, what, limit, findings)?;
    Some(
        items
            .iter()
            .enumerate()
            .map(|(i, v)| item(v, &path.index(i), findings))
            .collect(),
    )
}

/// The known name closest to a misspelled one, if it is close enough to be a likely typo: the
/// "did you mean" of every unknown-field error of this crate (`quiet_zone` gets
/// `quiet_zones`), for programs that check other files in the same words (the server's sites
/// file).
///
/// ```
/// assert_eq!(nudge_rules::suggest_name("rate_limt", &["rate_limit", "keys"]), Some("rate_limit"));
/// assert_eq!(nudge_rules::suggest_name("colour", &["rate_limit", "keys"]), None);
/// ```
pub fn suggest_name(key: &str, known: &[&'static str]) -> Option<&'static str> {
    closest(key, known)
}

/// The known name closest to a misspelled one, if it is close enough to be a likely typo. None in
/// the slim WASM module for storefront pages (docs/contract/storefront.md), whose configs the server validated and
/// whose states the runtime writes: no "did you mean", and no string-distance code in its `.wasm`.
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
fn closest(_key: &str, _known: &[&'static str]) -> Option<&'static str> {
    None
}

/// The known name closest to a misspelled one, if it is close enough to be a likely typo.
#[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
fn closest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) || k.starts_with(key) || key.starts_with(*k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_rejected_with_position() {
        let d = parse("{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
        assert_eq!(d.code, DiagnosticCode::JsonSyntax);
        assert!(d.message.contains("duplicate key \"a\""), "{}", d.message);
        assert_eq!(d.line, Some(3));
    }

    #[test]
    fn minus_zero_is_the_integer_zero_but_not_in_an_exponent() {
        assert!(parse("-0").unwrap().is_u64());
        assert!(parse("-0.0").unwrap().is_f64());
        assert_eq!(parse("1e-0").unwrap().as_f64(), Some(1.0));
        assert_eq!(parse("[2E-0]").unwrap()[0].as_f64(), Some(2.0));
    }

    #[test]
    fn long_unknown_keys_are_cut_and_not_compared() {
        let key = "a".repeat(20_000);
        let value: Value = serde_json::from_str(&format!("{{\"{key}\": 1}}")).unwrap();
        let mut f = Findings::default();
        Reader::object(&value, &Path::root(), "x", &["version"], &mut f);
        let message = &f.0[0].message;
        assert!(
            message.len() < 200 && message.contains("expected one of"),
            "{message}"
        );
    }

    #[test]
    fn closest_suggests_likely_typos_only() {
        let known = ["version", "quiet_zones", "rules", "case_sensitive"];
        assert_eq!(closest("quiet_zone", &known), Some("quiet_zones"));
        assert_eq!(closest("rule", &known), Some("rules"));
        assert_eq!(closest("banana", &known), None);
    }
}
