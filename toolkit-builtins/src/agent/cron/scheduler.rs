//! The [`Scheduler`] trait the `cron` tool talks to, and [`TokioScheduler`],
//! the ready-made one: it runs in-process on tokio and keeps its jobs in a file.

use std::collections::HashSet;
use std::path::Path;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::Notify;
use toolsmith::async_trait;

use super::job::{CronError, CronJob, MAX_CHAT_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS, NewJob};
use super::schedule::{HORIZON_YEARS, Plan, Schedule, ScheduleError};
use super::store::JobStore;
use crate::agent::files::fresh_id;
use crate::agent::message::{Messenger, OutboundMessage};

/// Keeps the agent's scheduled jobs. Implement it to schedule jobs your way;
/// [`TokioScheduler`] is ready to use.
#[async_trait]
pub trait Scheduler: Send + Sync + 'static {
    /// Add a job and return it with its id and first run.
    async fn add(&self, job: NewJob) -> Result<CronJob, CronError>;
    /// Every job, protected ones included.
    async fn list(&self) -> Result<Vec<CronJob>, CronError>;
    /// Remove a job; a protected job is refused with [`CronError::Protected`].
    async fn remove(&self, id: &str) -> Result<CronJob, CronError>;
}

/// What happens when a job fires.
#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    /// Act on a job that is due.
    async fn fire(&self, job: CronJob);
}

/// Any async function of a job is a handler: run an agent turn on the
/// job's message, say, and deliver what it answers.
#[async_trait]
impl<F, Fut> JobHandler for F
where
    F: Fn(CronJob) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    async fn fire(&self, job: CronJob) {
        self(job).await
    }
}

/// Delivers the job's message to the chat it was scheduled from.
#[async_trait]
impl JobHandler for Messenger {
    async fn fire(&self, job: CronJob) {
        let message = OutboundMessage::new(&job.channel, &job.chat_id, &job.message);
        if let Err(e) = self.send(message).await {
            tracing::warn!(job = %job.id, error = %e, "a scheduled message was not delivered");
        }
    }
}

/// Where a scheduler reads the time.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// The system's wall clock.
    pub fn system() -> Self {
        Self(Arc::new(Timestamp::now))
    }

    /// Wall time that starts at `start` and advances with tokio's clock, so
    /// a test with paused time (`tokio::time::pause`) drives the schedule.
    pub fn tokio(start: Timestamp) -> Self {
        let base = tokio::time::Instant::now();
        Self(Arc::new(move || {
            let elapsed = base.elapsed();
            start.checked_add(elapsed).unwrap_or(Timestamp::MAX)
        }))
    }

    /// The time now.
    pub fn now(&self) -> Timestamp {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// The longest the loop sleeps before looking at the clock again: tokio's
/// timers follow a monotonic clock, which stands still while the machine
/// sleeps, so the wall clock is consulted at least this often.
const MAX_SLEEP: Duration = Duration::from_secs(60);

/// The most jobs kept. Each is saved with the rest on every change, so a
/// model adding jobs in a loop would make every change slower and the file
/// larger without end.
pub const MAX_JOBS: usize = 1000;

/// The least time between two passes over the jobs: a job that is due again
/// at once (a period of zero in a jobs file written by hand, or by someone
/// else) fires once a pass, not in a loop.
const MIN_PASS: Duration = Duration::from_secs(1);

/// The ready-made [`Scheduler`]: jobs live in memory and in a JSON file
/// (rewritten atomically on every change, read back by [`open`](Self::open));
/// [`start`](Self::start) runs the loop that fires them on tokio through a
/// [`JobHandler`].
///
/// The file may sit where a command or someone else can write, so what it
/// says is checked as the model's input is: a job no [`add`](Scheduler::add)
/// would take (a message, name, expression, time zone, channel or chat id
/// too long, a schedule that does not fire within
/// [`HORIZON_YEARS`](super::HORIZON_YEARS)) is left out at load, and so is
/// one whose id is not what `add` makes (eight hex digits) and a second job
/// of an id already read. A change whose saved file would be larger than is
/// read back is refused ([`CronError::FileTooLarge`]). The host's system jobs
/// ([`add_system_job`](Self::add_system_job)) live in memory only: the file
/// can neither protect a job of its own nor unprotect one of the host's.
///
/// The file also names the chat each job reports to, and nothing here can
/// tell one chat from another: whoever can write the file can have a job
/// report to any chat, as the `message` tool sends to any chat the model
/// names. Keep the file where only the host writes when that matters, or
/// check `channel` and `chat_id` in the [`JobHandler`].
///
/// ```no_run
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::agent::{ChannelSink, CronJobs, Messenger, TokioScheduler};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let (sink, _outbox) = ChannelSink::new(64);
/// // Due jobs are delivered to the chat that scheduled them.
/// let scheduler = TokioScheduler::open("jobs.json", Messenger::new(sink)).unwrap();
/// let _loop = scheduler.start();
/// let ctx = ToolContext::new().with_state(CronJobs::new(scheduler).with_timezone("Europe/Paris"));
/// # let _ = ctx;
/// # }
/// ```
#[derive(Clone)]
pub struct TokioScheduler {
    shared: Arc<Shared>,
}

struct Shared {
    store: JobStore,
    jobs: Mutex<Vec<Entry>>,
    changed: Notify,
    handler: Arc<dyn JobHandler>,
    clock: Clock,
    /// The jobs whose last firing has not finished: one is not fired again
    /// until it has, so a slow handler cannot pile firings up.
    firing: Arc<Mutex<HashSet<String>>>,
}

/// A job with its schedule read once, when it was added or loaded: a pass
/// over the jobs parses nothing.
#[derive(Clone)]
struct Entry {
    job: CronJob,
    plan: Plan,
}

impl TokioScheduler {
    /// A scheduler keeping its jobs in `path`, with the jobs already saved
    /// there; due jobs go to `handler`.
    ///
    /// The folder of `path` is made if missing and opened now, once: the
    /// file is read and replaced in that folder, so a link put in place of
    /// the folder (or of one above it) later leads no write elsewhere.
    pub fn open(path: impl AsRef<Path>, handler: impl JobHandler) -> Result<Self, CronError> {
        Self::open_with_clock(path, handler, Clock::system())
    }

    /// Like [`open`](Self::open), reading the time from `clock`.
    pub fn open_with_clock(
        path: impl AsRef<Path>,
        handler: impl JobHandler,
        clock: Clock,
    ) -> Result<Self, CronError> {
        let store = JobStore::new(path.as_ref())?;
        let mut jobs = store.load()?;
        // Cut before reading the schedules, so a file of many jobs costs no
        // more than the most that are kept.
        if jobs.len() > MAX_JOBS {
            tracing::warn!(
                saved = jobs.len(),
                "the jobs file holds more jobs than are kept; the first {MAX_JOBS} are"
            );
            jobs.truncate(MAX_JOBS);
        }
        let entries = load_entries(jobs, clock.now());
        Ok(Self {
            shared: Arc::new(Shared {
                store,
                jobs: Mutex::new(entries),
                changed: Notify::new(),
                handler: Arc::new(handler),
                clock,
                firing: Arc::default(),
            }),
        })
    }

    /// The jobs file.
    pub fn path(&self) -> &Path {
        self.shared.store.path()
    }

    /// A copy of every job.
    pub fn jobs(&self) -> Vec<CronJob> {
        self.lock().iter().map(|entry| entry.job.clone()).collect()
    }

    /// Add or update a job the system manages: the agent sees it but cannot
    /// remove it, and is told `reason`. A system job added earlier with the
    /// same name is replaced (keeping its id).
    ///
    /// System jobs are kept in memory only, never in the jobs file: whether
    /// a job is protected is decided here, in the host's code, and not by a
    /// file that a command or someone else may write. Call this at every
    /// start; a job that a file (from an older version, or planted) marks
    /// as protected is left out when the file is read.
    pub fn add_system_job(
        &self,
        job: NewJob,
        reason: impl Into<String>,
    ) -> Result<CronJob, CronError> {
        let reason = reason.into();
        let now = self.shared.clock.now();
        let mut jobs = self.lock();
        let name = job_name(&job);
        let existing = jobs
            .iter()
            .position(|e| e.job.protected.is_some() && e.job.name == name);
        let id = match existing {
            Some(i) => jobs[i].job.id.clone(),
            None => fresh_id(|id| jobs.iter().any(|e| e.job.id == id)),
        };
        let mut created = build_job(id, job, now)?;
        created.job.protected = Some(reason);
        let mut updated = jobs.clone();
        match existing {
            Some(i) => {
                created.job.created_at = updated[i].job.created_at;
                updated[i] = created.clone();
            }
            None => updated.push(created.clone()),
        }
        let previous = jobs.clone();
        if let Err(e) = self.commit(&mut jobs, updated) {
            *jobs = previous;
            return Err(e);
        }
        Ok(created.job)
    }

    /// Run the loop on the current tokio runtime until the handle is aborted.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let scheduler = self.clone();
        tokio::spawn(async move { scheduler.run().await })
    }

    /// The loop: fire what is due, sleep until the next job or a change.
    pub async fn run(&self) {
        let mut last_pass: Option<tokio::time::Instant> = None;
        loop {
            if let Some(last) = last_pass {
                tokio::time::sleep_until(last + MIN_PASS).await;
            }
            last_pass = Some(tokio::time::Instant::now());
            // Registered before looking at the jobs, so a change made while
            // this pass runs still wakes the sleep below.
            let mut changed = pin!(self.shared.changed.notified());
            changed.as_mut().enable();
            let now = self.shared.clock.now();
            let (due, next) = self.take_due(now);
            for (job, done) in due {
                let handler = Arc::clone(&self.shared.handler);
                tokio::spawn(async move {
                    // Told when the firing ends, a panic in the handler too.
                    let _done = done;
                    handler.fire(job).await;
                });
            }
            let sleep = next
                .map(|at| at.duration_since(now).unsigned_abs())
                .unwrap_or(MAX_SLEEP)
                .min(MAX_SLEEP);
            tokio::select! {
                () = tokio::time::sleep(sleep) => {}
                () = changed => {}
            }
        }
    }

    /// The jobs to fire at `now`, each marked as firing until its
    /// [`Finished`] is dropped, with the next runs of every due job moved
    /// on, and the earliest run still ahead.
    ///
    /// A due job whose last firing still runs (its id may also be that of
    /// a system job the host replaced meanwhile) is skipped, and did not
    /// run, so its `last_run` stays. A recurring one's next run moves on; a
    /// one-shot's stays, and it fires once the firing ends (which wakes the
    /// loop). A recurring job that does not fire again within the horizon
    /// is removed.
    fn take_due(&self, now: Timestamp) -> (Vec<(CronJob, Finished)>, Option<Timestamp>) {
        let mut jobs = self.lock();
        let is_due = |e: &Entry| e.job.next_run.is_some_and(|at| at <= now);
        if !jobs.iter().any(is_due) {
            // Most passes: nothing to copy, nothing to save.
            return (Vec::new(), jobs.iter().filter_map(|e| e.job.next_run).min());
        }
        let mut due = Vec::new();
        let mut changed = false;
        // The earliest run ahead, leaving out the one-shots that wait for
        // a firing to end: the end of the firing wakes the loop, not a timer.
        let mut next: Option<Timestamp> = None;
        let mut updated = Vec::with_capacity(jobs.len());
        let mut firing = self.shared.firing.lock().unwrap_or_else(|e| e.into_inner());
        for entry in jobs.iter() {
            let mut entry = entry.clone();
            if is_due(&entry) {
                let one_shot = entry.job.schedule.is_one_shot();
                if firing.insert(entry.job.id.clone()) {
                    entry.job.last_run = Some(now);
                    entry.job.next_run = entry.plan.next_after(now);
                    let done = Finished(Arc::clone(&self.shared), entry.job.id.clone());
                    due.push((entry.job.clone(), done));
                    changed = true;
                    if one_shot {
                        continue;
                    }
                } else if one_shot {
                    tracing::debug!(job = %entry.job.id, "a one-shot waits for the last firing of its id to finish");
                    updated.push(entry);
                    continue;
                } else {
                    tracing::warn!(job = %entry.job.id, "a job's last firing has not finished; this one is skipped");
                    entry.job.next_run = entry.plan.next_after(now);
                    changed = true;
                }
                if entry.job.next_run.is_none() {
                    tracing::warn!(
                        job = %entry.job.id,
                        schedule = %entry.job.schedule.describe(),
                        "a job that does not fire again within {HORIZON_YEARS} years is removed"
                    );
                    continue;
                }
            }
            next = next.into_iter().chain(entry.job.next_run).min();
            updated.push(entry);
        }
        drop(firing);
        if changed && let Err(e) = self.commit(&mut jobs, updated) {
            // The jobs still fire; the file catches up at the next change.
            tracing::warn!(error = %e, "the jobs file could not be updated");
        }
        (due, next)
    }

    /// Save `updated`, then make it the live set: the file and memory never
    /// disagree (but for system jobs, which are never saved).
    fn commit(
        &self,
        jobs: &mut MutexGuard<'_, Vec<Entry>>,
        updated: Vec<Entry>,
    ) -> Result<(), CronError> {
        let kept: Vec<CronJob> = updated
            .iter()
            .filter(|e| e.job.protected.is_none())
            .map(|e| e.job.clone())
            .collect();
        let saved = self.shared.store.save(&kept);
        // Even when saving failed, due jobs have fired: keep their new times in memory.
        **jobs = updated;
        self.shared.changed.notify_one();
        saved
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Takes a job out of the set of those firing when dropped, and wakes the
/// loop: a one-shot of that id may be waiting.
struct Finished(Arc<Shared>, String);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0
            .firing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.1);
        self.0.changed.notify_one();
    }
}

impl std::fmt::Debug for TokioScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokioScheduler")
            .field("path", &self.path())
            .field("jobs", &self.lock().len())
            .finish()
    }
}

/// The name a job is listed under: the one given, else the message's first words.
fn job_name(job: &NewJob) -> String {
    match job.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => {
            let words = job.message.split_whitespace().collect::<Vec<_>>().join(" ");
            match words.char_indices().nth(30) {
                Some((cut, _)) => format!("{}...", &words[..cut]),
                None => words,
            }
        }
    }
}

/// A stored job from a new one, with its schedule read and its first run
/// after `now`.
fn build_job(id: String, job: NewJob, now: Timestamp) -> Result<Entry, CronError> {
    if let Some(name) = &job.name {
        check_length("name", name, MAX_NAME_CHARS)?;
    }
    check_length("message", &job.message, MAX_MESSAGE_CHARS)?;
    check_length("channel", &job.channel, MAX_CHAT_CHARS)?;
    check_length("chat_id", &job.chat_id, MAX_CHAT_CHARS)?;
    let plan = job.schedule.plan()?;
    let next_run = plan.next_after(now);
    if next_run.is_none() {
        return Err(match job.schedule {
            Schedule::At { at } => CronError::InThePast(at),
            other => ScheduleError::NeverFires(other.describe()).into(),
        });
    }
    let job = CronJob {
        id,
        name: job_name(&job),
        schedule: job.schedule,
        message: job.message,
        channel: job.channel,
        chat_id: job.chat_id,
        protected: None,
        created_at: now,
        next_run,
        last_run: None,
    };
    Ok(Entry { job, plan })
}

/// Refuses `text` when it is longer than `max` characters.
fn check_length(what: &'static str, text: &str, max: usize) -> Result<(), CronError> {
    // Counted no further than one past the most: a long text costs no more.
    if text.chars().nth(max).is_some() {
        return Err(CronError::TooLong { what, max });
    }
    Ok(())
}

/// Whether `id` is one `fresh_id` could have made: eight lowercase hex digits.
fn is_made_id(id: &str) -> bool {
    id.len() == 8
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The jobs read from the file that a scheduler keeps, each with its
/// schedule read. The file may have been written by hand, or by someone
/// else: a job no `add` would take is left out, not run, and so is one it
/// marks as protected (only the host protects jobs, in code), and one whose
/// id was already read (no `add` makes two, and `remove` would leave the
/// twin), and one whose id is not what `add` makes (eight hex digits: `list`
/// shows the id to the model, and a planted one could say anything).
fn load_entries(jobs: Vec<CronJob>, now: Timestamp) -> Vec<Entry> {
    let mut seen = HashSet::new();
    jobs.into_iter()
        .filter_map(|mut job| {
            if !is_made_id(&job.id) {
                // Not logged: the id may be megabytes of anything.
                tracing::warn!(
                    bytes = job.id.len(),
                    "a saved job is left out: its id is not eight hex digits, as `add` makes"
                );
                return None;
            }
            let left_out = |error: &dyn std::fmt::Display| {
                tracing::warn!(job = %job.id, error = %error, "a saved job is left out");
            };
            if job.protected.is_some() {
                left_out(&"it is marked as a system job; only the host marks those, at start");
                return None;
            }
            if !seen.insert(job.id.clone()) {
                left_out(&"a job of this id was read before it");
                return None;
            }
            let lengths = check_length("message", &job.message, MAX_MESSAGE_CHARS)
                .and_then(|()| check_length("name", &job.name, MAX_NAME_CHARS))
                .and_then(|()| check_length("channel", &job.channel, MAX_CHAT_CHARS))
                .and_then(|()| check_length("chat_id", &job.chat_id, MAX_CHAT_CHARS));
            if let Err(e) = lengths {
                left_out(&e);
                return None;
            }

            let plan = match job.schedule.plan() {
                Ok(plan) => plan,
                Err(e) => {
                    left_out(&e);
                    return None;
                }
            };
            // Searched once here, never again by a pass: the expression
            // that never matches is the one whose search is the longest.
            // A job the file gives no next run is given one, so none is
            // kept that never fires.
            job.next_run = plan.next_at_load(job.next_run, now);
            if job.next_run.is_none() {
                left_out(&ScheduleError::NeverFires(job.schedule.describe()));
                return None;
            }
            Some(Entry { job, plan })
        })
        .collect()
}

#[async_trait]
impl Scheduler for TokioScheduler {
    async fn add(&self, job: NewJob) -> Result<CronJob, CronError> {
        let now = self.shared.clock.now();
        let mut jobs = self.lock();
        if jobs.len() >= MAX_JOBS {
            return Err(CronError::TooMany(MAX_JOBS));
        }
        let id = fresh_id(|id| jobs.iter().any(|e| e.job.id == id));
        let created = build_job(id, job, now)?;
        let mut updated = jobs.clone();
        updated.push(created.clone());
        let previous = jobs.clone();
        if let Err(e) = self.commit(&mut jobs, updated) {
            // Not saved means not added: the agent must not believe it was.
            *jobs = previous;
            return Err(e);
        }
        Ok(created.job)
    }

    async fn list(&self) -> Result<Vec<CronJob>, CronError> {
        Ok(self.jobs())
    }

    async fn remove(&self, id: &str) -> Result<CronJob, CronError> {
        let mut jobs = self.lock();
        let index = jobs
            .iter()
            .position(|e| e.job.id == id)
            .ok_or_else(|| CronError::NotFound(id.to_owned()))?;
        if let Some(reason) = &jobs[index].job.protected {
            return Err(CronError::Protected {
                id: id.to_owned(),
                name: jobs[index].job.name.clone(),
                reason: reason.clone(),
            });
        }
        let mut updated = jobs.clone();
        let removed = updated.remove(index);
        let previous = jobs.clone();
        if let Err(e) = self.commit(&mut jobs, updated) {
            *jobs = previous;
            return Err(e);
        }
        Ok(removed.job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cron::schedule::{READS, SEARCHES};

    fn counted() -> (usize, usize) {
        (READS.with(|r| r.get()), SEARCHES.with(|s| s.get()))
    }

    /// Schedules are read when the file is, and a cron expression is
    /// searched then and once each time its job fires: a pass reads
    /// nothing, and never searches for the job a planted expression that
    /// never matches would have made due on every pass.
    #[test]
    fn a_pass_reads_no_schedule_and_searches_only_for_what_fires() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.json");
        let start: Timestamp = "2026-01-15T12:00:00Z".parse().unwrap();
        let job = |id: &str, expr: &str| {
            serde_json::json!({"id": id, "name": id, "message": "m",
                "schedule": {"kind": "cron", "expr": expr, "tz": "Europe/Paris"},
                "channel": "telegram", "chat_id": "42", "created_at": start,
                "next_run": start, "last_run": null})
        };
        let file = serde_json::json!({"version": 1, "jobs": [
            job("00000001", "0 0 30 2 *"),
            job("00000002", "* * * * *"),
        ]});
        std::fs::write(&path, file.to_string()).unwrap();
        let now = Arc::new(Mutex::new(start));
        let read_now = Arc::clone(&now);
        let clock = Clock(Arc::new(move || *read_now.lock().unwrap()));
        let before = counted();
        let scheduler =
            TokioScheduler::open_with_clock(&path, |_job: CronJob| async {}, clock).unwrap();
        let at_load = counted();
        assert_eq!((at_load.0 - before.0, at_load.1 - before.1), (2, 2));
        assert_eq!(scheduler.jobs().len(), 1);

        let mut fired = 0;
        for minute in 1..=10 {
            let at = start
                .checked_add(jiff::SignedDuration::from_mins(minute))
                .unwrap();
            *now.lock().unwrap() = at;
            let (due, _) = scheduler.take_due(at);
            fired += due.len();
        }
        let after = counted();
        assert_eq!(fired, 10);
        assert_eq!((after.0 - at_load.0, after.1 - at_load.1), (0, 10));
    }
}
