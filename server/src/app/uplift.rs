//! The statistics of the uplift report (docs/contract/caps.md "Measured uplift"): per rule, the treated arm
//! (sessions shown its nudge) against the control arm (sessions held out from it).
//!
//! - each arm's conversion rate with its Wilson score interval ([`wilson`], z = [`Z95`]);
//! - the absolute uplift, treated rate minus control rate, with Newcombe's hybrid score
//!   interval ([`newcombe`], method 10 of Newcombe 1998): `low = d - sqrt((p1 - l1)^2 + (u2 -
//!   p2)^2)`, `high = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)`;
//! - the relative uplift, the absolute over the control rate (none when that rate is 0);
//! - the two-sided p-value of the pooled two-proportion z-test ([`pooled_z_p_value`]), through
//!   `statrs`' standard normal CDF;
//! - `enough_data`: each arm has at least [`MIN_SESSIONS`] sessions and [`MIN_CONVERSIONS`]
//!   conversions.
//!
//! An arm without sessions has no rate: then the rate, the uplift, its interval, the relative
//! uplift and the p-value are all absent (JSON `null`), never NaN. Rates, the uplift and its
//! bounds and the relative uplift are rounded to 6 decimals ([`round6`]); the p-value is not
//! (a p-value of 1e-9 is not 0).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// The two-sided 95 % quantile of the standard normal distribution used by docs/contract/caps.md.
pub const Z95: f64 = 1.959964;

/// Sessions each arm needs before the report says `enough_data`.
pub const MIN_SESSIONS: i64 = 100;

/// Conversions each arm needs before the report says `enough_data`.
pub const MIN_CONVERSIONS: i64 = 5;

/// One arm's counts: sessions exposed, and of them those that converted after the exposure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Arm {
    /// Sessions exposed in this arm.
    pub sessions: i64,
    /// Of them, those with a PURCHASE at or after their exposure.
    pub converted: i64,
}

impl Arm {
    /// The conversion rate, `None` without sessions.
    pub fn rate(self) -> Option<f64> {
        if self.sessions <= 0 {
            return None;
        }
        finite(self.converted as f64 / self.sessions as f64)
    }
}

/// `Some(x)` when `x` is finite.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `x` rounded to 6 decimals (half away from zero); `-0` is written `0`.
pub fn round6(x: f64) -> f64 {
    let rounded = (x * 1e6).round() / 1e6;
    if rounded == 0.0 { 0.0 } else { rounded }
}

/// The Wilson score interval of `converted` of `sessions` at `z`, within `[0, 1]`; `None`
/// without sessions (or counts that are not a proportion).
pub fn wilson(converted: i64, sessions: i64, z: f64) -> Option<(f64, f64)> {
    if sessions <= 0 || converted < 0 || converted > sessions {
        return None;
    }
    let n = sessions as f64;
    let p = converted as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    let low = if converted == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if converted == sessions {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some((finite(low)?, finite(high)?))
}

/// Newcombe's hybrid score interval (method 10 of Newcombe 1998) for `p1 - p2`, the rate of
/// `treated` minus that of `control`, from each arm's Wilson interval at `z`; `None` when an
/// arm has no sessions.
pub fn newcombe(treated: Arm, control: Arm, z: f64) -> Option<(f64, f64)> {
    let (p1, p2) = (treated.rate()?, control.rate()?);
    let (l1, u1) = wilson(treated.converted, treated.sessions, z)?;
    let (l2, u2) = wilson(control.converted, control.sessions, z)?;
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Some((finite(low)?, finite(high)?))
}

/// The two-sided p-value of the pooled two-proportion z-test of `treated` against `control`;
/// `None` when an arm has no sessions. When no session or every session converted in both
/// arms, the rates are equal and certain: 1.
pub fn pooled_z_p_value(treated: Arm, control: Arm) -> Option<f64> {
    let (p1, p2) = (treated.rate()?, control.rate()?);
    let (n1, n2) = (treated.sessions as f64, control.sessions as f64);
    let pooled = (treated.converted + control.converted) as f64 / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    if se.is_nan() || se <= 0.0 {
        return Some(1.0);
    }
    let z = (p1 - p2).abs() / se;
    let normal = Normal::standard();
    finite((2.0 * (1.0 - normal.cdf(z))).clamp(0.0, 1.0))
}

/// One rule's line of the report (docs/contract/caps.md), as the API writes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleUplift {
    /// The rule.
    pub rule_id: String,
    /// Sessions shown the rule's nudge.
    pub treated: Arm,
    /// Sessions held out from it.
    pub control: Arm,
    /// Each arm's conversion rate.
    pub conversion_rate: Rates,
    /// Treated rate minus control rate, its interval, and over the control rate.
    pub uplift: Uplift,
    /// The pooled two-proportion z-test, two-sided.
    pub p_value: Option<f64>,
    /// Each arm has [`MIN_SESSIONS`] sessions and [`MIN_CONVERSIONS`] conversions.
    pub enough_data: bool,
}

/// `conversion_rate` of [`RuleUplift`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Of the treated arm; `None` without sessions.
    pub treated: Option<f64>,
    /// Of the control arm; `None` without sessions.
    pub control: Option<f64>,
}

/// `uplift` of [`RuleUplift`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Uplift {
    /// Treated rate minus control rate.
    pub absolute: Option<f64>,
    /// Newcombe's hybrid score 95 % interval of `absolute`, `[low, high]`.
    pub ci95: Option<[f64; 2]>,
    /// `absolute` over the control rate; `None` when that rate is 0 or absent.
    pub relative: Option<f64>,
}

/// The report's lines, by `rule_id` ascending (byte order), from the store's counts of each
/// rule's arms.
pub fn uplift_of(counts: Vec<crate::store::ArmCount>) -> Vec<RuleUplift> {
    // rule id -> (treated, control)
    let mut arms: std::collections::BTreeMap<String, (Arm, Arm)> = Default::default();
    for count in counts {
        let entry = arms.entry(count.rule_id).or_default();
        let arm = if count.treated {
            &mut entry.0
        } else {
            &mut entry.1
        };
        arm.sessions += count.sessions;
        arm.converted += count.converted;
    }
    arms.iter()
        .map(|(rule_id, &(treated, control))| rule_uplift(rule_id, treated, control))
        .collect()
}

/// The report's line for `rule_id` from its arms' counts.
pub fn rule_uplift(rule_id: &str, treated: Arm, control: Arm) -> RuleUplift {
    let (p1, p2) = (treated.rate(), control.rate());
    let absolute = p1.zip(p2).map(|(p1, p2)| p1 - p2);
    let relative = absolute
        .zip(p2)
        .filter(|&(_, p2)| p2 > 0.0)
        .and_then(|(d, p2)| finite(d / p2));
    let enough = |arm: Arm| arm.sessions >= MIN_SESSIONS && arm.converted >= MIN_CONVERSIONS;
    RuleUplift {
        rule_id: rule_id.to_owned(),
        treated,
        control,
        conversion_rate: Rates {
            treated: p1.map(round6),
            control: p2.map(round6),
        },
        uplift: Uplift {
            absolute: absolute.map(round6),
            ci95: newcombe(treated, control, Z95).map(|(low, high)| [round6(low), round6(high)]),
            relative: relative.map(round6),
        },
        p_value: pooled_z_p_value(treated, control),
        enough_data: enough(treated) && enough(control),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arm(converted: i64, sessions: i64) -> Arm {
        Arm {
            sessions,
            converted,
        }
    }

    fn at4(x: f64) -> f64 {
        (x * 1e4).round() / 1e4
    }

    /// Newcombe, R. G. (1998). Interval estimation for the difference between independent
    /// proportions: comparison of eleven methods. Statistics in Medicine 17, 873-890, Table II,
    /// method 10 (score interval, no continuity correction), its eight examples (a) to (h):
    /// (a) 56/70 - 48/80 gives 0.0524 to 0.3339, (b) 9/10 - 3/10 gives 0.1705 to 0.8090, ...
    #[test]
    fn newcombe_1998_table_ii_method_10() {
        for ((x1, n1, x2, n2), (low, high)) in [
            ((56, 70, 48, 80), (0.0524, 0.3339)),
            ((9, 10, 3, 10), (0.1705, 0.8090)),
            ((6, 7, 2, 7), (0.0582, 0.8062)),
            ((5, 56, 0, 29), (-0.0381, 0.1926)),
            ((0, 10, 0, 20), (-0.1611, 0.2775)),
            ((0, 10, 0, 10), (-0.2775, 0.2775)),
            ((10, 10, 0, 20), (0.6791, 1.0000)),
            ((10, 10, 0, 10), (0.6075, 1.0000)),
        ] {
            let (l, h) = newcombe(arm(x1, n1), arm(x2, n2), Z95).unwrap();
            assert_eq!(
                (at4(l), at4(h)),
                (low, high),
                "{x1}/{n1} - {x2}/{n2}: {l} to {h}"
            );
        }
    }

    #[test]
    fn wilson_of_known_counts() {
        // Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion:
        // comparison of seven methods. Statistics in Medicine 17, 857-872, Table I: 81/263 has
        // the score (Wilson) interval 0.2553 to 0.3662.
        let (l, h) = wilson(81, 263, Z95).unwrap();
        assert_eq!((at4(l), at4(h)), (0.2553, 0.3662));
        assert_eq!(wilson(0, 0, Z95), None);
        assert_eq!(wilson(0, 10, Z95).unwrap().0, 0.0);
        assert_eq!(wilson(10, 10, Z95).unwrap().1, 1.0);
    }

    #[test]
    fn p_values_of_the_pooled_z_test() {
        // 56/70 against 48/80: pooled 104/150, z = 0.2 / sqrt(104/150 * 46/150 * (1/70 +
        // 1/80)) = 2.650172, two-sided p = erfc(z / sqrt(2)) = 0.0080451 (Python's math.erfc).
        let p = pooled_z_p_value(arm(56, 70), arm(48, 80)).unwrap();
        assert!((p - 0.008_045_081).abs() < 1e-8, "{p}");
        assert_eq!(pooled_z_p_value(arm(0, 10), arm(0, 20)), Some(1.0));
        assert_eq!(pooled_z_p_value(arm(10, 10), arm(20, 20)), Some(1.0));
        assert_eq!(pooled_z_p_value(arm(5, 10), arm(5, 10)), Some(1.0));
        assert_eq!(pooled_z_p_value(arm(0, 0), arm(5, 10)), None);
    }

    #[test]
    fn a_line_of_the_report_never_holds_nan() {
        let line = rule_uplift("r", arm(0, 0), arm(3, 10));
        assert_eq!(line.conversion_rate.treated, None);
        assert_eq!(line.conversion_rate.control, Some(0.3));
        assert_eq!(
            (line.uplift.absolute, line.uplift.ci95, line.uplift.relative),
            (None, None, None)
        );
        assert_eq!(line.p_value, None);
        assert!(!line.enough_data);
        let json = serde_json::to_string(&line).unwrap();
        assert!(!json.contains("NaN"), "{json}");
        // A control rate of 0: no relative uplift.
        let line = rule_uplift("r", arm(5, 100), arm(0, 100));
        assert_eq!(line.uplift.absolute, Some(0.05));
        assert_eq!(line.uplift.relative, None);
        assert!(!line.enough_data, "the control arm has no conversion");
        // Enough data: 100 sessions and 5 conversions in each arm.
        let line = rule_uplift("r", arm(10, 100), arm(5, 100));
        assert!(line.enough_data);
        assert_eq!(line.uplift.relative, Some(1.0));
        assert!(!rule_uplift("r", arm(10, 99), arm(5, 100)).enough_data);
        assert!(!rule_uplift("r", arm(10, 100), arm(4, 100)).enough_data);
        let rounded = rule_uplift("r", arm(1, 3), arm(0, 7));
        assert_eq!(rounded.conversion_rate.treated, Some(0.333333));
        assert_eq!(rounded.conversion_rate.control, Some(0.0));
    }

    /// A Wilson bound by bisection on the score equation `(p_hat - p)^2 = z^2 p (1 - p) / n`
    /// over `[lo, hi]`, where `f` changes sign once.
    fn bisect(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
        let rising = f(hi) > f(lo);
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if (f(mid) > 0.0) == rising {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (lo + hi) / 2.0
    }

    fn brute_wilson(x: i64, n: i64, z: f64) -> (f64, f64) {
        let p_hat = x as f64 / n as f64;
        let n = n as f64;
        // g(p) = z^2 p (1 - p) / n - (p_hat - p)^2: positive inside the interval.
        let g = move |p: f64| z * z * p * (1.0 - p) / n - (p_hat - p).powi(2);
        let low = if x == 0 { 0.0 } else { bisect(g, 0.0, p_hat) };
        let high = if p_hat >= 1.0 {
            1.0
        } else {
            bisect(g, p_hat, 1.0)
        };
        (low, high)
    }

    proptest! {
        #[test]
        fn the_interval_equals_a_brute_force_computation(
            n1 in 1i64..5000,
            n2 in 1i64..5000,
            f1 in 0.0f64..=1.0,
            f2 in 0.0f64..=1.0,
        ) {
            let x1 = ((n1 as f64) * f1).floor().min(n1 as f64) as i64;
            let x2 = ((n2 as f64) * f2).floor().min(n2 as f64) as i64;
            let (l1, u1) = brute_wilson(x1, n1, Z95);
            let (l2, u2) = brute_wilson(x2, n2, Z95);
            let (wl1, wu1) = wilson(x1, n1, Z95).unwrap();
            prop_assert!((wl1 - l1).abs() < 1e-9 && (wu1 - u1).abs() < 1e-9, "{x1}/{n1}: {wl1} {wu1} against {l1} {u1}");
            let (p1, p2) = (x1 as f64 / n1 as f64, x2 as f64 / n2 as f64);
            let d = p1 - p2;
            let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
            let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
            let (got_low, got_high) = newcombe(arm(x1, n1), arm(x2, n2), Z95).unwrap();
            prop_assert!((got_low - low).abs() < 1e-9, "{x1}/{n1} - {x2}/{n2}: low {got_low} against {low}");
            prop_assert!((got_high - high).abs() < 1e-9, "{x1}/{n1} - {x2}/{n2}: high {got_high} against {high}");
            prop_assert!(-1.0 <= got_low && got_low <= d && d <= got_high && got_high <= 1.0);
            let p = pooled_z_p_value(arm(x1, n1), arm(x2, n2)).unwrap();
            prop_assert!((0.0..=1.0).contains(&p));
        }
    }
}
