//! `grep` (content mode) and `glob` against the `rg` binary, over the same
//! large real source tree in the same run: the dependency sources in the
//! local cargo home (`$CARGO_HOME/registry/src`), or the tree named by
//! `SEARCH_BENCH_TREE`.
//!
//! Like is compared with like: `rg` searches hidden files, honours
//! `.gitignore` outside git repositories and skips the same noise
//! directories our tools skip, and its whole output is read, as our tools
//! build their whole answer (no caps on either side).
//!
//! Setup installs `rg` when it is missing (`apt-get install -y ripgrep`, as
//! root where apt exists); otherwise the benchmark says why it skips.
//!
//! Our `glob` answers newest first, so it stats every match; `rg --files`
//! does not. Both baselines are measured: plain `rg --files` (less work than
//! ours) and `rg --files --sortr=modified` (the same answer).
//!
//! Run: `cargo bench -p toolsmith-builtins --bench search`. Besides criterion's
//! figures it prints the ratio our time / rg time, median of paired runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use toolsmith::ToolContext;
use toolsmith_builtins::fs::FsLimits;
use toolsmith_builtins::fs::noise::NOISE_DIRS;
use toolsmith_builtins::sandbox::Workspace;
use toolsmith_builtins::search::{OutputMode, glob, grep};

const PATTERN: &str = r"fn\s+new\s*\(";
const GLOB: &str = "*.rs";

/// The tree to search, if there is one.
fn tree() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SEARCH_BENCH_TREE") {
        return Some(PathBuf::from(dir));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let src = cargo_home.join("registry/src");
    src.is_dir().then_some(src)
}

/// `rg` on the PATH, installing the Debian package if it is missing and we may.
fn ensure_rg() -> Result<(), String> {
    let works = || {
        Command::new("rg")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works() {
        return Ok(());
    }
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !is_root || !Path::new("/usr/bin/apt-get").exists() {
        return Err("rg is not installed and apt-get cannot be run as root here".into());
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-q", "ripgrep"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !install() {
        let _ = Command::new("apt-get")
            .args(["update", "-q"])
            .stdout(Stdio::null())
            .status();
        install();
    }
    if works() {
        Ok(())
    } else {
        Err("installing ripgrep with apt-get failed".into())
    }
}

/// rg's arguments for what our tools do by default.
fn rg_common() -> Vec<String> {
    let mut args: Vec<String> = [
        "--no-config",
        "--hidden",
        "--no-require-git",
        "--no-ignore-global",
    ]
    .map(String::from)
    .to_vec();
    for dir in NOISE_DIRS {
        args.push("-g".into());
        args.push(format!("!{dir}/"));
    }
    args.push("-g".into());
    args.push("!*.egg-info/".into());
    args
}

/// Run rg and read its whole output; returns the number of lines.
fn run_rg(tree: &Path, args: &[String]) -> usize {
    let output = Command::new("rg")
        .args(rg_common())
        .args(args)
        .arg(tree)
        .stderr(Stdio::null())
        .output()
        .expect("rg runs");
    output.stdout.iter().filter(|b| **b == b'\n').count()
}

fn context(tree: &Path) -> ToolContext {
    ToolContext::new()
        .with_state(Workspace::new(tree).expect("the tree exists"))
        .with_state(FsLimits {
            default_grep_results: usize::MAX,
            max_grep_chars: usize::MAX,
            default_glob_results: usize::MAX,
            ..FsLimits::default()
        })
}

/// The tools run their file work on the blocking pool; a small runtime
/// drives each call, as a host's would.
fn block_on<F: std::future::Future>(call: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(call)
}

fn our_grep(ctx: &ToolContext) -> String {
    block_on(grep(
        ctx,
        PATTERN.to_owned(),
        ".".to_owned(),
        None,
        None,
        OutputMode::Content,
        false,
        false,
        false,
        None,
        None,
        None,
        None,
        0,
    ))
    .expect("grep runs")
}

fn our_glob(ctx: &ToolContext) -> String {
    block_on(glob(ctx, GLOB.to_owned(), ".".to_owned(), None, false)).expect("glob runs")
}

fn rg_grep(tree: &Path) -> usize {
    run_rg(tree, &["-n".into(), PATTERN.into()])
}

fn rg_glob(tree: &Path) -> usize {
    run_rg(tree, &["--files".into(), "-g".into(), GLOB.into()])
}

/// The same answer as our glob: newest first (rg then stats every file and
/// walks on one thread).
fn rg_glob_newest_first(tree: &Path) -> usize {
    run_rg(
        tree,
        &[
            "--files".into(),
            "--sortr=modified".into(),
            "-g".into(),
            GLOB.into(),
        ],
    )
}

fn benches(c: &mut Criterion) {
    let Some(tree) = tree() else {
        eprintln!("search bench skipped: no $CARGO_HOME/registry/src and no SEARCH_BENCH_TREE");
        return;
    };
    if let Err(why) = ensure_rg() {
        eprintln!("search bench skipped: {why}");
        return;
    }
    let ctx = context(&tree);
    // Warm the page cache and show that both sides find the same things.
    let ours = our_grep(&ctx);
    let our_matches = ours.lines().filter(|l| is_match_line(l)).count();
    eprintln!(
        "grep {PATTERN:?} in {}: toolsmith {our_matches} matching lines, rg {} lines",
        tree.display(),
        rg_grep(&tree)
    );
    eprintln!(
        "glob {GLOB:?}: toolsmith {} files, rg {} files",
        our_glob(&ctx).lines().count(),
        rg_glob(&tree)
    );

    let mut group = c.benchmark_group("grep_content");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("toolsmith", |b| b.iter(|| our_grep(&ctx)));
    group.bench_function("rg", |b| b.iter(|| rg_grep(&tree)));
    group.finish();

    let mut group = c.benchmark_group("glob");
    group.sample_size(20);
    group.bench_function("toolsmith", |b| b.iter(|| our_glob(&ctx)));
    group.bench_function("rg", |b| b.iter(|| rg_glob(&tree)));
    group.bench_function("rg_newest_first", |b| {
        b.iter(|| rg_glob_newest_first(&tree))
    });
    group.finish();

    eprintln!(
        "ratio grep content (toolsmith / rg): {:.2}",
        paired_ratio(
            || drop(our_grep(&ctx)),
            || {
                rg_grep(&tree);
            }
        )
    );
    eprintln!(
        "ratio glob (toolsmith / rg --files, unsorted): {:.2}",
        paired_ratio(
            || drop(our_glob(&ctx)),
            || {
                rg_glob(&tree);
            }
        )
    );
    eprintln!(
        "ratio glob (toolsmith / rg --files --sortr=modified, the same answer): {:.2}",
        paired_ratio(
            || drop(our_glob(&ctx)),
            || {
                rg_glob_newest_first(&tree);
            }
        )
    );
}

/// A content-mode line that is a match (`12:text`), not a heading or context.
fn is_match_line(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line.as_bytes().get(digits) == Some(&b':')
}

/// Median of ours / median of theirs over alternating runs, so both see
/// the same machine state.
fn paired_ratio(mut ours: impl FnMut(), mut theirs: impl FnMut()) -> f64 {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        a.push(time(&mut ours));
        b.push(time(&mut theirs));
    }
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    a[a.len() / 2] / b[b.len() / 2]
}

criterion_group!(search, benches);

fn main() {
    search();
    Criterion::default().configure_from_args().final_summary();
}
