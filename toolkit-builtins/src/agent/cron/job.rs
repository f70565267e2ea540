//! A scheduled job and what a scheduler says about jobs.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::schedule::{Schedule, ScheduleError};

/// A job as the scheduler keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CronJob {
    /// The id used to remove it: eight hex digits.
    pub id: String,
    /// A short name for listings.
    pub name: String,
    /// When it fires.
    pub schedule: Schedule,
    /// What it says when it fires: an instruction for the agent, or a reminder for the user.
    pub message: String,
    /// The channel it reports to.
    pub channel: String,
    /// The chat it reports to.
    pub chat_id: String,
    /// Set for jobs the system manages: why the agent may see but not remove it.
    ///
    /// Only [`TokioScheduler::add_system_job`](super::TokioScheduler::add_system_job)
    /// sets it, in the host's code; such jobs are never saved, and a job the
    /// jobs file marks as protected is left out when the file is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<String>,
    /// When it was added.
    pub created_at: Timestamp,
    /// When it fires next. A scheduler keeps no job without one: a
    /// one-shot is removed once it has fired, and a recurring job when it
    /// does not fire again within [`HORIZON_YEARS`](super::HORIZON_YEARS).
    /// A job read from a file without one is given one, or left out.
    #[serde(default)]
    pub next_run: Option<Timestamp>,
    /// When it last fired.
    #[serde(default)]
    pub last_run: Option<Timestamp>,
}

/// The longest message a job keeps, in characters: what the `cron` tool
/// takes from the model, and what a scheduler takes from the host and from
/// its file.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// The longest name a job keeps, in characters (as [`MAX_MESSAGE_CHARS`]).
pub const MAX_NAME_CHARS: usize = 100;

/// The longest channel name or chat id a job keeps, in characters: the
/// host gives them (from the turn's context), and a scheduler refuses
/// longer ones, from the host and from its file.
pub const MAX_CHAT_CHARS: usize = 256;

/// A job to add.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewJob {
    /// A short name; the first words of the message when not given.
    pub name: Option<String>,
    /// When it fires.
    pub schedule: Schedule,
    /// What it says when it fires.
    pub message: String,
    /// The channel it reports to.
    pub channel: String,
    /// The chat it reports to.
    pub chat_id: String,
}

impl NewJob {
    /// A job that says `message` to `chat_id` on `channel` on `schedule`.
    pub fn new(
        schedule: Schedule,
        message: impl Into<String>,
        channel: impl Into<String>,
        chat_id: impl Into<String>,
    ) -> Self {
        Self {
            name: None,
            schedule,
            message: message.into(),
            channel: channel.into(),
            chat_id: chat_id.into(),
        }
    }

    /// Give it a name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Why a scheduler refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CronError {
    /// No job has this id.
    #[error("Job {0} not found")]
    NotFound(String),
    /// The job is managed by the system.
    #[error("Cannot remove job `{name}` (id: {id}).\n{reason}")]
    Protected {
        /// Its id.
        id: String,
        /// Its name.
        name: String,
        /// Why it is protected.
        reason: String,
    },
    /// The schedule is unusable.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// As many jobs are kept as the scheduler keeps.
    #[error("{0} jobs are scheduled, as many as are kept; remove one first")]
    TooMany(usize),
    /// A message, name, channel or chat id longer than a job keeps.
    #[error("the job's {what} is longer than {max} characters")]
    TooLong {
        /// `message`, `name`, `channel` or `chat_id`.
        what: &'static str,
        /// The most characters it may have.
        max: usize,
    },
    /// The jobs with this one would be saved as a file larger than is read
    /// back: the change is refused, so the file always opens.
    #[error("the jobs would take {bytes} bytes, more than the {max} the jobs file may hold")]
    FileTooLarge {
        /// The size the file would have.
        bytes: u64,
        /// The most it may hold.
        max: u64,
    },
    /// A one-shot moment that has already passed.
    #[error("the time {0} is in the past; give a future time")]
    InThePast(Timestamp),
    /// The jobs file could not be read or written.
    #[error("the jobs file {path}: {message}")]
    Storage {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}
