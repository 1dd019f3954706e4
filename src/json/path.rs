//! JSON paths such as `rules[2].when.pages[0]`, as diagnostics name the offending value.

use std::fmt;

use smallvec::SmallVec;

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
    pub(super) fn walk(&self) -> impl Iterator<Item = (Option<&str>, usize)> + '_ {
        let steps = self.steps.iter().map(|step| match step {
            Step::Key(k) => (Some(*k), 0),
            Step::Index(n) => (None, *n),
        });
        steps.chain(self.unknown.iter().map(|k| (Some(&**k), 0)))
    }

    /// The path without its last step (the root stays the root).
    pub(super) fn parent(&self) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
