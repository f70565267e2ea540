//! Ending a child and everything it started: the host's side of the keeper
//! (`keeper.rs`), shared by `exec` and by every other child the crate runs
//! (plugin processes).

use std::process::ExitStatus;
use std::time::Duration;

/// Ends the command and everything it started, also when dropped: if the
/// caller stops waiting (a timeout or cancellation above this function
/// drops the future), nothing the command started outlives the call.
///
/// On Linux the host's child is the keeper (see `keeper.rs`), which is
/// asked to stop and kills every descendant itself; elsewhere the child's
/// process group is killed.
pub(crate) struct Ending(Option<libc::pid_t>);

impl Ending {
    /// How long the keeper gets to end everything before it is killed itself.
    const GRACE: Duration = Duration::from_secs(5);

    pub(crate) fn of(child: &tokio::process::Child) -> Self {
        Self(child.id().and_then(|id| libc::pid_t::try_from(id).ok()))
    }

    /// The child has exited and been reaped: its id may be reused now.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }

    pub(crate) fn stop(&self) {
        let Some(pid) = self.0 else { return };
        // SAFETY: signals have no memory-safety preconditions; a process
        // that is already gone gives ESRCH, which is fine.
        unsafe {
            #[cfg(target_os = "linux")]
            libc::kill(pid, super::keeper::STOP_SIGNAL);
            #[cfg(not(target_os = "linux"))]
            libc::killpg(pid, libc::SIGKILL);
        }
    }

    /// Wait for the child after [`Self::stop`]; a keeper that does not
    /// finish in time is killed.
    pub(crate) async fn wait(&self, child: &mut tokio::process::Child) -> Option<ExitStatus> {
        match tokio::time::timeout(Self::GRACE, child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => {
                let _ = child.start_kill();
                child.wait().await.ok()
            }
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.stop();
    }
}
