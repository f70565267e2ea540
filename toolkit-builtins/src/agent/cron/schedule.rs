//! When a job fires: every N seconds, on a cron expression in a time zone,
//! or once at a moment.
//!
//! Cron expressions are parsed and evaluated by `croner` over `jiff` time
//! zones. `croner` handles the full Vixie syntax (ranges, steps, names, `L`,
//! `W`, `#`, an optional seconds field) and daylight-saving gaps and
//! overlaps; with its `jiff` backend we avoid `chrono-tz`, whose generated
//! time-zone tables are slow to compile, and `jiff` reads the system's tz
//! database (with a bundled copy for machines that have none).

use std::str::FromStr;

use croner::Cron;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// The longest period of an `every` schedule: ten years.
pub const MAX_PERIOD_SECS: u64 = 10 * 365 * 24 * 3600;

/// The longest cron expression a schedule takes, in characters: what the
/// `cron` tool takes from the model, and what a scheduler takes from the
/// host and from its file (`croner` takes any number of spaces between
/// fields, so an unbounded expression could fill the jobs file).
pub const MAX_EXPR_CHARS: usize = 256;

/// The longest time zone name a schedule takes, in characters (as
/// [`MAX_EXPR_CHARS`]); the longest IANA name is some 30.
pub const MAX_TZ_CHARS: usize = 64;

/// The longest moment a one-time schedule takes, in characters (as
/// [`MAX_EXPR_CHARS`]): an RFC 3339 moment with nanoseconds and an offset
/// is some 35. A longer text is refused before it is read or shown in an
/// error.
pub const MAX_MOMENT_CHARS: usize = 64;

/// When a job fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Every `seconds` seconds, the first time one period after it was added.
    Every {
        /// The period.
        seconds: u64,
    },
    /// On a cron expression, read in a time zone.
    Cron {
        /// The expression, such as `0 9 * * 1-5` (an optional leading seconds field is allowed).
        expr: String,
        /// The IANA time zone, such as `Europe/Paris`.
        tz: String,
    },
    /// Once, at this moment.
    At {
        /// The moment.
        at: Timestamp,
    },
}

/// Why a schedule is unusable; the text says what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The period is zero.
    #[error("every_seconds must be at least 1")]
    ZeroPeriod,
    /// The period is longer than any job could wait.
    #[error("every_seconds must be at most {MAX_PERIOD_SECS} (ten years)")]
    PeriodTooLong,
    /// Not a cron expression.
    #[error("invalid cron expression '{expr}': {reason}")]
    BadExpression {
        /// The expression as given.
        expr: String,
        /// What the parser said.
        reason: String,
    },
    /// Not an IANA time zone.
    #[error("unknown timezone '{0}'; use an IANA name such as 'Europe/Paris' or 'UTC'")]
    UnknownTimeZone(String),
    /// Not a date and time.
    #[error(
        "invalid ISO datetime format '{0}'. Expected format: YYYY-MM-DDTHH:MM:SS, optionally with an offset such as Z or +02:00"
    )]
    BadMoment(String),
    /// A cron expression, time zone or moment longer than a schedule takes
    /// ([`MAX_EXPR_CHARS`], [`MAX_TZ_CHARS`], [`MAX_MOMENT_CHARS`]).
    #[error("the {what} is longer than {max} characters")]
    TooLong {
        /// `cron expression`, `time zone` or `moment`.
        what: &'static str,
        /// The most characters it may have.
        max: usize,
    },
    /// The schedule does not fire within [`HORIZON_YEARS`]: never
    /// (`0 0 30 2 *`), or only later (`0 0 0 1 1 * 2050`).
    #[error("the schedule {0} does not fire within the next {HORIZON_YEARS} years")]
    NeverFires(String),
}

impl Schedule {
    /// Every `seconds` seconds.
    pub fn every(seconds: u64) -> Result<Self, ScheduleError> {
        if seconds == 0 {
            return Err(ScheduleError::ZeroPeriod);
        }
        if seconds > MAX_PERIOD_SECS {
            return Err(ScheduleError::PeriodTooLong);
        }
        Ok(Self::Every { seconds })
    }

    /// On the cron expression `expr` in time zone `tz`; both are checked now.
    pub fn cron(expr: &str, tz: &str) -> Result<Self, ScheduleError> {
        check_cron_lengths(expr, tz)?;
        parse_expression(expr)?;
        time_zone(tz)?;
        Ok(Self::Cron {
            expr: expr.trim().to_owned(),
            tz: tz.to_owned(),
        })
    }

    /// Once at `at`: an RFC 3339 moment (`2026-02-12T10:30:00Z`), or a
    /// date and time without offset, read in time zone `tz`.
    pub fn at(at: &str, tz: &str) -> Result<Self, ScheduleError> {
        let at = parse_moment(at, tz)?;
        Ok(Self::At { at })
    }

    /// The first time the schedule fires strictly after `after`; `None` when
    /// it never will again, or not within [`HORIZON_YEARS`] (a cron
    /// expression's search stops there), or the schedule is unusable.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        self.plan().ok()?.next_after(after)
    }

    /// Whether a schedule read back from a file is one the constructors
    /// would have made: a period of zero or of centuries is not, nor an
    /// expression that does not parse or a time zone that does not exist.
    /// (Whether a cron expression fires again depends on when:
    /// [`next_after`](Self::next_after) says.)
    pub fn check(&self) -> Result<(), ScheduleError> {
        self.plan().map(drop)
    }

    /// The schedule read once, for firing it many times: the expression
    /// parsed and the time zone found.
    pub(crate) fn plan(&self) -> Result<Plan, ScheduleError> {
        #[cfg(test)]
        READS.with(|reads| reads.set(reads.get() + 1));
        Ok(Plan(match self {
            Self::Every { seconds } => {
                Self::every(*seconds)?;
                let seconds = i64::try_from(*seconds).map_err(|_| ScheduleError::PeriodTooLong)?;
                Planned::Every(SignedDuration::from_secs(seconds))
            }
            Self::Cron { expr, tz } => Planned::Cron {
                cron: {
                    check_cron_lengths(expr, tz)?;
                    std::sync::Arc::new(Cron::from_str(expr.trim()).map_err(|e| {
                        ScheduleError::BadExpression {
                            expr: expr.clone(),
                            reason: e.to_string(),
                        }
                    })?)
                },
                zone: time_zone(tz)?,
            },
            Self::At { at } => Planned::At(*at),
        }))
    }

    /// Whether the job is done after firing once.
    pub fn is_one_shot(&self) -> bool {
        matches!(self, Self::At { .. })
    }

    /// A short description for listings: `every 3600s`, `cron '0 9 * * *' (UTC)`, `at 2026-...`.
    pub fn describe(&self) -> String {
        match self {
            Self::Every { seconds } => format!("every {seconds}s"),
            Self::Cron { expr, tz } => format!("cron '{expr}' ({tz})"),
            Self::At { at } => format!("at {}", show(*at)),
        }
    }
}

/// A moment as the model reads it: UTC, to the second.
pub(crate) fn show(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Refuses an expression or time zone longer than a schedule takes, before
/// either is read or shown in an error.
fn check_cron_lengths(expr: &str, tz: &str) -> Result<(), ScheduleError> {
    check_length("cron expression", expr, MAX_EXPR_CHARS)?;
    check_length("time zone", tz, MAX_TZ_CHARS)
}

/// Refuses `text`, the `what` of a schedule, if longer than `max`
/// characters. Counted no further than one past the most: a long text
/// costs no more.
fn check_length(what: &'static str, text: &str, max: usize) -> Result<(), ScheduleError> {
    if text.chars().nth(max).is_some() {
        return Err(ScheduleError::TooLong { what, max });
    }
    Ok(())
}

fn parse_expression(expr: &str) -> Result<Cron, ScheduleError> {
    let cron = Cron::from_str(expr.trim()).map_err(|e| ScheduleError::BadExpression {
        expr: expr.to_owned(),
        reason: e.to_string(),
    })?;
    // An expression that matches no date ahead would make every lookup
    // fail; the search is bounded, so asking costs little.
    if next_match(&cron, &TimeZone::UTC, Timestamp::now()).is_none() {
        return Err(ScheduleError::NeverFires(format!("'{expr}'")));
    }
    Ok(cron)
}

/// A [`Schedule`] read once: what the scheduler keeps with each job, so a
/// pass over the jobs parses nothing.
#[derive(Debug, Clone)]
pub(crate) struct Plan(Planned);

#[derive(Debug, Clone)]
enum Planned {
    Every(SignedDuration),
    // Shared: a pass copies every job it keeps, and an expression's bit
    // fields are some kilobytes.
    Cron {
        cron: std::sync::Arc<Cron>,
        zone: TimeZone,
    },
    At(Timestamp),
}

impl Plan {
    /// As [`Schedule::next_after`], without reading the schedule again.
    pub(crate) fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        match &self.0 {
            Planned::Every(period) => after.checked_add(*period).ok(),
            Planned::Cron { cron, zone } => next_match(cron, zone, after),
            Planned::At(at) => (*at > after).then_some(*at),
        }
    }

    /// When a job loaded at `now` that last said it would run at `saved`
    /// runs next, or `None` when it never does (within the horizon).
    ///
    /// A one-shot still kept has not fired: it runs at its moment, at once
    /// when that has passed. A recurring job runs when the file says, or at
    /// its first run after `now` when that is sooner: a file the scheduler
    /// wrote never says later, and one written by someone else cannot hold
    /// a job back for ever, nor keep one without a next run. A cron
    /// expression is thus searched once here, so one that no longer fires
    /// within the horizon is found out at load, and not on every pass.
    pub(crate) fn next_at_load(
        &self,
        saved: Option<Timestamp>,
        now: Timestamp,
    ) -> Option<Timestamp> {
        if let Planned::At(at) = &self.0 {
            return Some(*at);
        }
        let next = self.next_after(now)?;
        Some(saved.map_or(next, |saved| saved.min(next)))
    }
}

/// How many years ahead the next run of a cron expression is looked for:
/// the rest of the year searched from and this many years after it.
///
/// `croner` alone searches on to the year 5000, and steps a day field that
/// matches no day at all (`0 0 30 2 *`, or `+MON#5` on the first of a
/// month) one day at a time whatever its year field says: 35 ms a search,
/// for one expression planted in the jobs file. Here the days up to the
/// horizon are walked first, by cheap checks of the year, month and day
/// fields (at most some 4,000), and `croner` is asked only from a day that
/// matches.
///
/// A schedule whose next run lies past the horizon is taken to never fire,
/// as a longer period is refused (see [`MAX_PERIOD_SECS`]): `add` refuses
/// it ([`ScheduleError::NeverFires`]), a saved job is left out when the file
/// is read, and a recurring job whose run after a firing lies past it is
/// removed then (a warning is logged): `0 0 0 1 1 * 2027,2040` fires in
/// 2027 and is then removed, for 2040 is more than ten years on.
pub const HORIZON_YEARS: i16 = 10;

/// The bit `croner` sets in a field for each value the field matches (its
/// `ALL_BIT`, which it does not export). The tests of `next_match` fail if
/// it changes.
const MATCHES: u8 = 1;

#[cfg(test)]
thread_local! {
    /// How many times this thread has read a schedule, searched for a cron
    /// expression's next match, checked a day against an expression's date
    /// fields, and asked `croner`, so a test counts them.
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static SEARCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static DAY_CHECKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static CRONER_SEARCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The first time `cron` matches in `zone` strictly after `after`, at most
/// [`HORIZON_YEARS`] ahead.
fn next_match(cron: &Cron, zone: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    #[cfg(test)]
    SEARCHES.with(|searches| searches.set(searches.get() + 1));
    let start = after.to_zoned(zone.clone());
    let last = i32::from(start.year()) + i32::from(HORIZON_YEARS);
    let day = first_matching_day(cron, start.date(), last)?;
    // From the first day that matches: `croner`'s own day loop, which
    // ignores the year, is never where the search begins. On the day
    // searched from, the search starts at `after`, exclusive. On a later
    // day it starts one second before that day's first moment, exclusive,
    // and not at that moment, inclusive: when a clock change skips
    // midnight (00:00 -> 01:00 in Havana, Beirut, Santiago) the first
    // moment is 01:00, and `croner` runs a job due in the gap right after
    // it only when asked from before the gap.
    let from = if day == start.date() {
        start
    } else {
        let first = day.to_zoned(zone.clone()).ok()?;
        let before = first.checked_sub(SignedDuration::from_secs(1)).ok()?;
        if before.timestamp() > start.timestamp() {
            before
        } else {
            start
        }
    };
    // The years past the horizon are struck from a copy of the pattern: should
    // no time of that day match after all (the day searched from, past its
    // last match), `croner` steps over each such year in one comparison.
    let mut bounded = cron.clone();
    for year in last.saturating_add(1)..=croner::YEAR_UPPER_LIMIT {
        let year = u16::try_from(year).ok()?;
        // A year the field cannot hold is one it cannot match either.
        let _ = bounded.pattern.years.unset_bit(year, MATCHES);
    }
    #[cfg(test)]
    CRONER_SEARCHES.with(|asked| asked.set(asked.get() + 1));
    let next = bounded.find_next_occurrence(&from, false).ok()?;
    Some(next.timestamp())
}

/// The first day from `from` to the end of year `last` that `cron`'s year,
/// month and day fields all match. A year or month the pattern does not
/// match is passed over in one check, so at most some 4,000 days are
/// checked (eleven years of days).
fn first_matching_day(
    cron: &Cron,
    from: jiff::civil::Date,
    last: i32,
) -> Option<jiff::civil::Date> {
    let pattern = &cron.pattern;
    let mut day = from;
    while i32::from(day.year()) <= last {
        let year = i32::from(day.year());
        if !pattern.year_match(year).unwrap_or(false) {
            day = jiff::civil::Date::new(day.year().checked_add(1)?, 1, 1).ok()?;
            continue;
        }
        let month = u32::try_from(day.month()).ok()?;
        if !pattern.month_match(month).unwrap_or(false) {
            day = day
                .first_of_month()
                .checked_add(jiff::Span::new().months(1))
                .ok()?;
            continue;
        }
        #[cfg(test)]
        DAY_CHECKS.with(|checks| checks.set(checks.get() + 1));
        let weekday = croner::Weekday::from_days_from_sunday(u32::from(
            day.weekday().to_sunday_zero_offset().unsigned_abs(),
        ));
        let number = u32::from(day.day().unsigned_abs());
        if pattern
            .day_match(year, month, number, weekday)
            .unwrap_or(false)
        {
            return Some(day);
        }
        day = day.tomorrow().ok()?;
    }
    None
}

/// The IANA time zone named `name`.
pub fn time_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    TimeZone::get(name).map_err(|_| ScheduleError::UnknownTimeZone(name.to_owned()))
}

/// A moment from RFC 3339 text, or from a civil date and time read in `tz`.
pub fn parse_moment(text: &str, tz: &str) -> Result<Timestamp, ScheduleError> {
    check_length("moment", text, MAX_MOMENT_CHARS)?;
    check_length("time zone", tz, MAX_TZ_CHARS)?;
    let text = text.trim();
    if let Ok(at) = text.parse::<Timestamp>() {
        return Ok(at);
    }
    let civil = text
        .parse::<DateTime>()
        .map_err(|_| ScheduleError::BadMoment(text.to_owned()))?;
    let zone = time_zone(tz)?;
    civil
        .to_zoned(zone)
        .map(|zoned| zoned.timestamp())
        .map_err(|_| ScheduleError::BadMoment(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(expr: &str) -> Plan {
        Schedule::Cron {
            expr: expr.into(),
            tz: "UTC".into(),
        }
        .plan()
        .unwrap()
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// The search stops at the horizon: a match nine years ahead is found,
    /// one eleven years ahead is not, and neither is one that never comes.
    #[test]
    fn the_search_for_a_next_run_stops_at_the_horizon() {
        let now = at("2026-01-15T12:00:00Z");
        assert_eq!(
            plan("0 0 0 1 1 * 2035").next_after(now),
            Some(at("2035-01-01T00:00:00Z"))
        );
        assert_eq!(plan("0 0 0 1 1 * 2037").next_after(now), None);
        assert_eq!(plan("0 0 30 2 *").next_after(now), None);
        assert_eq!(plan("0 0 0 1 1 * 2020").next_after(now), None);
        // Leap days, and the horizon moves with the time searched from.
        assert_eq!(
            plan("0 9 29 2 *").next_after(now),
            Some(at("2028-02-29T09:00:00Z"))
        );
        assert_eq!(
            plan("0 0 0 1 1 * 2037").next_after(at("2030-06-01T00:00:00Z")),
            Some(at("2037-01-01T00:00:00Z"))
        );
        assert_eq!(plan("0 0 30 2 *").next_at_load(Some(now), now), None);
        assert_eq!(
            plan("*/5 * * * *").next_at_load(None, now),
            Some(at("2026-01-15T12:05:00Z"))
        );
    }

    /// A day field that matches no day at all (the first of a month that is
    /// its fifth Monday; the last weekday that is a Saturday) costs at most
    /// eleven years of cheap day checks, and `croner` is never asked: it
    /// would step day by day to the year 5000.
    #[test]
    fn a_day_field_that_never_matches_costs_at_most_the_horizon_in_day_checks() {
        let now = at("2026-01-15T12:00:00Z");
        let counted = || {
            (
                DAY_CHECKS.with(|c| c.get()),
                CRONER_SEARCHES.with(|c| c.get()),
            )
        };
        for expr in ["0 0 1 * +MON#5", "0 0 LW * +SAT", "0 0 30 2 *"] {
            let plan = plan(expr);
            let before = counted();
            assert_eq!(plan.next_after(now), None, "{expr}");
            let after = counted();
            let days = after.0 - before.0;
            assert!((1..=11 * 366).contains(&days), "{expr}: {days} day checks");
            assert_eq!(after.1 - before.1, 0, "{expr}: croner was asked");
        }
        // A year field that matches nothing ahead costs a check a year.
        let before = counted();
        assert_eq!(plan("0 0 0 1 1 * 2020").next_after(now), None);
        assert_eq!(counted(), before);
        // An expression that matches finds its day at once, and asks
        // `croner` once, for the time in that day.
        let before = counted();
        assert_eq!(
            plan("0 30 9 * * MON").next_after(now),
            Some(at("2026-01-19T09:30:00Z"))
        );
        let after = counted();
        assert_eq!((after.0 - before.0, after.1 - before.1), (5, 1));
    }

    /// The search starts on the day searched from, past its moment, and
    /// goes on to the next day that matches; across a clock change too.
    #[test]
    fn the_next_match_is_found_from_the_moment_and_from_a_later_day() {
        let now = at("2026-01-15T12:00:00Z");
        assert_eq!(
            plan("0 0 13 * * *").next_after(now),
            Some(at("2026-01-15T13:00:00Z"))
        );
        assert_eq!(
            plan("0 0 11 * * *").next_after(now),
            Some(at("2026-01-16T11:00:00Z"))
        );
        assert_eq!(
            plan("0 0 12 * * *").next_after(now),
            Some(at("2026-01-16T12:00:00Z"))
        );
        // The day searched from matches, but its time has passed, and the
        // next day that matches is a month on.
        assert_eq!(
            plan("0 0 9 15 * *").next_after(now),
            Some(at("2026-02-15T09:00:00Z"))
        );
        // Midnight is the first moment a later day is searched from.
        assert_eq!(
            plan("0 0 0 16 * *").next_after(now),
            Some(at("2026-01-16T00:00:00Z"))
        );
        // In Paris the clocks go forward on 2026-03-29, 02:00 to 03:00.
        let paris = Schedule::Cron {
            expr: "0 0 3 29 3 *".into(),
            tz: "Europe/Paris".into(),
        }
        .plan()
        .unwrap();
        assert_eq!(paris.next_after(now), Some(at("2026-03-29T01:00:00Z")));
    }

    /// Reading a schedule refuses what no constructor makes.
    #[test]
    fn a_plan_is_only_made_of_a_usable_schedule() {
        let cron = |expr: &str, tz: &str| Schedule::Cron {
            expr: expr.into(),
            tz: tz.into(),
        };
        assert!(cron("not an expression", "UTC").plan().is_err());
        assert!(cron("* * * * *", "Mars/Olympus").plan().is_err());
        assert!(Schedule::Every { seconds: 0 }.plan().is_err());
        assert!(Schedule::Every { seconds: u64::MAX }.plan().is_err());
        assert!(cron("* * * * *", "Europe/Paris").plan().is_ok());
    }
}
