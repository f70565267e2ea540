//! Schedules computed, not waited for: the next fire time after a given moment.

#![cfg(feature = "agent")]

use jiff::Timestamp;
use toolsmith_builtins::agent::cron::{Schedule, ScheduleError};

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn every_n_seconds_fires_one_period_later() {
    let schedule = Schedule::every(3600).unwrap();
    assert_eq!(
        schedule.next_after(ts("2026-03-01T10:00:00Z")),
        Some(ts("2026-03-01T11:00:00Z"))
    );
    assert_eq!(Schedule::every(0), Err(ScheduleError::ZeroPeriod));
    assert_eq!(Schedule::every(u64::MAX), Err(ScheduleError::PeriodTooLong));
}

#[test]
fn cron_expressions_are_read_in_their_time_zone() {
    let paris = Schedule::cron("0 9 * * *", "Europe/Paris").unwrap();
    // Winter: Paris is UTC+1.
    assert_eq!(
        paris.next_after(ts("2026-01-15T12:00:00Z")),
        Some(ts("2026-01-16T08:00:00Z"))
    );
    // Summer: UTC+2.
    assert_eq!(
        paris.next_after(ts("2026-07-15T12:00:00Z")),
        Some(ts("2026-07-16T07:00:00Z"))
    );
    // Strictly after: a moment that matches is not its own next.
    assert_eq!(
        paris.next_after(ts("2026-01-16T08:00:00Z")),
        Some(ts("2026-01-17T08:00:00Z"))
    );
}

#[test]
fn a_daylight_saving_change_moves_the_utc_time_not_the_local_one() {
    // New York springs forward on 8 March 2026: 9:00 EST is 14:00 UTC, 9:00 EDT is 13:00 UTC.
    let ny = Schedule::cron("0 9 * * *", "America/New_York").unwrap();
    let saturday = ny.next_after(ts("2026-03-06T15:00:00Z")).unwrap();
    assert_eq!(saturday, ts("2026-03-07T14:00:00Z"));
    assert_eq!(ny.next_after(saturday), Some(ts("2026-03-08T13:00:00Z")));
}

#[test]
fn weekdays_names_steps_and_seconds_follow_cron_rules() {
    // 2026-01-16 is a Friday: the next weekday 17:30 after Friday evening is Monday.
    let weekdays = Schedule::cron("30 17 * * MON-FRI", "UTC").unwrap();
    assert_eq!(
        weekdays.next_after(ts("2026-01-16T18:00:00Z")),
        Some(ts("2026-01-19T17:30:00Z"))
    );
    let quarter_hours = Schedule::cron("*/15 * * * *", "UTC").unwrap();
    assert_eq!(
        quarter_hours.next_after(ts("2026-01-16T18:07:00Z")),
        Some(ts("2026-01-16T18:15:00Z"))
    );
    let with_seconds = Schedule::cron("30 * * * * *", "UTC").unwrap();
    assert_eq!(
        with_seconds.next_after(ts("2026-01-16T18:07:31Z")),
        Some(ts("2026-01-16T18:08:30Z"))
    );
}

#[test]
fn a_one_shot_fires_once() {
    let at = Schedule::at("2026-02-12T10:30:00Z", "UTC").unwrap();
    assert_eq!(
        at.next_after(ts("2026-02-12T10:00:00Z")),
        Some(ts("2026-02-12T10:30:00Z"))
    );
    assert_eq!(at.next_after(ts("2026-02-12T10:30:00Z")), None);
    assert!(at.is_one_shot());
}

#[test]
fn a_time_without_offset_is_read_in_the_given_zone() {
    let tokyo = Schedule::at("2026-02-12T10:30:00", "Asia/Tokyo").unwrap();
    assert_eq!(
        tokyo,
        Schedule::At {
            at: ts("2026-02-12T01:30:00Z")
        }
    );
    let offset = Schedule::at("2026-02-12T10:30:00+02:00", "Asia/Tokyo").unwrap();
    assert_eq!(
        offset,
        Schedule::At {
            at: ts("2026-02-12T08:30:00Z")
        }
    );
}

#[test]
fn bad_schedules_are_refused_with_a_reason() {
    assert!(matches!(
        Schedule::cron("61 * * * *", "UTC"),
        Err(ScheduleError::BadExpression { .. })
    ));
    assert!(matches!(
        Schedule::cron("every day", "UTC"),
        Err(ScheduleError::BadExpression { .. })
    ));
    assert_eq!(
        Schedule::cron("0 0 30 2 *", "UTC"),
        Err(ScheduleError::NeverFires("'0 0 30 2 *'".into()))
    );
    assert_eq!(
        Schedule::cron("0 9 * * *", "Mars/Olympus"),
        Err(ScheduleError::UnknownTimeZone("Mars/Olympus".into()))
    );
    let err = Schedule::at("tomorrow at nine", "UTC").unwrap_err();
    assert!(
        err.to_string()
            .contains("Expected format: YYYY-MM-DDTHH:MM:SS"),
        "{err}"
    );
}

#[test]
fn schedules_describe_themselves() {
    assert_eq!(Schedule::every(60).unwrap().describe(), "every 60s");
    assert_eq!(
        Schedule::cron("0 9 * * *", "UTC").unwrap().describe(),
        "cron '0 9 * * *' (UTC)"
    );
}

/// Runs `f` in a thread of its own, failing the test if it takes longer than a minute.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(value) => value,
        // The body panicked: report its panic, not a timeout.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the test ran for more than a minute")
        }
    }
}

fn next(expr: &str, tz: &str, after: &str) -> Option<Timestamp> {
    Schedule::cron(expr, tz).unwrap().next_after(ts(after))
}

/// What `croner` alone says, the oracle within the horizon.
fn croner_next(expr: &str, tz: &str, after: &str) -> Option<Timestamp> {
    use std::str::FromStr;
    let cron = croner::Cron::from_str(expr).unwrap();
    let zone = jiff::tz::TimeZone::get(tz).unwrap();
    cron.find_next_occurrence(&ts(after).to_zoned(zone), false)
        .ok()
        .map(|z| z.timestamp())
}

/// A weekly job at midnight on Sunday: on the Sunday the clocks go forward
/// at midnight (00:00 -> 01:00) it runs at 01:00, right after the gap, as
/// `croner` runs it, and is not put off to the next week.
#[test]
fn a_weekly_midnight_job_runs_on_the_day_its_midnight_is_skipped() {
    within_a_minute(|| {
        for (tz, after, expected) in [
            // Havana: 2026-03-08 00:00 -> 01:00 (-05 -> -04).
            (
                "America/Havana",
                "2026-03-07T12:00:00Z",
                "2026-03-08T05:00:00Z",
            ),
            // Beirut: 2026-03-29 00:00 -> 01:00 (+02 -> +03).
            (
                "Asia/Beirut",
                "2026-03-28T12:00:00Z",
                "2026-03-28T22:00:00Z",
            ),
            // Santiago: 2026-09-06 00:00 -> 01:00 (-04 -> -03).
            (
                "America/Santiago",
                "2026-09-05T12:00:00Z",
                "2026-09-06T04:00:00Z",
            ),
        ] {
            assert_eq!(
                croner_next("0 0 * * SUN", tz, after),
                Some(ts(expected)),
                "{tz}: the oracle"
            );
            assert_eq!(
                next("0 0 * * SUN", tz, after),
                Some(ts(expected)),
                "{tz}: the Sunday the clocks go forward at midnight"
            );
        }
    });
}

/// A job whose only run within the horizon falls in such a gap runs right
/// after it (01:00 on 2036-03-30 in Beirut), and is not taken to never fire.
#[test]
fn a_job_whose_run_falls_in_a_midnight_gap_is_not_taken_to_never_fire() {
    within_a_minute(|| {
        let (expr, tz, after) = ("0 0 0 30 3 * 2036", "Asia/Beirut", "2026-05-14T10:14:59Z");
        let oracle = croner_next(expr, tz, after);
        assert_eq!(oracle, Some(ts("2036-03-29T22:00:00Z")));
        assert_eq!(next(expr, tz, after), oracle);
    });
}
