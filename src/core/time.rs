//! Times as the store keeps them (`2026-11-30T12:00:00.000Z`, UTC) turned into what other
//! wire formats want.

/// Milliseconds since the Unix epoch of an RFC 3339 UTC time `YYYY-MM-DDTHH:MM:SS[.fff]Z`;
/// `None` for anything else.
pub fn epoch_millis(time: &str) -> Option<i64> {
    let t = time.strip_suffix('Z')?;
    let (date, clock) = t.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let (year, month, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut c = hms.splitn(3, ':');
    let (hour, minute, second): (i64, i64, i64) = (
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
    );
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // Milliseconds: the first three digits of the fraction.
    let millis = format!("{fraction:0<3}")[..3].parse::<i64>().ok()?;
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// `YYYY-MM-DD` of the day `days` after 1970-01-01.
pub fn civil_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The RFC 3339 UTC time (`YYYY-MM-DDTHH:MM:SSZ`, as the store writes without milliseconds) of
/// whole Unix seconds.
pub fn rfc3339(epoch_secs: i64) -> String {
    let (days, secs) = (epoch_secs.div_euclid(86_400), epoch_secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
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

    #[test]
    fn store_times_become_epoch_milliseconds() {
        assert_eq!(epoch_millis("1970-01-01T00:00:00.000Z"), Some(0));
        // `new Date("2026-11-30T12:34:56.789Z").getTime()` in Node.
        assert_eq!(
            epoch_millis("2026-11-30T12:34:56.789Z"),
            Some(1_796_042_096_789)
        );
        assert_eq!(epoch_millis("2000-02-29T23:59:59Z"), Some(951_868_799_000));
        for t in [
            "1970-01-01T00:00:00Z",
            "2000-02-29T23:59:59Z",
            "2026-11-30T12:34:56Z",
        ] {
            assert_eq!(rfc3339(epoch_millis(t).unwrap() / 1000), t);
        }
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T12:00:00+01:00",
        ] {
            assert_eq!(epoch_millis(bad), None, "{bad}");
        }
    }
}
