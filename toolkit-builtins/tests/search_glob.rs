//! `glob` against real trees: patterns, newest first, noise and
//! `.gitignore` skipped, the result cap.

mod fs_support;

use fs_support::{Env, set_mtime};
use serde_json::json;

fn tree(env: &Env) {
    for (path, mtime) in [
        ("src/old.rs", 1_000),
        ("src/new.rs", 3_000),
        ("src/deep/mid.rs", 2_000),
        ("README.md", 500),
        ("build.rs", 1_500),
        ("target/debug/gen.rs", 9_000),
        ("node_modules/x/y.rs", 9_000),
        ("ignored/skip.rs", 9_000),
        ("tmp.rs", 9_000),
    ] {
        set_mtime(&env.write(path, "fn x() {}\n"), mtime);
    }
    env.write(".gitignore", "ignored/\ntmp.rs\n");
}

#[tokio::test]
async fn names_match_at_any_depth_newest_first() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        out.content,
        "src/new.rs\nsrc/deep/mid.rs\nbuild.rs\nsrc/old.rs\n"
    );
}

#[tokio::test]
async fn patterns_with_slashes_match_from_the_path() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("glob", json!({"pattern": "src/**/*.rs"})).await;
    assert_eq!(out.content, "src/new.rs\nsrc/deep/mid.rs\nsrc/old.rs\n");
    let out = env
        .ok("glob", json!({"pattern": "*.rs", "path": "src/deep"}))
        .await;
    assert_eq!(out.content, "src/deep/mid.rs\n");
    let out = env.ok("glob", json!({"pattern": "*.{md,toml}"})).await;
    assert_eq!(out.content, "README.md\n");
}

#[tokio::test]
async fn the_cap_keeps_the_newest_and_says_so() {
    let env = Env::new();
    tree(&env);
    let out = env
        .ok("glob", json!({"pattern": "**/*.rs", "max_results": "2"}))
        .await;
    assert_eq!(
        out.content,
        "src/new.rs\nsrc/deep/mid.rs\n(showing the 2 newest of 4 files; narrow the pattern or path, or raise max_results)\n"
    );
}

#[tokio::test]
async fn nothing_found_and_bad_patterns_are_explained() {
    let env = Env::new();
    tree(&env);
    let out = env.ok("glob", json!({"pattern": "*.zig"})).await;
    assert_eq!(out.content, "No files match `*.zig` in `.`.");
    let err = env.err("glob", json!({"pattern": "src/[a"})).await;
    assert!(err.contains("is not a valid glob"), "{err}");
    let err = env.err("glob", json!({"pattern": "../*.rs"})).await;
    assert!(err.contains("must be relative to `path`"), "{err}");
    let err = env
        .err("glob", json!({"pattern": "*.rs", "path": "../outside"}))
        .await;
    assert!(err.contains("outside the workspace"), "{err}");
}

/// `glob` leaves out what `grep` skips as binary, by the same rule (a NUL
/// byte), and says how many it left out.
#[tokio::test]
async fn binary_files_are_skipped_as_grep_skips_them() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write("b.bin", b"alpha\0\x01\x02");
    env.write("c.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    env.write("d.txt", b"not binary: caf\xc3\xa9 \xff\n");
    let out = env.ok("glob", json!({"pattern": "*.*"})).await;
    let mut listed: Vec<&str> = out.content.lines().collect();
    let note = listed.pop().unwrap();
    listed.sort();
    assert_eq!(listed, ["a.txt", "d.txt"]);
    assert_eq!(
        note,
        "(2 binary files left out; include_binary=true lists them)"
    );
    let grep = env.ok("grep", json!({"pattern": "alpha|not"})).await;
    assert_eq!(grep.content, "a.txt\nd.txt\n");

    let out = env.ok("glob", json!({"pattern": "*.png"})).await;
    assert_eq!(
        out.content,
        "No files match `*.png` in `.`.\n(1 binary file left out; include_binary=true lists it)"
    );
    let out = env
        .ok("glob", json!({"pattern": "*.png", "include_binary": true}))
        .await;
    assert_eq!(out.content, "c.png\n");
}

/// A FIFO or a symlink leading out is not opened to be sniffed: listed as
/// before, and the call returns.
#[tokio::test]
async fn special_files_are_not_sniffed() {
    let env = Env::new();
    fs_support::mkfifo(&env.ws.join("pipe.bin"));
    std::os::unix::fs::symlink(env.secret_path(), env.ws.join("link.bin")).unwrap();
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        env.ok("glob", json!({"pattern": "*.bin"})),
    )
    .await
    .expect("glob returned");
    let mut listed: Vec<&str> = out.content.lines().collect();
    listed.sort();
    assert_eq!(listed, ["link.bin", "pipe.bin"]);
}
