//! A stdio server's process: started with a clean environment, its log
//! read in bounded lines, and stopped with everything it started.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::answers::ReadableAnswers;

/// A stdio server's transport. On Unix the server runs in a process group
/// of its own, which is killed when the transport is dropped: what the
/// server started (a shell's children, a helper it forked) ends with it,
/// instead of living on after the host let the server go. Being out of the
/// host's group, it does not get the terminal's Ctrl-C (the host stops it),
/// and cannot prompt on the terminal.
///
/// Its output reaches the SDK through [`ReadableAnswers`], so an answer
/// the SDK could not read fails its call at once, saying why.
pub(super) struct ServerProcess {
    transport: AsyncRwTransport<RoleClient, ReadableAnswers<ChildStdout>, ChildStdin>,
    /// The server, until it has ended (and been waited for).
    child: Option<Child>,
    /// The group's id: the server's own process id, as its leader.
    #[cfg(unix)]
    group: Option<i32>,
}

/// How long a server has to end at each step of its shutdown: once its
/// input is closed, then once it is asked to stop (`SIGTERM`).
const SHUTDOWN_STEP: Duration = Duration::from_secs(3);

/// Start `command` as the stdio server `server`.
pub(super) fn spawn(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    server: &str,
) -> std::io::Result<ServerProcess> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.env_clear();
    for key in INHERITED_ENV {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.args(args).envs(env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let taken = |what: &str| std::io::Error::other(format!("the server's {what} was not piped"));
    let stdin = child.stdin.take().ok_or_else(|| taken("input"))?;
    let stdout = child.stdout.take().ok_or_else(|| taken("output"))?;
    if let Some(stderr) = child.stderr.take() {
        // A server's log lines go to ours, never to the model.
        tokio::spawn(log_lines(stderr, server.to_owned()));
    }
    Ok(ServerProcess {
        #[cfg(unix)]
        group: child.id().and_then(|id| i32::try_from(id).ok()),
        transport: super::answers::transport(stdout, stdin),
        child: Some(child),
    })
}

impl ServerProcess {
    /// Stop the server as MCP's stdio transport has a client do: close its
    /// input and let it end; if it has not within [`SHUTDOWN_STEP`], ask it
    /// to (`SIGTERM`), and past another, kill it. Until it has ended the
    /// child is kept, so a shutdown cut short still kills it on drop.
    async fn shut_down(&mut self) -> std::io::Result<()> {
        let first_step = tokio::time::Instant::now() + SHUTDOWN_STEP;
        // A write to a server that stopped reading holds its input until
        // the server reads: closing it is not waited for past the step, so
        // such a server is still asked to stop, then killed.
        if tokio::time::timeout_at(first_step, self.transport.close())
            .await
            .is_err()
        {
            tracing::debug!("an MCP server's input could not be closed: it reads none of it");
        }
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if ended_by(child, first_step).await? {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
            // SAFETY: `kill` has no memory effects; the child is not yet
            // waited for, so its id still names it.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            if ended_within(child, SHUTDOWN_STEP).await? {
                self.child = None;
                return Ok(());
            }
        }
        child.kill().await?;
        self.child = None;
        Ok(())
    }
}

/// Whether `child` ended within `time` (it is then waited for).
async fn ended_within(child: &mut Child, time: Duration) -> std::io::Result<bool> {
    ended_by(child, tokio::time::Instant::now() + time).await
}

/// Whether `child` ended by `deadline` (it is then waited for).
async fn ended_by(child: &mut Child, deadline: tokio::time::Instant) -> std::io::Result<bool> {
    match tokio::time::timeout_at(deadline, child.wait()).await {
        Ok(status) => status.map(|_| true),
        Err(_) => Ok(false),
    }
}

impl Transport<RoleClient> for ServerProcess {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}

impl Drop for ServerProcess {
    /// Kill what is left of the server's group. By now the SDK has closed
    /// the server's input and waited for it (or is about to kill it); its
    /// children may still run. The group's id cannot have been given to
    /// another group while any of its members lives, and one without
    /// members is not found (`ESRCH`, ignored). Once the leader is reaped
    /// and the group empty, its id could name another group only after the
    /// kernel had given out every other process id since (they are given in
    /// order, up to `pid_max`), which the moment between the two does not
    /// allow.
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(group) = self.group.filter(|&group| group > 1) {
            // SAFETY: `killpg` has no memory effects; a positive id above 1
            // never names the caller's own group or every process.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
    }
}

/// What a stdio server inherits from the host's environment: enough to find
/// and run programs and to know its user and locale, no more. Secrets in
/// the host's environment (API keys, tokens) stay there; the configured
/// `env` passes a server what it needs.
const INHERITED_ENV: [&str; 12] = [
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "TMPDIR",
    // Windows needs these to start a program at all.
    "SYSTEMROOT",
    "USERPROFILE",
    "APPDATA",
    "TEMP",
];

/// The longest line of a server's log kept; the rest of a longer one is
/// dropped. A line without end would otherwise grow without bound.
const MAX_LOG_LINE: usize = 8 << 10;

/// Log each line a server writes to its stderr, cut at [`MAX_LOG_LINE`].
async fn log_lines(stderr: impl tokio::io::AsyncRead + Unpin, server: String) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut line = Vec::new();
    let mut cut = false;
    loop {
        let Ok(available) = reader.fill_buf().await else {
            return;
        };
        if available.is_empty() {
            break;
        }
        let (taken, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (end + 1, true),
            None => (available.len(), false),
        };
        let room = MAX_LOG_LINE.saturating_sub(line.len());
        let piece = &available[..taken.min(room)];
        line.extend_from_slice(piece);
        cut |= taken > room;
        reader.consume(taken);
        if ended {
            let text = String::from_utf8_lossy(&line);
            let suffix = if cut { " [cut]" } else { "" };
            tracing::debug!(server = %server, "{}{suffix}", text.trim_end());
            line.clear();
            cut = false;
        }
    }
    if !line.is_empty() {
        tracing::debug!(server = %server, "{}", String::from_utf8_lossy(&line).trim_end());
    }
}
