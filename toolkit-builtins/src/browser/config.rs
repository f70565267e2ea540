//! [`BrowserConfig`]: which Chromium to run, how long actions may take, what
//! the page may reach.

use std::path::PathBuf;

use crate::net::NetPolicy;
use std::time::Duration;

/// How the browser is launched and bounded. Start from
/// [`BrowserConfig::default`] and change what differs.
///
/// ```
/// use std::time::Duration;
/// use toolsmith_builtins::browser::BrowserConfig;
/// use toolsmith_builtins::net::NetPolicy;
///
/// let config = BrowserConfig::default()
///     .with_chromium("/usr/bin/chromium")
///     .with_action_timeout(Duration::from_secs(10))
///     .with_net_policy(NetPolicy::new().allow("127.0.0.1:8080").unwrap());
/// assert_eq!(config.action_timeout(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    chromium: PathBuf,
    launch_timeout: Duration,
    action_timeout: Duration,
    max_action_timeout: Duration,
    viewport: (u32, u32),
    max_read_chars: usize,
    net: NetPolicy,
    max_processes: u64,
    max_memory: Option<u64>,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        Self {
            chromium: PathBuf::from("chromium"),
            launch_timeout: Duration::from_secs(30),
            action_timeout: Duration::from_secs(20),
            max_action_timeout: Duration::from_secs(120),
            viewport: (1280, 800),
            max_read_chars: 20_000,
            net: NetPolicy::new(),
            max_processes: 2048,
            max_memory: None,
        }
    }
}

impl BrowserConfig {
    /// The Chromium binary: a path, or a name looked up on `PATH` when the
    /// browser starts. Default: `chromium`.
    pub fn with_chromium(mut self, path: impl Into<PathBuf>) -> Self {
        self.chromium = path.into();
        self
    }

    /// How long Chromium may take to start. Default: 30 s.
    pub fn with_launch_timeout(mut self, timeout: Duration) -> Self {
        self.launch_timeout = timeout;
        self
    }

    /// How long one action may take when the model names no timeout.
    /// Default: 20 s.
    pub fn with_action_timeout(mut self, timeout: Duration) -> Self {
        self.action_timeout = timeout;
        self
    }

    /// The longest timeout a model may ask for. Default: 120 s.
    pub fn with_max_action_timeout(mut self, timeout: Duration) -> Self {
        self.max_action_timeout = timeout;
        self
    }

    /// The page's size in CSS pixels, which is also the screenshot's size.
    /// Default: 1280 × 800.
    pub fn with_viewport(mut self, width: u32, height: u32) -> Self {
        self.viewport = (width.max(1), height.max(1));
        self
    }

    /// The most characters `read` returns. Default: 20 000.
    pub fn with_max_read_chars(mut self, max: usize) -> Self {
        self.max_read_chars = max.max(1);
        self
    }

    /// What the page may reach: every request it makes (navigations,
    /// redirects, frames, sub-resources) is checked against this policy, the
    /// one `web_fetch` uses. Default: public addresses only.
    pub fn with_net_policy(mut self, policy: NetPolicy) -> Self {
        self.net = policy;
        self
    }

    /// At most `count` processes and threads of Chromium at once (every
    /// worker a page starts is a thread). Default: 2048. Held by the kernel
    /// where the host can give Chromium a control group of its own (Linux,
    /// as for `exec`'s commands).
    pub fn with_max_processes(mut self, count: u64) -> Self {
        self.max_processes = count;
        self
    }

    /// At most `bytes` of memory (swap included) used by Chromium, all its
    /// processes together; half of the machine's memory unless set. Held
    /// like [`with_max_processes`](Self::with_max_processes): a page that
    /// needs more has its renderer killed by the kernel, not the host.
    pub fn with_max_memory(mut self, bytes: u64) -> Self {
        self.max_memory = Some(bytes);
        self
    }

    /// The most processes and threads Chromium may have at once.
    pub fn max_processes(&self) -> u64 {
        self.max_processes
    }

    /// The most memory Chromium may use, if set (else half the machine's).
    pub fn max_memory(&self) -> Option<u64> {
        self.max_memory
    }

    /// The Chromium binary.
    pub fn chromium(&self) -> &std::path::Path {
        &self.chromium
    }

    /// How long Chromium may take to start.
    pub fn launch_timeout(&self) -> Duration {
        self.launch_timeout
    }

    /// The default timeout of one action.
    pub fn action_timeout(&self) -> Duration {
        self.action_timeout
    }

    /// The longest timeout a model may ask for.
    pub fn max_action_timeout(&self) -> Duration {
        self.max_action_timeout
    }

    /// The viewport, width × height.
    pub fn viewport(&self) -> (u32, u32) {
        self.viewport
    }

    /// The most characters `read` returns.
    pub fn max_read_chars(&self) -> usize {
        self.max_read_chars
    }

    /// The network policy every request of the page is checked against.
    pub fn net_policy(&self) -> &NetPolicy {
        &self.net
    }

    /// The timeout of one action: the model's choice if any, capped.
    pub(crate) fn timeout_for(&self, requested_secs: Option<u64>) -> Duration {
        requested_secs
            .map(Duration::from_secs)
            .unwrap_or(self.action_timeout)
            .min(self.max_action_timeout)
    }
}
