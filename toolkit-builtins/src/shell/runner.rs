//! Run one checked command: confined by the kernel, started in the working
//! directory's handle, with a clean environment and bounded output, and
//! everything it started killed on timeout, cancellation, exit, or when the
//! caller stops waiting.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use tokio::task::JoinHandle;
use toolsmith::{CancellationToken, ToolOutput};

use super::capture::{Captured, capture};
use super::ending::Ending;
use super::{Confinement, ShellError, ShellPolicy};
use crate::sandbox::{Access, SandboxError, Workspace};

/// One command to run, as a model or a configured command tool asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    /// The shell command line.
    pub command: String,
    /// The working directory, relative to the workspace root; the root when `None`.
    pub working_dir: Option<String>,
    /// The timeout; the policy's default when `None`, refused above its maximum.
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
    /// It ran past its timeout and it and everything it started were killed.
    TimedOut,
    /// The call was cancelled and it and everything it started were killed.
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
    /// Things the caller should know (walls the kernel could not put up).
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
/// filter, the working directory check, the bounded timeout, the clean
/// environment, bounded output, everything it started killed at the end,
/// and the kernel's confinement (Landlock, a PID namespace) where the
/// system has it. Quote values put into a command
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
    let walls = super::KernelWalls::current();
    super::walls::filter_for(policy, &walls).check_command(&request.command, Some(workspace))?;
    let cwd = working_dir(policy, workspace, request.working_dir.as_deref())?;
    let timeout = policy.timeout_for(request.timeout)?;
    let mut notes: Vec<String> = super::walls::note_once(policy).into_iter().collect();
    let temp = TempDir::new()?;
    let bounds = CommandBounds::new(policy, &walls, workspace, &mut notes);

    let mut command = tokio::process::Command::new(&policy.shell);
    command
        .arg("-c")
        .arg(&request.command)
        .env_clear()
        .envs(child_env(policy, temp.path()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    setup_child(policy, workspace, &temp, cwd, bounds.joiner(), &mut command)?;

    let mut child = command.spawn().map_err(|e| ShellError::Spawn {
        shell: policy.shell.clone(),
        message: e.to_string(),
    })?;
    let mut ending = Ending::of(&child);
    let cap = policy.max_output_bytes;
    let stdout = child.stdout.take().map(|s| tokio::spawn(capture(s, cap)));
    let stderr = child.stderr.take().map(|s| tokio::spawn(capture(s, cap)));

    let (ended, status) = tokio::select! {
        status = child.wait() => (Ended::Exited, status.ok()),
        _ = tokio::time::sleep(timeout) => (Ended::TimedOut, None),
        _ = cancel.cancelled() => (Ended::Cancelled, None),
    };
    // Whatever the command left running dies with it: the tool's result is
    // final, and nothing may keep the pipes open.
    ending.stop();
    let status = match status {
        Some(status) => Some(status),
        None => ending.wait(&mut child).await,
    };
    let stdout = collect(stdout, cap).await;
    let stderr = collect(stderr, cap).await;
    ending.disarm();
    drop(temp);
    bounds.reached(&mut notes);

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

/// The command's control group with its limits, where the system gives
/// one: made before the child, which joins it, and read and removed once
/// the child is reaped.
struct CommandBounds {
    #[cfg(target_os = "linux")]
    group: Option<(crate::cgroup::ControlGroup, crate::cgroup::Limits)>,
}

#[cfg(target_os = "linux")]
impl CommandBounds {
    fn new(
        policy: &ShellPolicy,
        walls: &super::KernelWalls,
        workspace: &Workspace,
        notes: &mut Vec<String>,
    ) -> Self {
        use crate::cgroup::{ControlGroup, Limits, Reuse};
        let limits = Limits::new(policy.max_processes, policy.max_memory);
        // A command under Landlock cannot write to its group's files, so
        // the group can bound the next command; one without could have
        // changed any of its settings.
        // (Unless the workspace holds the control groups themselves, `/`
        // say: then the command may write to them.)
        let writable_groups = std::path::Path::new("/sys/fs/cgroup").starts_with(workspace.root());
        let reuse = if policy.confinement != Confinement::Off && walls.files() && !writable_groups {
            Reuse::Spare
        } else {
            Reuse::Remove
        };
        let group = ControlGroup::create(limits, reuse);
        if group.is_none() && walls.resource_limits {
            // The wall stands on this system but could not be put up for this
            // command: said every time, as it is not the system's lasting state.
            notes.push(
                "this command ran without its control group (it could not be made): its processes and memory were bounded only by the machine's".into(),
            );
        }
        Self {
            group: group.map(|group| (group, limits)),
        }
    }

    /// What the child needs to join the group.
    fn joiner(&self) -> Option<crate::cgroup::Joiner> {
        self.group.as_ref().map(|(group, _)| group.joiner())
    }

    /// The bounds the command reached, in `notes`; the group goes.
    fn reached(self, notes: &mut Vec<String>) {
        if let Some((mut group, limits)) = self.group {
            notes.extend(group.bounds_reached(limits, "the command"));
        }
    }
}

/// No control groups here: the machine's bounds are the command's.
#[cfg(not(target_os = "linux"))]
impl CommandBounds {
    fn new(
        _policy: &ShellPolicy,
        _walls: &super::KernelWalls,
        _workspace: &Workspace,
        _notes: &mut Vec<String>,
    ) -> Self {
        Self {}
    }

    fn joiner(&self) -> Option<()> {
        None
    }

    fn reached(self, _notes: &mut Vec<String>) {}
}

/// The working directory, opened once: the child changes into this handle,
/// so a directory swapped for a link after the check cannot move it.
fn working_dir(
    policy: &ShellPolicy,
    workspace: &Workspace,
    requested: Option<&str>,
) -> Result<OwnedFd, ShellError> {
    let dir = requested.unwrap_or(".");
    let not_a_dir = || ShellError::NotADirectory(dir.to_string());
    if policy.restrict_to_workspace {
        return match workspace
            .locate(dir, Access::Write)
            .and_then(|target| target.open_dir())
        {
            Ok(opened) => Ok(opened.into_fd()),
            Err(SandboxError::Io { .. } | SandboxError::NotFound { .. }) => Err(not_a_dir()),
            Err(e) => Err(e.into()),
        };
    }
    let path = workspace.root().join(dir);
    rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|_| not_a_dir())
}

/// The search path a command gets when the host passes none of its own:
/// what shells use when `PATH` is unset.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment: `HOME`, `LANG`, `TERM`, `TMPDIR` and the allowed names,
/// and `PATH` with the policy's directories appended, if it has any.
/// Under confinement `HOME` is the command's own temporary directory (the
/// host's home is closed to it anyway, and tools want a home to write to).
fn child_env(policy: &ShellPolicy, temp: &std::path::Path) -> Vec<(String, String)> {
    let get =
        |name: &str, fallback: &str| std::env::var(name).unwrap_or_else(|_| fallback.to_string());
    let temp = temp.to_string_lossy().into_owned();
    let home = if policy.confinement == Confinement::Off {
        get("HOME", "/tmp")
    } else {
        temp.clone()
    };
    let mut env = vec![
        ("HOME".to_string(), home),
        ("LANG".to_string(), get("LANG", "C.UTF-8")),
        ("TERM".to_string(), get("TERM", "dumb")),
        ("TMPDIR".to_string(), temp),
    ];
    for name in &policy.env_allow {
        if let Ok(value) = std::env::var(name) {
            env.push((name.clone(), value));
        }
    }
    if !policy.path_append.is_empty() {
        let base = match env.iter().position(|(name, _)| name == "PATH") {
            Some(index) => env.remove(index).1,
            None => SYSTEM_PATH.to_string(),
        };
        // Empty entries are left out: an empty entry means the current
        // directory, where a model can put a program.
        let entries: Vec<&str> = base
            .split(':')
            .filter(|entry| !entry.is_empty())
            .chain(policy.path_append.iter().filter_map(|dir| dir.to_str()))
            .collect();
        env.push(("PATH".to_string(), entries.join(":")));
    }
    env
}

/// Prepare what the child does between `fork` and `exec`: split into keeper
/// and command, change into the working directory's handle, and confine
/// itself with Landlock.
#[cfg(target_os = "linux")]
fn setup_child(
    policy: &ShellPolicy,
    workspace: &Workspace,
    temp: &TempDir,
    cwd: OwnedFd,
    group: Option<crate::cgroup::Joiner>,
    command: &mut tokio::process::Command,
) -> Result<(), ShellError> {
    use std::os::fd::AsRawFd;
    let paths = super::confine::Paths {
        workspace: workspace.root(),
        temp: temp.path(),
        read_only: workspace.read_only_dirs(),
    };
    let mut landlock = super::confine::prepare(policy, &paths)?;
    let filter = (policy.confinement != Confinement::Off)
        .then(|| super::seccomp::Filter::for_network(&policy.network));
    let keeper =
        super::keeper::Keeper::new(policy.pid_namespace, policy.confinement != Confinement::Off)
            .with_group(group);
    // The keeper, not this process, ends the command: a kill on drop would
    // kill the keeper before it could end what the command started.
    command.kill_on_drop(false);
    // SAFETY: the hook makes system calls only, on values prepared above
    // (see `Keeper::split` and `Prepared::enforce`); it allocates nothing
    // on success.
    unsafe {
        command.pre_exec(move || {
            // Before the keeper's new mount namespace, which carries the
            // working directory over to its own copy of the mount.
            if libc::fchdir(cwd.as_raw_fd()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let own_proc = keeper.split()?;
            if let Some(prepared) = landlock.as_mut() {
                prepared.enforce(own_proc)?;
            }
            match &filter {
                Some(filter) => {
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    super::seccomp::install(filter)
                }
                None => Ok(()),
            }
        });
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn setup_child(
    policy: &ShellPolicy,
    _workspace: &Workspace,
    _temp: &TempDir,
    cwd: OwnedFd,
    _group: Option<()>,
    command: &mut tokio::process::Command,
) -> Result<(), ShellError> {
    use std::os::fd::AsRawFd;
    if policy.confinement == Confinement::Required {
        return Err(ShellError::Confinement(
            "kernel confinement is required but this system has no Landlock".into(),
        ));
    }
    // Its own group, so signals meant for the host's group (a terminal's
    // Ctrl-C) do not reach it, and the whole group can be killed.
    command.process_group(0).kill_on_drop(true);
    // SAFETY: `fchdir` on a descriptor held by the closure.
    unsafe {
        command.pre_exec(move || {
            if libc::fchdir(cwd.as_raw_fd()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// A directory of the command's own for temporary files (`TMPDIR`), the
/// only place outside the workspace it may write; removed after the call.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, ShellError> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let mut last = None;
        for _ in 0..8 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("toolsmith-exec-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) => last = Some(e),
            }
        }
        Err(ShellError::Confinement(format!(
            "cannot make a temporary directory in {}: {}",
            base.display(),
            last.map_or_else(String::new, |e| e.to_string())
        )))
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let path = std::mem::take(&mut self.0);
        // A command may leave many files: remove them off the async threads.
        let remove = move || {
            let _ = std::fs::remove_dir_all(&path);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(remove);
            }
            Err(_) => remove(),
        }
    }
}

/// Wait for a reader; if something outside the call still holds the pipe
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
