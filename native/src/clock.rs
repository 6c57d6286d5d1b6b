//! The clock, behind a trait so tests (and replays) can fix it.
//!
//! The engine reads the clock once per call: the current time in unix seconds stamps stored
//! rows and decides memory expiry, and the date (`YYYY-MM-DD`) goes into the system prompt.
//! [`SystemClock`] gives the date in UTC (the standard library knows no time zones); a program
//! that wants local dates passes its own [`Clock`]. [`FixedClock`] always says the same time.
//!
//! Guarantees: [`date_from_unix_seconds`] is exact for every `i64` (proleptic Gregorian
//! calendar) and never panics.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where the engine gets the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Seconds since 1970-01-01T00:00:00Z.
    fn now_unix(&self) -> i64;

    /// Today's date as `YYYY-MM-DD` (UTC unless the clock says otherwise).
    fn today(&self) -> String {
        date_from_unix_seconds(self.now_unix())
    }
}

/// The system's clock; dates in UTC.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(elapsed) => i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
            // A clock set before 1970: count backwards rather than fail.
            Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
        }
    }
}

/// A clock stopped at one instant (tests, reproducible replays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_unix(&self) -> i64 {
        self.0
    }
}

/// The UTC date of `unix_seconds`, as `YYYY-MM-DD` (years outside 0..=9999 are written with
/// as many digits as they need, and a sign when negative).
///
/// ```
/// use ctxkit::clock::date_from_unix_seconds;
/// assert_eq!(date_from_unix_seconds(0), "1970-01-01");
/// assert_eq!(date_from_unix_seconds(1_770_768_000), "2026-02-11");
/// assert_eq!(date_from_unix_seconds(951_782_400), "2000-02-29");
/// assert_eq!(date_from_unix_seconds(-1), "1969-12-31");
/// ```
pub fn date_from_unix_seconds(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days end each 400-year era. i128 keeps the
    // arithmetic exact for every i64 input.
    let z = i128::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i128::from(month <= 2);
    (
        i64::try_from(year).unwrap_or(i64::MAX),
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_known_instants_and_extremes() {
        assert_eq!(date_from_unix_seconds(86_399), "1970-01-01");
        assert_eq!(date_from_unix_seconds(86_400), "1970-01-02");
        assert_eq!(date_from_unix_seconds(4_102_444_800), "2100-01-01");
        assert_eq!(date_from_unix_seconds(1_709_164_800), "2024-02-29");
        // Never panics at the ends of the range.
        assert!(!date_from_unix_seconds(i64::MAX).is_empty());
        assert!(!date_from_unix_seconds(i64::MIN).is_empty());
        assert_eq!(FixedClock(0).today(), "1970-01-01");
        assert!(SystemClock.now_unix() > 1_700_000_000);
    }
}
