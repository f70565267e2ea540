//! `cron`: the agent schedules reminders and recurring tasks.
//!
//! The tool talks to a [`Scheduler`]; [`TokioScheduler`] is the ready-made
//! one. Jobs fire every N seconds, on a cron expression in a time zone, or
//! once at a moment ([`Schedule`]).

mod job;
mod schedule;
mod scheduler;
mod store;

use std::sync::Arc;

use toolsmith::{ToolContext, ToolError, tool};

pub use job::{CronError, CronJob, MAX_CHAT_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS, NewJob};
pub use schedule::{
    HORIZON_YEARS, MAX_EXPR_CHARS, MAX_MOMENT_CHARS, MAX_PERIOD_SECS, MAX_TZ_CHARS, Schedule,
    ScheduleError, parse_moment, time_zone,
};
pub use scheduler::{Clock, JobHandler, MAX_JOBS, Scheduler, TokioScheduler};

/// The state the `cron` tool needs: the scheduler, and the time zone that
/// cron expressions and times without an offset are read in when the model
/// gives none (UTC unless set).
#[derive(Clone)]
pub struct CronJobs {
    scheduler: Arc<dyn Scheduler>,
    timezone: String,
}

impl CronJobs {
    /// Jobs kept by `scheduler`, read in UTC by default.
    pub fn new(scheduler: impl Scheduler) -> Self {
        Self::from_arc(Arc::new(scheduler))
    }

    /// Jobs kept by a scheduler that is already shared.
    pub fn from_arc(scheduler: Arc<dyn Scheduler>) -> Self {
        Self {
            scheduler,
            timezone: "UTC".into(),
        }
    }

    /// Read cron expressions and times without offset in this IANA time zone.
    pub fn with_timezone(mut self, timezone: impl Into<String>) -> Self {
        self.timezone = timezone.into();
        self
    }

    /// The default time zone.
    pub fn timezone(&self) -> &str {
        &self.timezone
    }
}

/// Marks a turn the host runs because a job fired: put it in that turn's
/// context and the `cron` tool will list and remove jobs but not add any,
/// so a job cannot schedule more jobs, which schedule more in turn.
///
/// ```
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::agent::cron::{CronJob, FiredJob};
///
/// fn context_for(job: &CronJob) -> ToolContext {
///     ToolContext::new()
///         .with_channel(&job.channel, &job.chat_id)
///         .with_state(FiredJob { job_id: job.id.clone() })
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredJob {
    /// The id of the job that fired.
    pub job_id: String,
}

impl std::fmt::Debug for CronJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronJobs")
            .field("timezone", &self.timezone)
            .finish()
    }
}

/// What the `cron` tool is asked to do.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, toolsmith::schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum CronAction {
    /// Schedule a new job.
    Add,
    /// Show every job.
    List,
    /// Remove a job by id.
    Remove,
}

/// Schedule reminders and recurring tasks: `add` a job that fires every N
/// seconds (`every_seconds`), on a cron expression (`cron_expr`, with an
/// optional IANA `tz`), or once at a time (`at`); `list` jobs; `remove` one by
/// `job_id`. When a job fires, its message comes back to this chat.
#[tool]
#[allow(clippy::too_many_arguments)]
pub async fn cron(
    ctx: &ToolContext,
    jobs: &CronJobs,
    /// What to do.
    action: CronAction,
    /// For add: the instruction or reminder to deliver when the job fires.
    // As MAX_MESSAGE_CHARS and MAX_NAME_CHARS (the attribute takes a literal);
    // a test checks they agree.
    #[arg(max_length = 4000)]
    message: Option<String>,
    /// For add: a short name for the job.
    #[arg(max_length = 100)]
    name: Option<String>,
    /// For add: fire every this many seconds (for recurring tasks).
    #[arg(minimum = 1)]
    every_seconds: Option<u64>,
    /// For add: a cron expression like '0 9 * * *' (for scheduled tasks).
    // As MAX_EXPR_CHARS and MAX_TZ_CHARS; a test checks they agree.
    #[arg(max_length = 256)]
    cron_expr: Option<String>,
    /// For add, with cron_expr only: an IANA time zone such as 'America/Vancouver'.
    #[arg(max_length = 64)]
    tz: Option<String>,
    /// For add: an ISO datetime for one-time execution, e.g. '2026-02-12T10:30:00'
    /// (read in the default time zone unless it has an offset).
    // As MAX_MOMENT_CHARS; a test checks they agree.
    #[arg(max_length = 64)]
    at: Option<String>,
    /// For remove: the job's id.
    job_id: Option<String>,
) -> Result<String, ToolError> {
    match action {
        CronAction::Add => {
            let when = When {
                every_seconds,
                cron_expr,
                tz,
                at,
            };
            add(ctx, jobs, message, name, when).await
        }
        CronAction::List => list(jobs).await,
        CronAction::Remove => {
            let id = job_id.filter(|id| !id.trim().is_empty()).ok_or_else(|| {
                ToolError::InvalidArguments("job_id is required for remove".into())
            })?;
            match jobs.scheduler.remove(id.trim()).await {
                Ok(job) => Ok(format!("Removed job '{}' (id: {})", job.name, job.id)),
                Err(e @ (CronError::NotFound(_) | CronError::Protected { .. })) => {
                    Err(ToolError::failed(e))
                }
                Err(e) => Err(ToolError::failed(format!("the job was not removed: {e}"))),
            }
        }
    }
}

/// The schedule arguments of `add`.
struct When {
    every_seconds: Option<u64>,
    cron_expr: Option<String>,
    tz: Option<String>,
    at: Option<String>,
}

impl When {
    fn schedule(self, default_tz: &str) -> Result<Schedule, ToolError> {
        let invalid = |e: ScheduleError| ToolError::InvalidArguments(e.to_string());
        if self.tz.is_some() && self.cron_expr.is_none() {
            return Err(ToolError::InvalidArguments(
                "tz can only be used with cron_expr".into(),
            ));
        }
        let given = [
            self.every_seconds.is_some(),
            self.cron_expr.is_some(),
            self.at.is_some(),
        ];
        match given.iter().filter(|&&g| g).count() {
            0 => {
                return Err(ToolError::InvalidArguments(
                    "either every_seconds, cron_expr, or at is required".into(),
                ));
            }
            1 => {}
            _ => {
                return Err(ToolError::InvalidArguments(
                    "give only one of every_seconds, cron_expr and at".into(),
                ));
            }
        }
        if let Some(seconds) = self.every_seconds {
            Schedule::every(seconds).map_err(invalid)
        } else if let Some(expr) = self.cron_expr {
            Schedule::cron(&expr, self.tz.as_deref().unwrap_or(default_tz)).map_err(invalid)
        } else {
            let at = self.at.unwrap_or_default();
            Schedule::at(&at, default_tz).map_err(invalid)
        }
    }
}

async fn add(
    ctx: &ToolContext,
    jobs: &CronJobs,
    message: Option<String>,
    name: Option<String>,
    when: When,
) -> Result<String, ToolError> {
    if let Some(fired) = ctx.state::<FiredJob>() {
        return Err(ToolError::failed(format!(
            "cannot schedule new jobs from within the scheduled job '{}'; \
             do what the job asks, or tell the user to schedule it",
            fired.job_id
        )));
    }
    let message = message
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| ToolError::InvalidArguments("message is required for add".into()))?;
    let (Some(channel), Some(chat_id)) = (ctx.channel(), ctx.chat_id()) else {
        return Err(ToolError::failed(
            "no session context (channel/chat_id): a job needs a chat to report to",
        ));
    };
    let schedule = when.schedule(&jobs.timezone)?;
    let mut job = NewJob::new(schedule, message, channel, chat_id);
    job.name = name;
    let job = jobs.scheduler.add(job).await.map_err(|e| match e {
        CronError::Schedule(_) | CronError::InThePast(_) => {
            ToolError::InvalidArguments(e.to_string())
        }
        other => ToolError::failed(format!("the job was not added: {other}")),
    })?;
    let next = job
        .next_run
        .map(|at| format!(", next run {}", schedule::show(at)))
        .unwrap_or_default();
    Ok(format!("Created job '{}' (id: {}){next}", job.name, job.id))
}

async fn list(jobs: &CronJobs) -> Result<String, ToolError> {
    let all = jobs
        .scheduler
        .list()
        .await
        .map_err(|e| ToolError::failed(format!("the jobs could not be listed: {e}")))?;
    if all.is_empty() {
        return Ok("No scheduled jobs.".into());
    }
    let mut out = String::from("Scheduled jobs:");
    for job in &all {
        out.push_str(&format!(
            "\n- {} (id: {}, {})",
            job.name,
            job.id,
            job.schedule.describe()
        ));
        if let Some(next) = job.next_run {
            out.push_str(&format!(", next run {}", schedule::show(next)));
        }
        if job.protected.is_some() {
            out.push_str(" [system job: can be viewed, not removed]");
        }
    }
    Ok(out)
}
