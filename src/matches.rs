//! Match bookkeeping: which rule patterns match a path, as sorted [`Owner`] records, and the
//! per-thread scratch buffers that keep a preview from allocating.

use std::cell::RefCell;

/// Which list of a rule a page pattern belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    /// `when.pages`.
    Pages = 0,
    /// `when.exclude_pages`.
    ExcludePages = 1,
}

impl List {
    /// The list's field name: `pages` or `exclude_pages`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            List::Pages => "pages",
            List::ExcludePages => "exclude_pages",
        }
    }
}

/// The owner of a pattern: a quiet zone (its index in `quiet_zones`), or a rule, one of its two
/// lists and the pattern's index in that list. Packed into one `u32` so that sorting owners puts
/// the quiet zones first, in config order, then the rules' patterns by rule, list and pattern
/// index: `quiet zone` is the zone's index; a rule's pattern is `1 << 31 | rule << 8 | list << 7 |
/// pattern`. docs/contract/config.md's limits (1,000 quiet zones and rules, 100 patterns a list) fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Owner(u32);

impl Owner {
    const LIST_SHIFT: u32 = 7;
    const RULE_SHIFT: u32 = 8;
    const PATTERN_MASK: u32 = (1 << Self::LIST_SHIFT) - 1;
    const RULE_PATTERN: u32 = 1 << 31;
    const RULE_MASK: u32 = (1 << (31 - Self::RULE_SHIFT)) - 1;

    /// The owner of quiet zone `index`.
    pub(crate) fn quiet_zone(index: usize) -> Owner {
        Owner(u32::try_from(index).unwrap_or(Self::RULE_PATTERN - 1) & (Self::RULE_PATTERN - 1))
    }

    /// The quiet zone's index, when this owner is a quiet zone.
    pub(crate) fn quiet_zone_index(self) -> Option<usize> {
        (self.0 & Self::RULE_PATTERN == 0).then_some(self.0 as usize)
    }

    /// The owner of pattern `pattern` of `rule`'s `list`.
    pub(crate) fn new(rule: usize, list: List, pattern: usize) -> Owner {
        let rule = u32::try_from(rule).unwrap_or(Self::RULE_MASK) & Self::RULE_MASK;
        let pattern = u32::try_from(pattern).unwrap_or(0) & Self::PATTERN_MASK;
        Owner(
            Self::RULE_PATTERN
                | (rule << Self::RULE_SHIFT)
                | ((list as u32) << Self::LIST_SHIFT)
                | pattern,
        )
    }

    /// The rule's index in config order.
    pub(crate) fn rule(self) -> usize {
        ((self.0 >> Self::RULE_SHIFT) & Self::RULE_MASK) as usize
    }

    /// Which list of the rule.
    pub(crate) fn list(self) -> List {
        if (self.0 >> Self::LIST_SHIFT) & 1 == 0 {
            List::Pages
        } else {
            List::ExcludePages
        }
    }

    /// The pattern's index in its list.
    pub(crate) fn pattern(self) -> usize {
        (self.0 & Self::PATTERN_MASK) as usize
    }

    /// True when both owners are the same rule's same list.
    fn same_list(self, other: Owner) -> bool {
        self.0 >> Self::LIST_SHIFT == other.0 >> Self::LIST_SHIFT
    }
}

/// Which rule patterns match one path: the sorted owners of every matching rule pattern.
pub(crate) struct PageMatches<'a> {
    owners: &'a [Owner],
}

impl<'a> PageMatches<'a> {
    /// The rule patterns among sorted, deduplicated owners (the quiet zones, sorted first, left
    /// out).
    pub(crate) fn new(owners: &'a [Owner]) -> Self {
        let start = owners.partition_point(|o| o.quiet_zone_index().is_some());
        PageMatches {
            owners: owners.get(start..).unwrap_or_default(),
        }
    }

    /// Every matching pattern's owner, sorted.
    pub(crate) fn all(&self) -> impl Iterator<Item = Owner> + 'a + use<'a> {
        self.owners.iter().copied()
    }

    /// The matching `pages` patterns as `(rule, pattern)`, in config order (a rule comes once per
    /// matching pattern, its first matching pattern first).
    pub(crate) fn pages_matches(&self) -> impl Iterator<Item = (usize, usize)> + 'a + use<'a> {
        self.all()
            .filter(|o| o.list() == List::Pages)
            .map(|o| (o.rule(), o.pattern()))
    }

    /// The index of the first pattern of `rule`'s `list` that matches, if any.
    pub(crate) fn first(&self, rule: usize, list: List) -> Option<usize> {
        let start = Owner::new(rule, list, 0);
        let i = self.owners.partition_point(|&o| o < start);
        let o = *self.owners.get(i)?;
        o.same_list(start).then_some(o.pattern())
    }

    /// True when some pattern of `rule`'s `list` matches.
    pub(crate) fn any(&self, rule: usize, list: List) -> bool {
        self.first(rule, list).is_some()
    }
}

/// Per-thread scratch buffers for matching, so that a preview does not allocate.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The owners of the page patterns matching the path being evaluated.
    pub(crate) owners: Vec<Owner>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers (fresh ones when they are already in use, as in a
/// nested call).
pub(crate) fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_round_trip_and_sort_by_rule_list_pattern() {
        for (rule, list, pattern) in [
            (0, List::Pages, 0),
            (999, List::ExcludePages, 99),
            (5, List::ExcludePages, 127),
        ] {
            let o = Owner::new(rule, list, pattern);
            assert_eq!((o.rule(), o.list(), o.pattern()), (rule, list, pattern));
        }
        let mut owners = vec![
            Owner::new(2, List::Pages, 0),
            Owner::new(1, List::ExcludePages, 0),
            Owner::new(1, List::Pages, 3),
        ];
        owners.sort();
        let order: Vec<_> = owners
            .iter()
            .map(|o| (o.rule(), o.list(), o.pattern()))
            .collect();
        assert_eq!(
            order,
            [
                (1, List::Pages, 3),
                (1, List::ExcludePages, 0),
                (2, List::Pages, 0)
            ]
        );
        let m = PageMatches::new(&owners);
        assert_eq!(m.first(1, List::Pages), Some(3));
        assert_eq!(m.first(1, List::ExcludePages), Some(0));
        assert_eq!(m.first(2, List::ExcludePages), None);
        assert_eq!(
            m.pages_matches().map(|(r, _)| r).collect::<Vec<_>>(),
            [1, 2]
        );
    }
}
