//! Placing a JSON path in the text it was read from: 1-based line and column (in characters),
//! by a scan of the text (one path) or an index of every position (many paths, linear).

use super::Path;

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
pub(super) struct Positions(std::collections::HashMap<String, (usize, Option<usize>)>);

impl Positions {
    pub(super) fn of(text: &str) -> Self {
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
    pub(super) fn locate(&self, text: &str, path: &Path, at_key: bool) -> Option<(u32, u32)> {
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

/// The 1-based line and column (in characters) of a byte offset of `text`, as every diagnostic
/// of this crate gives them; `None` when the offset is past the end or inside a character.
///
/// ```
/// assert_eq!(nudge_rules::line_column("ab\néé = 1", 7), Some((2, 3)));
/// ```
pub fn line_column(text: &str, byte: usize) -> Option<(u32, u32)> {
    position(text, byte)
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
        // As a JSON value, not a `String` (see `StrictVisitor::visit_map`: size).
        match serde_json::from_str::<super::StrictValue>(raw).ok()?.0 {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }
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
}
