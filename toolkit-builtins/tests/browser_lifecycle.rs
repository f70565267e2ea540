//! The browser's lifecycle: started on first use, reused, and gone (with
//! every process it started and its profile) after shutdown or drop.

mod browser_common;
#[cfg(target_os = "linux")]
mod cgroup_support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::browser::{BrowserConfig, BrowserSession};
use toolsmith_builtins::net::NetPolicy;

use browser_common::{Site, require_chromium};

/// Every live process whose parent chain leads to `root`, `root` included.
fn process_tree(root: u32) -> BTreeSet<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`: comm may hold spaces, so split after it.
            let after = &stat[stat.rfind(')')? + 2..];
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut tree = BTreeSet::from([root]);
    loop {
        let before = tree.len();
        for (pid, ppid) in &parents {
            if tree.contains(ppid) {
                tree.insert(*pid);
            }
        }
        if tree.len() == before {
            return tree.into_iter().filter(|pid| alive(*pid)).collect();
        }
    }
}

/// Running, not a zombie waiting to be reaped.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after = &stat[stat.rfind(')')? + 2..];
            after.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// Waits (bounded) until none of `pids` runs; returns those still running.
fn wait_gone(pids: &BTreeSet<u32>) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["browser"])).unwrap()
}

#[test]
fn started_on_first_use_reused_and_gone_after_shutdown() {
    require_chromium();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let site = Site::start().await;
        let ctx = ToolContext::new().with_state(BrowserSession::new(
            BrowserConfig::default()
                .with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap()),
        ));
        let session = ctx.state::<BrowserSession>().unwrap();
        let registry = registry();
        assert_eq!(
            session.pid().await,
            None,
            "nothing runs before the first call"
        );

        let open = json!({"action": "navigate", "url": site.url("/")});
        assert!(!registry.call("browser", open.clone(), &ctx).await.is_error);
        let first = session.pid().await.expect("started by the first call");
        assert!(
            !registry
                .call("browser", json!({"action": "read"}), &ctx)
                .await
                .is_error
        );
        assert_eq!(
            session.pid().await,
            Some(first),
            "the second call reuses it"
        );

        let tree = process_tree(first);
        assert!(tree.len() > 1, "Chromium runs helper processes: {tree:?}");
        session.shutdown().await;
        assert_eq!(session.pid().await, None);
        assert_eq!(
            wait_gone(&tree),
            Vec::<u32>::new(),
            "left running after shutdown"
        );

        // The next call starts a new browser.
        assert!(!registry.call("browser", open, &ctx).await.is_error);
        let second = session.pid().await.expect("started again");
        assert_ne!(second, first);

        // A browser that died (crashed, or killed from outside) is replaced.
        let tree = process_tree(second);
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &second.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        while session.pid().await.is_some() {
            assert!(
                Instant::now() < deadline,
                "the session never noticed the browser died"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let out = registry
            .call(
                "browser",
                json!({"action": "navigate", "url": site.url("/button")}),
                &ctx,
            )
            .await;
        assert!(!out.is_error, "{}", out.content);
        let third = session.pid().await.expect("started once more");
        assert_ne!(third, second);
        session.shutdown().await;
        assert_eq!(
            wait_gone(&tree),
            Vec::<u32>::new(),
            "left running after the kill"
        );
    });
}

/// The browser's renderer processes (Chromium's `--type=renderer`; its
/// processes rewrite their command line, so it is searched as one text).
fn renderers(root: u32) -> Vec<u32> {
    const RENDERER: &[u8] = b"--type=renderer ";
    process_tree(root)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| {
                line.windows(RENDERER.len()).any(|w| {
                    w[..RENDERER.len() - 1] == RENDERER[..RENDERER.len() - 1]
                        && (w[RENDERER.len() - 1] == b' ' || w[RENDERER.len() - 1] == 0)
                })
            })
        })
        .collect()
}

#[test]
fn a_page_whose_renderer_died_is_replaced_while_the_browser_runs() {
    // The kernel stops the largest process at the browser's bounds, which
    // is the page's renderer: the browser runs on, but the page's
    // connection is gone, and every action on it would fail.
    require_chromium();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let site = Site::start().await;
        let ctx = ToolContext::new().with_state(BrowserSession::new(
            BrowserConfig::default()
                .with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap()),
        ));
        let session = ctx.state::<BrowserSession>().unwrap();
        let registry = registry();
        let open = json!({"action": "navigate", "url": site.url("/")});
        let out = registry.call("browser", open.clone(), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        let browser = session.pid().await.expect("running");
        let killed = renderers(browser);
        assert!(!killed.is_empty(), "no renderer under {browser}");
        for pid in &killed {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert_eq!(
            wait_gone(&killed.iter().copied().collect()),
            Vec::<u32>::new()
        );
        // Mostly the next call finds the page gone and replaces it. On a
        // loaded machine the dead renderer is sometimes not seen in time:
        // that call then fails at its timeout, and the page is replaced for
        // the one after it (2 in 18 loaded runs). Never more than one.
        let mut failures = Vec::new();
        let mut loaded = false;
        for _ in 0..2 {
            let out = tokio::time::timeout(
                Duration::from_secs(60),
                registry.call("browser", open.clone(), &ctx),
            )
            .await
            .expect("bounded");
            if !out.is_error {
                loaded = true;
                break;
            }
            failures.push(out.content);
        }
        assert!(loaded, "two calls in a row failed: {failures:?}");
        // Replaced in time, the page is: the same browser runs on. (A call
        // cut short at its timeout may leave the browser to be restarted.)
        if failures.is_empty() {
            assert_eq!(
                session.pid().await,
                Some(browser),
                "the same browser, a new page"
            );
        }
        session.shutdown().await;
    });
}

/// Closes the page target at `url` of the browser whose profile is
/// `profile`, through a DevTools connection of its own (on loopback).
async fn close_page_from_outside(profile: &std::path::Path, url: &str) {
    use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, GetTargetsParams};
    use futures_util::StreamExt;
    // Chromium writes where it listens (port, then path) to the profile.
    let active = std::fs::read_to_string(profile.join("DevToolsActivePort"))
        .expect("the browser's DevTools port");
    let mut lines = active.lines();
    let (port, path) = (lines.next().unwrap(), lines.next().unwrap());
    let (cdp, mut handler) =
        chromiumoxide::Browser::connect(format!("ws://127.0.0.1:{port}{path}"))
            .await
            .unwrap();
    let driver = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let targets = cdp.execute(GetTargetsParams::default()).await.unwrap();
    let page = targets
        .result
        .target_infos
        .iter()
        .find(|t| t.r#type == "page" && t.url == url)
        .unwrap_or_else(|| panic!("no page at {url}: {:?}", targets.result.target_infos));
    let id = page.target_id.clone();
    cdp.execute(CloseTargetParams::new(id.clone()))
        .await
        .unwrap();
    // Gone once Chromium no longer lists it: it has told every client then.
    loop {
        let now = cdp.execute(GetTargetsParams::default()).await.unwrap();
        if !now.result.target_infos.iter().any(|t| t.target_id == id) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    driver.abort();
}

#[test]
fn a_page_whose_target_was_closed_is_replaced_while_the_browser_runs() {
    // Its target gone (closed from outside here; by a page replacement
    // cut short, or by Chromium, elsewhere), the DevTools client has no
    // connection for the page: every action on it failed ("receiver is
    // gone") while the browser ran on.
    require_chromium();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let site = Site::start().await;
        let ctx = ToolContext::new().with_state(BrowserSession::new(
            BrowserConfig::default()
                .with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap()),
        ));
        let session = ctx.state::<BrowserSession>().unwrap();
        let registry = registry();
        let open = json!({"action": "navigate", "url": site.url("/")});
        let out = registry.call("browser", open.clone(), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        let browser = session.pid().await.expect("running");
        let cmdline = std::fs::read(format!("/proc/{browser}/cmdline")).unwrap();
        let profile = String::from_utf8_lossy(&cmdline)
            .split('\0')
            .find_map(|arg| arg.strip_prefix("--user-data-dir="))
            .map(std::path::PathBuf::from)
            .expect("the browser names its profile");
        tokio::time::timeout(
            Duration::from_secs(30),
            close_page_from_outside(&profile, &site.url("/")),
        )
        .await
        .expect("bounded");
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            registry.call("browser", open, &ctx),
        )
        .await
        .expect("bounded");
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            session.pid().await,
            Some(browser),
            "the same browser, a new page"
        );
        session.shutdown().await;
    });
}

#[test]
fn dropping_the_context_with_its_registry_stops_the_browser() {
    require_chromium();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = runtime.block_on(Site::start());
    let ctx = ToolContext::new().with_state(BrowserSession::new(
        BrowserConfig::default().with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap()),
    ));
    let registry = registry();
    let out = runtime.block_on(registry.call(
        "browser",
        json!({"action": "navigate", "url": site.url("/button")}),
        &ctx,
    ));
    assert!(!out.is_error, "{}", out.content);
    let pid = runtime
        .block_on(ctx.state::<BrowserSession>().unwrap().pid())
        .unwrap();
    let tree = process_tree(pid);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let profile = String::from_utf8_lossy(&cmdline)
        .split('\0')
        .find_map(|arg| arg.strip_prefix("--user-data-dir="))
        .map(std::path::PathBuf::from)
        .expect("the browser names its profile");
    assert!(profile.is_dir());

    drop(registry);
    // Dropped on one of the runtime's threads, as a host's task would.
    runtime.block_on(async move { drop(ctx) });
    assert_eq!(
        wait_gone(&tree),
        Vec::<u32>::new(),
        "left running after drop"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while profile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!profile.exists(), "the profile outlived the browser");
}

#[test]
fn without_chromium_the_tool_says_how_to_get_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ctx = ToolContext::new().with_state(BrowserSession::new(
        BrowserConfig::default().with_chromium("/nonexistent/chromium"),
    ));
    let out = runtime.block_on(registry().call(
        "browser",
        json!({"action": "navigate", "url": "https://example.com/"}),
        &ctx,
    ));
    assert!(out.is_error);
    assert!(
        out.content
            .contains("no Chromium at `/nonexistent/chromium`"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("install_chromium.sh"),
        "{}",
        out.content
    );
}

#[test]
fn the_tool_is_off_until_the_host_provides_a_session() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let out = runtime.block_on(registry().call(
        "browser",
        json!({"action": "navigate", "url": "https://example.com/"}),
        &ToolContext::new(),
    ));
    assert!(out.is_error);
    assert!(out.content.contains("BrowserSession"), "{}", out.content);
}

/// A page that starts workers without end, and one that allocates without
/// end, against a browser bounded to 1 GiB and 256 processes and threads:
/// the group, watched from outside, never holds more, the kernel does stop
/// each page (a refused thread or a killed renderer), the model is told,
/// and the browser works for the next page. Where the host can make no group there is no wall to
/// test: a root host with the v1 `pids` hierarchy must make one.
#[cfg(target_os = "linux")]
#[test]
fn a_page_that_hogs_memory_or_threads_is_held_to_the_browsers_bounds() {
    use cgroup_support::{group_number, host_can_make_groups, our_groups};
    require_chromium();
    const MEMORY: u64 = 1 << 30;
    const PROCESSES: u64 = 256;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let site = Site::start().await;
        let ctx = ToolContext::new().with_state(BrowserSession::new(
            BrowserConfig::default()
                .with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap())
                .with_max_memory(MEMORY)
                .with_max_processes(PROCESSES)
                .with_action_timeout(Duration::from_secs(10)),
        ));
        let registry = registry();
        let home = json!({"action": "navigate", "url": site.url("/")});
        let out = registry.call("browser", home.clone(), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        let Some(group) = our_groups().into_iter().next() else {
            assert!(
                !host_can_make_groups(),
                "this host can make control groups, yet gave the browser none"
            );
            eprintln!("skipped: this system gives the browser no control group");
            return;
        };
        // The kernel's counts of what it stopped: forks refused at the
        // process bound, processes killed at the memory bound. Each worker
        // is a thread and a heap, so the thread hog meets either first.
        let stops = [
            ("pids.events", Some("max")),
            ("memory.oom_control", Some("oom_kill")),
            ("memory.events", Some("oom_kill")),
        ];
        // This browser's groups, read anew each time: a browser the kernel
        // stopped is replaced, with a group of its own, by whichever call
        // finds it gone (the hog's own, too). The other tests' browsers,
        // in this process too, have other bounds.
        let bounded = || {
            our_groups()
                .into_iter()
                .filter(|g| {
                    group_number(g, "pids.max", None) == Some(PROCESSES)
                        || group_number(g, "memory.limit_in_bytes", None) == Some(MEMORY)
                        || group_number(g, "memory.max", None) == Some(MEMORY)
                })
                .collect::<Vec<_>>()
        };
        for page in ["/hog-threads", "/hog-memory"] {
            let (most_processes, most_memory) =
                (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
            let done = Arc::new(AtomicBool::new(false));
            let watcher = {
                let (processes, memory, done) =
                    (most_processes.clone(), most_memory.clone(), done.clone());
                std::thread::spawn(move || {
                    while !done.load(Ordering::SeqCst) {
                        for group in &bounded() {
                            if let Some(n) = group_number(group, "pids.current", None) {
                                processes.fetch_max(n, Ordering::SeqCst);
                            }
                            if let Some(n) = group_number(group, "memory.usage_in_bytes", None) {
                                memory.fetch_max(n, Ordering::SeqCst);
                            }
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                })
            };
            // Each group's count of stops; a group made since counts from 0.
            let counts = || {
                bounded()
                    .into_iter()
                    .map(|g| {
                        let n = stops
                            .iter()
                            .filter_map(|(file, key)| group_number(&g, file, *key))
                            .sum::<u64>();
                        (g, n)
                    })
                    .collect::<std::collections::BTreeMap<_, _>>()
            };
            let before = counts();
            let stopped = || {
                counts()
                    .iter()
                    .any(|(g, n)| *n > before.get(g).copied().unwrap_or(0))
            };
            let hog = json!({"action": "navigate", "url": site.url(page)});
            // Whatever the page's fate, the call returns.
            let mut told = registry.call("browser", hog, &ctx).await.content;
            let deadline = Instant::now() + Duration::from_secs(30);
            while !stopped() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            done.store(true, Ordering::SeqCst);
            watcher.join().unwrap();
            let (processes, memory) = (
                most_processes.load(Ordering::SeqCst),
                most_memory.load(Ordering::SeqCst),
            );
            eprintln!(
                "{page}: at most {processes} processes, {} MiB",
                memory >> 20
            );
            assert!(
                stopped(),
                "{page}: the kernel never had to stop it ({processes} processes, {} MiB)",
                memory >> 20
            );
            assert!(processes <= PROCESSES, "{page}: {processes} processes");
            assert!(memory <= MEMORY, "{page}: {memory} bytes");
            // The browser (or a new one, if the kernel killed the old) is
            // usable for the next page.
            let out = registry.call("browser", home.clone(), &ctx).await;
            told.push_str(&out.content);
            let out = if out.is_error {
                registry.call("browser", home.clone(), &ctx).await
            } else {
                out
            };
            assert!(!out.is_error, "{page}: {}", out.content);
            // The model is told why: the page's renderer, its largest
            // process, is the one the kernel stops.
            assert!(
                told.contains("Note: the browser (with the page's scripts)"),
                "{page}: the model is not told\n{told}"
            );
        }
        let _ = group;
        ctx.state::<BrowserSession>().unwrap().shutdown().await;
    });
}

/// When a process started, in clock ticks since boot.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    // Field 22 of stat; `after` starts at field 3.
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Every process in `group`'s `cgroup.procs`.
#[cfg(target_os = "linux")]
fn members(group: &std::path::Path) -> BTreeSet<u32> {
    std::fs::read_to_string(group.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Chromium's helpers that leave its process tree (the crash handlers it
/// starts detach to init) would escape the bounds the group sets: after
/// launch, every process carrying the browser's profile directory, and
/// every crash handler started since the browser, is in its group.
#[cfg(target_os = "linux")]
#[test]
fn no_process_the_browser_starts_runs_outside_its_control_group() {
    use cgroup_support::{host_can_make_groups, our_groups};
    require_chromium();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let site = Site::start().await;
        let ctx = ToolContext::new().with_state(BrowserSession::new(
            BrowserConfig::default()
                .with_net_policy(NetPolicy::new().allow(&site.allowed).unwrap()),
        ));
        let session = ctx.state::<BrowserSession>().unwrap();
        let out = registry()
            .call(
                "browser",
                json!({"action": "navigate", "url": site.url("/")}),
                &ctx,
            )
            .await;
        assert!(!out.is_error, "{}", out.content);
        let groups = our_groups();
        if groups.is_empty() {
            assert!(
                !host_can_make_groups(),
                "this host can make control groups, yet gave the browser none"
            );
            eprintln!("skipped: this system gives the browser no control group");
            return;
        }
        let browser = session.pid().await.expect("running");
        let born = start_time(browser).expect("the browser's start time");
        let cmdline = |pid: u32| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
                .unwrap_or_default()
        };
        let profile = cmdline(browser)
            .split(' ')
            .find_map(|arg| arg.strip_prefix("--user-data-dir="))
            .expect("the browser names its profile")
            .to_owned();
        let inside: BTreeSet<u32> = groups.iter().flat_map(|g| members(g)).collect();
        let pids: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect();
        let mut checked = 0;
        let outside: Vec<String> = pids
            .into_iter()
            .filter(|pid| alive(*pid))
            .filter(|pid| start_time(*pid).is_some_and(|t| t >= born))
            .map(|pid| (pid, cmdline(pid)))
            .filter(|(_, line)| line.contains(&profile) || line.contains("crashpad_handler"))
            .inspect(|_| checked += 1)
            .filter(|(pid, _)| !inside.contains(pid))
            .map(|(pid, line)| format!("{pid}: {}", line.chars().take(160).collect::<String>()))
            .collect();
        eprintln!("{checked} processes of the browser checked");
        assert!(checked > 1, "Chromium runs helper processes");
        assert!(
            outside.is_empty(),
            "outside the browser's group:\n{}",
            outside.join("\n")
        );
        session.shutdown().await;
    });
}
