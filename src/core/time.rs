//! Times: one [`Timestamp`] type for every instant the registry keeps or serves, and the
//! calendar arithmetic behind it.
//!
//! Both engines keep times as text in one form, RFC 3339 UTC with milliseconds
//! (`2026-11-30T12:00:00.000Z`: SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ')`, PostgreSQL's
//! `skillreg_now()`); the store decodes them into [`Timestamp`] once, and a stored time that does
//! not parse is a store error. Times made from whole Unix seconds (an exchanged token's expiry)
//! are written without the fraction (`2026-11-30T12:00:00Z`), as they always were: a
//! [`Timestamp`] remembers which of the two forms it has, so it serializes to exactly the text it
//! was read or made as. It compares, orders and hashes by the instant alone.
//!
//! The calendar is hand-written (Howard Hinnant's two conversions, a dozen lines): a date
//! library would bring more than this one fixed form needs.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

/// A UTC instant, to the millisecond, as RFC 3339 text `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
#[derive(Clone, Copy)]
pub struct Timestamp {
    /// Milliseconds since the Unix epoch.
    millis: i64,
    /// Written with the millisecond fraction (the store's form) or without it (whole seconds).
    fraction: bool,
}

/// Why a text is not a [`Timestamp`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SS[.fff]Z): {0:?}")]
pub struct TimestampError(String);

impl Timestamp {
    /// The instant `millis` milliseconds after the Unix epoch, written with milliseconds.
    pub fn from_epoch_millis(millis: i64) -> Self {
        Self {
            millis,
            fraction: true,
        }
    }

    /// The instant of whole Unix seconds `secs`, written without a fraction.
    pub fn from_epoch_secs(secs: i64) -> Self {
        Self {
            millis: secs.saturating_mul(1000),
            fraction: false,
        }
    }

    /// The same instant written with milliseconds, the form the store keeps (times compare
    /// as text there, and `…:00Z` sorts after `…:00.500Z`).
    pub fn with_millis(self) -> Self {
        Self {
            fraction: true,
            ..self
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn epoch_millis(self) -> i64 {
        self.millis
    }

    /// Whole seconds since the Unix epoch (rounded down).
    pub fn epoch_secs(self) -> i64 {
        self.millis.div_euclid(1000)
    }

    /// Parse `YYYY-MM-DDTHH:MM:SS[.f…]Z`: UTC (`Z`) only, every field in range (no leap second).
    /// A fraction keeps its first three digits; a time with one is written back with exactly
    /// three, one without it without.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        parse(text).ok_or_else(|| TimestampError(text.to_owned()))
    }
}

fn parse(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    // `YYYY-MM-DDTHH:MM:SS` then an optional fraction then `Z`.
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = &b[range];
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let millis = match &b[19..b.len() - 1] {
        [] => None,
        [b'.', fraction @ ..] if !fraction.is_empty() => {
            if !fraction.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(
                fraction
                    .iter()
                    .chain(b"00")
                    .take(3)
                    .fold(0, |n, d| n * 10 + i64::from(d - b'0')),
            )
        }
        _ => return None,
    };
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = ((days * 24 + hour) * 60 + minute) * 60 + second;
    Some(Timestamp {
        millis: secs * 1000 + millis.unwrap_or(0),
        fraction: millis.is_some(),
    })
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (days, millis) = (
            self.millis.div_euclid(86_400_000),
            self.millis.rem_euclid(86_400_000),
        );
        let (year, month, day) = civil_from_days(days);
        let secs = millis / 1000;
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )?;
        if self.fraction {
            write!(f, ".{:03}", millis % 1000)?;
        }
        f.write_str("Z")
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.millis == other.millis
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        self.millis.cmp(&other.millis)
    }
}

impl Hash for Timestamp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.millis.hash(state);
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 UTC time")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Timestamp::parse(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// `YYYY-MM-DD` of the day `days` after 1970-01-01.
pub fn civil_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The proleptic Gregorian date of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn stored_times_round_trip_to_the_same_text() {
        // What SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` and PostgreSQL's
        // `skillreg_now()` write, and the whole-second form of an exchanged token's expiry.
        for text in [
            "1970-01-01T00:00:00.000Z",
            "2026-11-30T12:34:56.789Z",
            "2000-02-29T23:59:59.001Z",
            "1969-12-31T23:59:59.999Z",
            "9999-12-31T23:59:59.999Z",
            "2026-11-30T12:34:56Z",
            "0001-01-01T00:00:00Z",
        ] {
            let t = at(text);
            assert_eq!(t.to_string(), text);
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{text}\""));
            let back: Timestamp = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            assert_eq!(back.to_string(), text);
        }
        // A longer fraction keeps its milliseconds; a shorter one is read as tenths/hundredths.
        assert_eq!(
            at("2026-11-30T12:34:56.789999Z").to_string(),
            "2026-11-30T12:34:56.789Z"
        );
        assert_eq!(at("2026-11-30T12:34:56.5Z").epoch_millis() % 1000, 500);
    }

    #[test]
    fn epoch_milliseconds_and_seconds() {
        assert_eq!(at("1970-01-01T00:00:00.000Z").epoch_millis(), 0);
        // `new Date("2026-11-30T12:34:56.789Z").getTime()` in Node.
        assert_eq!(
            at("2026-11-30T12:34:56.789Z").epoch_millis(),
            1_796_042_096_789
        );
        assert_eq!(at("2000-02-29T23:59:59Z").epoch_millis(), 951_868_799_000);
        assert_eq!(at("1969-12-31T23:59:59.999Z").epoch_millis(), -1);
        assert_eq!(at("1969-12-31T23:59:59.999Z").epoch_secs(), -1);
        assert_eq!(
            Timestamp::from_epoch_secs(951_868_799).to_string(),
            "2000-02-29T23:59:59Z"
        );
        assert_eq!(
            Timestamp::from_epoch_millis(1_796_042_096_789).to_string(),
            "2026-11-30T12:34:56.789Z"
        );
        assert_eq!(
            Timestamp::from_epoch_secs(951_868_799)
                .with_millis()
                .to_string(),
            "2000-02-29T23:59:59.000Z"
        );
    }

    #[test]
    fn times_order_and_compare_by_instant() {
        let mut times = [
            at("2026-11-30T12:00:00.001Z"),
            at("2025-12-31T23:59:59.999Z"),
            at("2026-11-30T12:00:00Z"),
            at("1969-07-20T20:17:40.000Z"),
        ];
        times.sort();
        assert_eq!(
            times.map(|t| t.to_string()),
            [
                "1969-07-20T20:17:40.000Z",
                "2025-12-31T23:59:59.999Z",
                "2026-11-30T12:00:00Z",
                "2026-11-30T12:00:00.001Z",
            ]
        );
        // The same instant in both forms is one instant.
        assert_eq!(at("2026-11-30T12:00:00Z"), at("2026-11-30T12:00:00.000Z"));
    }

    #[test]
    fn only_rfc_3339_utc_times_parse() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T12:00:00",
            "2026-11-30 12:00:00Z",
            "2026-11-30T12:00:00+01:00",
            "2026-11-30T12:00:00+00:00",
            "2026-11-30T12:00:00.Z",
            "2026-11-30T12:00:00.12aZ",
            "2026-11-30T12:00:00zZ",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T12:60:00Z",
            "2026-12-31T23:59:60Z",
            "+2026-11-30T12:00:00Z",
            "２026-11-30T12:00:00Z",
            "yesterday",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Timestamp>(&format!("{bad:?}")).is_err());
        }
        assert!(serde_json::from_str::<Timestamp>("0").is_err());
    }
}
