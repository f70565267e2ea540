//! `exec`: run a shell command in the workspace, behind every guard listed
//! in [`crate::guards`] (`GUARDS.md` beside this crate's `Cargo.toml`).
//!
//! The tool is off until the host puts a [`ShellPolicy`] in the context's
//! state, and its category is `shell` (high risk), so the registry's default
//! filter leaves it out unless it is named.
//!
//! ```
//! use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
//! use toolsmith_builtins::shell::ShellPolicy;
//!
//! # fn demo(dir: &std::path::Path) {
//! let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["exec"])).unwrap();
//! let ctx = ToolContext::new()
//!     .with_workspace(dir)
//!     .with_state(ShellPolicy::new().allow_env(["PATH"]));
//! # }
//! ```
//!
//! A command tool defined in configuration runs through the same guards with
//! [`run_command`] (or checks a line first with [`ShellPolicy::check_command`]);
//! put values into its command line with [`quote`].

mod capture;
#[cfg(target_os = "linux")]
mod confine;
pub(crate) mod ending;
mod glob;
mod guard;
#[cfg(target_os = "linux")]
mod keeper;
mod nested;
mod paths;
mod policy;
mod programs;
#[cfg(target_os = "linux")]
mod readable;
mod runner;
#[cfg(target_os = "linux")]
mod seccomp;
mod walls;
pub(crate) mod words;
mod wrappers;

use std::path::PathBuf;
use std::time::Duration;

use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

pub use capture::Captured;
#[cfg(target_os = "linux")]
pub use confine::{landlock_abi, landlock_available};
pub use guard::{Refusal, Rule};
pub use policy::{Confinement, NetAccess, ShellPolicy};
pub use runner::{CommandOutput, CommandRequest, Ended, run_command};
pub use walls::{KernelWalls, ProcessIsolation};

use crate::sandbox::{SandboxError, Workspace};

/// Why a command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// A guard refused the command.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The working directory is not usable.
    #[error(transparent)]
    WorkingDir(#[from] SandboxError),
    /// The working directory is not a directory.
    #[error("the working directory `{0}` does not exist or is not a directory")]
    NotADirectory(String),
    /// The shell could not be started.
    #[error("cannot start `{}`: {message}", shell.display())]
    Spawn {
        /// The shell program.
        shell: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// Kernel confinement was required and could not be set up.
    #[error("{0}")]
    Confinement(String),
    /// The call asked for a longer timeout than the policy allows.
    #[error(
        "the timeout of {requested} s is above the limit of {max} s; ask for {max} s or less, or split the work into shorter commands"
    )]
    TimeoutTooLong {
        /// What the call asked for, in seconds.
        requested: u64,
        /// The policy's maximum, in seconds.
        max: u64,
    },
    /// A deny or allow pattern is not a valid regular expression.
    #[error("invalid command pattern: {0}")]
    Pattern(String),
    /// A directory given to [`ShellPolicy::with_path_append`] cannot be
    /// put in `PATH`.
    #[error("cannot append `{}` to PATH: {reason}", dir.display())]
    PathAppend {
        /// The directory.
        dir: PathBuf,
        /// Why not.
        reason: &'static str,
    },
}

impl From<ShellError> for ToolError {
    fn from(error: ShellError) -> Self {
        match error {
            ShellError::Spawn { .. }
            | ShellError::Confinement(_)
            | ShellError::Pattern(_)
            | ShellError::PathAppend { .. } => ToolError::internal(error),
            _ => ToolError::failed(error),
        }
    }
}

/// Quote `value` as one shell word, so that putting it into a command line
/// cannot add commands or options the template did not have.
///
/// Quotes and backslashes are written outside the single quotes (`'\''`,
/// `'\\'`), so the word reads the same in POSIX shells, bash, zsh and
/// fish (where a backslash inside single quotes escapes a quote).
///
/// ```
/// use toolsmith_builtins::shell::quote;
///
/// assert_eq!(quote("it's; rm -rf /"), r#"'it'\''s; rm -rf /'"#);
/// assert_eq!(quote(r"a\"), r"'a'\\''");
/// ```
pub fn quote(value: &str) -> String {
    let mut out = String::from("'");
    for c in value.chars() {
        match c {
            '\'' => out.push_str(r"'\''"),
            '\\' => out.push_str(r"'\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Run a shell command in the workspace and return its output and exit code.
///
/// Prefer read_file/write_file/edit_file over cat/echo/sed, and grep/glob
/// over shell find/grep. Use -y or --yes flags to avoid interactive prompts.
/// The timeout is 60 s unless given, at most 600 s (a larger value is
/// refused); the command and everything it started are killed when it ends.
/// Each output stream keeps its head and tail. Paths must stay inside the
/// workspace, and dangerous commands are refused. Files can be written only
/// in the workspace and in $TMPDIR; the network is closed unless allowed.
#[tool(exclusive, destructive, open_world, category = shell, timeout = 660)]
pub async fn exec(
    ctx: &ToolContext,
    /// The shell command to run.
    #[arg(min_length = 1)]
    command: String,
    /// Working directory, relative to the workspace root (default: the root).
    working_dir: Option<String>,
    /// Timeout in seconds (default 60, at most 600; the host may allow less).
    #[arg(minimum = 1, maximum = 600)]
    timeout: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    // Looked up by hand so the message names the public path of the type.
    let policy = ctx.state::<ShellPolicy>().ok_or(ToolError::MissingState(
        "toolsmith_builtins::shell::ShellPolicy",
    ))?;
    let workspace = Workspace::of(ctx)?;
    let request = CommandRequest {
        command,
        working_dir,
        timeout: timeout.map(Duration::from_secs),
    };
    let output = run_command(policy, &workspace, &request, ctx.cancellation()).await?;
    Ok(output.to_tool_output())
}
