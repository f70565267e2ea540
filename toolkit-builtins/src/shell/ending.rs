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
        if let Some(pid) = self.0 {
            end_kept(pid);
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
/// Start `command`'s child under a keeper, so that nothing it starts
/// outlives it: when it exits, or the returned [`Ending`] stops it or is
/// dropped, every process below it is killed. No namespace and no
/// confinement: for trusted children such as plugins, whose only wall is
/// their lifetime.
#[cfg(target_os = "linux")]
pub(crate) fn keep_lifetime(command: &mut tokio::process::Command) {
    let keeper = super::keeper::Keeper::new(false, false);
    // The keeper, not tokio, ends the child (see `Ending`).
    command.kill_on_drop(false);
    // SAFETY: the hook makes system calls only (see `Keeper::split`).
    unsafe {
        command.pre_exec(move || keeper.split().map(drop));
    }
}

/// Elsewhere: the child's own process group, killed whole.
#[cfg(not(target_os = "linux"))]
pub(crate) fn keep_lifetime(command: &mut tokio::process::Command) {
    command.process_group(0).kill_on_drop(true);
}

/// End the child `pid` started with [`keep_lifetime`] (or by `exec`) and
/// everything it started: its keeper is asked to, and kills them all before
/// it exits; elsewhere its process group is killed.
pub(crate) fn end_kept(pid: libc::pid_t) {
    // SAFETY: signals have no memory-safety preconditions; a process that
    // is already gone gives ESRCH, which is fine.
    unsafe {
        #[cfg(target_os = "linux")]
        libc::kill(pid, super::keeper::STOP_SIGNAL);
        #[cfg(not(target_os = "linux"))]
        libc::killpg(pid, libc::SIGKILL);
    }
}

/// Once the child `pid` started with [`keep_lifetime`] has been reaped:
/// on Linux nothing is left (its keeper exits last); elsewhere what stayed
/// in its process group is killed.
pub(crate) fn after_kept_exit(pid: libc::pid_t) {
    #[cfg(target_os = "linux")]
    let _ = pid;
    // SAFETY: as in `end_kept`; a group that is gone gives ESRCH.
    #[cfg(not(target_os = "linux"))]
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
}
