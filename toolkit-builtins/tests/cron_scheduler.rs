//! The tokio scheduler fires jobs on tokio's (paused) clock and keeps them
//! in its file across restarts.

#![cfg(feature = "agent")]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::mpsc::Receiver;
use toolsmith_builtins::agent::cron::{
    Clock, CronError, CronJob, NewJob, Schedule, Scheduler, TokioScheduler,
};
use toolsmith_builtins::agent::{ChannelSink, Messenger, OutboundMessage};

const START: &str = "2026-01-15T12:00:00Z";

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn job(schedule: Schedule, message: &str) -> NewJob {
    NewJob::new(schedule, message, "telegram", "42")
}

/// A scheduler keeping its jobs in `dir`, on tokio's clock from `START`,
/// that sends each due job's message to the outbox it returns.
fn messaging_scheduler(dir: &Path) -> (TokioScheduler, Clock, Receiver<OutboundMessage>) {
    let (sink, outbox) = ChannelSink::new(8);
    let clock = Clock::tokio(ts(START));
    let scheduler =
        TokioScheduler::open_with_clock(dir.join("jobs.json"), Messenger::new(sink), clock.clone())
            .unwrap();
    (scheduler, clock, outbox)
}

#[tokio::test(start_paused = true)]
async fn a_recurring_job_fires_each_period_and_a_one_shot_once() {
    let dir = tempfile::tempdir().unwrap();
    let (scheduler, clock, mut outbox) = messaging_scheduler(dir.path());
    let every = scheduler
        .add(job(Schedule::every(60).unwrap(), "stretch"))
        .await
        .unwrap();
    let once = scheduler
        .add(job(
            Schedule::at("2026-01-15T12:01:30Z", "UTC").unwrap(),
            "meeting",
        ))
        .await
        .unwrap();
    let _loop = scheduler.start();

    // Tokio's paused clock jumps straight to each timer.
    let first = outbox.recv().await.unwrap();
    assert_eq!(first.content, "stretch");
    assert_eq!(
        (first.channel.as_str(), first.chat_id.as_str()),
        ("telegram", "42")
    );
    assert_eq!(clock.now(), ts("2026-01-15T12:01:00Z"));

    assert_eq!(outbox.recv().await.unwrap().content, "meeting");
    assert_eq!(clock.now(), ts("2026-01-15T12:01:30Z"));
    // The one-shot is gone once it has fired, from memory and from the file.
    tokio::task::yield_now().await;
    assert!(scheduler.jobs().iter().all(|j| j.id != once.id));

    assert_eq!(outbox.recv().await.unwrap().content, "stretch");
    assert_eq!(clock.now(), ts("2026-01-15T12:02:00Z"));
    tokio::task::yield_now().await;
    let stored = scheduler.jobs();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, every.id);
    assert_eq!(stored[0].last_run, Some(ts("2026-01-15T12:02:00Z")));
    assert_eq!(stored[0].next_run, Some(ts("2026-01-15T12:03:00Z")));

    let reloaded =
        TokioScheduler::open(scheduler.path(), Messenger::new(ChannelSink::new(1).0)).unwrap();
    assert_eq!(reloaded.jobs(), stored);
}

#[tokio::test(start_paused = true)]
async fn a_job_added_while_the_loop_sleeps_wakes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (scheduler, clock, mut outbox) = messaging_scheduler(dir.path());
    let _loop = scheduler.start();
    // Let the loop go to sleep with nothing to do.
    tokio::time::sleep(Duration::from_secs(5)).await;
    scheduler
        .add(job(Schedule::every(10).unwrap(), "tick"))
        .await
        .unwrap();
    assert_eq!(outbox.recv().await.unwrap().content, "tick");
    assert_eq!(clock.now(), ts("2026-01-15T12:00:15Z"));
}

#[tokio::test(start_paused = true)]
async fn removed_jobs_do_not_fire() {
    let dir = tempfile::tempdir().unwrap();
    let (scheduler, _clock, mut outbox) = messaging_scheduler(dir.path());
    let doomed = scheduler
        .add(job(Schedule::every(30).unwrap(), "doomed"))
        .await
        .unwrap();
    scheduler
        .add(job(Schedule::every(45).unwrap(), "kept"))
        .await
        .unwrap();
    let _loop = scheduler.start();
    scheduler.remove(&doomed.id).await.unwrap();
    assert_eq!(outbox.recv().await.unwrap().content, "kept");
    assert_eq!(outbox.recv().await.unwrap().content, "kept");
    assert_eq!(
        scheduler.remove(&doomed.id).await,
        Err(CronError::NotFound(doomed.id.clone()))
    );
}

#[tokio::test(start_paused = true)]
async fn jobs_survive_a_restart_and_an_overdue_one_fires_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/jobs.json");
    let added = {
        let scheduler = TokioScheduler::open_with_clock(
            &path,
            Messenger::new(ChannelSink::new(1).0),
            Clock::tokio(ts(START)),
        )
        .unwrap();
        scheduler
            .add(job(
                Schedule::cron("0 9 * * *", "Europe/Paris").unwrap(),
                "morning",
            ))
            .await
            .unwrap()
    };
    assert_eq!(added.next_run, Some(ts("2026-01-16T08:00:00Z")));
    let text = std::fs::read_to_string(&path).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["version"], 1);
    assert_eq!(file["jobs"][0]["schedule"]["expr"], "0 9 * * *");

    // The process was down over the run time: it fires as soon as it is back.
    let (sink, mut outbox) = ChannelSink::new(8);
    let clock = Clock::tokio(ts("2026-01-16T10:00:00Z"));
    let scheduler =
        TokioScheduler::open_with_clock(&path, Messenger::new(sink), clock.clone()).unwrap();
    assert_eq!(scheduler.jobs(), std::slice::from_ref(&added));
    let _loop = scheduler.start();
    assert_eq!(outbox.recv().await.unwrap().content, "morning");
    assert_eq!(clock.now(), ts("2026-01-16T10:00:00Z"));
    tokio::task::yield_now().await;
    assert_eq!(
        scheduler.jobs()[0].next_run,
        Some(ts("2026-01-17T08:00:00Z"))
    );
}

#[test]
fn a_damaged_jobs_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    std::fs::write(&path, "{not json").unwrap();
    let err = TokioScheduler::open(&path, Messenger::new(ChannelSink::new(1).0)).unwrap_err();
    assert!(matches!(err, CronError::Storage { .. }));
    assert!(err.to_string().contains("jobs.json"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn any_async_function_can_handle_a_due_job() {
    let dir = tempfile::tempdir().unwrap();
    let (fired, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let scheduler = TokioScheduler::open_with_clock(
        dir.path().join("jobs.json"),
        move |job: toolsmith_builtins::agent::cron::CronJob| {
            let fired = fired.clone();
            async move {
                let _ = fired.send((job.name, job.last_run));
            }
        },
        Clock::tokio(ts(START)),
    )
    .unwrap();
    scheduler
        .add(job(Schedule::every(3600).unwrap(), "check the build").named("build"))
        .await
        .unwrap();
    let _loop = scheduler.start();
    assert_eq!(
        seen.recv().await.unwrap(),
        ("build".to_owned(), Some(ts("2026-01-15T13:00:00Z")))
    );
}

/// A recurring job whose next run after a firing lies past the horizon is
/// removed then, not kept for ever with no next run: `0 0 0 1 1 *
/// 2027,2040` fires on 2027-01-01, and 2040 is more than ten years on. Read
/// back later, a saved job with no next run is given one, so a job that
/// does fire within the horizon is kept and runs.
#[tokio::test(start_paused = true)]
async fn a_job_whose_next_run_is_past_the_horizon_is_removed_and_none_is_kept_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let fired = Arc::new(Mutex::new(Vec::<Timestamp>::new()));
    let seen = Arc::clone(&fired);
    let clock = Clock::tokio(ts("2026-12-31T23:59:00Z"));
    let firing_clock = clock.clone();
    let scheduler = TokioScheduler::open_with_clock(
        &path,
        move |_job: CronJob| {
            seen.lock().unwrap().push(firing_clock.now());
            async {}
        },
        clock,
    )
    .unwrap();
    let far = Schedule::cron("0 0 0 1 1 * 2027,2040", "UTC").unwrap();
    scheduler.add(job(far.clone(), "far")).await.unwrap();
    let _loop = scheduler.start();
    tokio::time::sleep(Duration::from_secs(180)).await;
    assert_eq!(*fired.lock().unwrap(), [ts("2027-01-01T00:00:00Z")]);
    assert!(scheduler.jobs().is_empty(), "{:?}", scheduler.jobs());
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["jobs"], serde_json::json!([]));

    // A file (of an older version, or written by hand) that gives the job
    // no next run: read in 2031, when 2040 is within the horizon.
    let saved = serde_json::json!({"version": 1, "jobs": [{
        "id": "00000001", "name": "far", "message": "far", "schedule": far,
        "channel": "telegram", "chat_id": "42", "created_at": "2026-12-31T23:59:00Z",
        "next_run": null, "last_run": "2027-01-01T00:00:00Z"}]});
    std::fs::write(&path, saved.to_string()).unwrap();
    let later = TokioScheduler::open_with_clock(
        &path,
        |_job: CronJob| async {},
        Clock::tokio(ts("2031-06-01T00:00:00Z")),
    )
    .unwrap();
    let jobs = later.jobs();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].next_run, Some(ts("2040-01-01T00:00:00Z")));
    // Read in 2028, 2040 is past the horizon: left out, not kept idle.
    let earlier = TokioScheduler::open_with_clock(
        &path,
        |_job: CronJob| async {},
        Clock::tokio(ts("2028-06-01T00:00:00Z")),
    )
    .unwrap();
    assert!(earlier.jobs().is_empty(), "{:?}", earlier.jobs());
}

/// A one-shot that comes due while a firing of its id still runs (the host
/// replaced a recurring system job, still firing, by a one-shot of the
/// same name, so of the same id) waits for that firing to end, then fires:
/// it is not skipped and lost.
#[tokio::test(start_paused = true)]
async fn a_one_shot_due_while_its_id_fires_fires_once_that_firing_ends() {
    let dir = tempfile::tempdir().unwrap();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let fired = Arc::new(Mutex::new(Vec::<(String, Timestamp)>::new()));
    let (gate, seen) = (Arc::clone(&release), Arc::clone(&fired));
    let start = ts(START);
    let clock = Clock::tokio(start);
    let firing_clock = clock.clone();
    let scheduler = TokioScheduler::open_with_clock(
        dir.path().join("jobs.json"),
        move |job: CronJob| {
            seen.lock()
                .unwrap()
                .push((job.message.clone(), firing_clock.now()));
            let gate = Arc::clone(&gate);
            async move {
                if job.message == "slow" {
                    let _ = gate.acquire().await;
                }
            }
        },
        clock,
    )
    .unwrap();
    let first = scheduler
        .add_system_job(
            job(Schedule::every(3600).unwrap(), "slow").named("sys"),
            "the host's",
        )
        .unwrap();
    let _loop = scheduler.start();
    tokio::time::sleep(Duration::from_secs(3601)).await;
    assert_eq!(fired.lock().unwrap().len(), 1);

    let at = start.checked_add(Duration::from_secs(3620)).unwrap();
    let second = scheduler
        .add_system_job(job(Schedule::At { at }, "once").named("sys"), "the host's")
        .unwrap();
    assert_eq!(first.id, second.id, "replaced, keeping its id");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(fired.lock().unwrap().len(), 1, "it waits for the firing");
    assert_eq!(scheduler.jobs()[0].next_run, Some(at), "and keeps its time");
    release.add_permits(1);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let fired = fired.lock().unwrap().clone();
    let messages: Vec<&str> = fired.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(messages, ["slow", "once"]);
    // It fired when the slow firing ended, not a minute on.
    let ended = start.checked_add(Duration::from_secs(3661)).unwrap();
    assert_eq!(fired[1].1, ended);
    assert!(scheduler.jobs().is_empty(), "{:?}", scheduler.jobs());
}
