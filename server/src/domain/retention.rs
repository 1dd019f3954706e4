//! Retention per plan (API document section 8; docs/contract/read-api.md "Retention"): how far back a site's
//! sessions are visible, and when they are deleted.

use std::fmt;

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// Records older than the window plus this grace are deleted (docs/contract/read-api.md): a downgrade hides data
/// at once, an upgrade within the grace brings it back.
pub const GRACE_DAYS: u32 = 7;

/// The longest window an Enterprise site may set (`retention_days`), in days.
pub const MAX_RETENTION_DAYS: u32 = 730;

/// A site's plan (API document section 8), `starter` by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Plan {
    /// 30 days.
    #[default]
    Starter,
    /// 30 days.
    Growth,
    /// 90 days.
    Scale,
    /// 90 days, or the site's `retention_days` (90 to 730).
    Enterprise,
}

impl Plan {
    /// Every plan, in the API document's order.
    pub const ALL: [Plan; 4] = [Plan::Starter, Plan::Growth, Plan::Scale, Plan::Enterprise];

    /// The sites-file name: `starter`, `growth`, `scale`, `enterprise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Starter => "starter",
            Plan::Growth => "growth",
            Plan::Scale => "scale",
            Plan::Enterprise => "enterprise",
        }
    }

    /// The plan named `text`, exactly.
    pub fn parse(text: &str) -> Option<Plan> {
        Plan::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// The plan's window in days (API document section 8).
    pub fn default_days(self) -> u32 {
        match self {
            Plan::Starter | Plan::Growth => 30,
            Plan::Scale | Plan::Enterprise => 90,
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A site's retention: the plan's window, or an Enterprise site's own (`retention_days`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Days of sessions visible through the API, 30 to [`MAX_RETENTION_DAYS`].
    pub days: u32,
}

impl Retention {
    /// The earliest `started_at` (Unix ms) a visible session may have at `now_ms`.
    pub fn visible_from_ms(self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(i64::from(self.days) * DAY_MS)
    }

    /// Sessions that started before this (Unix ms) at `now_ms` are deleted by the purge: the
    /// window plus [`GRACE_DAYS`].
    pub fn purge_before_ms(self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(i64::from(self.days + GRACE_DAYS) * DAY_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_per_plan() {
        let days: Vec<u32> = Plan::ALL.iter().map(|p| p.default_days()).collect();
        assert_eq!(days, [30, 30, 90, 90]);
        let r = Retention { days: 30 };
        assert_eq!(r.visible_from_ms(100 * DAY_MS), 70 * DAY_MS);
        assert_eq!(r.purge_before_ms(100 * DAY_MS), 63 * DAY_MS);
        assert_eq!(Plan::parse("scale"), Some(Plan::Scale));
        assert_eq!(Plan::parse("Scale"), None);
    }
}
