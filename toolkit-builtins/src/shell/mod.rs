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
#[cfg(all(feature = "landlock", target_os = "linux"))]
mod confine;
mod guard;
mod policy;
mod runner;
mod words;

use std::path::PathBuf;
use std::time::Duration;

use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

pub use capture::Captured;
#[cfg(all(feature = "landlock", target_os = "linux"))]
pub use confine::landlock_available;
pub use guard::{Refusal, Rule};
pub use policy::{Confinement, ShellPolicy};
pub use runner::{CommandOutput, CommandRequest, Ended, run_command};

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
    /// A deny or allow pattern is not a valid regular expression.
    #[error("invalid command pattern: {0}")]
    Pattern(String),
}

impl From<ShellError> for ToolError {
    fn from(error: ShellError) -> Self {
        match error {
            ShellError::Spawn { .. } | ShellError::Confinement(_) | ShellError::Pattern(_) => {
                ToolError::internal(error)
            }
            _ => ToolError::failed(error),
        }
    }
}

/// Quote `value` as one shell word, so that putting it into a command line
/// cannot add commands or options the template did not have.
///
/// ```
/// use toolsmith_builtins::shell::quote;
///
/// assert_eq!(quote("it's; rm -rf /"), r#"'it'\''s; rm -rf /'"#);
/// ```
pub fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Run a shell command in the workspace and return its output and exit code.
///
/// Prefer read_file/write_file/edit_file over cat/echo/sed, and grep/glob
/// over shell find/grep. Use -y or --yes flags to avoid interactive prompts.
/// The timeout is 60 s unless given, at most 600 s (a larger value is
/// clamped); the command and everything it started are killed when it ends.
/// Each output stream keeps its head and tail. Paths must stay inside the
/// workspace, and dangerous commands are refused.
#[tool(exclusive, destructive, open_world, category = shell, timeout = 660)]
pub async fn exec(
    ctx: &ToolContext,
    /// The shell command to run.
    #[arg(min_length = 1)]
    command: String,
    /// Working directory, relative to the workspace root (default: the root).
    working_dir: Option<String>,
    /// Timeout in seconds (default 60, at most 600; larger values are clamped).
    #[arg(minimum = 1)]
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
