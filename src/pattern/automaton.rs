//! The matcher for the globs that neither the literal index nor the segment matcher covers
//! (escapes, classes listing `/`, alternates holding `**`, classes or groups, nested groups): a
//! Glushkov automaton over bytes, built from globset's own translation of the glob.
//!
//! globset is the parser of record (docs/contract/patterns.md): it parses the glob, applies every rule of its
//! language (`**` read by the characters around it, escapes, classes, alternates) and writes the
//! result as a regex in a small, fixed dialect (`Glob::regex`: literal bytes, `[...]` byte
//! classes, `.`, `(?:a|b)`, `*` and `?`, anchored by `^...$`, in `(?-u)` byte mode). This module
//! reads that dialect and compiles it into a position automaton (Glushkov's construction: one
//! state per byte-consuming atom, no epsilon moves), simulated with bit sets: no regex engine,
//! so none is linked into the WASM package, and compiling a glob costs microseconds. The tests
//! compare it with globset's compiled regexes on generated globs and paths (`pattern/tests.rs`,
//! and the `glob` fuzz target).

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::segment_prefixes;

/// A set of byte values, as four 64-bit words.
type ByteSet = [u64; 4];

fn byte_set_contains(set: &ByteSet, byte: u8) -> bool {
    set.get(usize::from(byte >> 6))
        .is_some_and(|word| word & (1 << (byte & 63)) != 0)
}

fn byte_set_insert_range(set: &mut ByteSet, low: u8, high: u8) {
    if low == high {
        if let Some(word) = set.get_mut(usize::from(low >> 6)) {
            *word |= 1 << (low & 63);
        }
        return;
    }
    for byte in low..=high {
        if let Some(word) = set.get_mut(usize::from(byte >> 6)) {
            *word |= 1 << (byte & 63);
        }
    }
}

/// A regex of globset's dialect, parsed.
#[derive(Debug)]
enum Node {
    /// One byte of this set.
    Byte(ByteSet),
    /// The sequence of these.
    Concat(Vec<Node>),
    /// One of these.
    Alternate(Vec<Node>),
    /// Zero or more times.
    Star(Box<Node>),
    /// Zero or one time.
    Optional(Box<Node>),
}

/// A reader of globset's regex dialect. Every step returns `None` on text outside the dialect,
/// which the caller reports; the tests check that every glob globset accepts is read.
struct RegexReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl RegexReader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, text: &[u8]) -> bool {
        let found = self
            .bytes
            .get(self.at..)
            .is_some_and(|rest| rest.starts_with(text));
        if found {
            self.at += text.len();
        }
        found
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    /// `(?-u)^ ... $`.
    fn whole(&mut self) -> Option<Node> {
        if !self.eat(b"(?-u)^") {
            return None;
        }
        let node = self.alternation()?;
        (self.eat(b"$") && self.at == self.bytes.len()).then_some(node)
    }

    fn alternation(&mut self) -> Option<Node> {
        let mut branches = vec![self.concat()?];
        while self.eat(b"|") {
            branches.push(self.concat()?);
        }
        Some(if branches.len() == 1 {
            branches.pop()?
        } else {
            Node::Alternate(branches)
        })
    }

    fn concat(&mut self) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(byte) = self.peek() {
            if matches!(byte, b'|' | b')' | b'$') {
                break;
            }
            let atom = self.atom()?;
            items.push(match self.peek() {
                Some(b'*') => {
                    self.at += 1;
                    Node::Star(Box::new(atom))
                }
                Some(b'?') => {
                    self.at += 1;
                    Node::Optional(Box::new(atom))
                }
                _ => atom,
            });
        }
        Some(Node::Concat(items))
    }

    fn atom(&mut self) -> Option<Node> {
        if self.eat(b"(?:") {
            let inner = self.alternation()?;
            return self.eat(b")").then_some(inner);
        }
        match self.next()? {
            b'[' => self.class(),
            b'.' => {
                // `.` in byte mode: any byte but `\n`.
                let mut set = [u64::MAX; 4];
                if let Some(word) = set.first_mut() {
                    *word &= !(1 << b'\n');
                }
                Some(Node::Byte(set))
            }
            b'\\' => {
                let byte = self.escaped()?;
                let mut set = [0; 4];
                byte_set_insert_range(&mut set, byte, byte);
                Some(Node::Byte(set))
            }
            b'(' | b')' | b'*' | b'?' | b'|' | b'^' | b'$' | b'+' | b'{' | b'}' | b']' => None,
            byte => {
                let mut set = [0; 4];
                byte_set_insert_range(&mut set, byte, byte);
                Some(Node::Byte(set))
            }
        }
    }

    /// The byte after a `\`: `\xhh`, or an escaped ASCII character.
    fn escaped(&mut self) -> Option<u8> {
        match self.next()? {
            b'x' => {
                let hex = |b: u8| char::from(b).to_digit(16);
                let high = hex(self.next()?)?;
                let low = hex(self.next()?)?;
                u8::try_from(high * 16 + low).ok()
            }
            byte if byte.is_ascii() => Some(byte),
            _ => None,
        }
    }

    /// One member of a class: an escaped or plain byte.
    fn class_byte(&mut self) -> Option<u8> {
        match self.next()? {
            b'\\' => self.escaped(),
            b']' | b'[' => None,
            byte => Some(byte),
        }
    }

    /// The rest of a class after `[`: `^` negates, then members and `a-b` ranges, then `]`.
    fn class(&mut self) -> Option<Node> {
        let negated = self.eat(b"^");
        let mut set = [0; 4];
        let mut first = true;
        loop {
            if !first && self.eat(b"]") {
                break;
            }
            first = false;
            let low = self.class_byte()?;
            let high = if self.peek() == Some(b'-')
                && self.bytes.get(self.at + 1).is_some_and(|&b| b != b']')
            {
                self.at += 1;
                self.class_byte()?
            } else {
                low
            };
            if high < low {
                return None;
            }
            byte_set_insert_range(&mut set, low, high);
        }
        if negated {
            for word in &mut set {
                *word = !*word;
            }
        }
        Some(Node::Byte(set))
    }
}

/// A bit set over the automaton's positions, inline for up to 128 of them.
type Positions = SmallVec<[u64; 2]>;

fn positions_insert(set: &mut [u64], p: usize) {
    if let Some(word) = set.get_mut(p / 64) {
        *word |= 1 << (p % 64);
    }
}

fn positions_union(into: &mut [u64], from: &[u64]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a |= b;
    }
}

/// The positions set in `set`, ascending.
fn positions_iter(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let bit = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(w * 64 + bit)
        })
    })
}

/// A glob compiled into a position automaton; see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct GlobAutomaton {
    /// Words per position set.
    words: usize,
    /// Each position's byte set.
    bytes: Box<[ByteSet]>,
    /// Each position's successors: `words` words per position, one flat allocation.
    follow: Box<[u64]>,
    /// The positions that can read the first byte.
    first: Positions,
    /// The positions that can read the last byte.
    last: Positions,
    /// Whether the empty text matches.
    nullable: bool,
    /// The bytes every matching text starts with (a cheap filter).
    literal_prefix: Box<[u8]>,
}

/// Glushkov's sets of one node: whether it matches the empty text, its first and last positions.
struct Sets {
    nullable: bool,
    first: Positions,
    last: Positions,
}

/// Builds the automaton's positions and follow sets from a parsed regex.
struct Builder {
    words: usize,
    bytes: Vec<ByteSet>,
    follow: Vec<u64>,
}

impl Builder {
    fn empty(&self) -> Positions {
        smallvec::smallvec![0; self.words]
    }

    /// Adds `to` to the follow sets of the positions in `from`.
    fn link(&mut self, from: &[u64], to: &[u64]) {
        let words = self.words;
        for p in positions_iter(from) {
            if let Some(follow) = self.follow.get_mut(p * words..(p + 1) * words) {
                positions_union(follow, to);
            }
        }
    }

    fn sets(&mut self, node: &Node) -> Sets {
        match node {
            Node::Byte(set) => {
                let p = self.bytes.len();
                self.bytes.push(*set);
                let mut only = self.empty();
                positions_insert(&mut only, p);
                Sets {
                    nullable: false,
                    first: only.clone(),
                    last: only,
                }
            }
            Node::Concat(items) => {
                let mut acc = Sets {
                    nullable: true,
                    first: self.empty(),
                    last: self.empty(),
                };
                for item in items {
                    let next = self.sets(item);
                    self.link(&acc.last, &next.first);
                    if acc.nullable {
                        positions_union(&mut acc.first, &next.first);
                    }
                    if next.nullable {
                        positions_union(&mut acc.last, &next.last);
                    } else {
                        acc.last = next.last;
                    }
                    acc.nullable &= next.nullable;
                }
                acc
            }
            Node::Alternate(branches) => {
                let mut acc = Sets {
                    nullable: false,
                    first: self.empty(),
                    last: self.empty(),
                };
                for branch in branches {
                    let next = self.sets(branch);
                    acc.nullable |= next.nullable;
                    positions_union(&mut acc.first, &next.first);
                    positions_union(&mut acc.last, &next.last);
                }
                acc
            }
            Node::Star(inner) => {
                let sets = self.sets(inner);
                self.link(&sets.last, &sets.first);
                Sets {
                    nullable: true,
                    ..sets
                }
            }
            Node::Optional(inner) => Sets {
                nullable: true,
                ..self.sets(inner)
            },
        }
    }
}

/// How many positions a node has.
fn count_positions(node: &Node) -> usize {
    match node {
        Node::Byte(_) => 1,
        Node::Concat(items) | Node::Alternate(items) => items.iter().map(count_positions).sum(),
        Node::Star(inner) | Node::Optional(inner) => count_positions(inner),
    }
}

/// The bytes every text matching `node` starts with, when it starts with single bytes.
fn literal_prefix(node: &Node, out: &mut Vec<u8>) {
    let Node::Concat(items) = node else {
        return;
    };
    for item in items {
        let Node::Byte(set) = item else {
            return;
        };
        match set.iter().map(|word| word.count_ones()).sum::<u32>() {
            1 => {
                let byte = set
                    .iter()
                    .enumerate()
                    .find(|&(_, &word)| word != 0)
                    .map_or(0, |(w, word)| w * 64 + word.trailing_zeros() as usize);
                out.push(u8::try_from(byte).unwrap_or(0));
            }
            _ => return,
        }
    }
}

impl GlobAutomaton {
    /// Compiles globset's regex for a glob (`Glob::regex()`, under docs/contract/patterns.md's options); `None` for
    /// text outside globset's dialect.
    pub(crate) fn from_globset_regex(regex: &str) -> Option<GlobAutomaton> {
        let node = RegexReader {
            bytes: regex.as_bytes(),
            at: 0,
        }
        .whole()?;
        let positions = count_positions(&node);
        let words = positions.div_ceil(64).max(1);
        let mut builder = Builder {
            words,
            bytes: Vec::with_capacity(positions),
            follow: vec![0; positions * words],
        };
        let sets = builder.sets(&node);
        let mut prefix = Vec::new();
        literal_prefix(&node, &mut prefix);
        Some(GlobAutomaton {
            words,
            bytes: builder.bytes.into(),
            follow: builder.follow.into(),
            first: sets.first,
            last: sets.last,
            nullable: sets.nullable,
            literal_prefix: prefix.into(),
        })
    }

    /// The index key of the automaton: its literal start up to its last whole segment (`/c1` of
    /// `/c1/{a*,[bc]}/p2`), when that is at least one segment.
    fn prefix_key(&self) -> Option<(&[u8], usize)> {
        let end = memchr::memrchr(b'/', &self.literal_prefix).filter(|&end| end > 0)?;
        let key = self.literal_prefix.get(..end)?;
        Some((key, memchr::memchr_iter(b'/', key).count()))
    }

    /// Whether the whole of `text` matches. Linear in the text's length times the number of
    /// positions active at once.
    pub(crate) fn is_match(&self, text: &[u8]) -> bool {
        if !text.starts_with(&self.literal_prefix) {
            return false;
        }
        let Some((&head, tail)) = text.split_first() else {
            return self.nullable;
        };
        let mut active = self.first.clone();
        self.keep_reading(&mut active, head);
        let mut next: Positions = smallvec::smallvec![0; self.words];
        for &byte in tail {
            if active.iter().all(|&w| w == 0) {
                return false;
            }
            next.iter_mut().for_each(|w| *w = 0);
            for p in positions_iter(&active) {
                if let Some(follow) = self.follow.get(p * self.words..(p + 1) * self.words) {
                    positions_union(&mut next, follow);
                }
            }
            self.keep_reading(&mut next, byte);
            std::mem::swap(&mut active, &mut next);
        }
        active.iter().zip(self.last.iter()).any(|(a, l)| a & l != 0)
    }

    /// Clears the positions of `set` that cannot read `byte`.
    fn keep_reading(&self, set: &mut [u64], byte: u8) {
        for (w, word) in set.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let reads = self
                    .bytes
                    .get(w * 64 + bit as usize)
                    .is_some_and(|s| byte_set_contains(s, byte));
                if !reads {
                    *word &= !(1 << bit);
                }
            }
        }
    }
}

/// Automata with their owners, indexed by the literal segments every matching path starts with;
/// the others are tried on every path (after their literal-prefix check).
#[derive(Clone, Debug)]
pub(crate) struct AutomatonIndex<O> {
    automata: Vec<(GlobAutomaton, O)>,
    /// Automata by their prefix key (see `GlobAutomaton::prefix_key`).
    by_prefix: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// The most segments of a key of `by_prefix`.
    prefix_segments: usize,
    /// Every other automaton.
    unindexed: Vec<u32>,
}

impl<O> Default for AutomatonIndex<O> {
    fn default() -> Self {
        AutomatonIndex {
            automata: Vec::new(),
            by_prefix: FxHashMap::default(),
            prefix_segments: 0,
            unindexed: Vec::new(),
        }
    }
}

impl<O: Copy> AutomatonIndex<O> {
    pub(crate) fn add(&mut self, owner: O, automaton: GlobAutomaton) {
        let Ok(id) = u32::try_from(self.automata.len()) else {
            return;
        };
        match automaton.prefix_key() {
            Some((key, segments)) => {
                self.prefix_segments = self.prefix_segments.max(segments);
                self.by_prefix.entry(key.into()).or_default().push(id);
            }
            None => self.unindexed.push(id),
        }
        self.automata.push((automaton, owner));
    }

    /// Calls `found` with the owner of every automaton matching `path`.
    pub(crate) fn for_each_match(&self, path: &str, mut found: impl FnMut(O)) {
        if self.automata.is_empty() {
            return;
        }
        let bytes = path.as_bytes();
        let mut try_each = |ids: &[u32]| {
            for id in ids {
                if let Some((automaton, owner)) = self.automata.get(*id as usize)
                    && automaton.is_match(bytes)
                {
                    found(*owner);
                }
            }
        };
        for prefix in segment_prefixes(bytes, self.prefix_segments) {
            if let Some(ids) = self.by_prefix.get(prefix) {
                try_each(ids);
            }
        }
        try_each(&self.unindexed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn automaton(glob: &str) -> GlobAutomaton {
        let built = super::super::check::glob(glob).unwrap();
        GlobAutomaton::from_globset_regex(built.regex())
            .unwrap_or_else(|| panic!("{glob}: {} not read", built.regex()))
    }

    #[test]
    fn reads_globsets_dialect() {
        let table = [
            ("/a\\*b", "/a*b", true),
            ("/a\\*b", "/axb", false),
            ("/a[/x]b", "/a/b", true),
            ("/a[!x]b", "/a/b", true),
            ("/a[!x]b", "/axb", false),
            ("/{a/**,b}", "/a/x/y", true),
            ("/{a/**,b}", "/b", true),
            ("/{a/**,b}", "/a", false),
            ("/x{,s}", "/x", true),
            ("/x{,s}", "/xs", true),
            ("**/{a,}", "/b/a", true),
            ("**/{a,}", "/b/c", false),
            ("/{a,{b,c}}[0-9]", "/c7", true),
            ("/caf[\u{e9}]", "/caf\u{e9}", false),
            ("/a?\u{e9}", "/ab\u{e9}", true),
            ("**", "/anything/at/all", true),
            ("/a-\\[x\\]", "/a-[x]", true),
        ];
        for (glob, path, want) in table {
            assert_eq!(
                automaton(glob).is_match(path.as_bytes()),
                want,
                "{glob} vs {path:?}"
            );
        }
        // A class lists bytes: `[é]` matches either byte of é's UTF-8 on its own.
        assert!(automaton("/caf[\u{e9}]").is_match(b"/caf\xc3"));
    }
}
