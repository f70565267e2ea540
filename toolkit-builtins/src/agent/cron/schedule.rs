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
    /// The schedule never fires (`0 0 30 2 *`).
    #[error("the schedule {0} never fires")]
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
                cron: std::sync::Arc::new(Cron::from_str(expr.trim()).map_err(|e| {
                    ScheduleError::BadExpression {
                        expr: expr.clone(),
                        reason: e.to_string(),
                    }
                })?),
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

    /// Whether the schedule can fire after `now`. A one-shot always can:
    /// one still kept has not fired, and fires late rather than never.
    pub(crate) fn fires_after(&self, now: Timestamp) -> bool {
        match &self.0 {
            Planned::Every(_) | Planned::At(_) => true,
            Planned::Cron { .. } => self.next_after(now).is_some(),
        }
    }
}

/// How many years ahead the next run of a cron expression is looked for.
/// `croner` alone searches on to the year 5000: for an expression that never
/// matches (February 30, or a year gone by) that is 70 to 250 ms a search,
/// and one planted in the jobs file was searched on every pass. Bounded, the
/// search costs at most this many years of calendar steps; a job that would
/// wait longer is taken to never fire, as a longer period is refused (see
/// [`MAX_PERIOD_SECS`]).
pub const HORIZON_YEARS: i16 = 10;

/// The bit `croner` sets in a field for each value the field matches (its
/// `ALL_BIT`, which it does not export). The tests of `next_match` fail if
/// it changes.
const MATCHES: u8 = 1;

#[cfg(test)]
thread_local! {
    /// How many times this thread has read a schedule, and searched for a
    /// cron expression's next match, so a test counts them.
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static SEARCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The first time `cron` matches in `zone` strictly after `after`, at most
/// [`HORIZON_YEARS`] ahead.
fn next_match(cron: &Cron, zone: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    #[cfg(test)]
    SEARCHES.with(|searches| searches.set(searches.get() + 1));
    let start = after.to_zoned(zone.clone());
    // The years past the horizon are struck from a copy of the pattern:
    // `croner` steps over each in one comparison, not through its days.
    let last = i32::from(start.year()) + i32::from(HORIZON_YEARS);
    let mut bounded = cron.clone();
    for year in last.saturating_add(1)..=croner::YEAR_UPPER_LIMIT {
        let year = u16::try_from(year).ok()?;
        // A year the field cannot hold is one it cannot match either.
        let _ = bounded.pattern.years.unset_bit(year, MATCHES);
    }
    let next = bounded.find_next_occurrence(&start, false).ok()?;
    Some(next.timestamp())
}

/// The IANA time zone named `name`.
pub fn time_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    TimeZone::get(name).map_err(|_| ScheduleError::UnknownTimeZone(name.to_owned()))
}

/// A moment from RFC 3339 text, or from a civil date and time read in `tz`.
pub fn parse_moment(text: &str, tz: &str) -> Result<Timestamp, ScheduleError> {
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
        assert!(!plan("0 0 30 2 *").fires_after(now));
        assert!(plan("*/5 * * * *").fires_after(now));
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
