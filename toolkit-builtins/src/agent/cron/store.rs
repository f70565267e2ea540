//! The jobs file: every job as JSON, written atomically after each change.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::job::{CronError, CronJob};
use crate::agent::files::Folder;

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

/// Where a scheduler keeps its jobs: a file in a folder opened once, when
/// the scheduler opened the file. A link swapped in for the folder since
/// (by a command that can write beside it) leads no read or write to
/// another folder: the jobs stay where the host put them.
#[derive(Debug, Clone)]
pub(crate) struct JobStore {
    path: PathBuf,
    folder: Arc<Folder>,
    name: OsString,
}

impl JobStore {
    /// The store of the file at `path`; its folder is made if missing.
    pub(crate) fn new(path: impl Into<PathBuf>) -> Result<Self, CronError> {
        let path = path.into();
        let error = |message: &dyn std::fmt::Display| CronError::Storage {
            path: path.display().to_string(),
            message: message.to_string(),
        };
        let name = path
            .file_name()
            .ok_or_else(|| error(&"the path names no file"))?
            .to_owned();
        let folder = Folder::open(path.parent().unwrap_or(Path::new(""))).map_err(|e| error(&e))?;
        Ok(Self {
            folder: Arc::new(folder),
            name,
            path,
        })
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
        let text = match self.folder.read_regular_file(&self.name, MAX_STORE_BYTES) {
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
        self.folder
            .write_atomically(&self.name, &text)
            .map_err(|e| self.error(e))
    }
}
