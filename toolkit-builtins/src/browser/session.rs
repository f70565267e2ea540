//! [`BrowserSession`]: one Chromium, started on first use, reused across
//! calls, and stopped with the session.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::{Browser, Page};
use futures_util::StreamExt;
use tokio::sync::{Mutex, MutexGuard};
use tokio::task::JoinHandle;

use super::config::BrowserConfig;
use super::intercept::{BlockedLog, intercept};
use super::launch::{PROXY_LOOPBACK_TOO, Profile, find_chromium, launch_config};
use super::proxy::{Door, GuardProxy};
#[cfg(target_os = "linux")]
use super::reap::{self, Family};
use super::windows::{ClosedWindows, close_other_windows};
use crate::net::NetPolicy;

/// Why the browser could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// No Chromium binary where the configuration says.
    #[error(
        "the browser is not available: no Chromium at `{0}` (install it, e.g. with scripts/install_chromium.sh, or configure its path)"
    )]
    NotInstalled(String),
    /// Chromium did not start or its DevTools connection failed.
    #[error("the browser could not be started: {0}")]
    Launch(String),
}

/// The browser the `browser` tool drives. Put one in the context's state to
/// enable the tool; Chromium starts on the first call, later calls reuse it,
/// and it stops on [`shutdown`](Self::shutdown) or when the session is
/// dropped (with the registry and context that hold it), with every process
/// it started, then removing its temporary profile.
///
/// ```no_run
/// use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
/// use toolsmith_builtins::browser::{BrowserConfig, BrowserSession};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["browser"]))?;
/// let ctx = ToolContext::new().with_state(BrowserSession::new(BrowserConfig::default()));
/// let out = registry
///     .call("browser", serde_json::json!({"action": "navigate", "url": "https://example.com"}), &ctx)
///     .await;
/// println!("{}", out.content);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct BrowserSession {
    config: BrowserConfig,
    guard: Arc<NetPolicy>,
    running: Mutex<Option<Running>>,
}

/// A started browser with its one page.
#[derive(Debug)]
pub(crate) struct Running {
    browser: Browser,
    handler: JoinHandle<()>,
    interceptor: JoinHandle<()>,
    /// Closes every other window a page opens.
    window_closer: JoinHandle<()>,
    pub(crate) page: Page,
    pub(crate) blocked: BlockedLog,
    /// The windows `window_closer` closed, for the next result.
    pub(crate) closed_windows: ClosedWindows,
    /// The browser context the pages are opened in: its traffic goes
    /// through the page's proxy, and downloads are refused there.
    context: BrowserContextId,
    _page_proxy: GuardProxy,
    _closed_proxy: GuardProxy,
    /// Dropped after the browser, and after what is left of it is killed
    /// (see `end_the_rest`): the directory goes once nothing writes to it.
    profile: Profile,
    /// The control group that bounds Chromium's processes and memory,
    /// where the host can make one, with its limits; removed once they are
    /// gone.
    group: Option<Bounds>,
    /// Bounds the browser this one replaced had reached before it died,
    /// not yet told: the kernel may have killed it for them.
    untold: Vec<String>,
    /// Set while the page is being replaced, cleared once the new one is
    /// in place: still set, the replacement failed or was cut short (the
    /// old page may be closed already), and the browser is restarted.
    replacing: bool,
}

#[cfg(target_os = "linux")]
type Bounds = (crate::cgroup::ControlGroup, crate::cgroup::Limits);
#[cfg(not(target_os = "linux"))]
type Bounds = ();

/// Chromium, every process it has started, and its crash handlers (which
/// detach from it, found by the `profile` they name) moved into a control
/// group of their own, bounded as `config` says; `None` (and a warning)
/// where the host cannot make one.
#[cfg(target_os = "linux")]
fn bound(browser: &mut Browser, config: &BrowserConfig, profile: &Profile) -> Option<Bounds> {
    use crate::cgroup::{ControlGroup, Limits, Reuse};
    let pid = browser
        .get_mut_child()
        .and_then(|child| child.as_mut_inner().id())?;
    let limits = Limits::new(config.max_processes(), config.max_memory());
    // Chromium runs unconfined and could change its group's settings: the
    // group is removed after it, not kept for another.
    let Some(group) = ControlGroup::create(limits, Reuse::Remove) else {
        tracing::warn!(
            "no control group for the browser: its processes and memory are bounded only by the machine's"
        );
        return None;
    };
    let adopted = std::iter::once(pid)
        .chain(profile.processes())
        .try_for_each(|pid| group.adopt(pid));
    match adopted {
        Ok(()) => Some((group, limits)),
        Err(e) => {
            tracing::warn!("the browser could not be moved into its control group: {e}");
            None
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn bound(_browser: &mut Browser, _config: &BrowserConfig, _profile: &Profile) -> Option<Bounds> {
    None
}

impl BrowserSession {
    /// A session that starts Chromium on first use.
    pub fn new(config: BrowserConfig) -> Self {
        let guard = Arc::new(config.net_policy().clone());
        Self {
            config,
            guard,
            running: Mutex::new(None),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BrowserConfig {
        &self.config
    }

    pub(crate) fn policy(&self) -> &Arc<NetPolicy> {
        &self.guard
    }

    /// The process id of Chromium while it runs: `None` before the first
    /// call, after [`shutdown`](Self::shutdown), and once it has died.
    pub async fn pid(&self) -> Option<u32> {
        let mut running = self.running.lock().await;
        let running = running.as_mut()?;
        if !running.is_alive() {
            return None;
        }
        running
            .browser
            .get_mut_child()
            .and_then(|child| child.as_mut_inner().id())
    }

    /// The running browser, started now if it is not yet (or no longer) up.
    /// Holding the guard serializes actions: there is one page.
    pub(crate) async fn running(&self) -> Result<MutexGuard<'_, Option<Running>>, BrowserError> {
        let mut running = self.running.lock().await;
        let mut untold = Vec::new();
        if let Some(up) = running.as_mut()
            && up.is_alive()
            && !up.replacing
            && !up.page_connected().await
        {
            // Chromium runs, but the page's connection is gone (its target
            // was closed, as by a replacement cut short): every action on
            // it would fail, so a new page replaces it.
            let _ = tokio::time::timeout(
                self.config.launch_timeout(),
                up.replace_page(Arc::clone(&self.guard)),
            )
            .await;
        }
        if running
            .as_mut()
            .is_some_and(|r| !r.is_alive() || r.replacing)
        {
            // Chromium went away (crashed or was killed), or could not
            // open a page when asked: start a new one.
            if let Some(mut dead) = running.take() {
                untold = dead.bounds_reached();
                dead.stop().await;
            }
        }
        if running.is_none() {
            match self.launch().await {
                Ok(mut started) => {
                    started.untold = untold;
                    *running = Some(started);
                }
                Err(BrowserError::Launch(why)) if !untold.is_empty() => {
                    return Err(BrowserError::Launch(why + &notes(&untold)));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(running)
    }

    async fn launch(&self) -> Result<Running, BrowserError> {
        let chromium = find_chromium(&self.config).ok_or_else(|| {
            BrowserError::NotInstalled(self.config.chromium().display().to_string())
        })?;
        let profile = Profile::create()
            .map_err(|e| BrowserError::Launch(format!("cannot create a profile directory: {e}")))?;
        let blocked = BlockedLog::default();
        let proxy_failed =
            |e: std::io::Error| BrowserError::Launch(format!("cannot start a guarding proxy: {e}"));
        let page_proxy = GuardProxy::start(Door::Guarded {
            policy: Arc::clone(&self.guard),
            blocked: blocked.clone(),
        })
        .await
        .map_err(proxy_failed)?;
        let closed_proxy = GuardProxy::start(Door::Closed)
            .await
            .map_err(proxy_failed)?;
        let launch = launch_config(&self.config, &chromium, &profile, closed_proxy.addr())
            .map_err(BrowserError::Launch)?;
        let (mut browser, mut handler) = Browser::launch(launch)
            .await
            .map_err(|e| BrowserError::Launch(e.to_string()))?;
        // Before any page is opened: a page's renderer is then started
        // inside the bounds.
        let group = bound(&mut browser, &self.config, &profile);
        // The handler drives the DevTools connection. An error from it means
        // the connection is lost (invalid messages are skipped, not
        // reported), so the task ends and the next call starts a new browser.
        let handler = tokio::spawn(async move { while let Some(Ok(())) = handler.next().await {} });
        let closed_windows = ClosedWindows::default();
        let started = async {
            let context = open_context(&browser, page_proxy.addr()).await?;
            let (page, interceptor, window_closer) = open_page(
                &browser,
                &context,
                Arc::clone(&self.guard),
                blocked.clone(),
                closed_windows.clone(),
            )
            .await?;
            Ok::<_, CdpError>((context, page, interceptor, window_closer))
        };
        match tokio::time::timeout(self.config.launch_timeout(), started).await {
            Ok(Ok((context, page, interceptor, window_closer))) => Ok(Running {
                browser,
                handler,
                interceptor,
                window_closer,
                page,
                blocked,
                closed_windows,
                context,
                _page_proxy: page_proxy,
                _closed_proxy: closed_proxy,
                profile,
                group,
                untold: Vec::new(),
                replacing: false,
            }),
            failed => {
                #[cfg(target_os = "linux")]
                let family =
                    Family::below(browser.get_mut_child().and_then(|c| c.as_mut_inner().id()));
                let _ = browser.kill().await;
                handler.abort();
                #[cfg(target_os = "linux")]
                end_the_rest(family, &group, &profile).await;
                Err(BrowserError::Launch(match failed {
                    Ok(Err(e)) => format!("cannot open a page: {e}"),
                    _ => "the browser did not open a page in time".into(),
                }))
            }
        }
    }

    /// Stops Chromium, if it runs, and removes its profile. The next call
    /// starts a new one.
    pub async fn shutdown(&self) {
        if let Some(running) = self.running.lock().await.take() {
            running.stop().await;
        }
    }
}

/// How long the DevTools client may take to say whether it still has the
/// page: it answers from what it holds, at once unless it is stuck.
const PAGE_CHECK: Duration = Duration::from_secs(5);

/// Bounds reached, as notes that follow a result.
pub(crate) fn notes(reached: &[String]) -> String {
    reached.iter().map(|r| format!("\nNote: {r}")).collect()
}

/// The browser context the pages are opened in. Its connections go to the
/// page's proxy (at `proxy`), loopback included; Chromium's own traffic
/// stays on the launch's proxy, whose door is closed. A proxy per context
/// is what tells the two apart: the proxy cannot see who opened a
/// connection.
async fn open_context(browser: &Browser, proxy: SocketAddr) -> Result<BrowserContextId, CdpError> {
    let context = browser
        .create_browser_context(CreateBrowserContextParams {
            proxy_server: Some(format!("http://{proxy}")),
            proxy_bypass_list: Some(PROXY_LOOPBACK_TOO.to_owned()),
            ..CreateBrowserContextParams::default()
        })
        .await?;
    // Downloads would land in the host user's download directory, outside
    // any workspace: refused for the pages' context and for the default one.
    for context in [Some(context.clone()), None] {
        let mut deny = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::Deny);
        deny.browser_context_id = context;
        browser.execute(deny).await?;
    }
    Ok(context)
}

/// A blank page in `context` whose every request goes through the guard,
/// with the tasks that watch it: its interception, and the closing of
/// every other window in `context`.
async fn open_page(
    browser: &Browser,
    context: &BrowserContextId,
    guard: Arc<NetPolicy>,
    blocked: BlockedLog,
    closed: ClosedWindows,
) -> Result<(Page, JoinHandle<()>, JoinHandle<()>), CdpError> {
    let mut blank = CreateTargetParams::new("about:blank");
    blank.browser_context_id = Some(context.clone());
    let page = browser.new_page(blank).await?;
    let interceptor = intercept(&page, guard, blocked).await?;
    let window_closer = close_other_windows(browser, &page, context, closed).await?;
    Ok((page, interceptor, window_closer))
}

impl Running {
    /// The bounds the browser reached since they were last told (and those
    /// of the browser it replaced), in words for the model: a page stopped
    /// at one shows as a crash or a timeout otherwise.
    pub(crate) fn bounds_reached(&mut self) -> Vec<String> {
        #[allow(unused_mut)]
        let mut reached = std::mem::take(&mut self.untold);
        #[cfg(target_os = "linux")]
        if let Some((group, limits)) = &mut self.group {
            reached.extend(group.bounds_reached(*limits, "the browser (with the page's scripts)"));
        }
        reached
    }

    /// Swaps the page for a fresh one. After a navigation that never
    /// finished, the DevTools client keeps waiting on it and would queue
    /// every later navigation of that page behind it.
    pub(crate) async fn replace_page(&mut self, guard: Arc<NetPolicy>) -> Result<(), CdpError> {
        self.replacing = true;
        // Stopped first: it would take the new page for one the old opened.
        self.window_closer.abort();
        let (page, interceptor, window_closer) = open_page(
            &self.browser,
            &self.context,
            guard,
            self.blocked.clone(),
            self.closed_windows.clone(),
        )
        .await?;
        self.interceptor.abort();
        self.interceptor = interceptor;
        self.window_closer = window_closer;
        let stuck = std::mem::replace(&mut self.page, page);
        self.replacing = false;
        let _ = tokio::time::timeout(Duration::from_secs(2), stuck.close()).await;
        Ok(())
    }

    /// Whether the DevTools client still has the page's target: asked of
    /// the client alone, so a page whose script never yields answers too.
    async fn page_connected(&self) -> bool {
        matches!(
            tokio::time::timeout(PAGE_CHECK, self.page.mainframe()).await,
            Ok(Ok(_))
        )
    }

    /// Whether Chromium still runs and its connection is up.
    fn is_alive(&mut self) -> bool {
        !self.handler.is_finished() && matches!(self.browser.try_wait(), Ok(None))
    }

    /// The pid of Chromium's main process, until it is reaped.
    #[cfg(target_os = "linux")]
    fn main_pid(&mut self) -> Option<u32> {
        self.browser
            .get_mut_child()
            .and_then(|child| child.as_mut_inner().id())
    }

    /// Asks Chromium to close, then makes sure it has, and every process it
    /// started with it; its profile and group go as it is dropped.
    async fn stop(mut self) {
        self.interceptor.abort();
        self.window_closer.abort();
        // Read while the browser runs: its processes leave its tree with it.
        #[cfg(target_os = "linux")]
        let family = Family::below(self.main_pid());
        if !self.is_alive() {
            // Already gone, or no connection left to ask it through.
            let _ = self.browser.kill().await;
        } else {
            let closed = tokio::time::timeout(Duration::from_secs(5), async {
                self.browser.close().await.ok()?;
                self.browser.wait().await.ok()
            })
            .await;
            if !matches!(closed, Ok(Some(_))) {
                let _ = self.browser.kill().await;
            }
        }
        self.handler.abort();
        #[cfg(target_os = "linux")]
        end_the_rest(family, &self.group, &self.profile).await;
    }
}

/// The processes a browser may have left behind its main process: its
/// group's members, and those naming its `profile` (its crash handlers,
/// where it has no group).
#[cfg(target_os = "linux")]
fn leftovers(group: &Option<Bounds>, profile: &Profile) -> Vec<u32> {
    let mut pids = group
        .as_ref()
        .map(|(group, _)| group.members())
        .unwrap_or_default();
    pids.extend(profile.processes());
    pids
}

/// Kills what is left of a browser whose main process has ended (`family`
/// and its [`leftovers`]) until none runs, or for [`reap::WITHIN`] at
/// most: its profile, removed next, is then written to no more.
#[cfg(target_os = "linux")]
async fn end_the_rest(mut family: Family, group: &Option<Bounds>, profile: &Profile) {
    let deadline = std::time::Instant::now() + reap::WITHIN;
    while !family.kill_round(leftovers(group, profile)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(reap::POLL).await;
    }
}

/// [`end_the_rest`] on a thread that may block.
#[cfg(target_os = "linux")]
fn end_the_rest_blocking(mut family: Family, group: &Option<Bounds>, profile: &Profile) {
    let deadline = std::time::Instant::now() + reap::WITHIN;
    while !family.kill_round(leftovers(group, profile)) && std::time::Instant::now() < deadline {
        std::thread::sleep(reap::POLL);
    }
}

impl Drop for BrowserSession {
    fn drop(&mut self) {
        let Some(mut running) = self.running.get_mut().take() else {
            return;
        };
        running.interceptor.abort();
        running.window_closer.abort();
        running.handler.abort();
        #[cfg(target_os = "linux")]
        let family = Family::below(running.main_pid());
        if let Some(child) = running.browser.get_mut_child() {
            let _ = child.as_mut_inner().start_kill();
        }
        // No await in drop, and the dropping thread may be one of the
        // runtime's: the reaping (up to 2 s), the killing of the processes
        // left (up to `reap::WITHIN`), and the profile's removal once they
        // are gone, happen on a thread of their own.
        let reaper = std::thread::Builder::new()
            .name("toolsmith-browser-reaper".into())
            .spawn(move || {
                if let Some(child) = running.browser.get_mut_child() {
                    let child = child.as_mut_inner();
                    for _ in 0..100 {
                        if !matches!(child.try_wait(), Ok(None)) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                #[cfg(target_os = "linux")]
                end_the_rest_blocking(family, &running.group, &running.profile);
                drop(running);
            });
        if let Err(e) = reaper {
            // The browser was killed; its other processes (which notice
            // a moment later) and its profile may outlive it.
            tracing::warn!("no thread to reap the browser: {e}");
        }
    }
}
