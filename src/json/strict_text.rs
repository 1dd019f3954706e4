//! A strict JSON text reader of our own, for the slim WASM module for storefront pages only
//! (feature `slim`, docs/contract/storefront.md): the tree [`super::parse`] gives, without serde_json's deserializer,
//! its error texts and serde's visitor machinery in the `.wasm` (docs/PERFORMANCE.md, "Bytes
//! before the first decision, step by step"). Every other build reads with serde_json, the
//! parser of record; the tests below hold this one to it on every input they try.
//!
//! The same language and the same tree as serde_json with [`super::StrictValue`]: RFC 8259
//! JSON, duplicate keys refused, at most 127 nested arrays and objects (serde_json's recursion
//! limit of 128), integers as `u64` or `i64` when they fit (`-0` as `0`, as [`super::parse`]
//! reads it), other numbers as `f64`, lone surrogates in `\u` escapes refused. What differs, by
//! design: a float's value is not correctly rounded (the engine reads no float: every number it
//! takes is an integer, and a float is a wrong type whatever its value), and an error carries a
//! code and a place, not serde_json's message.

use serde_json::{Map, Number, Value};

use crate::code::DiagnosticCode;
use crate::error::Diagnostic;

/// serde_json's recursion limit: arrays and objects nest at most 127 deep.
const MAX_DEPTH: usize = 127;

/// Parses `text` as one JSON value, strictly.
///
/// # Errors
///
/// A `json_syntax` diagnostic with an empty path and the 1-based line and column (in characters)
/// of the first character that cannot be read: bad syntax, trailing text, a duplicate key, nesting
/// deeper than 127, a number out of `f64`'s range, a lone surrogate.
pub(crate) fn parse(text: &str) -> Result<Value, Diagnostic> {
    let mut reader = TextReader {
        bytes: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    let value = reader.value().and_then(|value| {
        reader.space();
        if reader.at < reader.bytes.len() {
            Err(reader.at)
        } else {
            Ok(value)
        }
    });
    value.map_err(|at| syntax_error(text, at))
}

/// The diagnostic of a syntax error at byte `at` of `text`, placed by [`super::line_column`].
fn syntax_error(text: &str, at: usize) -> Diagnostic {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut d = Diagnostic::error(DiagnosticCode::JsonSyntax, String::new(), String::new());
    if let Some((line, column)) = super::line_column(text, at) {
        d.line = Some(line);
        d.column = Some(column);
    }
    d
}

/// A position in the text; errors are the byte offset where reading stopped.
struct TextReader<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

type Read<T> = Result<T, usize>;

impl TextReader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `word` (`true`, `false`, `null`) or fails where it differs.
    fn word(&mut self, word: &[u8], value: Value) -> Read<Value> {
        for &expected in word {
            if self.peek() != Some(expected) {
                return Err(self.at);
            }
            self.at += 1;
        }
        Ok(value)
    }

    fn value(&mut self) -> Read<Value> {
        self.space();
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.word(b"true", Value::Bool(true)),
            Some(b'f') => self.word(b"false", Value::Bool(false)),
            Some(b'n') => self.word(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.at),
        }
    }

    /// Reads an array or object one level deeper, within [`MAX_DEPTH`].
    fn nested(&mut self, read: fn(&mut Self) -> Read<Value>) -> Read<Value> {
        if self.depth >= MAX_DEPTH {
            return Err(self.at);
        }
        self.depth += 1;
        self.at += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    /// After `[`: values separated by commas, then `]`.
    fn array(&mut self) -> Read<Value> {
        let mut items = Vec::new();
        self.items(b']', |reader| {
            items.push(reader.value()?);
            Ok(())
        })?;
        Ok(Value::Array(items))
    }

    /// After `{`: `"key": value` pairs separated by commas, then `}`; a key twice is an error
    /// at the second one.
    fn object(&mut self) -> Read<Value> {
        let mut map = Map::new();
        self.items(b'}', |reader| {
            reader.space();
            let key_at = reader.at;
            if reader.peek() != Some(b'"') {
                return Err(reader.at);
            }
            let key = reader.string()?;
            if map.contains_key(&key) {
                return Err(key_at);
            }
            reader.space();
            if reader.peek() != Some(b':') {
                return Err(reader.at);
            }
            reader.at += 1;
            let value = reader.value()?;
            map.insert(key, value);
            Ok(())
        })?;
        Ok(Value::Object(map))
    }

    /// The items of an array or object, each read by `item`, separated by commas, until
    /// `close` (an empty list is `close` at once).
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Read<()>) -> Read<()> {
        self.space();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.at),
            }
        }
    }

    /// At `"`: the string's text with its escapes read; raw control characters are errors.
    fn string(&mut self) -> Read<String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            // The text is UTF-8 and the run stops only at ASCII bytes: a whole run of characters.
            out.push_str(
                std::str::from_utf8(self.bytes.get(start..self.at).unwrap_or_default())
                    .map_err(|_| start)?,
            );
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    out.push(self.escape()?);
                }
                _ => return Err(self.at),
            }
        }
    }

    /// After `\`: one escaped character; `\u` with a surrogate pair is one character.
    fn escape(&mut self) -> Read<char> {
        let at = self.at;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.at += 1;
                let unit = self.hex4()?;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                            return Err(self.at);
                        }
                        self.at += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.at);
                        }
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.at),
                    _ => unit,
                };
                return char::from_u32(code).ok_or(at);
            }
            _ => return Err(at),
        };
        self.at += 1;
        Ok(c)
    }

    /// Four hex digits as a UTF-16 code unit.
    fn hex4(&mut self) -> Read<u32> {
        let mut unit = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|b| char::from(b).to_digit(16))
                .ok_or(self.at)?;
            unit = unit * 16 + digit;
            self.at += 1;
        }
        Ok(unit)
    }

    /// `-? int frac? exp?`: an integer (no fraction or exponent) that fits `u64`, or `i64` when
    /// negative, is one; anything else is an `f64`, an error when not finite.
    fn number(&mut self) -> Read<Value> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.at),
        }
        let int_digits = self.bytes.get(int_start..self.at).unwrap_or_default();
        let mut is_float = false;
        let mut frac_digits: &[u8] = &[];
        if self.peek() == Some(b'.') {
            self.at += 1;
            let frac_start = self.at;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.at);
            }
            self.digits();
            frac_digits = self.bytes.get(frac_start..self.at).unwrap_or_default();
            is_float = true;
        }
        let mut exponent: i32 = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let exp_negative = self.peek() == Some(b'-');
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.at);
            }
            while let Some(b @ b'0'..=b'9') = self.peek() {
                exponent = exponent
                    .saturating_mul(10)
                    .saturating_add(i32::from(b - b'0'));
                self.at += 1;
            }
            if exp_negative {
                exponent = -exponent;
            }
            is_float = true;
        }
        if !is_float {
            let magnitude = int_digits.iter().try_fold(0u64, |n, &b| {
                n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            });
            match (negative, magnitude) {
                (false, Some(n)) => return Ok(Value::from(n)),
                (true, Some(0)) => return Ok(Value::from(0u64)),
                (true, Some(n)) if n <= 1 << 63 => {
                    return Ok(Value::from(0i64.wrapping_sub_unsigned(n)));
                }
                _ => {}
            }
        }
        // Not correctly rounded (see the module's comment): the first 19 significant digits
        // times a power of ten (later integer digits raise the power, later fraction digits
        // are dropped), so that 400 digits and `e-400` are 1, not infinity.
        let mut mantissa = 0.0f64;
        let mut scale = i64::from(exponent);
        for &b in int_digits {
            if mantissa < 1e18 {
                mantissa = mantissa * 10.0 + f64::from(b - b'0');
            } else {
                scale += 1;
            }
        }
        for &b in frac_digits {
            if mantissa < 1e18 {
                mantissa = mantissa * 10.0 + f64::from(b - b'0');
                scale -= 1;
            }
        }
        let scale = i32::try_from(scale.clamp(-10_000, 10_000)).unwrap_or_default();
        let magnitude = if mantissa == 0.0 {
            0.0
        } else if scale < -300 {
            mantissa * 10f64.powi(-300) * 10f64.powi(scale + 300)
        } else {
            mantissa * 10f64.powi(scale)
        };
        let value = if negative { -magnitude } else { magnitude };
        Number::from_f64(value).map(Value::Number).ok_or(start)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers agree: the same tree, or both refuse.
    fn agrees(text: &str) {
        let ours = parse(text);
        let reference = super::super::parse_with_serde_json(text);
        match (&ours, &reference) {
            (Ok(a), Ok(b)) => {
                // Floats are not correctly rounded here: compare their kind, not their value.
                assert_eq!(shape(a), shape(b), "{text:?}");
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.code, b.code, "{text:?}");
                assert!(a.line.is_some() && a.column.is_some(), "{text:?}");
            }
            _ => panic!("{text:?}: ours {ours:?}, serde_json's {reference:?}"),
        }
    }

    /// The tree with every float as `0.5`.
    fn shape(value: &Value) -> Value {
        match value {
            Value::Number(n) if n.is_f64() => Value::from(0.5),
            Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
            }
            other => other.clone(),
        }
    }

    #[test]
    fn agrees_with_serde_json_on_a_table() {
        #[rustfmt::skip]
        let cases = [
            "{}", "[]", " { } ", "null", "true", "false", "0", "-0", "-0.0", "-0e1", "01", "-01",
            "1", "-1", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
            "-9223372036854775809", "1.5", "1e2", "1E+2", "1e-2", "1e-0", "[2.5E-0,-0]", "1.",
            ".5", "+1", "1e", "1e+", "-", "--1", "1.5e400", "-1e400", "1e-400", "0.1e-310", "NaN",
            "Infinity", "\"a\"", "\"\\u00e9\\n\\t\\\"\\\\\\/\\b\\f\\r\"", "\"\\ud83d\\ude00\"",
            "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"\\x\"", "\"\\u12\"",
            "\"\\u12G4\"", "\"tab\there\"", "\"é😀\"", "\"unterminated", "[1,]", "[,1]", "[1 2]",
            "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{\"a\":1,\"a\":2}",
            "{\"a\":{\"b\":1,\"b\":2}}", "{\"a\":1,\"b\":[1,{\"c\":null}]}", "[1] x", "[1]\n", "",
            " ", "tru", "nul", "[", "{", "{\"a\":1", "\u{feff}{}", "[1,2,3]  ", "{\"\":0}",
            "[\"\\u0000\"]",
        ];
        let long_one = format!("1{}e-400", "0".repeat(400));
        let long_fraction = format!("0.{}1", "0".repeat(400));
        for case in cases
            .iter()
            .copied()
            .chain([long_one.as_str(), long_fraction.as_str()])
        {
            agrees(case);
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        for depth in [126, 127, 128, 129, 500] {
            agrees(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            agrees(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth)));
            let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            agrees(&objects);
        }
    }

    #[test]
    fn agrees_with_serde_json_on_every_config_and_request_vector() {
        let mut texts = 0;
        for file in ["tests/vectors/config.json", "tests/vectors/preview.json"] {
            let text = std::fs::read_to_string(file).unwrap();
            agrees(&text);
            let vectors: Value = serde_json::from_str(&text).unwrap();
            let cases = vectors["cases"].as_array().unwrap();
            assert!(cases.len() > 100, "{file}");
            for case in cases {
                // Each case's config and request as compact and pretty text, and the texts the
                // vectors give as they are (`config_text`: bad JSON among them).
                for (key, value) in case.as_object().unwrap() {
                    match value {
                        Value::String(text) if key.ends_with("_text") => agrees(text),
                        Value::Object(_) => {
                            agrees(&value.to_string());
                            agrees(&serde_json::to_string_pretty(value).unwrap());
                        }
                        _ => continue,
                    }
                    texts += 1;
                }
            }
        }
        assert!(texts > 500, "{texts}");
    }

    #[test]
    fn agrees_with_serde_json_on_every_cut_and_changed_byte() {
        let text = "{\"a\": [1, -2, 3.5e-1, true, null, \"x\\u0041\\n\"], \"b\": {\"c\": -0}}";
        for end in 0..=text.len() {
            if let Some(cut) = text.get(..end) {
                agrees(cut);
            }
        }
        for i in 0..text.len() {
            for b in [
                b'{', b'}', b'[', b']', b'"', b',', b':', b'0', b'-', b'e', b'\\', b' ',
            ] {
                let mut bytes = text.as_bytes().to_vec();
                bytes[i] = b;
                if let Ok(changed) = String::from_utf8(bytes) {
                    agrees(&changed);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Any text of JSON's tokens and a few strays: the same tree, or both refuse.
        #[test]
        fn agrees_with_serde_json_on_random_texts(
            parts in proptest::collection::vec(proptest::sample::select(&[
                "{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\"k\"", "\"k\":", "\\",
                "\\u", "d83d", "de00", "0", "-", "1", "9", ".", "e", "E", "+", "-0", "true",
                "null", "fals", "é", "\u{1}",
            ][..]), 0..24)
        ) {
            agrees(&parts.concat());
        }
    }

    #[test]
    fn errors_are_placed_by_line_and_character() {
        let d = parse("{\n  \"é\": 1,\n  \"é\": 2\n}").unwrap_err();
        assert_eq!((d.line, d.column), (Some(3), Some(3)));
        let d = parse("[1, 2").unwrap_err();
        assert_eq!((d.line, d.column), (Some(1), Some(6)));
    }

    #[test]
    fn integers_keep_their_kind() {
        assert!(parse("5").unwrap().is_u64());
        assert!(parse("-5").unwrap().is_i64());
        assert!(parse("-0").unwrap().is_u64());
        assert!(parse("5.0").unwrap().is_f64());
        assert_eq!(parse("0.25").unwrap().as_f64(), Some(0.25));
        assert_eq!(parse("-1.5e3").unwrap().as_f64(), Some(-1500.0));
    }
}
