//! Times on the wire (docs/contract/read-api.md "Times"): read as RFC 3339 (`Z` or an offset), kept as Unix
//! milliseconds, written in UTC with exactly three fraction digits (`2026-11-24T10:00:00.120Z`).
//! The read API's `from` and `to` take up to nine fraction digits and are kept exactly
//! ([`ExactTime`], docs/contract/read-api.md "Parameters"). jiff checks the calendar (no February 30, no hour 25).

use jiff::Timestamp;

/// The earliest time the API reads or writes: 0001-01-01T00:00:00Z, in Unix milliseconds.
pub const MIN_MS: i64 = -62_135_596_800_000;
/// The latest: 9999-12-29T23:59:59.999Z (within jiff's range whatever the offset), in Unix
/// milliseconds.
pub const MAX_MS: i64 = 253_402_127_999_999;

/// Why a time was refused; `Display` completes "FIELD must be ...".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeError {
    /// Not `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
    Form,
    /// More fraction digits than the caller allows (nine, the nanosecond, for event times and
    /// for `from` and `to`).
    TooPrecise,
    /// A field out of range (month 13, February 30, hour 24, second 60).
    Calendar,
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeError::Form => "an RFC 3339 timestamp such as 2026-11-24T10:00:00Z or 2026-11-24T11:00:00.250+01:00",
            TimeError::TooPrecise => "an RFC 3339 timestamp with at most nine fraction digits",
            TimeError::Calendar => "a real date and time (no month 13, February 30, hour 24 or second 60)",
        })
    }
}

/// Reads an RFC 3339 timestamp: `T`/`Z` in either case, 0 to `max_fraction_digits` fraction
/// digits (extra digits past the millisecond are cut when allowed), `Z` or `±HH:MM`. Returns
/// Unix milliseconds.
///
/// # Errors
///
/// [`TimeError`]: another form (a date alone, a space for `T`, no offset, a zone name), more
/// fraction digits than allowed, or a date or time that does not exist.
pub fn parse_rfc3339_ms(text: &str, max_fraction_digits: usize) -> Result<i64, TimeError> {
    let timestamp = parse_rfc3339(text, max_fraction_digits)?;
    let ms = timestamp.as_millisecond();
    if (MIN_MS..=MAX_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(TimeError::Calendar)
    }
}

/// The most fraction digits a `from` or `to` may have (docs/contract/read-api.md "Parameters"): nanoseconds.
pub const MAX_BOUND_FRACTION_DIGITS: usize = 9;

/// A time as given, to the nanosecond: the Unix millisecond at or before it and the nanoseconds
/// past that millisecond. The read API's `from` and `to` (docs/contract/read-api.md "Parameters") are compared
/// exactly with the whole milliseconds stored through [`ExactTime::ceil_ms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExactTime {
    /// Unix milliseconds, rounded down.
    pub ms: i64,
    /// Nanoseconds past `ms`, 0 to 999,999.
    pub sub_ms_ns: u32,
}

impl ExactTime {
    /// A whole millisecond.
    pub fn from_ms(ms: i64) -> ExactTime {
        ExactTime { ms, sub_ms_ns: 0 }
    }

    /// The first whole millisecond at or after this time. For a time `t` stored in whole
    /// milliseconds, `t >= self` exactly when `t >= self.ceil_ms()`, and `t < self` exactly when
    /// `t < self.ceil_ms()`: an inclusive `from` and an exclusive `to` both become this
    /// millisecond, with nothing gained or lost.
    pub fn ceil_ms(self) -> i64 {
        if self.sub_ms_ns == 0 {
            self.ms
        } else {
            self.ms.saturating_add(1)
        }
    }
}

impl std::fmt::Display for ExactTime {
    /// As [`format_ms`] writes it, with the digits past the millisecond when there are any
    /// (`2026-11-24T10:00:00.123456Z`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = format_ms(self.ms);
        if self.sub_ms_ns == 0 {
            return f.write_str(&text);
        }
        let digits = format!("{:06}", self.sub_ms_ns);
        let digits = digits.trim_end_matches('0');
        let head = text.strip_suffix('Z').unwrap_or(&text);
        write!(f, "{head}{digits}Z")
    }
}

/// Reads an RFC 3339 timestamp as [`parse_rfc3339_ms`] does, with up to
/// [`MAX_BOUND_FRACTION_DIGITS`] fraction digits, kept exactly.
///
/// # Errors
///
/// [`TimeError`], as [`parse_rfc3339_ms`].
pub fn parse_rfc3339_exact(text: &str) -> Result<ExactTime, TimeError> {
    let ns = parse_rfc3339(text, MAX_BOUND_FRACTION_DIGITS)?.as_nanosecond();
    let ms = i64::try_from(ns.div_euclid(1_000_000)).map_err(|_| TimeError::Calendar)?;
    let sub_ms_ns = u32::try_from(ns.rem_euclid(1_000_000)).map_err(|_| TimeError::Calendar)?;
    if (MIN_MS..=MAX_MS).contains(&ms) {
        Ok(ExactTime { ms, sub_ms_ns })
    } else {
        Err(TimeError::Calendar)
    }
}

/// The shape check and jiff's reading behind [`parse_rfc3339_ms`] and [`parse_rfc3339_exact`].
fn parse_rfc3339(text: &str, max_fraction_digits: usize) -> Result<Timestamp, TimeError> {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| b.get(i).is_some_and(|x| x.eq_ignore_ascii_case(&c));
    let shape = (0..4).all(digit)
        && at(4, b'-')
        && (5..7).all(digit)
        && at(7, b'-')
        && (8..10).all(digit)
        && at(10, b'T')
        && (11..13).all(digit)
        && at(13, b':')
        && (14..16).all(digit)
        && at(16, b':')
        && (17..19).all(digit);
    if !shape {
        return Err(TimeError::Form);
    }
    let mut i = 19;
    let mut fraction_digits = 0;
    if at(i, b'.') {
        i += 1;
        while digit(i) {
            i += 1;
            fraction_digits += 1;
        }
        if fraction_digits == 0 {
            return Err(TimeError::Form);
        }
    }
    let offset_ok = match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && digit(i + 1)
                && digit(i + 2)
                && at(i + 3, b':')
                && digit(i + 4)
                && digit(i + 5)
        }
        _ => false,
    };
    if !offset_ok {
        return Err(TimeError::Form);
    }
    if fraction_digits > max_fraction_digits {
        return Err(TimeError::TooPrecise);
    }
    if at(17, b'6') && at(18, b'0') {
        return Err(TimeError::Calendar);
    }
    let normalized = text.to_ascii_uppercase();
    normalized.parse().map_err(|_| TimeError::Calendar)
}

/// Writes Unix milliseconds as UTC RFC 3339 with exactly three fraction digits; times outside
/// [`MIN_MS`]..=[`MAX_MS`] are clamped to them. The writing is the library's
/// ([`nudge_rules::replay::format_unix_ms`], the same text replay gives stored sessions); jiff is
/// its reference in the tests.
pub fn format_ms(ms: i64) -> String {
    nudge_rules::replay::format_unix_ms(ms.clamp(MIN_MS, MAX_MS))
}

/// A time written on the wire as [`format_ms`] writes it, straight into the serializer's output
/// (no `String` per time: a page of 50 sessions has 100).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireTime(pub i64);

impl serde::Serialize for WireTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = nudge_rules::replay::format_unix_ms_ascii(self.0.clamp(MIN_MS, MAX_MS));
        serializer.serialize_str(std::str::from_utf8(&text).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use jiff::tz::TimeZone;

    use super::*;

    #[test]
    fn reads_utc_offsets_and_fractions() {
        let base = parse_rfc3339_ms("2026-11-24T10:00:00Z", 3).unwrap();
        assert_eq!(format_ms(base), "2026-11-24T10:00:00.000Z");
        assert_eq!(parse_rfc3339_ms("2026-11-24t10:00:00z", 3), Ok(base));
        assert_eq!(parse_rfc3339_ms("2026-11-24T11:00:00+01:00", 3), Ok(base));
        assert_eq!(
            parse_rfc3339_ms("2026-11-24T10:00:00.12Z", 3),
            Ok(base + 120)
        );
        assert_eq!(format_ms(base + 120), "2026-11-24T10:00:00.120Z");
        assert_eq!(
            parse_rfc3339_ms("2026-11-24T10:00:00.123456Z", 9),
            Ok(base + 123)
        );
        assert_eq!(
            parse_rfc3339_ms("2026-11-24T10:00:00.1234Z", 3),
            Err(TimeError::TooPrecise)
        );
    }

    #[test]
    fn exact_times_keep_nine_digits_and_round_up_to_the_millisecond() {
        let base = parse_rfc3339_ms("2026-11-24T10:00:00.123Z", 3).unwrap();
        let t = parse_rfc3339_exact("2026-11-24T10:00:00.123456Z").unwrap();
        assert_eq!(
            t,
            ExactTime {
                ms: base,
                sub_ms_ns: 456_000
            }
        );
        assert_eq!(t.ceil_ms(), base + 1);
        assert_eq!(t.to_string(), "2026-11-24T10:00:00.123456Z");
        let whole = parse_rfc3339_exact("2026-11-24T10:00:00.123000000Z").unwrap();
        assert_eq!((whole, whole.ceil_ms()), (ExactTime::from_ms(base), base));
        assert_eq!(whole.to_string(), "2026-11-24T10:00:00.123Z");
        assert!(whole < t && t < ExactTime::from_ms(base + 1));
        assert_eq!(
            parse_rfc3339_exact("2026-11-24T10:00:00.000000001Z")
                .unwrap()
                .ceil_ms(),
            base - 122
        );
        // Before 1970 the millisecond is still the one at or before the time.
        let t = parse_rfc3339_exact("1969-12-31T23:59:59.9995Z").unwrap();
        assert_eq!((t.ms, t.sub_ms_ns, t.ceil_ms()), (-1, 500_000, 0));
        assert_eq!(t.to_string(), "1969-12-31T23:59:59.9995Z");
        assert_eq!(
            parse_rfc3339_exact("2026-11-24T10:00:00.1234567891Z"),
            Err(TimeError::TooPrecise)
        );
        assert_eq!(
            parse_rfc3339_exact("2026-11-24T10:00:00.Z"),
            Err(TimeError::Form)
        );
    }

    #[test]
    fn refuses_other_forms_and_impossible_dates() {
        for bad in [
            "",
            "2026-11-24",
            "2026-11-24 10:00:00Z",
            "2026-11-24T10:00Z",
            "2026-11-24T10:00:00",
            "2026-11-24T10:00:00.Z",
            "2026-11-24T10:00:00+0100",
            "2026-11-24T10:00:00Z[Europe/Paris]",
            "+2026-11-24T10:00:00Z",
            "2026-11-24T10:00:00ZZ",
        ] {
            assert_eq!(parse_rfc3339_ms(bad, 3), Err(TimeError::Form), "{bad}");
        }
        for bad in [
            "2026-02-30T25:61:00Z",
            "2026-02-30T10:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-24T24:00:00Z",
            "2026-12-31T23:59:60Z",
        ] {
            assert_eq!(parse_rfc3339_ms(bad, 3), Err(TimeError::Calendar), "{bad}");
        }
    }

    #[test]
    fn writes_what_jiff_writes() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = MIN_MS + (x % ((MAX_MS - MIN_MS) as u64)) as i64;
            let dt = jiff::Timestamp::from_millisecond(ms)
                .unwrap()
                .to_zoned(TimeZone::UTC)
                .datetime();
            let want = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                dt.year(),
                dt.month(),
                dt.day(),
                dt.hour(),
                dt.minute(),
                dt.second(),
                dt.millisecond()
            );
            assert_eq!(format_ms(ms), want, "{ms}");
        }
    }

    #[test]
    fn writes_three_fraction_digits_always() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_ms(i64::MAX), "9999-12-29T23:59:59.999Z");
        assert_eq!(format_ms(MAX_MS), "9999-12-29T23:59:59.999Z");
        assert_eq!(format_ms(MIN_MS), "0001-01-01T00:00:00.000Z");
    }
}
