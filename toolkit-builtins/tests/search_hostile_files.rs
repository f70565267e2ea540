//! `glob`, `grep` and the file tools against hostile workspace content:
//! FIFOs, sockets and links where ignore files or searched files belong,
//! huge sparse files. Every call runs under a deadline: a hang fails the
//! test instead of stalling it. What could exhaust memory runs in a child
//! process, so a failure is a failed test, not a killed test binary.

// `reset_peak_rss` is unused here: the child's peak is measured over its
// whole life, so it is never reset.
#[allow(dead_code)]
mod child_support;
mod fs_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use child_support::{in_child, is_child, peak_rss_kb};
use fs_support::Env;
use serde_json::{Value, json};
use toolsmith::ToolOutput;

const DEADLINE: Duration = Duration::from_secs(30);

/// How long a test run in a child may take in all: besides its calls,
/// each bound by [`DEADLINE`], the child writes a 64 MiB file first.
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// A call that must return before the deadline.
async fn call(env: &Env, tool: &str, args: Value) -> ToolOutput {
    tokio::time::timeout(DEADLINE, env.call(tool, args.clone()))
        .await
        .unwrap_or_else(|_| panic!("{tool}({args}) did not return within {DEADLINE:?}"))
}

async fn ok(env: &Env, tool: &str, args: Value) -> String {
    let out = call(env, tool, args.clone()).await;
    assert!(!out.is_error, "{tool}({args}) failed: {}", out.content);
    out.content
}

async fn err(env: &Env, tool: &str, args: Value) -> String {
    let out = call(env, tool, args.clone()).await;
    assert!(out.is_error, "{tool}({args}) should fail: {}", out.content);
    out.content
}

/// A sparse file of `size` bytes starting with `head`.
fn sparse(path: &Path, head: &str, size: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, head).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(size).unwrap();
}

#[tokio::test]
async fn fifos_where_ignore_files_belong_do_not_block_the_walk() {
    let env = Env::new();
    env.write("a.txt", "needle\n");
    env.write("sub/b.txt", "needle\n");
    env.write(".git/HEAD", "ref\n");
    for fifo in [
        ".gitignore",
        ".ignore",
        "sub/.gitignore",
        ".git/info/exclude",
    ] {
        mkfifo(&env.ws.join(fifo));
    }
    let found = ok(&env, "glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(found.lines().count(), 2, "{found}");
    let found = ok(&env, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(found, "a.txt\nsub/b.txt\n");
    let found = ok(&env, "grep", json!({"pattern": "needle", "path": "sub"})).await;
    assert_eq!(found, "sub/b.txt\n");
}

#[tokio::test]
async fn fifos_and_sockets_among_searched_files_are_skipped_or_refused() {
    let env = Env::new();
    env.write("a.txt", "needle\n");
    mkfifo(&env.ws.join("pipe.txt"));
    let _socket = std::os::unix::net::UnixListener::bind(env.ws.join("sock.txt")).unwrap();
    let found = ok(&env, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(found, "a.txt\n");
    let found = ok(&env, "glob", json!({"pattern": "*.txt"})).await;
    assert!(found.contains("a.txt"), "{found}");
    for path in ["pipe.txt", "sock.txt"] {
        let what = if path == "pipe.txt" {
            "named pipe"
        } else {
            "socket"
        };
        for tool in ["grep", "read_file"] {
            let args = json!({"pattern": "x", "path": path});
            let args = if tool == "grep" {
                args
            } else {
                json!({"path": path})
            };
            let message = err(&env, tool, args).await;
            assert!(message.contains(what), "{tool} {path}: {message}");
        }
        for (tool, args) in [
            (
                "edit_file",
                json!({"path": path, "old_text": "a", "new_text": "b"}),
            ),
            (
                "notebook_edit",
                json!({"path": path, "new_source": "x", "cell_index": 0}),
            ),
        ] {
            let message = err(&env, tool, args).await;
            assert!(message.contains(what), "{tool} {path}: {message}");
        }
    }
}

/// A searched file swapped for a FIFO (by rename, over and over) while
/// grep runs: every call returns, and none reads the FIFO.
#[tokio::test]
async fn a_file_swapped_for_a_fifo_mid_search_never_blocks() {
    let env = Env::new();
    for i in 0..50 {
        env.write(&format!("f{i}.txt"), "needle\n");
    }
    mkfifo(&env.ws.join("fifo.tmp"));
    env.write("file.tmp", "needle\n");
    let ws = env.ws.clone();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let done = done.clone();
        std::thread::spawn(move || {
            let target = ws.join("f7.txt");
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // Move the FIFO in, then a regular file back, keeping both.
                let _ = std::fs::rename(&target, ws.join("file.tmp"));
                let _ = std::fs::rename(ws.join("fifo.tmp"), &target);
                let _ = std::fs::rename(&target, ws.join("fifo.tmp"));
                let _ = std::fs::rename(ws.join("file.tmp"), &target);
            }
        })
    };
    for _ in 0..40 {
        for mode in ["files_with_matches", "content"] {
            ok(
                &env,
                "grep",
                json!({"pattern": "needle", "output_mode": mode}),
            )
            .await;
        }
        let _ = call(&env, "read_file", json!({"path": "f7.txt"})).await;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
}

#[tokio::test]
async fn ignore_files_that_are_links_devices_or_huge_are_not_read_whole() {
    let env = Env::new();
    for name in [
        "a.txt",
        "b.txt",
        "zero/c.txt",
        "out/d.txt",
        "big/e.txt",
        "big/f.txt",
    ] {
        env.write(name, "needle\n");
    }
    // A link to a device (absolute: never followed).
    symlink("/dev/zero", env.ws.join("zero/.gitignore")).unwrap();
    // A link leading out of the workspace: its lines must decide nothing.
    std::fs::write(env.outside.join("rules"), "*\n").unwrap();
    symlink("../../outside/rules", env.ws.join("out/.gitignore")).unwrap();
    // A link inside the workspace is not followed either (as git does).
    env.write("rules", "*.txt\n");
    symlink("../rules", env.ws.join("big/.ignore")).unwrap();
    // A huge sparse ignore file: only its first lines count.
    sparse(&env.ws.join(".gitignore"), "a.txt\nbig/f.txt\n", 8 << 30);
    let found = ok(&env, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(found, "b.txt\nbig/e.txt\nout/d.txt\nzero/c.txt\n");
    let found = ok(&env, "glob", json!({"pattern": "*.txt"})).await;
    let mut names: Vec<&str> = found.lines().collect();
    names.sort();
    assert_eq!(names, ["b.txt", "big/e.txt", "out/d.txt", "zero/c.txt"]);
}

#[tokio::test]
async fn gitignore_semantics_hold_nested_negated_and_from_parents() {
    let env = Env::new();
    for name in [
        "x.log",
        "keep.log",
        "src/y.log",
        "src/gen.rs",
        "src/lib.rs",
        "src/deep/z.rs",
        "docs/a.md",
        "excluded.rs",
        "dotignored.rs",
    ] {
        env.write(name, "needle\n");
    }
    env.write(".gitignore", "*.log\n!keep.log\ndocs/\ndotignored.rs\n");
    env.write("src/.gitignore", "gen.rs\n!y.log\n");
    env.write("src/deep/.gitignore", "*.rs\n");
    // `.ignore` beats `.gitignore`: it brings back what .gitignore hides.
    env.write(".ignore", "!dotignored.rs\n");
    env.write(".git/info/exclude", "excluded.rs\n");
    // Above the workspace: never read.
    std::fs::write(env.dir.path().join(".gitignore"), "*\n").unwrap();
    let found = ok(&env, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(found, "dotignored.rs\nkeep.log\nsrc/lib.rs\nsrc/y.log\n");
    // Searching below the root still honours the root's rules.
    let found = ok(&env, "grep", json!({"pattern": "needle", "path": "src"})).await;
    assert_eq!(found, "src/lib.rs\nsrc/y.log\n");
    let found = ok(&env, "glob", json!({"pattern": "*.log"})).await;
    let mut names: Vec<&str> = found.lines().collect();
    names.sort();
    assert_eq!(names, ["keep.log", "src/y.log"]);
}

#[tokio::test]
async fn a_line_longer_than_the_search_holds_is_reported_not_held() {
    let env = Env::with_limits(toolsmith_builtins::fs::FsLimits {
        max_search_line_bytes: 1 << 20,
        max_multiline_bytes: 1 << 20,
        ..Default::default()
    });
    env.write("small.txt", "needle\n");
    env.write("long.txt", format!("needle{}\n", "x".repeat(4 << 20)));
    let found = ok(
        &env,
        "grep",
        json!({"pattern": "needle", "output_mode": "count"}),
    )
    .await;
    assert!(found.starts_with("small.txt:1\n"), "{found}");
    assert!(
        found.contains("(not searched: `long.txt` (a line longer than the search holds))"),
        "{found}"
    );
    let found = ok(
        &env,
        "grep",
        json!({"pattern": "needle.x", "multiline": true}),
    )
    .await;
    assert!(
        found.contains("`long.txt` (4.0 MB, more than the 1.0 MB a multiline search reads)"),
        "{found}"
    );
}

#[tokio::test]
async fn every_output_is_capped_where_it_is_built() {
    let env = Env::new();
    let line = format!("needle {}\n", "y".repeat(1_500));
    let body = line.repeat(400);
    for i in 0..300 {
        env.write(&format!("d/{}{i:04}.txt", "n".repeat(245)), &body);
    }
    let max = 64_000 + 4_000;
    for mode in ["content", "files_with_matches", "count"] {
        let out = ok(
            &env,
            "grep",
            json!({"pattern": "needle", "output_mode": mode, "head_limit": 1_000_000, "context": 100}),
        )
        .await;
        assert!(out.len() < max, "{mode}: {} chars", out.len());
    }
    let out = ok(
        &env,
        "glob",
        json!({"pattern": "*.txt", "max_results": 1_000_000}),
    )
    .await;
    assert!(out.len() < max, "glob: {} chars", out.len());
    assert!(
        out.contains("(showing the "),
        "{}",
        out.lines().last().unwrap()
    );
    let out = ok(
        &env,
        "list_dir",
        json!({"recursive": true, "max_entries": 1_000_000}),
    )
    .await;
    assert!(out.len() < max, "list_dir: {} chars", out.len());
    assert!(
        out.contains("output capped"),
        "{}",
        out.lines().last().unwrap()
    );
}

/// Multiline grep over a 16 GB sparse file and over a text file of exactly
/// the multiline cap (64 MiB): the first is left out with a note, the
/// second searched; the child's peak memory stays bounded either way.
#[test]
fn multiline_grep_memory_is_bounded_on_huge_files() {
    if !is_child() {
        let out = in_child(
            "multiline_grep_memory_is_bounded_on_huge_files",
            CHILD_DEADLINE,
        );
        let peak = out
            .lines()
            .find_map(|l| Some(l.split_once("peak-kb ")?.1))
            .unwrap_or_else(|| panic!("no figure: {out}"));
        println!("multiline grep peak memory: {peak} kB");
        let peak: u64 = peak.parse().unwrap();
        assert!(peak < 200 * 1024, "peak {peak} kB");
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let env = Env::new();
        sparse(&env.ws.join("huge.txt"), "needle\nhay\n", 16 << 30);
        let cap = toolsmith_builtins::fs::FsLimits::default().max_multiline_bytes;
        let line = "hay and more hay, needle at the end of the last line\n";
        // Written in pieces: the child's peak is the search's, not ours.
        {
            use std::io::Write;
            let mut file = std::fs::File::create(env.ws.join("at_cap.txt")).unwrap();
            let chunk = line.repeat(1024);
            let mut left = cap;
            while left > 0 {
                let n = left.min(chunk.len());
                file.write_all(&chunk.as_bytes()[..n]).unwrap();
                left -= n;
            }
        }
        let out = ok(
            &env,
            "grep",
            json!({"pattern": "(needle|line)\\nhay", "multiline": true, "output_mode": "count"}),
        )
        .await;
        assert!(
            out.contains("`huge.txt` (16.0 GB, more than the 64.0 MB a multiline search reads)"),
            "{out}"
        );
        assert!(out.starts_with("at_cap.txt:"), "{out}");
    });
    println!("peak-kb {}", peak_rss_kb());
}
