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
    /// it never will again.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        match self {
            Self::Every { seconds } => {
                let period = SignedDuration::from_secs(i64::try_from(*seconds).ok()?);
                after.checked_add(period).ok()
            }
            Self::Cron { expr, tz } => {
                // Read without `parse_expression`'s search for a first
                // match: that was done when the job was made, and for an
                // expression that never matches (one planted in the jobs
                // file) each search runs on to the year 5000.
                let cron = Cron::from_str(expr.trim()).ok()?;
                let zone = time_zone(tz).ok()?;
                let next = cron
                    .find_next_occurrence(&after.to_zoned(zone), false)
                    .ok()?;
                Some(next.timestamp())
            }
            Self::At { at } => (*at > after).then_some(*at),
        }
    }

    /// Whether a schedule read back from a file is one [`every`](Self::every)
    /// would have made (a period of zero or of centuries is not).
    pub fn check(&self) -> Result<(), ScheduleError> {
        match self {
            Self::Every { seconds } => Self::every(*seconds).map(drop),
            Self::Cron { .. } | Self::At { .. } => Ok(()),
        }
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
    // An expression that matches no real date would make every lookup fail.
    let probe = Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
    if cron.find_next_occurrence(&probe, false).is_err() {
        return Err(ScheduleError::NeverFires(format!("'{expr}'")));
    }
    Ok(cron)
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
