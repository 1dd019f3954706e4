//! Strict JSON reading shared by the config and the request: duplicate keys are errors, every
//! problem is collected with its JSON path, and paths are mapped back to 1-based line and column.
//!
//! Why not `#[serde(deny_unknown_fields)]` structs: serde stops at the first error, and SPEC 2
//! wants every error reported at once, each with its path. So the text is parsed with serde_json
//! into a tree (syntax errors keep serde_json's line and column; duplicate keys are rejected,
//! since a second `quiet_zones` would silently replace the first), and the tree is read field by
//! field by [`Reader`], which knows each object's allowed fields and reports the unknown ones with
//! the closest expected name.

use std::fmt::{self, Write as _};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use crate::code::DiagnosticCode;
use crate::error::{Diagnostic, Severity};
use crate::text::group;

/// One step of a JSON path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Key(&'static str),
    Index(usize),
}

/// Steps held inline by a [`Path`]: the deepest path of a config is `rules[2].when.pages[0]`
/// (5 steps), so paths are built and copied without allocating.
const INLINE_STEPS: usize = 6;

/// A JSON path such as `rules[2].when.pages[0]`; the empty path is the whole document. A path
/// may end in a key that is not one of ours (an unknown field), held apart so that the steps
/// stay `Copy`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Path {
    steps: SmallVec<[Step; INLINE_STEPS]>,
    unknown: Option<Box<str>>,
}

impl Clone for Path {
    fn clone(&self) -> Self {
        Path {
            steps: SmallVec::from_slice(&self.steps),
            unknown: self.unknown.clone(),
        }
    }
}

impl Path {
    pub(crate) fn root() -> Self {
        Path::default()
    }

    fn with(&self, step: Step) -> Self {
        let mut steps = SmallVec::from_slice(&self.steps);
        steps.push(step);
        Path {
            steps,
            unknown: None,
        }
    }

    pub(crate) fn key(&self, key: &'static str) -> Self {
        self.with(Step::Key(key))
    }

    pub(crate) fn index(&self, index: usize) -> Self {
        self.with(Step::Index(index))
    }

    /// This path plus an unknown field `key` (the last step; nothing is read below it).
    pub(crate) fn unknown(&self, key: &str) -> Self {
        Path {
            steps: SmallVec::from_slice(&self.steps),
            unknown: Some(key.into()),
        }
    }

    /// Each step's key (`None` for an index), the unknown field last.
    fn walk(&self) -> impl Iterator<Item = (Option<&str>, usize)> + '_ {
        let steps = self.steps.iter().map(|step| match step {
            Step::Key(k) => (Some(*k), 0),
            Step::Index(n) => (None, *n),
        });
        steps.chain(self.unknown.iter().map(|k| (Some(&**k), 0)))
    }

    /// The path without its last step (the root stays the root).
    fn parent(&self) -> Self {
        let mut parent = self.clone();
        if parent.unknown.take().is_none() {
            parent.steps.pop();
        }
        parent
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, index)) in self.walk().enumerate() {
            match key {
                Some(k) if i == 0 => f.write_str(k)?,
                Some(k) => write!(f, ".{k}")?,
                None => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A diagnostic not yet placed in the text: the path plus whether it points at the key (unknown
/// field) or at the value.
pub(crate) struct Finding {
    pub(crate) code: DiagnosticCode,
    pub(crate) path: Path,
    pub(crate) at_key: bool,
    pub(crate) message: String,
}

/// Collects findings while a tree is read.
#[derive(Default)]
pub(crate) struct Findings(pub(crate) Vec<Finding>);

impl Findings {
    pub(crate) fn push(&mut self, code: DiagnosticCode, path: &Path, message: String) {
        self.0.push(Finding {
            code,
            path: path.clone(),
            at_key: false,
            message,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Turns the findings into error diagnostics, with line and column looked up in `text` when
    /// the tree came from text, in document order.
    pub(crate) fn into_diagnostics(self, text: Option<&str>) -> Vec<Diagnostic> {
        self.into_placed(text, Severity::Error)
    }

    /// As [`Findings::into_diagnostics`], as warnings.
    pub(crate) fn into_warnings(self, text: Option<&str>) -> Vec<Diagnostic> {
        self.into_placed(text, Severity::Warning)
    }

    fn into_placed(self, text: Option<&str>, severity: Severity) -> Vec<Diagnostic> {
        // Few findings: scan for each; many: index every position in one pass (linear).
        let positions = text.filter(|_| self.0.len() > 8).map(Positions::of);
        let mut out: Vec<Diagnostic> = self
            .0
            .into_iter()
            .map(|f| {
                let mut d = Diagnostic::error(f.code, f.path.to_string(), f.message);
                d.severity = severity;
                let place = match (&positions, text) {
                    (Some(index), Some(t)) => index.locate(t, &f.path, f.at_key),
                    (None, Some(t)) => locate(t, &f.path, f.at_key),
                    _ => None,
                };
                if let Some((line, column)) = place {
                    d.line = Some(line);
                    d.column = Some(column);
                }
                d
            })
            .collect();
        // Stable: findings without a place keep their order, after the placed ones.
        out.sort_by_key(|d| (d.line.is_none(), d.line, d.column));
        out
    }
}

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
        while let Some(key) = map.next_key::<String>()? {
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
pub(crate) fn parse(text: &str) -> Result<Value, Diagnostic> {
    serde_json::from_str::<StrictValue>(text)
        .map(|v| v.0)
        .map_err(|e| syntax_diagnostic(text, &e))
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
        format!("invalid JSON: {message}"),
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
        Value::String(_) => format!("the string {}", show(value)),
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
                format!("{what} must be an object, got {}", type_name(value)),
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
                    .map(|k| format!("; did you mean \"{k}\"?"))
                    .unwrap_or_else(|| {
                        let mut list = String::new();
                        for (i, k) in known.iter().enumerate() {
                            let _ = write!(list, "{}\"{k}\"", if i > 0 { ", " } else { "" });
                        }
                        format!("; expected one of {list}")
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
                    message: format!("unknown field \"{shown}\"{hint}"),
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
                format!("missing required field \"{key}\""),
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
    let range = || format!("an integer from {} to {}", group(min), group(max));
    match value {
        Value::Number(n) if n.is_u64() => {
            let v = n.as_u64().unwrap_or(u64::MAX);
            if (min..=max).contains(&v) {
                return Some(v);
            }
            findings.push(
                DiagnosticCode::OutOfRange,
                path,
                format!("must be {}, got {}", range(), show(value)),
            );
        }
        Value::Number(n) if n.is_i64() => findings.push(
            DiagnosticCode::OutOfRange,
            path,
            format!("must be {}, got {}", range(), show(value)),
        ),
        _ => findings.push(
            DiagnosticCode::WrongType,
            path,
            format!("must be {}, got {}", range(), describe(value)),
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
        format!("must be true or false, got {}", describe(value)),
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
        format!("must be a string, got {}", describe(value)),
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
        format!("must be an array of {what}, got {}", describe(value)),
    );
    None
}

/// The known name closest to a misspelled one, if it is close enough to be a likely typo.
fn closest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) || k.starts_with(key) || key.starts_with(*k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Finds where the value (or, with `at_key`, the key) at `path` starts in `text`, which must be
/// JSON that [`parse`] accepted. Returns 1-based (line, column in characters).
pub(crate) fn locate(text: &str, path: &Path, at_key: bool) -> Option<(u32, u32)> {
    let mut scan = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    scan.ws();
    let count = path.walk().count();
    for (i, (key, index)) in path.walk().enumerate() {
        let last = i + 1 == count;
        match key {
            Some(want) => {
                if scan.peek()? != b'{' {
                    // A missing field: point at the object that lacks it.
                    return position(text, scan.pos);
                }
                scan.pos += 1;
                let mut found = false;
                loop {
                    scan.ws();
                    if scan.peek()? == b'}' {
                        break;
                    }
                    let key_start = scan.pos;
                    let key = scan.string()?;
                    scan.ws();
                    scan.expect(b':')?;
                    scan.ws();
                    if key == want {
                        if last && at_key {
                            return position(text, key_start);
                        }
                        found = true;
                        break;
                    }
                    scan.skip_value()?;
                    scan.ws();
                    if scan.peek()? == b',' {
                        scan.pos += 1;
                    }
                }
                if !found {
                    // Missing field: the object's opening brace is the best place to show.
                    return position(text, object_start(text, scan.pos));
                }
            }
            None => {
                scan.expect(b'[')?;
                for _ in 0..index {
                    scan.ws();
                    scan.skip_value()?;
                    scan.ws();
                    scan.expect(b',')?;
                }
                scan.ws();
            }
        }
    }
    position(text, scan.pos)
}

/// The byte offset of every value (and of its key, for object members) in valid JSON text, by
/// rendered path: one pass for many diagnostics instead of one scan each.
struct Positions(std::collections::HashMap<String, (usize, Option<usize>)>);

impl Positions {
    fn of(text: &str) -> Self {
        let mut scan = Scanner {
            bytes: text.as_bytes(),
            pos: 0,
        };
        let mut map = std::collections::HashMap::new();
        scan.ws();
        Positions::walk(&mut scan, &mut String::new(), None, &mut map);
        Positions(map)
    }

    /// Records the value at the scanner and everything inside it; `None` on malformed text.
    fn walk(
        scan: &mut Scanner<'_>,
        path: &mut String,
        key_at: Option<usize>,
        map: &mut std::collections::HashMap<String, (usize, Option<usize>)>,
    ) -> Option<()> {
        map.insert(path.clone(), (scan.pos, key_at));
        let base = path.len();
        match scan.peek()? {
            b'{' => {
                scan.pos += 1;
                loop {
                    scan.ws();
                    if scan.peek()? == b'}' {
                        scan.pos += 1;
                        return Some(());
                    }
                    let key_start = scan.pos;
                    let key = scan.string()?;
                    scan.ws();
                    scan.expect(b':')?;
                    scan.ws();
                    if base > 0 {
                        path.push('.');
                    }
                    path.push_str(&key);
                    Positions::walk(scan, path, Some(key_start), map)?;
                    path.truncate(base);
                    scan.ws();
                    if scan.peek()? == b',' {
                        scan.pos += 1;
                    }
                }
            }
            b'[' => {
                scan.pos += 1;
                let mut i = 0usize;
                loop {
                    scan.ws();
                    if scan.peek()? == b']' {
                        scan.pos += 1;
                        return Some(());
                    }
                    path.push_str(&format!("[{i}]"));
                    Positions::walk(scan, path, None, map)?;
                    path.truncate(base);
                    i += 1;
                    scan.ws();
                    if scan.peek()? == b',' {
                        scan.pos += 1;
                    }
                }
            }
            _ => scan.skip_value(),
        }
    }

    /// As [`locate`], from the index: a missing field is placed at its object.
    fn locate(&self, text: &str, path: &Path, at_key: bool) -> Option<(u32, u32)> {
        let found = self.0.get(&path.to_string()).and_then(|&(value, key)| {
            if at_key {
                key.or(Some(value))
            } else {
                Some(value)
            }
        });
        let at = found.or_else(|| {
            self.0
                .get(&path.parent().to_string())
                .map(|&(value, _)| value)
        })?;
        position(text, at)
    }
}

/// Walks back from a closing brace to its object's opening brace (cheap: only used for missing
/// fields, whose object is small).
fn object_start(text: &str, close: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = close;
    let mut in_string = false;
    while i > 0 {
        i -= 1;
        let b = bytes.get(i).copied().unwrap_or(b' ');
        if in_string {
            if b == b'"' && !escaped(bytes, i) {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'}' | b']' => depth += 1,
            b'{' | b'[' if depth == 0 => return i,
            b'{' | b'[' => depth -= 1,
            _ => {}
        }
    }
    0
}

fn escaped(bytes: &[u8], quote: usize) -> bool {
    let mut n = 0;
    let mut i = quote;
    while i > 0 && bytes.get(i - 1) == Some(&b'\\') {
        n += 1;
        i -= 1;
    }
    n % 2 == 1
}

fn position(text: &str, byte: usize) -> Option<(u32, u32)> {
    let before = text.get(..byte)?;
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..)?.chars().count() + 1;
    Some((u32::try_from(line).ok()?, u32::try_from(column).ok()?))
}

/// A forward scanner over JSON text already known to be valid.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }

    /// Reads a string token and returns its decoded value.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_string()?;
        let raw = std::str::from_utf8(self.bytes.get(start..self.pos)?).ok()?;
        serde_json::from_str(raw).ok()
    }

    fn skip_string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
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
    fn paths_render_like_the_spec() {
        let p = Path::root()
            .key("rules")
            .index(2)
            .key("when")
            .key("pages")
            .index(0);
        assert_eq!(p.to_string(), "rules[2].when.pages[0]");
        assert_eq!(Path::root().unknown("quiet_zone").to_string(), "quiet_zone");
    }

    #[test]
    fn locate_finds_values_keys_and_missing_fields() {
        let text = "{\n  \"rules\": [\n    {\"id\": \"a\"},\n    {\"id\": \"b\", \"x\": [1, {\"y\": \"\\\"}\"}]}\n  ]\n}";
        let rules = Path::root().key("rules");
        assert_eq!(
            locate(text, &rules.index(0).key("id"), false),
            Some((3, 12))
        );
        assert_eq!(
            locate(text, &rules.index(1).unknown("x"), true),
            Some((4, 17))
        );
        assert_eq!(
            locate(text, &rules.index(1).key("nudge"), false),
            Some((4, 5))
        );
        assert_eq!(locate(text, &Path::root(), false), Some((1, 1)));
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
    fn the_position_index_agrees_with_locate() {
        let text = "{\n  \"rules\": [\n    {\"id\": \"a\"},\n    {\"id\": \"b\", \"x\": [1, {\"y\": \"\\\"}\"}]}\n  ]\n}";
        let index = Positions::of(text);
        let rules = Path::root().key("rules");
        for (path, at_key) in [
            (rules.index(0).key("id"), false),
            (rules.index(1).unknown("x"), true),
            (rules.index(1).key("nudge"), false),
            (rules.index(1).key("x").index(1), false),
            (Path::root(), false),
        ] {
            assert_eq!(
                index.locate(text, &path, at_key),
                locate(text, &path, at_key),
                "{path}"
            );
        }
    }

    #[test]
    fn closest_suggests_likely_typos_only() {
        let known = ["version", "quiet_zones", "rules", "case_sensitive"];
        assert_eq!(closest("quiet_zone", &known), Some("quiet_zones"));
        assert_eq!(closest("rule", &known), Some("rules"));
        assert_eq!(closest("banana", &known), None);
    }
}
