//! The jobs file: every job as JSON, written atomically after each change.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::job::{CronError, CronJob};
use crate::agent::files::{read_regular_file, write_atomically};

/// The version of the file layout, so a later layout can read older files.
const VERSION: u32 = 1;

/// The largest jobs file read, and written: far more than the most jobs
/// kept (see `MAX_JOBS`) at their longest, far less than what a file put
/// there to exhaust memory holds. A change that would save more is
/// refused, so what is saved can always be read back.
pub(crate) const MAX_STORE_BYTES: u64 = 16 << 20;

#[derive(Serialize, Deserialize)]
struct JobsFile {
    version: u32,
    jobs: Vec<CronJob>,
}

/// Where a scheduler keeps its jobs.
#[derive(Debug, Clone)]
pub(crate) struct JobStore {
    path: PathBuf,
}

impl JobStore {
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, message: impl std::fmt::Display) -> CronError {
        CronError::Storage {
            path: self.path.display().to_string(),
            message: message.to_string(),
        }
    }

    /// The saved jobs; none when the file does not exist yet.
    pub(crate) fn load(&self) -> Result<Vec<CronJob>, CronError> {
        let text = match read_regular_file(&self.path, MAX_STORE_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(Vec::new()),
            Err(e) => return Err(self.error(e)),
        };
        let file: JobsFile = serde_json::from_str(&text).map_err(|e| self.error(e))?;
        if file.version > VERSION {
            return Err(self.error(format!(
                "written by a newer version (layout {}, this one reads up to {VERSION})",
                file.version
            )));
        }
        Ok(file.jobs)
    }

    pub(crate) fn save(&self, jobs: &[CronJob]) -> Result<(), CronError> {
        let file = JobsFile {
            version: VERSION,
            jobs: jobs.to_vec(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| self.error(e))?;
        let bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
        if bytes > MAX_STORE_BYTES {
            return Err(CronError::FileTooLarge {
                bytes,
                max: MAX_STORE_BYTES,
            });
        }
        write_atomically(&self.path, &text).map_err(|e| self.error(e))
    }
}
