//! One plugin process: started on first use, one request at a time, and
//! stopped (to be started afresh on the next request) when it crashes,
//! hangs or answers with something that is not a response.
//!
//! Each reply is matched to its request by id. A reply to a request already
//! answered (a plugin that answers twice) is dropped and logged, never given
//! to a later call; a reply to a request never sent, or a line that is not
//! a reply, ends the process.
//!
//! The plugin runs under a keeper, as `exec`'s commands do
//! (`shell::ending`): when the plugin exits, is stopped or restarted, or is
//! dropped with its tools, the keeper kills everything it started, even
//! what moved to another session or group (`setsid`, double forks), so
//! nothing outlives it; a call in flight fails as soon as the plugin
//! exits, even while a child it left behind still holds its output open.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::shell::ending::{after_kept_exit, end_kept, keep_lifetime};

/// The longest response line read; a plugin that writes more without a
/// newline is treated as broken rather than filling memory.
const MAX_LINE: u64 = 8 * 1024 * 1024;

/// How much of the plugin's stderr is kept to explain a failure.
const STDERR_TAIL: usize = 2048;

/// How long after the plugin exits its output is still read, for an answer
/// it wrote just before exiting.
const LAST_ANSWER_GRACE: Duration = Duration::from_millis(200);

/// How many replies to no pending request one call drops before the plugin
/// is taken for broken.
const MAX_STRAY_REPLIES: usize = 16;

/// Why a request got no usable response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Fault {
    #[error("could not be started: {0}")]
    Start(String),
    #[error("exited before answering ({status}){stderr}")]
    Exited { status: String, stderr: String },
    /// Its output closed; [`Running::last_words`] turns this into `Exited`.
    #[error("closed its output before answering")]
    Closed,
    #[error("did not answer within {0:?}")]
    Timeout(Duration),
    #[error("did not answer within {timeout:?}, {waited:?} of which went waiting for another call")]
    TimeoutAfterWaiting { timeout: Duration, waited: Duration },
    /// Still busy with another call when the time was up; its process is
    /// left alone.
    #[error("was busy with another call for all of {0:?}")]
    Busy(Duration),
    #[error("answered with something that is not a JSON response: {0}")]
    Garbage(String),
    #[error("could not be written to: {0}")]
    Write(String),
}

/// A plugin executable and, while it runs, its process.
#[derive(Debug)]
pub(crate) struct Plugin {
    path: PathBuf,
    slot: tokio::sync::Mutex<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    running: Option<Running>,
    next_id: u64,
}

#[derive(Debug)]
struct Running {
    /// The pid of the plugin's keeper (of the plugin itself, in its own
    /// process group, where there is no keeper).
    group: Option<libc::pid_t>,
    /// How the process ended, once it has: set by the task that waits for
    /// it, once nothing it started is left.
    exit: watch::Receiver<Option<String>>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    /// For messages about replies that are dropped.
    path: PathBuf,
}

impl Plugin {
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            slot: Default::default(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Send one request (its `id` is set here) and read its response,
    /// giving the plugin `timeout` to answer.
    pub(crate) async fn request(
        &self,
        timeout: Duration,
        make: impl FnOnce(u64) -> Value,
    ) -> Result<Map<String, Value>, Fault> {
        // One deadline for waiting behind another call and for the answer:
        // a tool's timeout holds even when the plugin is busy with a slower one.
        let start = tokio::time::Instant::now();
        // A timeout too long to add is as good as none.
        let deadline = start
            .checked_add(timeout)
            .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut slot = tokio::time::timeout_at(deadline, self.slot.lock())
            .await
            .map_err(|_| Fault::Busy(timeout))?;
        // Time spent waiting behind another call, in whole milliseconds.
        let waited = Duration::from_millis(start.elapsed().as_millis() as u64);
        slot.next_id += 1;
        let id = slot.next_id;
        // The process is out of the slot while the request is in flight: if
        // the caller gives up half-way (its future is dropped), the process,
        // whose stream is now out of step, is dropped and killed with it.
        // A process that exited while idle is replaced rather than asked.
        let mut running = match slot.running.take() {
            Some(running) if running.exit.borrow().is_none() => running,
            _ => self.start()?,
        };
        let outcome = tokio::time::timeout_at(deadline, running.exchange(make(id), id))
            .await
            .unwrap_or(Err(if waited.is_zero() {
                Fault::Timeout(timeout)
            } else {
                Fault::TimeoutAfterWaiting { timeout, waited }
            }));
        match outcome {
            Ok(response) => {
                slot.running = Some(running);
                Ok(response)
            }
            // Whatever went wrong, this process is done: the next request starts a new one.
            Err(Fault::Closed) => Err(running.last_words().await),
            Err(fault) => {
                stop(Some(running));
                Err(fault)
            }
        }
    }

    fn start(&self) -> Result<Running, Fault> {
        // Under a keeper (as `exec`'s commands are), so that nothing the
        // plugin forks outlives it, whatever session or group it moves to.
        let mut command = Command::new(&self.path);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        keep_lifetime(&mut command);
        let mut child = command.spawn().map_err(|e| Fault::Start(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Fault::Start(
                "its stdin and stdout could not be piped".into(),
            ));
        };
        let group = child.id().and_then(|pid| libc::pid_t::try_from(pid).ok());
        let stdout = BufReader::new(stdout);
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_reader = child.stderr.take().map(|mut pipe| {
            let tail = Arc::clone(&stderr);
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                    tail.extend(&buf[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL);
                    tail.drain(..excess);
                }
            })
        });
        // Noticing the exit at once is what lets a call in flight fail at
        // once, and what kills what the plugin left behind.
        let (exited, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => status.to_string(),
                Err(e) => format!("its status could not be read: {e}"),
            };
            if let Some(group) = group {
                after_kept_exit(group);
            }
            let _ = exited.send(Some(status));
        });
        Ok(Running {
            group,
            exit,
            stdin,
            stdout,
            stderr,
            stderr_reader,
            path: self.path.clone(),
        })
    }
}

impl Running {
    async fn exchange(&mut self, request: Value, id: u64) -> Result<Map<String, Value>, Fault> {
        let mut line = request.to_string();
        line.push('\n');
        let write = async {
            self.stdin.write_all(line.as_bytes()).await?;
            self.stdin.flush().await
        };
        if let Err(e) = write.await {
            // A closed pipe means the process died; say so, not "broken pipe".
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Err(Fault::Closed);
            }
            return Err(Fault::Write(e.to_string()));
        }
        let mut stray = 0;
        loop {
            let line = self.read_line().await?;
            let text = String::from_utf8_lossy(&line);
            let response = match serde_json::from_str::<Value>(text.trim()) {
                Ok(Value::Object(map)) => map,
                _ => return Err(Fault::Garbage(preview(&text))),
            };
            match response.get("id").and_then(Value::as_u64) {
                Some(got) if got == id => return Ok(response),
                // A request sent before this one, and answered already: a
                // reply to nothing, which no call may receive.
                Some(got) if got < id && stray < MAX_STRAY_REPLIES => {
                    stray += 1;
                    tracing::warn!(
                        plugin = %self.path.display(),
                        id = got,
                        "dropped a plugin's reply to no pending request"
                    );
                }
                _ => {
                    return Err(Fault::Garbage(format!(
                        "a response for no request it was sent: {}",
                        preview(&text)
                    )));
                }
            }
        }
    }

    /// One line of output. Fails with [`Fault::Closed`] when the output
    /// ends, or when the plugin has exited and wrote nothing more within
    /// [`LAST_ANSWER_GRACE`]: a child it forked may hold the output open.
    async fn read_line(&mut self) -> Result<Vec<u8>, Fault> {
        // Outside the read, so that bytes read before the plugin exits are
        // kept when the read is given up for the grace period's.
        let mut buf = Vec::new();
        let mut exit = self.exit.clone();
        let read = {
            let mut stdout = (&mut self.stdout).take(MAX_LINE);
            let line = stdout.read_until(b'\n', &mut buf);
            tokio::select! {
                biased;
                read = line => Some(read),
                _ = exit.wait_for(Option::is_some) => None,
            }
        };
        let read = match read {
            Some(read) => read,
            None => tokio::time::timeout(
                LAST_ANSWER_GRACE,
                (&mut self.stdout)
                    .take(MAX_LINE)
                    .read_until(b'\n', &mut buf),
            )
            .await
            .unwrap_or(Ok(0)),
        };
        match read {
            Ok(0) if !buf.ends_with(b"\n") => return Err(Fault::Closed),
            Ok(_) => {}
            Err(e) => return Err(Fault::Garbage(e.to_string())),
        }
        if !buf.ends_with(b"\n") && buf.len() as u64 >= MAX_LINE {
            return Err(Fault::Garbage(format!(
                "a line longer than {MAX_LINE} bytes"
            )));
        }
        if !buf.ends_with(b"\n") {
            // The output ended in the middle of a line.
            return Err(Fault::Closed);
        }
        Ok(buf)
    }

    /// How a process that closed its output ended, with the end of its stderr.
    async fn last_words(mut self) -> Fault {
        // A crashing process closes its output as it exits: give it a moment
        // to report its own status before making sure it is gone.
        let status = match self.wait_exit(Duration::from_secs(1)).await {
            Some(status) => status,
            None => {
                self.kill();
                match self.wait_exit(Duration::from_secs(2)).await {
                    Some(status) => format!("it closed its output; stopped: {status}"),
                    None => "it closed its output and did not stop".to_owned(),
                }
            }
        };
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
        }
        Fault::Exited {
            status,
            stderr: self.stderr_tail(),
        }
    }

    /// How the process ended, if it does within `limit`.
    async fn wait_exit(&self, limit: Duration) -> Option<String> {
        let mut exit = self.exit.clone();
        tokio::time::timeout(limit, exit.wait_for(Option::is_some))
            .await
            .ok()?
            .ok()?
            .clone()
    }

    /// Kill the plugin and its group, unless it has exited: then the task
    /// that saw it exit has killed the group already, and its id may be
    /// free for another process to take.
    fn kill(&self) {
        if self.exit.borrow().is_none()
            && let Some(group) = self.group
        {
            end_kept(group);
        }
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with:\n{text}")
        }
    }
}

impl Drop for Running {
    /// A plugin dropped (restarted, or its tools dropped) takes its whole
    /// group with it; the task waiting for it reaps it.
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kill a process that is no longer trusted, and everything it started.
fn stop(running: Option<Running>) {
    drop(running);
}

/// The start of some text, on one line, for an error message.
fn preview(text: &str) -> String {
    let one_line: String = text
        .trim()
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("`{one_line}`")
}
