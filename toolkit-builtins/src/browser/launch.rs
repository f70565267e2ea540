//! Starting Chromium: its flags and its throw-away profile directory.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use chromiumoxide::browser::BrowserConfig as LaunchConfig;
use chromiumoxide::handler::viewport::Viewport;

use super::config::BrowserConfig;

/// A fresh `--user-data-dir`, removed when dropped, so no cookie, cache or
/// history outlives the session or leaks between sessions.
#[derive(Debug)]
pub(crate) struct Profile {
    dir: PathBuf,
}

impl Profile {
    pub(crate) fn create() -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "toolsmith-browser-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let profile = Self { dir };
        // Chromium's network predictor opens connections to hosts a page
        // links to before anything is requested: such a connection would
        // reach an address the request guard never saw. Turn it off.
        let default = profile.dir.join("Default");
        std::fs::create_dir(&default)?;
        std::fs::write(
            default.join("Preferences"),
            r#"{"net":{"network_prediction_options":2}}"#,
        )?;
        Ok(profile)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Where Chromium's crash handlers keep their reports: inside the
    /// profile, so they go with it, and so the handlers' command lines name
    /// the profile (see [`Profile::processes`]).
    fn crash_reports(&self) -> PathBuf {
        self.dir.join("Crash Reports")
    }

    /// Every running process whose command line names this profile. Chromium
    /// starts two crash handlers whatever `disable-breakpad` or
    /// `disable-crash-reporter` say (and `disable-crashpad-for-testing`
    /// makes its network service crash); they detach to init at once, so
    /// they are found here, by the report directory they are given, rather
    /// than below the browser's process.
    #[cfg(target_os = "linux")]
    pub(crate) fn processes(&self) -> Vec<u32> {
        let named = self.dir.as_os_str().as_encoded_bytes();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
                cmdline
                    .windows(named.len())
                    .any(|w| w == named)
                    .then_some(pid)
            })
            .collect()
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        // Chromium may still be flushing files for a moment after it exits;
        // a second attempt catches what the first one raced with.
        if std::fs::remove_dir_all(&self.dir).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The proxy bypass list that bypasses nothing: it undoes Chromium's
/// built-in bypass of loopback, so a page's request to loopback meets the
/// guard too.
pub(crate) const PROXY_LOOPBACK_TOO: &str = "<-loopback>";

/// The Chromium binary: the configured path, or the name found on `PATH`.
pub(crate) fn find_chromium(config: &BrowserConfig) -> Option<PathBuf> {
    let wanted = config.chromium();
    if wanted.components().count() > 1 || wanted.is_absolute() {
        return wanted.is_file().then(|| wanted.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(wanted))
            .find(|candidate| candidate.is_file())
    })
}

/// The launch configuration: headless, as little background traffic of
/// Chromium's own as switches allow, and what is left sent to `proxy` (the
/// closed one), one renderer process for every frame (so request interception on the
/// page sees iframes too). `block-new-web-contents` does not stop a
/// `target=_blank` link's window: `windows` closes those.
pub(crate) fn launch_config(
    config: &BrowserConfig,
    chromium: &Path,
    profile: &Profile,
    proxy: SocketAddr,
) -> Result<LaunchConfig, String> {
    let (width, height) = config.viewport();
    let mut args = vec![
        "disable-gpu",
        "disable-quic",
        "no-first-run",
        "no-default-browser-check",
        "disable-background-networking",
        "disable-component-update",
        "disable-sync",
        "disable-default-apps",
        "disable-breakpad",
        "disable-domain-reliability",
        "disable-client-side-phishing-detection",
        "disable-dev-shm-usage",
        "metrics-recording-only",
        "no-pings",
        "mute-audio",
        "hide-scrollbars",
        "block-new-web-contents",
        "disable-site-isolation-trials",
        "disable-features=IsolateOrigins,site-per-process,Translate,OptimizationHints,MediaRouter,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
        "password-store=basic",
        "use-mock-keychain",
    ];
    // Every connection goes through a proxy, loopback included; WebRTC may
    // not send UDP around it. This one is for Chromium's own traffic (the
    // pages' context names its own, see `session`).
    let proxy_server = format!("proxy-server=http://{proxy}");
    let bypass = format!("proxy-bypass-list={PROXY_LOOPBACK_TOO}");
    args.extend([
        proxy_server.as_str(),
        bypass.as_str(),
        // Chromium reads the policy under this name; the older `force-`
        // spelling is accepted but, as tried here, still lets STUN
        // datagrams out.
        "webrtc-ip-handling-policy=disable_non_proxied_udp",
        "force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]);
    // chromiumoxide adds the leading `--` to each flag.
    // Chromium's sandbox refuses to start as root.
    if is_root() {
        args.push("no-sandbox");
    }
    LaunchConfig::builder()
        .chrome_executable(chromium)
        .disable_default_args()
        .user_data_dir(profile.path())
        .launch_timeout(config.launch_timeout())
        // Each action has its own, shorter timeout; this only keeps the
        // library from giving up first.
        .request_timeout(config.max_action_timeout() + config.launch_timeout())
        .viewport(Viewport {
            width,
            height,
            ..Viewport::default()
        })
        .window_size(width, height)
        .args(args)
        // Chromium's crash handlers take their report directory from here,
        // not from the profile: otherwise it is the host user's
        // `~/.config/chromium/Crash Reports`.
        .env(
            "BREAKPAD_DUMP_LOCATION",
            profile.crash_reports().to_string_lossy(),
        )
        .build()
}

fn is_root() -> bool {
    // Without a libc dependency: the effective uid is in /proc on Linux.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}
