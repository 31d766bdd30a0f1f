//! Time helpers: RFC 3339 timestamps (UTC, milliseconds) and the ULID bounds
//! of a time range, so a date range becomes a `BETWEEN` on a ULID sort key.

use std::time::{SystemTime, UNIX_EPOCH};

use ulid::Ulid;

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The smallest and largest ULID whose timestamp lies in `[from_ms, to_ms)`.
///
/// Every ULID `u` made in that range satisfies `low <= u <= high` and no other
/// ULID does, so `sk BETWEEN PREFIX#low AND PREFIX#high` selects exactly the
/// range. Returns `None` for an empty range.
pub fn ulid_bounds(from_ms: u64, to_ms: u64) -> Option<(Ulid, Ulid)> {
    const MAX_TIME: u64 = (1 << 48) - 1;
    if from_ms >= to_ms || from_ms > MAX_TIME {
        return None;
    }
    let last_ms = (to_ms - 1).min(MAX_TIME);
    let random_max = (1u128 << 80) - 1;
    Some((Ulid::from_parts(from_ms, 0), Ulid::from_parts(last_ms, random_max)))
}

/// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, ms % 1000)
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ`
/// (UTC only) into milliseconds since the epoch.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u64> {
        let part = s.get(r)?;
        (!part.is_empty() && part.bytes().all(|c| c.is_ascii_digit())).then(|| part.parse().ok()).flatten()
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let days = days_from_civil(y as i64, m, d) as u64;
    let mut ms = days * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if b.len() < 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    ms += (h * 3600 + mi * 60 + sec) * 1000;
    match b.len() {
        20 => Some(ms),
        24 if b[19] == b'.' => Some(ms + num(20..23)?),
        _ => None,
    }
}

fn days_in_month(y: u64, m: u64) -> u64 {
    match m {
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The ISO 8601 week (UTC) of an instant in epoch milliseconds, as
/// `YYYY-Www` (`2026-W48`): weeks begin on Monday, and week 1 of a year is
/// the week of its first Thursday (so 3 January 2021 is in `2020-W53`).
pub fn iso_week(ms: u64) -> String {
    let days = i64::try_from(ms / 86_400_000).unwrap_or(i64::MAX / 2);
    // 1970-01-01 was a Thursday: Monday is 1, Sunday 7.
    let weekday = (days + 3).rem_euclid(7) + 1;
    let thursday = days - weekday + 4;
    let (year, _, _) = civil_from_days(thursday);
    let ordinal = thursday - days_from_civil(year, 1, 1);
    format!("{year}-W{:02}", ordinal / 7 + 1)
}

// Howard Hinnant's civil calendar algorithms.
fn days_from_civil(y: i64, m: u64, d: u64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u64, u64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u64;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u64;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn iso_weeks_of_known_days() {
        let at = |s: &str| iso_week(parse_rfc3339(s).unwrap());
        assert_eq!(at("2026-11-26T12:00:00.000Z"), "2026-W48");
        assert_eq!(at("2026-11-23T00:00:00.000Z"), "2026-W48", "a Monday begins it");
        assert_eq!(at("2026-11-22T23:59:59.999Z"), "2026-W47", "a Sunday ends the one before");
        assert_eq!(at("2021-01-03T00:00:00.000Z"), "2020-W53");
        assert_eq!(at("2024-12-30T00:00:00.000Z"), "2025-W01");
        assert_eq!(at("1970-01-01T00:00:00.000Z"), "1970-W01");
    }

    #[test]
    fn formats_and_parses_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_771_545_600_123), "2026-02-20T00:00:00.123Z");
        assert_eq!(parse_rfc3339("2026-02-20"), Some(1_771_545_600_000));
        assert_eq!(parse_rfc3339("2024-02-29T23:59:59Z"), Some(1_709_251_199_000));
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "2026-13-01",
            "2026-1-01",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:00:00+01:00",
            "x",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn empty_ranges_have_no_bounds() {
        assert_eq!(ulid_bounds(5, 5), None);
        assert_eq!(ulid_bounds(6, 5), None);
    }

    proptest! {
        #[test]
        fn timestamps_round_trip(ms in 0u64..253_402_300_799_999) {
            prop_assert_eq!(parse_rfc3339(&rfc3339(ms)), Some(ms));
        }

        /// A ULID lies within the bounds of a range exactly when its time does.
        #[test]
        fn ulid_bounds_contain_exactly_the_range(
            from in 0u64..(1 << 47),
            len in 1u64..10_000_000,
            t in 0u64..(1 << 47),
            random in any::<u128>(),
        ) {
            let (low, high) = ulid_bounds(from, from + len).unwrap();
            let id = Ulid::from_parts(t, random);
            let in_range = t >= from && t < from + len;
            prop_assert_eq!(low <= id && id <= high, in_range);
            // and the same holds for their string forms, which is what the sort key compares
            let (ls, hs, is) = (low.to_string(), high.to_string(), id.to_string());
            prop_assert_eq!(ls <= is && is <= hs, in_range);
        }

        #[test]
        fn ulid_bounds_edges_are_inside(from in 0u64..(1 << 47), len in 1u64..10_000_000) {
            let (low, high) = ulid_bounds(from, from + len).unwrap();
            prop_assert_eq!(low.timestamp_ms(), from);
            prop_assert_eq!(high.timestamp_ms(), from + len - 1);
        }
    }
}
