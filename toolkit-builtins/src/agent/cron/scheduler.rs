//! The [`Scheduler`] trait the `cron` tool talks to, and [`TokioScheduler`],
//! the ready-made one: it runs in-process on tokio and keeps its jobs in a file.

use std::path::Path;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::Notify;
use toolsmith::async_trait;

use super::job::{CronError, CronJob, NewJob};
use super::schedule::{Schedule, ScheduleError};
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
    jobs: Mutex<Vec<CronJob>>,
    changed: Notify,
    handler: Arc<dyn JobHandler>,
    clock: Clock,
}

impl TokioScheduler {
    /// A scheduler keeping its jobs in `path`, with the jobs already saved
    /// there; due jobs go to `handler`.
    pub fn open(path: impl AsRef<Path>, handler: impl JobHandler) -> Result<Self, CronError> {
        Self::open_with_clock(path, handler, Clock::system())
    }

    /// Like [`open`](Self::open), reading the time from `clock`.
    pub fn open_with_clock(
        path: impl AsRef<Path>,
        handler: impl JobHandler,
        clock: Clock,
    ) -> Result<Self, CronError> {
        let store = JobStore::new(path.as_ref());
        let mut jobs = store.load()?;
        // The file may have been written by hand, or by someone else: a job
        // no `add` would take is left out, not run.
        jobs.retain(|job| match job.schedule.check() {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "a saved job is left out");
                false
            }
        });
        if jobs.len() > MAX_JOBS {
            tracing::warn!(
                saved = jobs.len(),
                "the jobs file holds more jobs than are kept; the first {MAX_JOBS} are"
            );
            jobs.truncate(MAX_JOBS);
        }
        Ok(Self {
            shared: Arc::new(Shared {
                store,
                jobs: Mutex::new(jobs),
                changed: Notify::new(),
                handler: Arc::new(handler),
                clock,
            }),
        })
    }

    /// The jobs file.
    pub fn path(&self) -> &Path {
        self.shared.store.path()
    }

    /// A copy of every job.
    pub fn jobs(&self) -> Vec<CronJob> {
        self.lock().clone()
    }

    /// Add or update a job the system manages: the agent sees it but cannot
    /// remove it, and is told `reason`. A protected job with the same name is
    /// replaced (keeping its id), so calling this at every start is safe.
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
            .position(|j| j.protected.is_some() && j.name == name);
        let id = match existing {
            Some(i) => jobs[i].id.clone(),
            None => fresh_id(|id| jobs.iter().any(|j| j.id == id)),
        };
        let mut created = build_job(id, job, now)?;
        created.protected = Some(reason);
        let mut updated = jobs.clone();
        match existing {
            Some(i) => {
                created.created_at = updated[i].created_at;
                updated[i] = created.clone();
            }
            None => updated.push(created.clone()),
        }
        let previous = jobs.clone();
        if let Err(e) = self.commit(&mut jobs, updated) {
            *jobs = previous;
            return Err(e);
        }
        Ok(created)
    }

    /// Run the loop on the current tokio runtime until the handle is aborted.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let scheduler = self.clone();
        tokio::spawn(async move { scheduler.run().await })
    }

    /// The loop: fire what is due, sleep until the next job or a change.
    pub async fn run(&self) {
        // The jobs whose last firing has not finished: one is not fired
        // again until it has, so a slow handler cannot pile firings up.
        let firing = Arc::new(Mutex::new(std::collections::HashSet::<String>::new()));
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
            for job in due {
                let started = firing
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(job.id.clone());
                if !started {
                    tracing::warn!(job = %job.id, "a job's last firing has not finished; this one is skipped");
                    continue;
                }
                let handler = Arc::clone(&self.shared.handler);
                let done = Finished(Arc::clone(&firing), job.id.clone());
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

    /// The jobs due at `now`, with their next runs moved on, and the
    /// earliest run still ahead.
    fn take_due(&self, now: Timestamp) -> (Vec<CronJob>, Option<Timestamp>) {
        let mut jobs = self.lock();
        let mut due = Vec::new();
        let mut updated = Vec::with_capacity(jobs.len());
        for job in jobs.iter() {
            let mut job = job.clone();
            if job.next_run.is_some_and(|at| at <= now) {
                job.last_run = Some(now);
                job.next_run = job.schedule.next_after(now);
                due.push(job.clone());
                if job.schedule.is_one_shot() {
                    continue;
                }
            }
            updated.push(job);
        }
        if !due.is_empty()
            && let Err(e) = self.commit(&mut jobs, updated)
        {
            // The jobs still fire; the file catches up at the next change.
            tracing::warn!(error = %e, "the jobs file could not be updated");
        }
        let next = jobs.iter().filter_map(|j| j.next_run).min();
        (due, next)
    }

    /// Save `updated`, then make it the live set: the file and memory never disagree.
    fn commit(
        &self,
        jobs: &mut MutexGuard<'_, Vec<CronJob>>,
        updated: Vec<CronJob>,
    ) -> Result<(), CronError> {
        let saved = self.shared.store.save(&updated);
        // Even when saving failed, due jobs have fired: keep their new times in memory.
        **jobs = updated;
        self.shared.changed.notify_one();
        saved
    }

    fn lock(&self) -> MutexGuard<'_, Vec<CronJob>> {
        self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Takes a job out of the set of those firing when dropped.
struct Finished(Arc<Mutex<std::collections::HashSet<String>>>, String);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.1);
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

/// A stored job from a new one, with its first run after `now`.
fn build_job(id: String, job: NewJob, now: Timestamp) -> Result<CronJob, CronError> {
    let next_run = job.schedule.next_after(now);
    if next_run.is_none() {
        return Err(match job.schedule {
            Schedule::At { at } => CronError::InThePast(at),
            other => ScheduleError::NeverFires(other.describe()).into(),
        });
    }
    Ok(CronJob {
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
    })
}

#[async_trait]
impl Scheduler for TokioScheduler {
    async fn add(&self, job: NewJob) -> Result<CronJob, CronError> {
        let now = self.shared.clock.now();
        let mut jobs = self.lock();
        if jobs.len() >= MAX_JOBS {
            return Err(CronError::TooMany(MAX_JOBS));
        }
        let id = fresh_id(|id| jobs.iter().any(|j| j.id == id));
        let created = build_job(id, job, now)?;
        let mut updated = jobs.clone();
        updated.push(created.clone());
        let previous = jobs.clone();
        if let Err(e) = self.commit(&mut jobs, updated) {
            // Not saved means not added: the agent must not believe it was.
            *jobs = previous;
            return Err(e);
        }
        Ok(created)
    }

    async fn list(&self) -> Result<Vec<CronJob>, CronError> {
        Ok(self.jobs())
    }

    async fn remove(&self, id: &str) -> Result<CronJob, CronError> {
        let mut jobs = self.lock();
        let index = jobs
            .iter()
            .position(|j| j.id == id)
            .ok_or_else(|| CronError::NotFound(id.to_owned()))?;
        if let Some(reason) = &jobs[index].protected {
            return Err(CronError::Protected {
                id: id.to_owned(),
                name: jobs[index].name.clone(),
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
        Ok(removed)
    }
}
