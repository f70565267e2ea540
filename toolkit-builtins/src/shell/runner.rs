//! Run one checked command: its own process group, a clean environment,
//! bounded output, and the whole group killed on timeout, cancellation,
//! exit, or when the caller stops waiting.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::task::JoinHandle;
use toolsmith::{CancellationToken, ToolOutput};

use super::capture::{Captured, capture};
use super::{ShellError, ShellPolicy};
use crate::sandbox::{Access, Workspace};

/// One command to run, as a model or a configured command tool asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    /// The shell command line.
    pub command: String,
    /// The working directory, relative to the workspace root; the root when `None`.
    pub working_dir: Option<String>,
    /// The timeout; the policy's default when `None`, clamped to its maximum.
    pub timeout: Option<Duration>,
}

impl CommandRequest {
    /// A request to run `command` in the workspace root with the default timeout.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            working_dir: None,
            timeout: None,
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited (or was killed by a signal) on its own.
    Exited,
    /// It ran past its timeout and its process group was killed.
    TimedOut,
    /// The call was cancelled and its process group was killed.
    Cancelled,
}

/// What a command did.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// The exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// How it ended.
    pub ended: Ended,
    /// The timeout it ran under.
    pub timeout: Duration,
    /// Standard output, bounded.
    pub stdout: Captured,
    /// Standard error, bounded.
    pub stderr: Captured,
    /// Things the caller should know (a clamped timeout, missing confinement).
    pub notes: Vec<String>,
}

impl CommandOutput {
    /// Whether it exited on its own with code 0.
    pub fn success(&self) -> bool {
        self.ended == Ended::Exited && self.exit_code == Some(0)
    }

    /// The tool result a model reads: [`Self::to_model_text`], marked as an
    /// error when the command did not exit on its own, with its exit code and
    /// whether it timed out as metadata.
    pub fn to_tool_output(&self) -> ToolOutput {
        let text = self.to_model_text();
        let result = if self.ended == Ended::Exited {
            ToolOutput::text(text)
        } else {
            ToolOutput::error(text)
        };
        result
            .with_metadata("exit_code", self.exit_code)
            .with_metadata("timed_out", self.ended == Ended::TimedOut)
    }

    /// The text a model reads: the outcome, stdout, stderr, the exit code
    /// (always) and any notes.
    pub fn to_model_text(&self) -> String {
        let mut out = String::new();
        match self.ended {
            Ended::Exited => {}
            Ended::TimedOut => out.push_str(&format!(
                "Error: the command timed out after {} s; it and every process it started were killed.\n",
                self.timeout.as_secs()
            )),
            Ended::Cancelled => out.push_str(
                "Error: the call was cancelled; the command and every process it started were killed.\n",
            ),
        }
        let stdout = self.stdout.text();
        let stderr = self.stderr.text();
        if !stdout.is_empty() {
            out.push_str(&stdout);
            if !stdout.ends_with('\n') {
                out.push('\n');
            }
        }
        if !stderr.is_empty() {
            out.push_str("STDERR:\n");
            out.push_str(&stderr);
            if !stderr.ends_with('\n') {
                out.push('\n');
            }
        }
        if stdout.is_empty() && stderr.is_empty() {
            out.push_str("(no output)\n");
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => out.push_str(&format!("Exit code: {code}")),
            (None, Some(signal)) => {
                out.push_str(&format!("Exit code: none (killed by signal {signal})"))
            }
            (None, None) => out.push_str("Exit code: unknown"),
        }
        for note in &self.notes {
            out.push_str(&format!("\nNote: {note}"));
        }
        out
    }
}

/// Check `request` against `policy` and run it in `workspace`.
///
/// This is what `exec` runs, and what a command tool defined in
/// configuration should run too, so every guard applies to it: the command
/// filter, the working directory check, the clamped timeout, the clean
/// environment, bounded output, the process group killed at the end, and
/// Landlock when the policy asks for it. Quote values put into a command
/// line with [`quote`](super::quote).
///
/// ```no_run
/// use toolsmith::CancellationToken;
/// use toolsmith_builtins::Workspace;
/// use toolsmith_builtins::shell::{CommandRequest, ShellPolicy, run_command};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let workspace = Workspace::new("/srv/project")?;
/// let output = run_command(
///     &ShellPolicy::new(),
///     &workspace,
///     &CommandRequest::new("cargo --version"),
///     &CancellationToken::new(),
/// )
/// .await?;
/// println!("{}", output.to_model_text());
/// # Ok(())
/// # }
/// ```
pub async fn run_command(
    policy: &ShellPolicy,
    workspace: &Workspace,
    request: &CommandRequest,
    cancel: &CancellationToken,
) -> Result<CommandOutput, ShellError> {
    policy.check_command(&request.command, Some(workspace))?;
    let cwd = working_dir(policy, workspace, request.working_dir.as_deref())?;
    let (timeout, clamp_note) = policy.timeout_for(request.timeout);
    let mut notes: Vec<String> = clamp_note.into_iter().collect();

    let mut command = tokio::process::Command::new(&policy.shell);
    command
        .arg("-c")
        .arg(&request.command)
        .current_dir(&cwd)
        .env_clear()
        .envs(child_env(policy))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so one signal reaches every process it starts.
        .process_group(0)
        .kill_on_drop(true);
    if let Some(note) = confine(policy, workspace, &mut command)? {
        notes.push(note);
    }

    let mut child = command.spawn().map_err(|e| ShellError::Spawn {
        shell: policy.shell.clone(),
        message: e.to_string(),
    })?;
    let mut group = ProcessGroup::of(&child);
    let cap = policy.max_output_bytes;
    let stdout = child.stdout.take().map(|s| tokio::spawn(capture(s, cap)));
    let stderr = child.stderr.take().map(|s| tokio::spawn(capture(s, cap)));

    let (ended, status) = tokio::select! {
        status = child.wait() => (Ended::Exited, status.ok()),
        _ = tokio::time::sleep(timeout) => (Ended::TimedOut, None),
        _ = cancel.cancelled() => (Ended::Cancelled, None),
    };
    // Whatever the command left running in its group dies with it: the
    // tool's result is final, and nothing may keep the pipes open.
    group.kill();
    let status = match status {
        Some(status) => Some(status),
        None => child.wait().await.ok(),
    };
    let stdout = collect(stdout, cap).await;
    let stderr = collect(stderr, cap).await;
    group.disarm();

    let (exit_code, signal) = split_status(status);
    Ok(CommandOutput {
        exit_code,
        signal,
        ended,
        timeout,
        stdout,
        stderr,
        notes,
    })
}

fn working_dir(
    policy: &ShellPolicy,
    workspace: &Workspace,
    requested: Option<&str>,
) -> Result<PathBuf, ShellError> {
    let Some(dir) = requested else {
        return Ok(workspace.root().to_path_buf());
    };
    let resolved = if policy.restrict_to_workspace {
        workspace.resolve(dir, Access::Write)?
    } else {
        workspace.root().join(dir)
    };
    if !resolved.is_dir() {
        return Err(ShellError::NotADirectory(dir.to_string()));
    }
    Ok(resolved)
}

/// Only `HOME`, `LANG`, `TERM` and the allowed names reach the child.
fn child_env(policy: &ShellPolicy) -> Vec<(String, String)> {
    let get =
        |name: &str, fallback: &str| std::env::var(name).unwrap_or_else(|_| fallback.to_string());
    let mut env = vec![
        ("HOME".to_string(), get("HOME", "/tmp")),
        ("LANG".to_string(), get("LANG", "C.UTF-8")),
        ("TERM".to_string(), get("TERM", "dumb")),
    ];
    for name in &policy.env_allow {
        if let Ok(value) = std::env::var(name) {
            env.push((name.clone(), value));
        }
    }
    env
}

#[cfg(all(feature = "landlock", target_os = "linux"))]
fn confine(
    policy: &ShellPolicy,
    workspace: &Workspace,
    command: &mut tokio::process::Command,
) -> Result<Option<String>, ShellError> {
    let (prepared, note) =
        super::confine::prepare(policy, workspace.root(), workspace.read_only_dirs())?;
    if let Some(prepared) = prepared {
        let mut prepared = prepared;
        // SAFETY: the closure only makes the `prctl` and `landlock_restrict_self`
        // system calls on a ruleset built before the fork; it allocates
        // nothing on success.
        unsafe {
            command.pre_exec(move || prepared.enforce());
        }
    }
    Ok(note)
}

#[cfg(not(all(feature = "landlock", target_os = "linux")))]
fn confine(
    policy: &ShellPolicy,
    _workspace: &Workspace,
    _command: &mut tokio::process::Command,
) -> Result<Option<String>, ShellError> {
    use super::Confinement;
    match policy.confinement {
        Confinement::Off => Ok(None),
        Confinement::BestEffort => Ok(Some(
            "kernel confinement is not built in (the `landlock` feature, Linux); the command ran without it".into(),
        )),
        Confinement::Required => Err(ShellError::Confinement(
            "kernel confinement is required but not built in (the `landlock` feature, Linux)".into(),
        )),
    }
}

/// Wait for a reader; if something outside the group still holds the pipe
/// open, stop waiting after a grace period and keep what was read.
async fn collect(reader: Option<JoinHandle<Captured>>, cap: usize) -> Captured {
    let Some(mut reader) = reader else {
        return Captured::with_cap(cap);
    };
    match tokio::time::timeout(Duration::from_secs(2), &mut reader).await {
        Ok(Ok(captured)) => captured,
        _ => {
            reader.abort();
            Captured::with_cap(cap)
        }
    }
}

fn split_status(status: Option<ExitStatus>) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(status) => (status.code(), status.signal()),
        None => (None, None),
    }
}

/// The child's process group, killed when this is dropped: if the caller
/// stops waiting (a timeout or cancellation above this function drops the
/// future), nothing the command started outlives the call.
struct ProcessGroup(Option<libc::pid_t>);

impl ProcessGroup {
    fn of(child: &tokio::process::Child) -> Self {
        Self(child.id().and_then(|id| libc::pid_t::try_from(id).ok()))
    }

    /// The group is dead and its leader reaped: its id may be reused now.
    fn disarm(&mut self) {
        self.0 = None;
    }

    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: `killpg` has no memory-safety preconditions; a group
            // that is already gone gives ESRCH, which is fine.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
