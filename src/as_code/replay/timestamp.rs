//! Timestamps of recorded sessions (API document 2.1, 2.2: "ISO 8601 UTC"), read strictly as
//! RFC 3339 in UTC: `2026-03-01T12:00:05Z`, `2026-03-01T12:00:05.250Z`, `...+00:00`.
//!
//! A parser of our own rather than a date crate: the format is one line of RFC 3339's grammar,
//! and the WASM package has a size budget (README, Decisions). Only what replay needs: the instant,
//! ordered, and the difference of two instants in milliseconds.

use std::fmt;

/// An instant: seconds since 1970-01-01T00:00:00Z and nanoseconds within the second. Derived
/// ordering is chronological (seconds first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Timestamp {
    seconds: i64,
    nanos: u32,
}

/// Why a timestamp was rejected; `Display` is the message after "must be ...".
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TimestampError {
    /// Not of the form `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    Form,
    /// A field out of its range (month 13, February 30, hour 24, second 60).
    Field(&'static str),
    /// An offset other than UTC.
    NotUtc,
}

impl fmt::Display for TimestampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimestampError::Form => f.write_str(
                "must be an RFC 3339 UTC timestamp such as \"2026-03-01T12:00:05Z\" or \"2026-03-01T12:00:05.250Z\"",
            ),
            TimestampError::Field(what) => write!(f, "has no such {what}"),
            TimestampError::NotUtc => f.write_str(
                "must be in UTC (ending in \"Z\" or \"+00:00\"), as the API document's timestamps are",
            ),
        }
    }
}

impl Timestamp {
    /// Reads `YYYY-MM-DDTHH:MM:SS[.F]Z` (RFC 3339, section 5.6, in UTC): `T` and `Z` in either
    /// case, 1 to 9 fraction digits, `+00:00` for `Z`. Leap seconds (`:60`) and other offsets
    /// are rejected.
    ///
    /// # Errors
    ///
    /// - [`TimestampError`] naming what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Timestamp, TimestampError> {
        let b = text.as_bytes();
        let digits = |from: usize, len: usize| -> Result<u32, TimestampError> {
            let part = b.get(from..from + len).ok_or(TimestampError::Form)?;
            part.iter().try_fold(0u32, |n, &c| match c {
                b'0'..=b'9' => Ok(n * 10 + u32::from(c - b'0')),
                _ => Err(TimestampError::Form),
            })
        };
        let byte = |at: usize, want: &[u8]| match b.get(at) {
            Some(c) if want.contains(c) => Ok(()),
            _ => Err(TimestampError::Form),
        };
        let year = digits(0, 4)?;
        byte(4, b"-")?;
        let month = digits(5, 2)?;
        byte(7, b"-")?;
        let day = digits(8, 2)?;
        byte(10, b"Tt")?;
        let hour = digits(11, 2)?;
        byte(13, b":")?;
        let minute = digits(14, 2)?;
        byte(16, b":")?;
        let second = digits(17, 2)?;
        let mut at = 19;
        let mut nanos = 0u32;
        if b.get(at) == Some(&b'.') {
            at += 1;
            let start = at;
            while let Some(c @ b'0'..=b'9') = b.get(at) {
                if at - start < 9 {
                    nanos = nanos * 10 + u32::from(c - b'0');
                }
                at += 1;
            }
            let count = at - start;
            if count == 0 || count > 9 {
                return Err(TimestampError::Form);
            }
            nanos *= 10u32.pow(9 - count as u32);
        }
        match b.get(at..) {
            Some(b"Z" | b"z" | b"+00:00") => {}
            Some([b'+' | b'-', h1, h2, b':', m1, m2])
                if [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()) =>
            {
                return Err(TimestampError::NotUtc);
            }
            _ => return Err(TimestampError::Form),
        }
        if !(1..=12).contains(&month) {
            return Err(TimestampError::Field("month"));
        }
        if day == 0 || day > days_in_month(year, month) {
            return Err(TimestampError::Field("day of the month"));
        }
        if hour > 23 {
            return Err(TimestampError::Field("hour"));
        }
        if minute > 59 {
            return Err(TimestampError::Field("minute"));
        }
        if second > 59 {
            return Err(TimestampError::Field(
                "second (leap seconds are not supported)",
            ));
        }
        let days = days_from_civil(i64::from(year), month, day);
        let seconds =
            days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second);
        Ok(Timestamp { seconds, nanos })
    }

    /// Milliseconds since 1970-01-01T00:00:00Z, rounded down (fractions past the millisecond
    /// are cut).
    pub(crate) fn unix_ms(self) -> i64 {
        self.seconds
            .saturating_mul(1000)
            .saturating_add(i64::from(self.nanos / 1_000_000))
    }

    /// The instant `ms` milliseconds after 1970-01-01T00:00:00Z (negative: before).
    pub(crate) fn from_unix_ms(ms: i64) -> Timestamp {
        Timestamp {
            seconds: ms.div_euclid(1000),
            // 0 to 999 ms: at most 999,000,000 ns.
            nanos: u32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0),
        }
    }

    /// Whole milliseconds from `earlier` to `self` (rounded down); 0 when `earlier` is later.
    pub(crate) fn millis_since(self, earlier: Timestamp) -> u64 {
        if self <= earlier {
            return 0;
        }
        // Years 0000 to 9999: the seconds differ by less than 2^39, so this cannot overflow.
        let seconds = self.seconds.saturating_sub(earlier.seconds);
        let nanos = i64::from(self.nanos) - i64::from(earlier.nanos);
        let millis = seconds.saturating_mul(1000) + nanos.div_euclid(1_000_000);
        u64::try_from(millis).unwrap_or(0)
    }
}

/// Writes Unix milliseconds as RFC 3339 in UTC with exactly three fraction digits:
/// `2026-11-24T10:00:00.120Z` (the server's wire form, docs/contract/read-api.md "Times"). Times before year 1 or
/// after 9999-12-31T23:59:59.999Z are clamped to those.
///
/// ```
/// assert_eq!(nudge_rules::replay::format_unix_ms(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(nudge_rules::replay::format_unix_ms(1_772_366_405_250), "2026-03-01T12:00:05.250Z");
/// ```
pub fn format_unix_ms(ms: i64) -> String {
    String::from_utf8_lossy(&format_unix_ms_ascii(ms)).into_owned()
}

/// [`format_unix_ms`]'s text as its 24 ASCII bytes, with no allocation: the server writes two
/// per listed session straight into its response.
///
/// ```
/// assert_eq!(&nudge_rules::replay::format_unix_ms_ascii(120), b"1970-01-01T00:00:00.120Z");
/// ```
pub fn format_unix_ms_ascii(ms: i64) -> [u8; 24] {
    let ms = ms.clamp(MIN_FORMATTED_MS, MAX_FORMATTED_MS);
    let days = ms.div_euclid(86_400_000);
    // 0 to 86,399,999: fits u32, whose division is the cheaper.
    let in_day = u32::try_from(ms.rem_euclid(86_400_000)).unwrap_or(0);
    let (year, month, day) = civil_from_days(days);
    // Years 1 to 9999 after the clamp.
    let year = u32::try_from(year).unwrap_or(0);
    let (month, day) = (
        u32::try_from(month).unwrap_or(0),
        u32::try_from(day).unwrap_or(0),
    );
    let (hour, minute) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (second, milli) = (in_day / 1000 % 60, in_day % 1000);
    // Into a fixed buffer, digit by digit: `format!` cost a list page of 50 sessions a tenth of
    // its time.
    let mut text = *b"0000-00-00T00:00:00.000Z";
    for (range, value) in [
        (0..4, year),
        (5..7, month),
        (8..10, day),
        (11..13, hour),
        (14..16, minute),
        (17..19, second),
        (20..23, milli),
    ] {
        let mut rest = value;
        for digit in text.get_mut(range).into_iter().flatten().rev() {
            *digit = b'0' + u8::try_from(rest % 10).unwrap_or(0);
            rest /= 10;
        }
    }
    text
}

/// 0001-01-01T00:00:00.000Z in Unix milliseconds.
const MIN_FORMATTED_MS: i64 = -62_135_596_800_000;
/// 9999-12-31T23:59:59.999Z in Unix milliseconds.
const MAX_FORMATTED_MS: i64 = 253_402_300_799_999;

/// (year, month 1 to 12, day 1 to 31) of a day counted from 1970-01-01 (proleptic Gregorian;
/// H. Hinnant's `civil_from_days`, the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `items` sorted by `at`, stably (equal times keep their order). One sort of `(Timestamp,
/// index)` pairs serves every item type (each sort instantiation costs the WASM package size).
pub(crate) fn sort_by_time<T>(items: Vec<T>, at: impl Fn(&T) -> Timestamp) -> Vec<T> {
    let mut keys: Vec<(Timestamp, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (at(item), i))
        .collect();
    if keys.is_sorted() {
        return items;
    }
    keys.sort_unstable();
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    keys.iter()
        .filter_map(|&(_, i)| slots.get_mut(i)?.take())
        .collect()
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn epoch_and_known_instants() {
        assert_eq!(ts("1970-01-01T00:00:00Z").seconds, 0);
        // `date -u -d 2026-03-01T12:00:05Z +%s`
        assert_eq!(ts("2026-03-01T12:00:05Z").seconds, 1_772_366_405);
        assert_eq!(ts("2000-02-29T23:59:59Z").seconds, 951_868_799);
        assert_eq!(ts("1969-12-31T23:59:59Z").seconds, -1);
        assert_eq!(ts("0000-01-01T00:00:00Z").seconds, -62_167_219_200);
        assert_eq!(ts("9999-12-31T23:59:59Z").seconds, 253_402_300_799);
    }

    #[test]
    fn forms_of_utc_and_fractions() {
        let base = ts("2026-03-01T12:00:05Z");
        assert_eq!(ts("2026-03-01t12:00:05z"), base);
        assert_eq!(ts("2026-03-01T12:00:05+00:00"), base);
        assert_eq!(ts("2026-03-01T12:00:05.250Z").millis_since(base), 250);
        assert_eq!(ts("2026-03-01T12:00:05.1Z").nanos, 100_000_000);
        assert_eq!(ts("2026-03-01T12:00:05.123456789Z").nanos, 123_456_789);
        assert_eq!(ts("2026-03-01T12:00:06.0009Z").millis_since(base), 1000);
        assert_eq!(ts("2026-03-01T12:00:04.9995Z").millis_since(base), 0);
        assert_eq!(
            ts("2026-03-02T12:00:05Z").millis_since(ts("2026-03-01T12:00:05.999Z")),
            86_399_001
        );
    }

    #[test]
    fn milliseconds_round_trip_through_the_text() {
        for ms in [
            0,
            -1,
            1_772_366_405_250,
            951_868_799_999,
            -62_135_596_800_000,
            253_402_300_799_999,
        ] {
            let text = format_unix_ms(ms);
            assert_eq!(ts(&text).unix_ms(), ms, "{text}");
            assert_eq!(Timestamp::from_unix_ms(ms), ts(&text), "{text}");
        }
        assert_eq!(format_unix_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_unix_ms(i64::MIN), "0001-01-01T00:00:00.000Z");
    }

    #[test]
    fn sorting_by_time_is_stable() {
        let t = |s: u32| ts(&format!("2026-03-01T12:00:{s:02}Z"));
        let items = vec![
            (t(5), 'a'),
            (t(1), 'b'),
            (t(5), 'c'),
            (t(1), 'd'),
            (t(0), 'e'),
        ];
        let sorted: String = sort_by_time(items, |x| x.0).iter().map(|x| x.1).collect();
        assert_eq!(sorted, "ebdac");
    }

    #[test]
    fn order_is_chronological() {
        let mut stamps = [
            ts("2026-03-01T12:00:05.5Z"),
            ts("2025-12-31T23:59:59Z"),
            ts("2026-03-01T12:00:05Z"),
        ];
        stamps.sort();
        assert_eq!(stamps[0], ts("2025-12-31T23:59:59Z"));
        assert_eq!(stamps[2], ts("2026-03-01T12:00:05.500Z"));
    }

    #[test]
    fn rejections_say_why() {
        for bad in [
            "",
            "2026-03-01",
            "2026-03-01 12:00:05Z",
            "2026-03-01T12:00:05",
            "2026-3-01T12:00:05Z",
            "2026-03-01T12:00:05.Z",
            "2026-03-01T12:00:05.1234567890Z",
            "2026-03-01T12:00:05ZZ",
            "+2026-03-01T12:00:05Z",
            "2026-03-01T12:00Z",
            "1772366405",
            "2026-03-01T12:00:05-00:0",
        ] {
            assert_eq!(Timestamp::parse(bad), Err(TimestampError::Form), "{bad}");
        }
        for (bad, what) in [
            ("2026-13-01T00:00:00Z", "month"),
            ("2026-00-01T00:00:00Z", "month"),
            ("2026-02-29T00:00:00Z", "day of the month"),
            ("2100-02-29T00:00:00Z", "day of the month"),
            ("2026-04-31T00:00:00Z", "day of the month"),
            ("2026-04-00T00:00:00Z", "day of the month"),
            ("2026-04-01T24:00:00Z", "hour"),
            ("2026-04-01T23:60:00Z", "minute"),
        ] {
            assert_eq!(
                Timestamp::parse(bad),
                Err(TimestampError::Field(what)),
                "{bad}"
            );
        }
        assert!(matches!(
            Timestamp::parse("2016-12-31T23:59:60Z"),
            Err(TimestampError::Field(_))
        ));
        assert_eq!(ts("2024-02-29T00:00:00Z").seconds, 1_709_164_800);
        for bad in ["2026-03-01T12:00:05+01:00", "2026-03-01T12:00:05-00:00"] {
            assert_eq!(Timestamp::parse(bad), Err(TimestampError::NotUtc), "{bad}");
        }
    }
}
